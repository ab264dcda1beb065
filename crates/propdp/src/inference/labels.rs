//! The labels of a fit: as the loss reads them, and (logistic, the
//! proportional interval) their mean, released by the Gaussian mechanism:
//! with an intercept it pins the teacher's ([`super::nuisance`]); without
//! one it must be near the 0 that a model without an intercept gives.
//!
//! # References
//! - Dwork, Roth (2014), *The algorithmic foundations of differential
//!   privacy*, Appendix A (the Gaussian mechanism).

use nalgebra::DVector;

use super::{Glm, Reason, Refusal};
use crate::error::Argument;

/// Standard deviations (sampling and privacy noise) by which the released
/// mean of logistic labels may miss 0 before a fit without an intercept is
/// refused
/// ([`Reason::UnbalancedLabels`]); a false refusal has probability 6e-7. At
/// 4 (6e-5) one data set in the validation's ~6000 fits was refused (n = 200,
/// ε = 32: its labels' mean −0.295 was 4.1 standard deviations from 0) — a
/// study of thousands of fits would meet one; an intercept moves the mean by
/// far more (at n = 400 a mean label of 0.25 is 5 standard deviations).
pub const LABEL_SDS: f64 = 5.0;

/// The released mean label ȳ of ±1 labels.
#[derive(Debug, Clone, Copy)]
pub(super) struct MeanLabel {
    /// ȳ, clamped to [−1, 1].
    pub mean: f64,
    /// Its noise multiplier z.
    pub z: f64,
    /// Its standard deviation, sampling and release noise: √(1/n + (z/n)²).
    pub sd: f64,
}

impl MeanLabel {
    /// Releases the mean of `labels` (±1) over `nf` rows (as released) with
    /// noise multiplier `z` and the standard normal draw `g`; without an
    /// intercept (`intercept` false) a mean more than [`LABEL_SDS`]
    /// standard deviations from 0 is refused.
    pub(super) fn release(labels: &DVector<f64>, nf: f64, z: f64, g: f64, intercept: bool) -> Result<Self, Refusal> {
        // Σ yᵢ, yᵢ = ±1: add/remove sensitivity 1 (replace-one 2, the accountant's pair)
        let mean = ((labels.sum() + z * g) / nf).clamp(-1.0, 1.0);
        let sd = (1.0 / nf + (z / nf).powi(2)).sqrt();
        if !intercept && mean.abs() > LABEL_SDS * sd {
            return Err(Refusal::new(
                Reason::UnbalancedLabels,
                format!(
                    "the released mean label is {mean:+.4}, {:.1} standard deviations ({sd:.4}) from the 0 that \
                     logistic labels without an intercept have, and the fit has none: its intervals would be \
                     wrong here; fit an intercept (intercept = true)",
                    mean.abs() / sd
                ),
            ));
        }
        Ok(MeanLabel { mean, z, sd })
    }
}

/// The labels as the loss reads them (logistic: 0/1 mapped to ∓1).
pub(super) fn read(model: Glm, y: &[f64]) -> crate::Result<DVector<f64>> {
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Argument::new("y", format!(" row {i}: {} is not finite", y[i])).into());
    }
    if model != Glm::Logistic {
        return Ok(DVector::from_column_slice(y));
    }
    let zero_one = y.iter().all(|&v| v == 0.0 || v == 1.0);
    if let Some(i) = y.iter().position(|&v| !(zero_one || v == 1.0 || v == -1.0)) {
        return Err(crate::Error::from(Refusal::new(
            Reason::Labels,
            format!("logistic labels must be ±1 or 0/1; y[{i}] = {}", y[i]),
        )));
    }
    Ok(DVector::from_iterator(
        y.len(),
        y.iter().map(|&v| if zero_one { 2.0 * v - 1.0 } else { v }),
    ))
}
