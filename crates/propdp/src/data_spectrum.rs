//! The spectrum of a data set, as a `problem.covariance` file
//! (`propdp spectrum DATA`; docs/covariance.md): from a user's rows to a
//! prediction in two commands.
//!
//! The columns are centred (and, with `standardize`, divided by their
//! standard deviation); constant columns are dropped. The atoms are the
//! eigenvalues λ_k of the sample covariance S = X_cᵀX_c/n, one per
//! direction with weight 1/k; directions with λ_k ≤ 1e-12·λ_max carry no
//! variance and are dropped (counted). propdp divides the eigenvalues by
//! their mean when it reads the file (E‖x‖² = 1).
//!
//! Regression labels are centred and divided by their standard deviation
//! (ddof 0): s² and the noise sd are in units of sd(y). Their teacher
//! energies come from the least-squares
//! fit in the eigenbasis: cₖ = (vₖᵀX_cᵀy_c/n)/λ_k, the unexplained variance
//! σ̂² = RSS/(n − k − 1) is reported as label noise, and the energies are
//! the debiased squares eₖ ∝ max(cₖ² − σ̂²/(nλ_k), 0) (the fit's noise
//! inflates cₖ² by σ̂²/(nλ_k), most in the weak directions). In propdp's
//! scale (features of variance ω_k/d, ω = λ/λ̄) the ground truth is
//! θ*ₖ = cₖ√(λ̄k), so s² = λ̄k·mean(debiased cₖ²). Without labels the
//! teacher is spread (e = 1). With a model ([`ModelChoice`], `--model`) the
//! columns are standardised, two-class labels become ±1 (the larger value
//! +1) with their teacher from the same fit (∝ θ*ₖ for Gaussian rows,
//! Brillinger), and [`crate::effective_model`] estimates and checks s².

use crate::error::Context;
use nalgebra::{DMatrix, DVector};
use propdp_sim::real::{Centred, parse_data};

use crate::effective_model::{self, Design, EffectiveModel, Probe};
use crate::error::Argument;

/// The spectrum of a data set and, with labels, the fit behind its teacher.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSpectrum {
    /// Rows n.
    pub rows: usize,
    /// Columns of the data (labels excluded).
    pub columns: usize,
    /// The constant columns dropped, by name.
    pub constant: Vec<String>,
    /// Directions dropped for carrying no variance (rank deficiency).
    pub null_directions: usize,
    /// Eigenvalues of the sample covariance, largest first.
    pub eigenvalues: Vec<f64>,
    /// Relative teacher energy per eigenvalue (1 without labels).
    pub teacher: Vec<f64>,
    /// Whether the columns were standardised.
    pub standardized: bool,
    /// The least-squares fit of regression labels, when given.
    pub labels: Option<LabelFit>,
    /// The two classes of logistic labels.
    pub classes: Option<Classes>,
    /// The effective model, with `--model`.
    pub effective: Option<EffectiveModel>,
}

/// What the regression labels say in propdp's scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelFit {
    /// s² of the ground truth (module docs).
    pub s2: f64,
    /// Standard deviation of the label noise, √(RSS/(n − k − 1)).
    pub noise_sd: f64,
    /// R² of the least-squares fit.
    pub r2: f64,
    /// The labels' standard deviation (ddof 0), the unit of `s2` and `noise_sd`.
    pub label_sd: f64,
}

/// A refusal naming the argument (`data`, `label`).
fn invalid(argument: &'static str, why: String) -> crate::Error {
    Argument::new(argument, format!(": {why}")).into()
}

