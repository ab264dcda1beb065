//! Real rows: a user's data matrix as the features of a simulation
//! (`[simulation] data`, docs/covariance.md), and its spectrum.
//!
//! The columns are centred (and, if asked, standardised), constant columns
//! dropped, and the rows rotated into the eigenbasis of the sample
//! covariance S = X_cᵀX_c/N, directions without variance (λ ≤ 1e-12·λ_max)
//! dropped. Every estimator propdp simulates is rotation equivariant (an
//! isotropic ridge, isotropic privacy noise), so the rotation changes no
//! metric; it makes the teacher's energies per eigen-direction and the
//! prediction error (θ̂ − θ*)ᵀΣ(θ̂ − θ*)/d direct. The coordinates are then
//! divided by √(Σλ) so that the mean ‖xᵢ‖² over the data set is 1, the scale
//! of `problem.covariance` (whose eigenvalues ω = λ/λ̄ this data set gives).

use nalgebra::{DMatrix, SymmetricEigen};
use propdp_core::covariance::Covariance;
use rand::{Rng, RngExt};

use crate::data::Coordinates;

/// Largest magnitude of a value (and smallest spread of a varying column,
/// inverted) a data set may hold: squares and sums of squares over any
/// realistic number of rows then stay finite and normal.
pub const MAX_MAGNITUDE: f64 = 1e140;

/// Whether a value (a feature or a label) is finite and of magnitude at
/// most [`MAX_MAGNITUDE`].
pub fn in_range(v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_MAGNITUDE
}

/// A data set centred and decomposed: what `propdp spectrum` reports and
/// what a real-row simulation draws from.
#[derive(Debug, Clone, PartialEq)]
pub struct Centred {
    /// Rows N.
    pub rows: usize,
    /// Columns given (labels excluded).
    pub columns: usize,
    /// The constant columns dropped, by name.
    pub constant: Vec<String>,
    /// Directions dropped for carrying no variance.
    pub null_directions: usize,
    /// Eigenvalues of the sample covariance, largest first (the kept ones).
    pub eigenvalues: Vec<f64>,
    /// The centred (standardised) columns, N × p′.
    pub xc: DMatrix<f64>,
    /// The eigenvectors of the kept directions, p′ × k, in eigenvalue order.
    pub vectors: DMatrix<f64>,
}

