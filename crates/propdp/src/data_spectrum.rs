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

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use anyhow::Context;

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
    let (n, p) = x.shape();
    if n < 2 {
        return Err(invalid("data", format!("{n} rows: a spectrum needs at least 2")));
    }
    if let Some((i, j)) = (0..n)
        .flat_map(|i| (0..p).map(move |j| (i, j)))
        .find(|&(i, j)| !x[(i, j)].is_finite())
    {
        return Err(invalid(
            "data",
            format!(
                "row {} column {:?} is {}: every value must be a finite number",
                i + 1,
                names[j],
                x[(i, j)]
            ),
        ));
    }
    let mut keep = Vec::new();
    let mut constant = Vec::new();
    let mut cols: Vec<DVector<f64>> = Vec::new();
    for (j, name) in names.iter().enumerate().take(p) {
        let c = x.column(j);
        let mean = c.mean();
        let mut centred = c.map(|v| v - mean);
        let sd = (centred.norm_squared() / n as f64).sqrt();
        if sd <= 1e-12 * mean.abs().max(1e-300) || sd == 0.0 {
            constant.push(name.clone());
            continue;
        }
        if standardize {
            centred /= sd;
        }
        keep.push(j);
        cols.push(centred);
    }
    if cols.is_empty() {
        return Err(invalid("data", "every column is constant".into()));
    }
    let xc = DMatrix::from_columns(&cols);
    let s = xc.tr_mul(&xc) / n as f64;
    let eig = SymmetricEigen::new(s);
    let mut order: Vec<usize> = (0..eig.eigenvalues.len()).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let top = eig.eigenvalues[order[0]];
    let kept: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&k| eig.eigenvalues[k] > 1e-12 * top)
        .collect();
    let eigenvalues: Vec<f64> = kept.iter().map(|&k| eig.eigenvalues[k]).collect();
    let k = kept.len();
    let (teacher, labels) = match y {
        None => (vec![1.0; k], None),
        Some(y) => {
            if y.len() != n {
                return Err(invalid("label", format!("{} labels for {n} rows", y.len())));
            }
            if n <= k + 1 {
                return Err(invalid(
                    "label",
                    format!("{n} rows for {k} directions: the label noise is not identifiable (needs n > k + 1)"),
                ));
            }
            let ym = y.mean();
            let yc = y.map(|v| v - ym);
            let xty = xc.tr_mul(&yc) / n as f64;
            let c: Vec<f64> = kept
                .iter()
                .map(|&i| eig.eigenvectors.column(i).dot(&xty) / eig.eigenvalues[i])
                .collect();
            let explained: f64 = c.iter().zip(&eigenvalues).map(|(c, l)| l * c * c).sum::<f64>() * n as f64;
            let total = yc.norm_squared();
            let rss = (total - explained).max(0.0);
            let noise2 = rss / (n - k - 1) as f64;
            let debiased: Vec<f64> = c
                .iter()
                .zip(&eigenvalues)
                .map(|(c, l)| (c * c - noise2 / (n as f64 * l)).max(0.0))
                .collect();
            let mean_l = eigenvalues.iter().sum::<f64>() / k as f64;
            let s2 = mean_l * k as f64 * debiased.iter().sum::<f64>() / k as f64;
            if s2 <= 0.0 {
                return Err(invalid(
                    "label",
                    "the labels carry no linear signal beyond their noise: every debiased teacher energy is 0".into(),
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
        columns: p,
        constant,
        null_directions: keep.len() - k,
        eigenvalues,
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

/// A numeric CSV with a header row: the column names and the n × p matrix.
pub fn read_csv(path: &std::path::Path) -> crate::Result<(Vec<String>, DMatrix<f64>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(invalid("data", format!("{} is empty", path.display())));
    };
    let names: Vec<String> = header
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .collect();
    let mut values = Vec::new();
    let mut rows = 0;
    for (i, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != names.len() {
            return Err(invalid(
                "DATA",
                format!(
                    "{} line {}: {} values for {} columns",
                    path.display(),
                    i + 1,
                    cells.len(),
                    names.len()
                ),
            ));
        }
        for (j, c) in cells.iter().enumerate() {
            values.push(c.parse::<f64>().map_err(|_| {
                invalid(
                    "data",
                    format!(
                        "{} line {} column {:?}: {c:?} is not a number",
                        path.display(),
                        i + 1,
                        names[j]
                    ),
                )
            })?);
        }
        rows += 1;
    }
    Ok((names.clone(), DMatrix::from_row_slice(rows, names.len(), &values)))
}

/// The spectrum of a CSV data file (`propdp spectrum DATA`): the column
/// `label`, if named, is the regression label; every other column a feature.
pub fn from_csv(path: &std::path::Path, label: Option<&str>, standardize: bool) -> crate::Result<DataSpectrum> {
    let (names, x) = read_csv(path)?;
    let Some(label) = label else {
        return spectrum(&x, &names, None, standardize);
    };
    let Some(j) = names.iter().position(|n| n == label) else {
        return Err(invalid(
            "label",
            format!(" {label:?} is not a column of {}: {}", path.display(), names.join(", ")),
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

/// Write a spectrum file to `out`, which must not exist (propdp never
/// replaces a file it did not write).
pub fn write_new(out: &std::path::Path, text: &str) -> crate::Result<()> {
    if out.symlink_metadata().is_ok() {
        return Err(crate::error::Refused(format!(
            "{} exists: propdp does not replace a file it did not write; choose another --out",
            out.display()
        ))
        .into());
    }
    Ok(crate::file::write_atomic(out, text)?)
}
