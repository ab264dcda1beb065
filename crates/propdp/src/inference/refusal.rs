//! Why an inference was refused ([`Refusal`], [`Reason`]): the data do
//! not support a valid interval.

use serde::Serialize;

/// Why no interval is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Fewer than [`super::MIN_FEATURES`] features.
    TooFewFeatures,
    /// Logistic labels near separability: the fixed point has no solution.
    NearSeparable,
    /// The nuisances do not determine α > 0.
    Unidentified,
    /// Huber output perturbation: its residual statistics would need the
    /// label noise's law.
    NoiseLawNeeded,
    /// Labels not of the model (logistic: ±1 or 0/1).
    Labels,
    /// Logistic labels whose released mean is far from 0: the model has
    /// no intercept.
    UnbalancedLabels,
    /// The projection onto ‖x‖ ≤ row_norm shrinks the rows far more than
    /// rows N(0, I/d) are ([`super::rows::MAX_SHRINK`]).
    RowsProjected,
    /// The classical interval's released Hessian is dominated by its noise
    /// ([`super::classical::HESSIAN_SNR`]).
    NoisyHessian,
}

/// A refused inference: the reason, and what was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no valid interval ({}): {detail}", reason.name())]
pub struct Refusal {
    /// Why.
    pub reason: Reason,
    /// The values that decided it and what to change.
    pub detail: String,
}

impl Reason {
    /// The reason as the report and Python's `InferenceRefused.reason` spell it (`rows_projected`).
    pub fn name(self) -> &'static str {
        match self {
            Reason::TooFewFeatures => "too_few_features",
            Reason::NearSeparable => "near_separable",
            Reason::Unidentified => "unidentified",
            Reason::NoiseLawNeeded => "noise_law_needed",
            Reason::Labels => "labels",
            Reason::UnbalancedLabels => "unbalanced_labels",
            Reason::RowsProjected => "rows_projected",
            Reason::NoisyHessian => "noisy_hessian",
        }
    }
}

impl Refusal {
    pub(crate) fn new(reason: Reason, detail: String) -> Self {
        Refusal { reason, detail }
    }
}

impl From<Refusal> for crate::Error {
    fn from(r: Refusal) -> Self {
        crate::Error::new(crate::ErrorKind::Refused, None, r)
    }
}

impl crate::Error {
    /// Why an inference was refused, for [`crate::ErrorKind::Refused`].
    pub fn refusal(&self) -> Option<&Refusal> {
        self.cause()
    }
}

#[cfg(test)]
mod tests {
    use super::Reason;

    /// The message's name of each reason is the one Python's `reason` carries (serde's).
    #[test]
    fn a_reason_has_one_name() {
        for r in [
            Reason::TooFewFeatures,
            Reason::NearSeparable,
            Reason::Unidentified,
            Reason::NoiseLawNeeded,
            Reason::Labels,
            Reason::UnbalancedLabels,
            Reason::RowsProjected,
            Reason::NoisyHessian,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.name(), "{r:?}");
        }
    }
}