impl Centred {
    /// Centre (and standardise) the columns of `x` (N × p, named `names`),
    /// drop constant ones, and decompose the sample covariance. An error
    /// (text) for fewer than 2 rows, a non-finite value or no varying column.
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// let x = DMatrix::from_row_slice(4, 3, &[2.0, 1.0, 7.0, -2.0, 1.0, 7.0, 2.0, -1.0, 7.0, -2.0, -1.0, 7.0]);
    /// let names = ["a".to_string(), "b".to_string(), "c".to_string()];
    /// let c = propdp_sim::real::Centred::new(&x, &names, false).unwrap();
    /// assert_eq!((c.eigenvalues.clone(), c.constant.clone()), (vec![4.0, 1.0], vec!["c".to_string()]));
    /// ```
    pub fn new(x: &DMatrix<f64>, names: &[String], standardize: bool) -> Result<Centred, String> {
        let (n, p) = x.shape();
        if n < 2 {
            return Err(format!("{n} rows: at least 2 are needed"));
        }
        if let Some((i, j)) = (0..n)
            .flat_map(|i| (0..p).map(move |j| (i, j)))
            .find(|&(i, j)| !x[(i, j)].is_finite())
        {
            return Err(format!(
                "row {} column {:?} is {}: every value must be a finite number",
                i + 1,
                names[j],
                x[(i, j)]
            ));
        }
        // squares and their sums over every row and column must stay finite and normal
        if let Some((i, j)) = (0..n)
            .flat_map(|i| (0..p).map(move |j| (i, j)))
            .find(|&(i, j)| x[(i, j)].abs() > MAX_MAGNITUDE)
        {
            return Err(format!(
                "row {} column {:?} is {:e}: magnitudes above {MAX_MAGNITUDE:e} overflow the sample covariance \
                 (rescale the column)",
                i + 1,
                names[j],
                x[(i, j)]
            ));
        }
        let mut constant = Vec::new();
        let mut cols = Vec::new();
        // (sd, name) of the columns with the largest and the smallest spread
        let (mut widest, mut narrowest) = ((0.0, ""), (f64::INFINITY, ""));
        for (j, name) in names.iter().enumerate().take(p) {
            let c = x.column(j);
            let mean = c.mean();
            let mut centred = c.map(|v| v - mean);
            // the sd from the scaled column: its squares neither underflow nor overflow
            let spread = centred.amax();
            let sd = if spread > 0.0 {
                spread * ((&centred / spread).norm_squared() / n as f64).sqrt()
            } else {
                0.0
            };
            if sd == 0.0 || sd <= 1e-12 * mean.abs() {
                constant.push(name.clone());
                continue;
            }
            if spread < 1.0 / MAX_MAGNITUDE {
                return Err(format!(
                    "column {name:?} varies by at most {spread:e}: spreads below {:e} underflow the sample \
                     covariance (rescale the column)",
                    1.0 / MAX_MAGNITUDE
                ));
            }
            if sd > widest.0 {
                widest = (sd, name.as_str());
            }
            if sd < narrowest.0 {
                narrowest = (sd, name.as_str());
            }
            if standardize {
                centred /= sd;
            }
            cols.push(centred);
        }
        // directions below 1e-12 of the largest eigenvalue are lost to rounding: columns whose variances
        // differ by more would be dropped as if they had none
        if !standardize && widest.0 > 1e6 * narrowest.0 {
            return Err(format!(
                "column {:?} spreads {:.1e} times as much as column {:?} (sd {:e} against {:e}): variances that \
                 differ by more than 1e12 are beyond the sample covariance's resolution in f64, and the smaller \
                 would be lost as directions without variance; standardize the columns (`--standardize`, Python \
                 `standardize=True`) or \
                 rescale them",
                widest.1,
                widest.0 / narrowest.0,
                narrowest.1,
                widest.0,
                narrowest.0
            ));
        }
        if cols.is_empty() {
            return Err("every column is constant".into());
        }
        let xc = DMatrix::from_columns(&cols);
        let eig = SymmetricEigen::new(xc.tr_mul(&xc) / n as f64);
        let mut order: Vec<usize> = (0..eig.eigenvalues.len()).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
        let top = eig.eigenvalues[order[0]];
        if !(top.is_finite() && top > 0.0) {
            return Err(format!(
                "the sample covariance's largest eigenvalue is {top:e}: the values are out of range (rescale the columns)"
            ));
        }
        let kept: Vec<usize> = order
            .into_iter()
            .filter(|&k| eig.eigenvalues[k] > 1e-12 * top)
            .collect();
        let vectors = DMatrix::from_columns(&kept.iter().map(|&k| eig.eigenvectors.column(k)).collect::<Vec<_>>());
        Ok(Centred {
            rows: n,
            columns: p,
            constant,
            null_directions: cols.len() - kept.len(),
            eigenvalues: kept.iter().map(|&k| eig.eigenvalues[k]).collect(),
            xc,
            vectors,
        })
    }
}

/// The rows of a data set in propdp's scale, ready to be drawn from.
#[derive(Debug, Clone, PartialEq)]
pub struct RealRows {
    /// The rows as columns (d × N): eigen-coordinates over √(Σλ).
    pub xt: DMatrix<f64>,
    /// ω_k = λ_k/λ̄ of every coordinate.
    pub omega: Vec<f64>,
}

impl RealRows {
    /// The rows of a centred data set (module docs).
    pub fn new(c: &Centred) -> RealRows {
        let total: f64 = c.eigenvalues.iter().sum();
        let k = c.eigenvalues.len() as f64;
        let xt = (&c.xc * &c.vectors).transpose() / total.sqrt();
        RealRows {
            xt,
            omega: c.eigenvalues.iter().map(|l| l * k / total).collect(),
        }
    }

    /// Features d.
    pub fn d(&self) -> usize {
        self.xt.nrows()
    }

    /// Rows N.
    pub fn rows(&self) -> usize {
        self.xt.ncols()
    }
}

/// Real rows with the teacher's scale per coordinate: what a repetition
/// draws its training and test rows from.
#[derive(Debug, Clone, PartialEq)]
pub struct RealData {
    /// The rows.
    pub rows: RealRows,
    /// √ω (for pred_err2) and √e (the teacher) of every coordinate.
    pub coords: Coordinates,
    /// Where the rows came from (the data file), for records.
    pub source: String,
    /// The data's own labels (none: labels are drawn from a synthetic
    /// teacher per repetition): regression labels standardised
    /// ([`standardized_labels`]), classification labels ±1 ([`class_labels`]).
    pub labels: Option<Vec<f64>>,
    /// The column `labels` came from, for records.
    pub label_column: Option<String>,
}

