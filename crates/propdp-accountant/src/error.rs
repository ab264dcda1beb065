//! The accountant's one error type: an argument outside its range, named
//! as the caller passed it (`noise_multiplier`, `sample_rate`, `steps`,
//! `delta`, …), with the value and the allowed range.

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

    /// The argument the error names.
    pub fn argument(&self) -> &str {
        match self {
            AccountantError::OutOfRange { argument, .. } => argument,
        }
    }
}
