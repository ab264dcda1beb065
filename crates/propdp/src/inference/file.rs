//! Reading a data file for [`super::fit`] (`propdp infer DATA`): a CSV
//! with a header row or a 2-D float64 `.npy`, the label column named, the
//! rest the features, and an optional public covariance file.

use super::{Inference, Spec, fit_owned, fit_whitened_owned};
use crate::error::Argument;

/// [`super::fit`] on a data file (`propdp infer DATA`: a CSV with a header row or
/// a 2-D float64 `.npy`): the column `label` holds the labels, every other
/// column is a feature. With `covariance`, a file of the same kinds holding
/// the public d × d covariance Σ ([`super::fit_whitened`]).
pub fn fit_file(
    path: &std::path::Path,
    label: &str,
    spec: &Spec,
    seed: Option<u64>,
    covariance: Option<&std::path::Path>,
) -> crate::Result<Inference> {
    let (names, x) = crate::data_spectrum::read_data(path)?;
    let Some(j) = names.iter().position(|n| n == label) else {
        return Err(Argument::new(
            "label",
            format!(
                ": {label:?} is not a column of {}: {}",
                path.display(),
                names.join(", ")
            ),
        )
        .into());
    };
    let y: Vec<f64> = x.column(j).iter().copied().collect();
    let (n, d) = (x.nrows(), x.ncols() - 1);
    // row-major without the label, as the fit reads the rows: one copy, and the file's matrix dropped
    // before the fit (the data once more at the peak, not four times)
    let mut rows = crate::error::reserve(n * d, "the rows")?;
    for i in 0..n {
        rows.extend((0..x.ncols()).filter(|&k| k != j).map(|k| x[(i, k)]));
    }
    drop(x);
    match covariance {
        None => fit_owned(rows, n, d, &y, spec, seed),
        Some(c) => {
            let (_, sigma) = crate::data_spectrum::read_data(c)?;
            if sigma.shape() != (d, d) {
                return Err(Argument::new(
                    "covariance",
                    format!(
                        ": {} is {} × {}; the data has d = {d} features",
                        c.display(),
                        sigma.nrows(),
                        sigma.ncols()
                    ),
                )
                .into());
            }
            fit_whitened_owned(rows, n, d, &y, sigma.transpose().as_slice(), spec, seed)
        }
    }
}