impl RealData {
    /// The rows with a teacher spread evenly (no covariance) or with the
    /// energies of `covariance`, whose atoms must be this data set's
    /// eigen-directions in order (a spectrum file `propdp spectrum` wrote
    /// of it): an error (text) otherwise.
    pub fn new(rows: RealRows, covariance: Option<&Covariance>) -> Result<RealData, String> {
        let d = rows.d();
        let teacher_sd = match covariance {
            None => vec![1.0; d],
            Some(c) => {
                let atoms = c.atoms();
                if atoms.len() != d {
                    return Err(format!(
                        "problem.covariance has {} atoms, the data {d} eigen-directions: the teacher's energies \
                         must be given per direction of this data set (write them with `propdp spectrum`)",
                        atoms.len()
                    ));
                }
                if let Some((k, a)) = atoms
                    .iter()
                    .enumerate()
                    .find(|(k, a)| (a.eigenvalue / rows.omega[*k] - 1.0).abs() > 1e-6)
                {
                    return Err(format!(
                        "problem.covariance atom {k} has eigenvalue {:e}, the data's direction {k} {:e} \
                         (both over their mean): the spectrum is not this data set's",
                        a.eigenvalue, rows.omega[k]
                    ));
                }
                atoms.iter().map(|a| a.teacher.sqrt()).collect()
            }
        };
        let coords = Coordinates {
            feature_sd: rows.omega.iter().map(|w| w.sqrt()).collect(),
            teacher_sd,
        };
        Ok(RealData {
            rows,
            coords,
            source: String::new(),
            labels: None,
            label_column: None,
        })
    }

    /// The indices of the training rows (n) and test rows (m = min(2n,
    /// N − n)) of one repetition: a uniformly random choice without replacement.
    pub fn split<R: Rng>(&self, n: usize, rng: &mut R) -> (Vec<usize>, Vec<usize>) {
        let total = self.rows.rows();
        let m = (2 * n).min(total - n);
        let mut index: Vec<usize> = (0..total).collect();
        for i in 0..n + m {
            let j = rng.random_range(i..total);
            index.swap(i, j);
        }
        index.truncate(n + m);
        let test = index.split_off(n);
        (index, test)
    }

    /// The rows `index` as columns (d × |index|).
    pub fn rows_at(&self, index: &[usize]) -> DMatrix<f64> {
        DMatrix::from_columns(&index.iter().map(|&i| self.rows.xt.column(i)).collect::<Vec<_>>())
    }
}

/// A data set's own label column as a simulation fits it: classification
/// labels ±1 ([`class_labels`]) for logistic regression, otherwise
/// regression labels standardised ([`standardized_labels`]); an error
/// (text) for a value out of range ([`in_range`]) or a column that cannot
/// serve.
pub fn own_labels(y: &[f64], classes: bool) -> Result<Vec<f64>, String> {
    if let Some(v) = y.iter().find(|v| !in_range(**v)) {
        return Err(format!(
            "a column of finite numbers of magnitude at most {MAX_MAGNITUDE:e} (it holds {v:e}; rescale it)"
        ));
    }
    if classes {
        class_labels(y)
    } else {
        standardized_labels(y)
    }
}

/// The data's own regression labels in propdp's units: centred and
/// divided by their standard deviation (ddof = 0, numpy's default) over
/// the whole column — docs/training_loop.md's recipe; an error (text) for a
/// constant column.
///
/// ```
/// let y = propdp_sim::real::standardized_labels(&[1.0, 3.0, 5.0, 7.0]).unwrap();
/// // mean 4, sd √5
/// assert!((y[0] + 3.0 / 5f64.sqrt()).abs() < 1e-15 && (y[3] - 3.0 / 5f64.sqrt()).abs() < 1e-15);
/// assert!(propdp_sim::real::standardized_labels(&[2.0, 2.0]).is_err());
/// ```
pub fn standardized_labels(y: &[f64]) -> Result<Vec<f64>, String> {
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let centred: Vec<f64> = y.iter().map(|v| v - mean).collect();
    // the sd from the scaled column: its squares neither underflow nor overflow
    let spread = centred.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let sd = if spread > 0.0 {
        spread * (centred.iter().map(|v| (v / spread).powi(2)).sum::<f64>() / y.len() as f64).sqrt()
    } else {
        0.0
    };
    if sd == 0.0 || sd <= 1e-12 * mean.abs() || spread < 1.0 / MAX_MAGNITUDE {
        return Err(format!(
            "a label column that varies (it is constant at {mean:e}, or varies by less than {:e})",
            1.0 / MAX_MAGNITUDE
        ));
    }
    Ok(centred.iter().map(|v| v / sd).collect())
}

