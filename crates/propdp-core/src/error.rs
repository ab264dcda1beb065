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
    /// The field at fault, as a path in the config (`algorithm.sigma`); none
    /// for a parse error whose key the parser could not name.
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Parse(_) => None,
            ConfigError::OutOfRange { field, .. }
            | ConfigError::Missing { field, .. }
            | ConfigError::NotApplicable { field, .. } => Some(field),
        }
    }

    /// `field` = `value` is outside `allowed`.
    pub(crate) fn range(field: &str, value: impl std::fmt::Display, allowed: &str) -> Self {
        ConfigError::OutOfRange {
            field: field.to_string(),
            value: compact(value.to_string()),
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

/// A number as the shortest text that reads back the same (`1e300`, not 300
/// digits); a text over [`MAX_SHOWN`] characters (a whole list) cut to its
/// start and its length; any other text unchanged.
///
/// ```
/// # use propdp_core::error::compact;
/// assert_eq!(compact(format!("{}", 1e300)), "1e300");
/// assert_eq!(compact("0.5".into()), "0.5");
/// assert_eq!(compact("[1, 2]".into()), "[1, 2]");
/// let long = compact(format!("{:?}", vec![400usize; 100_000]));
/// assert!(long.len() < 150 && long.ends_with("… (500000 characters)"), "{long}");
/// ```
pub fn compact(text: String) -> String {
    match text.parse::<f64>() {
        Ok(x) if text.len() > 17 => format!("{x:?}"),
        _ if text.chars().count() > MAX_SHOWN => {
            let head: String = text.chars().take(MAX_SHOWN / 2).collect();
            format!("{head}… ({} characters)", text.chars().count())
        }
        _ => text,
    }
}

/// The longest value an error message quotes whole.
pub const MAX_SHOWN: usize = 120;