/// The spectrum of the rows of `x` (n × p, columns named `names`) and, if
/// given, the regression labels `y` (module docs).
///
/// ```
/// use nalgebra::DMatrix;
/// // two independent columns of variance 4 and 1 (population), and a constant one
/// let x = DMatrix::from_row_slice(4, 3, &[2.0, 1.0, 7.0, -2.0, 1.0, 7.0, 2.0, -1.0, 7.0, -2.0, -1.0, 7.0]);
/// let names = ["a".to_string(), "b".to_string(), "c".to_string()];
/// let s = propdp::data_spectrum::spectrum(&x, &names, None, false).unwrap();
/// assert_eq!((s.eigenvalues.clone(), s.constant.clone()), (vec![4.0, 1.0], vec!["c".to_string()]));
/// ```
pub fn spectrum(
    x: &DMatrix<f64>,
    names: &[String],
    y: Option<&DVector<f64>>,
    standardize: bool,
) -> crate::Result<DataSpectrum> {
    build(x, names, y, standardize, None)
}

/// The spectrum of the rows of `x` (columns standardised) with the
/// effective model `model` of the labels `y` ([`crate::effective_model`]).
pub fn effective(
    x: &DMatrix<f64>,
    names: &[String],
    y: &DVector<f64>,
    model: ModelChoice,
) -> crate::Result<DataSpectrum> {
    build(x, names, Some(y), true, Some(model))
}

/// The model whose effective s² `propdp spectrum --model` estimates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelChoice {
    /// Logistic regression of two classes, under a data model.
    Logistic {
        /// The data model (`--data-model`).
        data: effective_model::DataModelChoice,
    },
    /// Huber regression with threshold `m` (in units of sd(y)).
    Huber {
        /// The threshold M of the checked fit.
        m: f64,
    },
    /// Least-squares regression.
    LeastSquares,
}

/// The two label values of a classification and how often the larger one occurs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Classes {
    /// The smaller value, read as −1.
    pub negative: f64,
    /// The larger value, read as +1.
    pub positive: f64,
    /// The fraction of rows labelled +1.
    pub positive_fraction: f64,
}

/// The labels as the fits take them: ±1 for two classes (with the classes),
/// else centred and divided by their sd (ddof 0; with the sd).
fn scaled_labels(y: &DVector<f64>, logistic: bool) -> crate::Result<(DVector<f64>, f64, Option<Classes>)> {
    let n = y.len();
    if logistic {
        let mut values: Vec<f64> = y.iter().copied().collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        if values.len() != 2 {
            let shown: Vec<String> = values.iter().take(5).map(|v| format!("{v}")).collect();
            return Err(invalid(
                "label",
                format!(
                    "the logistic model needs exactly two distinct label values; found {}: {}{}",
                    values.len(),
                    shown.join(", "),
                    if values.len() > 5 { ", …" } else { "" }
                ),
            ));
        }
        let pm = y.map(|v| if v == values[1] { 1.0 } else { -1.0 });
        let positive_fraction = pm.iter().filter(|v| **v > 0.0).count() as f64 / n as f64;
        let classes = Classes {
            negative: values[0],
            positive: values[1],
            positive_fraction,
        };
        return Ok((pm, 1.0, Some(classes)));
    }
    let ym = y.mean();
    let yc = y.map(|v| v - ym);
    let spread = yc.amax();
    let sd = if spread > 0.0 {
        spread * ((&yc / spread).norm_squared() / n as f64).sqrt()
    } else {
        0.0
    };
    if !(sd > 0.0 && sd > 1e-12 * ym.abs()) {
        return Err(invalid(
            "label",
            format!("every label is {ym}: constant labels carry no signal"),
        ));
    }
    Ok((yc / sd, sd, None))
}

