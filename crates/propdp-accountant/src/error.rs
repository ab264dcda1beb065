//! The accountant's one error type: an argument outside its range, named
//! as the caller passed it (`noise_multiplier`, `sample_rate`, `steps`,
//! `delta`, …), with the value and the allowed range; or a calibration
//! target that no value of the knob meets.

/// What the accountant refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AccountantError {
    /// An argument outside its allowed range.
    #[error("{argument} = {value} is out of range: allowed {allowed}")]
    OutOfRange {
        /// The argument, as the caller named it (`sample_rate`).
        argument: String,
        /// The value given.
        value: String,
        /// The allowed range, in words (`0 < sample_rate ≤ 1`).
        allowed: String,
    },
    /// A target no value of the knob solved for meets (within its limits).
    #[error("{argument}: {detail}")]
    Unattainable {
        /// The target or knob the error is about (`epsilon`, `rho`, `sample_rate`).
        argument: String,
        /// What was tried and found.
        detail: String,
    },
}

impl AccountantError {
    /// `argument` = `value` is outside `allowed`.
    pub(crate) fn range(argument: &str, value: impl std::fmt::Display, allowed: &str) -> Self {
        AccountantError::OutOfRange {
            argument: argument.to_string(),
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// `argument` cannot be met: `detail` says what was tried.
    pub(crate) fn unattainable(argument: &str, detail: &str) -> Self {
        AccountantError::Unattainable {
            argument: argument.to_string(),
            detail: detail.to_string(),
        }
    }

    /// The argument the error names.
    pub fn argument(&self) -> &str {
        match self {
            AccountantError::OutOfRange { argument, .. } | AccountantError::Unattainable { argument, .. } => argument,
        }
    }
}
