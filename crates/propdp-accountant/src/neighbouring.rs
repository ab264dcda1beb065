//! The neighbouring relation a guarantee holds for, and the shift one
//! neighbour makes in a sum of per-example terms.

use serde::{Deserialize, Serialize};

/// Neighbouring relation of the guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Neighbouring {
    /// Datasets differ in one replaced row (the default).
    #[serde(alias = "replace-one")]
    ReplaceOne,
    /// One dataset has one more row.
    #[serde(alias = "add-remove-one")]
    AddRemoveOne,
}

impl Neighbouring {
    /// The relation in prose and in records: "replace-one" or "add/remove-one".
    pub fn label(self) -> &'static str {
        match self {
            Neighbouring::ReplaceOne => "replace-one",
            Neighbouring::AddRemoveOne => "add/remove-one",
        }
    }
}

/// The shift one neighbour makes in a sum of per-example terms bounded by
/// C, in units of C: 1 (add/remove-one) or 2 (replace-one).
///
/// ```
/// use propdp_accountant::{Neighbouring, relation_factor};
/// assert_eq!(relation_factor(Neighbouring::ReplaceOne), 2.0);
/// ```
pub fn relation_factor(n: Neighbouring) -> f64 {
    match n {
        Neighbouring::ReplaceOne => 2.0,
        Neighbouring::AddRemoveOne => 1.0,
    }
}