fn build(
    x: &DMatrix<f64>,
    names: &[String],
    y: Option<&DVector<f64>>,
    standardize: bool,
    model: Option<ModelChoice>,
) -> crate::Result<DataSpectrum> {
    if let Some(ModelChoice::Huber { m }) = model
        && !(m.is_finite() && m > 0.0)
    {
        return Err(invalid(
            "huber_m",
            format!("{m} is not allowed: a threshold 0 < M < ∞ in units of sd(y)"),
        ));
    }
    let c = Centred::new(x, names, standardize).map_err(|e| invalid("data", e))?;
    let (n, k) = (c.rows, c.eigenvalues.len());
    let mut out = DataSpectrum {
        rows: n,
        columns: c.columns,
        constant: c.constant.clone(),
        null_directions: c.null_directions,
        eigenvalues: c.eigenvalues.clone(),
        teacher: vec![1.0; k],
        standardized: standardize,
        labels: None,
        classes: None,
        effective: None,
    };
    let Some(y) = y else {
        return Ok(out);
    };
    if y.len() != n {
        return Err(invalid("label", format!("{} labels for {n} rows", y.len())));
    }
    if let Some((i, v)) = y.iter().enumerate().find(|(_, v)| !propdp_sim::real::in_range(**v)) {
        return Err(invalid(
            "label",
            format!(
                "row {} is {v:e}: every label must be a finite number of magnitude at most {:e} (rescale \
                 the labels)",
                i + 1,
                propdp_sim::real::MAX_MAGNITUDE
            ),
        ));
    }
    if n <= k + 1 {
        return Err(invalid(
            "label",
            format!("{n} rows for {k} directions: the label noise is not identifiable (needs n > k + 1)"),
        ));
    }
    let (ys, sd, classes) = scaled_labels(y, matches!(model, Some(ModelChoice::Logistic { .. })))?;
    let ym = ys.mean();
    let yc = ys.map(|v| v - ym);
    // scores' covariance with y, over λ: the coefficients in the eigenbasis
    let xty = c.vectors.tr_mul(&c.xc.tr_mul(&yc)) / n as f64;
    let coef: Vec<f64> = xty.iter().zip(&c.eigenvalues).map(|(v, l)| v / l).collect();
    let explained: f64 = coef.iter().zip(&c.eigenvalues).map(|(c, l)| l * c * c).sum::<f64>() * n as f64;
    let total = yc.norm_squared();
    let noise2 = (total - explained).max(0.0) / (n - k - 1) as f64;
    let debiased: Vec<f64> = coef
        .iter()
        .zip(&c.eigenvalues)
        .map(|(c, l)| (c * c - noise2 / (n as f64 * l)).max(0.0))
        .collect();
    // s² = λ̄·k·mean(c²) = Σλ·mean(c²)
    let s2 = c.eigenvalues.iter().sum::<f64>() * debiased.iter().sum::<f64>() / k as f64;
    if s2 <= 0.0 {
        return Err(invalid(
            "label",
            "the labels carry no linear signal beyond their noise: every debiased teacher energy is 0".into(),
        ));
    }
    if !(s2.is_finite() && noise2.is_finite() && debiased.iter().all(|e| e.is_finite())) {
        return Err(invalid(
            "label",
            format!("the fit of the labels is out of range (s² = {s2:e}, noise² = {noise2:e}): rescale them"),
        ));
    }
    out.teacher = debiased;
    out.classes = classes;
    if classes.is_none() {
        out.labels = Some(LabelFit {
            s2,
            noise_sd: noise2.sqrt(),
            r2: if total > 0.0 { explained / total } else { 0.0 },
            label_sd: sd,
        });
    }
    let Some(model) = model else {
        return Ok(out);
    };
    let rows = propdp_sim::real::RealRows::new(&c);
    let design = Design {
        xt: &rows.xt,
        eigenvalues: &c.eigenvalues,
        teacher: &out.teacher,
    };
    let probe = Probe {
        directions: k,
        rows: n,
        noise2,
        explained: explained / n as f64,
    };
    out.effective = Some(match model {
        ModelChoice::Logistic { data } => effective_model::classification(&design, &ys, &probe, data)?,
        ModelChoice::Huber { m } => effective_model::regression(&design, &ys, &probe, s2, Some(m))?,
        ModelChoice::LeastSquares => effective_model::regression(&design, &ys, &probe, s2, None)?,
    });
    Ok(out)
}

