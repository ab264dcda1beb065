//! Config errors: every variant names the offending field.

use thiserror::Error;

/// Error raised while reading or validating a config.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConfigError {
    /// TOML syntax error, unknown key, or wrong type (message from the parser,
    /// with line and column).
    #[error("config is not valid: {0}")]
    Parse(String),
    /// A value is outside its allowed range.
    #[error("`{field}` = {value} is invalid: allowed {allowed}")]
    OutOfRange {
        /// The field, as a path in the config (`algorithm.sigma`).
        field: String,
        /// The value given.
        value: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// A required key is absent.
    #[error("missing `{field}`: {why}")]
    Missing {
        /// The field, as a path in the config.
        field: String,
        /// What it is for.
        why: String,
    },
    /// A key is present that does not apply to the chosen model or algorithm.
    #[error("`{field}` does not apply here: {why}")]
    NotApplicable {
        /// The field, as a path in the config.
        field: String,
        /// Why not, and what does take it.
        why: String,
    },
}

impl ConfigError {
    /// `field` = `value` is outside `allowed`.
    pub(crate) fn range(field: &str, value: impl std::fmt::Display, allowed: &str) -> Self {
        ConfigError::OutOfRange {
            field: field.to_string(),
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// `field` is required: `why`.
    pub(crate) fn missing(field: &str, why: &str) -> Self {
        ConfigError::Missing {
            field: field.into(),
            why: why.into(),
        }
    }

    /// `field` does not apply: `why`.
    pub(crate) fn not_applicable(field: &str, why: &str) -> Self {
        ConfigError::NotApplicable {
            field: field.into(),
            why: why.into(),
        }
    }
}