/// The data's own classification labels as ±1: the column must take
/// exactly two distinct values, the larger mapped to +1 and the smaller to
/// −1 (0/1 and −1/+1 columns keep their meaning); an error (text) naming
/// the values found otherwise.
///
/// ```
/// use propdp_sim::real::class_labels;
/// assert_eq!(class_labels(&[0.0, 1.0, 1.0]).unwrap(), vec![-1.0, 1.0, 1.0]);
/// assert_eq!(class_labels(&[3.0, 2.0]).unwrap(), vec![1.0, -1.0]);
/// assert!(class_labels(&[0.0, 1.0, 2.0]).unwrap_err().contains("0, 1, 2"));
/// ```
pub fn class_labels(y: &[f64]) -> Result<Vec<f64>, String> {
    let mut values = y.to_vec();
    values.sort_by(f64::total_cmp);
    values.dedup_by(|a, b| a == b);
    let &[_, high] = values.as_slice() else {
        let shown: Vec<String> = values.iter().take(6).map(|v| format!("{v}")).collect();
        let more = if values.len() > 6 { ", …" } else { "" };
        return Err(format!(
            "a column of exactly two distinct values for logistic regression (the larger becomes +1, the \
             smaller −1); it holds {} distinct value{}: {}{more}",
            values.len(),
            if values.len() == 1 { "" } else { "s" },
            shown.join(", ")
        ));
    };
    Ok(y.iter().map(|&v| if v == high { 1.0 } else { -1.0 }).collect())
}

/// A data file's columns (names) and N × p matrix: a NumPy `.npy` file
/// (by its extension; a 2-D float64 array, columns named x0, x1, …) or a
/// numeric CSV text with a header row ([`parse_csv`]); an error (text)
/// naming the line, column or what the array is.
pub fn parse_data(bytes: &[u8], path: &std::path::Path) -> Result<(Vec<String>, DMatrix<f64>), String> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")) {
        return parse_npy(bytes);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "a CSV text file (UTF-8) or a .npy file".to_string())?;
    parse_csv(propdp_core::input::without_bom(text))
}

/// A `.npy` file's 2-D float64 array (C or Fortran order), columns named x0, x1, ….
pub fn parse_npy(bytes: &[u8]) -> Result<(Vec<String>, DMatrix<f64>), String> {
    let npy = npyz::NpyFile::new(bytes).map_err(|e| format!("not a .npy file ({e})"))?;
    let shape = npy.shape().to_vec();
    let &[rows, cols] = shape.as_slice() else {
        return Err(format!("a 2-D array (rows × columns), not one of shape {shape:?}"));
    };
    let (rows, cols) = (rows as usize, cols as usize);
    let fortran = matches!(npy.order(), npyz::Order::Fortran);
    let data: Vec<f64> = npy
        .into_vec::<f64>()
        .map_err(|e| format!("an array of float64 values ({e}): save X.astype(float)"))?;
    let m = if fortran {
        DMatrix::from_column_slice(rows, cols, &data)
    } else {
        DMatrix::from_row_slice(rows, cols, &data)
    };
    Ok(((0..cols).map(|j| format!("x{j}")).collect(), m))
}

/// A numeric CSV text with a header row: the column names and the N × p
/// matrix; an error (text) naming the line and column.
///
/// ```
/// let (names, x) = propdp_sim::real::parse_csv("a,b\n1,2\n3,4\n").unwrap();
/// assert_eq!((names.len(), x[(1, 0)]), (2, 3.0));
/// assert!(propdp_sim::real::parse_csv("a,b\n1,x\n").unwrap_err().contains("line 2"));
/// assert!(propdp_sim::real::parse_csv("a,y,y\n1,2,2\n").unwrap_err().contains("twice"));
/// ```
pub fn parse_csv(text: &str) -> Result<(Vec<String>, DMatrix<f64>), String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err("the file is empty".into());
    };
    let names: Vec<String> = header
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .collect();
    for (j, name) in names.iter().enumerate() {
        if let Some(k) = names[..j].iter().position(|n| n == name) {
            return Err(format!(
                "line 1: the column name {name:?} is given twice (columns {} and {}): names must be unique",
                k + 1,
                j + 1
            ));
        }
    }
    let (mut values, mut rows) = (Vec::new(), 0);
    for (i, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != names.len() {
            return Err(format!(
                "line {}: {} values for {} columns",
                i + 1,
                cells.len(),
                names.len()
            ));
        }
        for (j, c) in cells.iter().enumerate() {
            values.push(
                c.parse::<f64>()
                    .map_err(|_| format!("line {} column {:?}: {c:?} is not a number", i + 1, names[j]))?,
            );
        }
        rows += 1;
    }
    Ok((names.clone(), DMatrix::from_row_slice(rows, names.len(), &values)))
}