impl DataSpectrum {
    /// The spectrum of the file: eigenvalues and teacher energies — the
    /// data's, or for two clusters the within-class covariance's and the
    /// class means' ([`effective_model::two_cluster`]).
    pub fn atoms(&self) -> (&[f64], &[f64]) {
        self.two_clusters().unwrap_or((&self.eigenvalues, &self.teacher))
    }

    fn two_clusters(&self) -> Option<(&[f64], &[f64])> {
        self.effective.as_ref().and_then(|e| match &e.data {
            effective_model::DataModel::TwoCluster {
                eigenvalues, teacher, ..
            } => Some((eigenvalues.as_slice(), teacher.as_slice())),
            effective_model::DataModel::Teacher => None,
        })
    }

    /// The spectrum file (header `eigenvalue,weight,teacher`), its `#`
    /// comment lines stating where it came from, the scaling and, with
    /// labels, the s² and noise a config should use (and, with a model, the
    /// [`DataSpectrum::summary`] and the machine-readable effective-model
    /// line that `[problem]` reads).
    pub fn to_csv(&self, source: &str) -> String {
        let clusters = self.two_clusters();
        let (eigenvalues, teacher) = self.atoms();
        let k = eigenvalues.len();
        let mean = eigenvalues.iter().sum::<f64>() / k as f64;
        let mut out = format!(
            "# propdp spectrum of {source}: {} rows, {} columns ({} constant dropped{}), {} directions ({} without variance dropped)\n\
             # eigenvalues of {}, columns centred{}; propdp divides them by their mean {mean:e} when it reads this file\n",
            self.rows,
            self.columns,
            self.constant.len(),
            if self.constant.is_empty() {
                String::new()
            } else {
                format!(": {}", self.constant.join(", "))
            },
            k,
            self.null_directions,
            if clusters.is_some() {
                "the pooled within-class covariance of the rows (propdp's scale, mean ‖x‖² = 1)"
            } else {
                "(1/n)·X_cᵀX_c"
            },
            if self.standardized { " and standardised" } else { "" },
        );
        match (&self.labels, &self.classes) {
            _ if clusters.is_some() => {
                out += "# teacher energies θ*_k² = μ_k²/λ_k² of the class means' half-difference μ, debiased (two clusters: μ = Σ_wθ*/d)\n";
            }
            (Some(f), _) => {
                out += &format!(
                    "# teacher energies from the least-squares fit of the labels (centred and divided by their sd \
                     {:e}, ddof 0; R² = {:.4}), debiased; in a config (units of sd(y)): s2 = {:e}, noise = {{ law = \
                     \"gaussian\", sd = {:e} }}\n",
                    f.label_sd, f.r2, f.s2, f.noise_sd
                );
            }
            (None, Some(_)) => {
                out += "# teacher energies from the least-squares fit of the ±1 labels, debiased (∝ θ* for Gaussian rows)\n";
            }
            (None, None) => out += "# no labels: the teacher is spread (the same energy in every direction)\n",
        }
        for line in self.summary() {
            out += &format!("# {line}\n");
        }
        if let Some(e) = &self.effective {
            let line = propdp_core::effective_model::EffectiveModel {
                model: e.model,
                s2: e.s2,
                noise_sd: e.noise_sd,
                clusters: match &e.data {
                    effective_model::DataModel::TwoCluster { balance, within, .. } => {
                        Some(propdp_core::effective_model::Clusters {
                            balance: *balance,
                            within: *within,
                        })
                    }
                    effective_model::DataModel::Teacher => None,
                },
            };
            out += &line.line();
            out += "\n";
        }
        out += "eigenvalue,weight,teacher\n";
        for (l, e) in eigenvalues.iter().zip(teacher) {
            out += &format!("{l:e},{:e},{e:e}\n", 1.0 / k as f64);
        }
        out
    }

