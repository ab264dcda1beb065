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
        field: String,
        value: String,
        allowed: String,
    },
    /// A required key is absent.
    #[error("missing `{field}`: {why}")]
    Missing { field: String, why: String },
    /// A key is present that does not apply to the chosen model or algorithm.
    #[error("`{field}` does not apply here: {why}")]
    NotApplicable { field: String, why: String },
}

impl ConfigError {
    pub(crate) fn range(field: &str, value: impl std::fmt::Display, allowed: &str) -> Self {
        ConfigError::OutOfRange {
            field: field.to_string(),
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }
}
