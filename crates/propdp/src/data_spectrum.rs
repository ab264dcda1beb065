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
//! With regression labels y the teacher energies come from the least-squares
//! fit in the eigenbasis: cₖ = (vₖᵀX_cᵀy_c/n)/λ_k, the unexplained variance
//! σ̂² = RSS/(n − k − 1) is reported as label noise, and the energies are
//! the debiased squares eₖ ∝ max(cₖ² − σ̂²/(nλ_k), 0) (the fit's noise
//! inflates cₖ² by σ̂²/(nλ_k), most in the weak directions). In propdp's
//! scale (features of variance ω_k/d, ω = λ/λ̄) the ground truth is
//! θ*ₖ = cₖ√(λ̄k), so s² = λ̄k·mean(debiased cₖ²). Without labels the
//! teacher is spread (e = 1).

use anyhow::Context;
use nalgebra::{DMatrix, DVector};
use propdp_sim::real::{Centred, parse_data};

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
    /// The least-squares fit of the labels, when given.
    pub labels: Option<LabelFit>,
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
}

/// A refusal naming the argument (`data`, `label`).
fn invalid(argument: &'static str, why: String) -> crate::Error {
    Argument::new(argument, format!(": {why}")).into()
}

/// The spectrum of the rows of `x` (n × p, columns named `names`) and, if
/// given, the labels `y` (module docs).
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
    let c = Centred::new(x, names, standardize).map_err(|e| invalid("data", e))?;
    let (n, k) = (c.rows, c.eigenvalues.len());
    let (teacher, labels) = match y {
        None => (vec![1.0; k], None),
        Some(y) => {
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
            let ym = y.mean();
            let yc = y.map(|v| v - ym);
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
            let fit = LabelFit {
                s2,
                noise_sd: noise2.sqrt(),
                r2: if total > 0.0 { explained / total } else { 0.0 },
            };
            (debiased, Some(fit))
        }
    };
    Ok(DataSpectrum {
        rows: n,
        columns: c.columns,
        constant: c.constant,
        null_directions: c.null_directions,
        eigenvalues: c.eigenvalues,
        teacher,
        standardized: standardize,
        labels,
    })
}

impl DataSpectrum {
    /// The spectrum file (header `eigenvalue,weight,teacher`), its `#`
    /// comment lines stating where it came from, the scaling and, with
    /// labels, the s² and noise a config should use.
    pub fn to_csv(&self, source: &str) -> String {
        let k = self.eigenvalues.len();
        let mean = self.eigenvalues.iter().sum::<f64>() / k as f64;
        let mut out = format!(
            "# propdp spectrum of {source}: {} rows, {} columns ({} constant dropped{}), {} directions ({} without variance dropped)\n\
             # eigenvalues of (1/n)·X_cᵀX_c, columns centred{}; propdp divides them by their mean {mean:e} when it reads this file\n",
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
            if self.standardized { " and standardised" } else { "" },
        );
        if let Some(f) = &self.labels {
            out += &format!(
                "# teacher energies from the least-squares fit of the labels (R² = {:.4}), debiased; in a config: \
                 s2 = {:e}, noise = {{ law = \"gaussian\", sd = {:e} }}\n",
                f.r2, f.s2, f.noise_sd
            );
        } else {
            out += "# no labels: the teacher is spread (the same energy in every direction)\n";
        }
        out += "eigenvalue,weight,teacher\n";
        for (l, e) in self.eigenvalues.iter().zip(&self.teacher) {
            out += &format!("{l:e},{:e},{e:e}\n", 1.0 / k as f64);
        }
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
/// `label`, if named, is the regression label; the columns `drop` are not
/// used at all (e.g. a class column); every other column is a feature.
pub fn from_file(
    path: &std::path::Path,
    label: Option<&str>,
    drop: &[String],
    standardize: bool,
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
    spectrum(&x.remove_column(j), &features, Some(&y), standardize)
}

/// [`spectrum`] of rows given as vectors of `names.len()` values each (and
/// labels `y`, one per row), for callers without nalgebra (Python).
pub fn of_rows(
    rows: &[Vec<f64>],
    names: &[String],
    y: Option<&[f64]>,
    standardize: bool,
) -> crate::Result<DataSpectrum> {
    let x = DMatrix::from_fn(rows.len(), names.len(), |i, j| rows[i][j]);
    let y = y.map(DVector::from_column_slice);
    spectrum(&x, names, y.as_ref(), standardize)
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
    Ok(crate::file::write_atomic(out, text)?)
}