    /// What the effective model says (empty without one): the units, s² with
    /// its interval, the non-private fit's error against the observed one,
    /// each check, and whether the model describes the data.
    pub fn summary(&self) -> Vec<String> {
        let Some(e) = &self.effective else {
            return Vec::new();
        };
        let mut out = vec![format!(
            "effective model (computed without privacy, for planning): columns standardised, rows scaled to mean \
             ‖x‖² = 1, {}",
            match (&self.classes, &self.labels) {
                (Some(c), _) => format!(
                    "labels {} → +1 ({:.1}% of rows), {} → −1",
                    c.positive,
                    100.0 * c.positive_fraction,
                    c.negative
                ),
                (None, Some(f)) => format!("labels centred and divided by their sd {:e} (ddof 0)", f.label_sd),
                (None, None) => String::new(),
            }
        )];
        let (lo, hi) = e.s2_interval;
        let hi = if hi.is_finite() {
            format!("{hi:.4}")
        } else {
            "∞".into()
        };
        out.push(match (e.noise_sd, &e.data) {
            (None, effective_model::DataModel::TwoCluster { balance, within, .. }) => format!(
                "model = logistic, data_model = two_cluster: s2 = {:.4} (one s.e.: {lo:.4} to {hi}), separation \
                 ρ_w = {:.4} (balanced Bayes error {:.4}), balance = {balance:.4}, within = {within:.4}; the \
                 separation is matched to the observed error",
                e.s2,
                e.rho,
                propdp_core::loss::norm_cdf(-e.rho.sqrt())
            ),
            (None, _) => format!(
                "model = logistic: s2 = {:.4} (one s.e.: {lo:.4} to {hi}), teacher field variance ρ = {:.4}",
                e.s2, e.rho
            ),
            (Some(sd), _) => format!(
                "model = {}: s2 = {:.4} (one s.e.: {lo:.4} to {hi}), noise sd = {sd:.4} (units of sd(y))",
                e.model.name(),
                e.s2
            ),
        });
        let fit = match (e.model, e.huber_m) {
            (propdp_core::ModelKind::Logistic, _) => "logistic regression".to_string(),
            (_, Some(m)) => format!("Huber regression (M = {m})"),
            _ => "least-squares regression".to_string(),
        };
        let h = &e.headline;
        out.push(format!(
            "under this model, non-private ridge {fit} (λ₀ = {}) at n = {} (δ = {:.4}) has test {} {:.4}{} (observed \
             {:.4} ± {:.4}, {}-fold cross-fit{})",
            effective_model::LAMBDA0,
            e.n_train,
            e.delta,
            if e.noise_sd.is_none() { "error" } else { "MSE" },
            h.predicted,
            if h.predicted_se > 0.0 {
                format!(" ± {:.4}", h.predicted_se)
            } else {
                String::new()
            },
            h.observed,
            h.observed_se,
            effective_model::FOLDS,
            if e.noise_sd.is_none() {
                "; s2 is matched to it"
            } else {
                ""
            }
        ));
        for c in &e.checks {
            out.push(format!(
                "check, {}: predicted {:.4} ± {:.4}, observed {:.4} ± {:.4} (z = {:.2})",
                c.name,
                c.predicted,
                c.predicted_se,
                c.observed,
                c.observed_se,
                c.z()
            ));
        }
        let failed: Vec<String> = std::iter::once(h)
            .chain(&e.checks)
            .filter(|c| !c.agrees())
            .map(|c| format!("{} (z = {:.1})", c.name, c.z()))
            .collect();
        let balance_only = failed.len() == 1 && e.checks.iter().any(|c| c.is_balance() && !c.agrees());
        out.push(if failed.is_empty() {
            format!(
                "the model describes these data: every check within {} s.e.",
                effective_model::DISAGREE_Z
            )
        } else if balance_only {
            format!(
                "the model describes these data but for their class balance: {} beyond {} s.e. — the model \
                 has no intercept, nor has propdp's training loop (docs/training_loop.md): its predictions are \
                 for that loop on these labels (how close they came on such data sets: docs/real_data.md, \
                 \"Your task\")",
                failed.join("; "),
                effective_model::DISAGREE_Z
            )
        } else {
            format!(
                "the model does not describe these data: {} beyond {} s.e.; its predictions for them are not to be \
                 trusted",
                failed.join("; "),
                effective_model::DISAGREE_Z
            )
        });
        out
    }
}

