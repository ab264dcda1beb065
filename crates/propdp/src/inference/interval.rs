//! One interval ([`Interval`]) and the normal quantile z_{1 − a/2} every
//! interval of a fit is built with.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::Argument;

/// An interval for one quantity: a linear contrast ⟨a, θ*⟩, the test error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The estimate (a contrast: ⟨a, θ̂⟩/α̂).
    pub estimate: f64,
    /// Its standard error.
    pub se: f64,
    /// The interval's ends.
    pub lower: f64,
    /// See `lower`.
    pub upper: f64,
}

/// z_{1 − a/2}, or the argument `alpha` at fault.
pub(super) fn quantile(alpha: f64) -> Result<f64, Argument> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Argument::new(
            "alpha",
            format!(" = {alpha} is invalid: allowed 0 < alpha < 1"),
        ));
    }
    Ok(Normal::standard().inverse_cdf(1.0 - alpha / 2.0))
}
