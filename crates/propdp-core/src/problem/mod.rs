//! The validated problem description: the statistical model, the DP
//! algorithm, the privacy budget its noise was calibrated to, and one sweep
//! point combining them. Each fact about a model or an algorithm (its name,
//! its loss constants, the name of its noise parameter, the λ = 0 rule) is
//! decided here, once.

mod algorithm;
mod budget;
mod model;
mod point;

pub use algorithm::{Algorithm, AlgorithmKind, LossVariant, is_noise_param, is_non_private};
pub use budget::{Budget, Target};
pub use model::{Design, Model, ModelKind, NoiseLaw, Prior};
pub use point::Point;

use crate::error::ConfigError;

/// `x` > 0 and finite, or an error naming `field`.
pub(crate) fn positive(field: &str, x: f64) -> Result<(), ConfigError> {
    if x > 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::range(field, x, "> 0 and finite"))
    }
}

/// `x` ≥ 0 and finite, or an error naming `field`.
pub(crate) fn nonneg(field: &str, x: f64) -> Result<(), ConfigError> {
    if x >= 0.0 && x.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::range(field, x, "≥ 0 and finite"))
    }
}