/// A data file — a numeric CSV with a header row, or a 2-D float64 `.npy`
/// array (columns x0, x1, …) —: the column names and the n × p matrix.
pub fn read_data(path: &std::path::Path) -> crate::Result<(Vec<String>, DMatrix<f64>)> {
    let bytes = propdp_core::input::read_regular(path).with_context(|| format!("reading {}", path.display()))?;
    parse_data(&bytes, path).map_err(|e| invalid("data", format!("{}: {e}", path.display())))
}

/// The spectrum of a data file (CSV or `.npy`; `propdp spectrum DATA`): the column
/// `label`, if named, holds the labels (regression, or two classes with
/// `model` logistic); the columns `drop` are not used at all (e.g. a class
/// column); every other column is a feature. With `model` the columns are
/// standardised and the effective model is estimated (it needs `label`).
pub fn from_file(
    path: &std::path::Path,
    label: Option<&str>,
    drop: &[String],
    standardize: bool,
    model: Option<ModelChoice>,
) -> crate::Result<DataSpectrum> {
    let (names, x) = read_data(path)?;
    if let Some(c) = drop.iter().find(|c| !names.contains(c) || Some(c.as_str()) == label) {
        return Err(invalid(
            "drop",
            format!(
                "{c:?} is not a feature column of {} (columns: {}{})",
                path.display(),
                names.join(", "),
                label.map_or(String::new(), |l| format!("; {l:?} is the label"))
            ),
        ));
    }
    let keep: Vec<usize> = (0..names.len()).filter(|&j| !drop.contains(&names[j])).collect();
    let (names, x): (Vec<String>, DMatrix<f64>) = (
        keep.iter().map(|&j| names[j].clone()).collect(),
        x.select_columns(&keep),
    );
    let Some(label) = label else {
        if model.is_some() {
            return Err(invalid(
                "label",
                "--model needs the labels: name their column with --label".into(),
            ));
        }
        return spectrum(&x, &names, None, standardize);
    };
    let Some(j) = names.iter().position(|n| n == label) else {
        return Err(invalid(
            "label",
            format!("{label:?} is not a column of {}: {}", path.display(), names.join(", ")),
        ));
    };
    let y = x.column(j).into_owned();
    let features: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != j)
        .map(|(_, n)| n.clone())
        .collect();
    build(
        &x.remove_column(j),
        &features,
        Some(&y),
        standardize || model.is_some(),
        model,
    )
}

/// [`spectrum`] (or, with `model`, [`effective`]) of rows given as vectors
/// of `names.len()` values each (and labels `y`, one per row), for callers
/// without nalgebra (Python).
pub fn of_rows(
    rows: &[Vec<f64>],
    names: &[String],
    y: Option<&[f64]>,
    standardize: bool,
    model: Option<ModelChoice>,
) -> crate::Result<DataSpectrum> {
    let x = DMatrix::from_fn(rows.len(), names.len(), |i, j| rows[i][j]);
    let y = y.map(DVector::from_column_slice);
    if model.is_some() && y.is_none() {
        return Err(invalid("label", "a model needs the labels y".into()));
    }
    build(&x, names, y.as_ref(), standardize || model.is_some(), model)
}

/// Write a spectrum file to `out`, which must not exist (propdp never
/// replaces a file it did not write).
pub fn write_new(out: &std::path::Path, text: &str) -> crate::Result<()> {
    if out.symlink_metadata().is_ok() {
        return Err(crate::error::Refused::new(
            format!(
                "{} exists: propdp does not replace a file it did not write; ",
                out.display()
            ),
            Some(crate::error::Advice::ChooseOtherOut),
        )
        .into());
    }
    crate::file::write_atomic(out, text)
}
