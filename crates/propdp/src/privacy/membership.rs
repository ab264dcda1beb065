//! What a report's guarantee means for membership inference: the largest
//! TPR any attack reaches at each FPR ([`membership`]).

use super::report::{Report, num};
use crate::error::Argument;
use propdp_core::AlgorithmKind;
use propdp_core::accountant::bracket::BracketSettings;
use propdp_core::accountant::tradeoff::{gaussian_tpr, gdp_mu, tpr_from_profile, tpr_upper};

/// What a report's guarantee means for membership inference
/// (`propdp_accountant::tradeoff`): the largest TPR any attack reaches at
/// each FPR of [`FPRS`], and μ-GDP where it applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Membership {
    /// (FPR, the largest TPR at it).
    pub tpr: Vec<(f64, f64)>,
    /// μ of μ-GDP and whether it is exact (the Gaussian mechanisms) or the
    /// central-limit approximation (subsampled DP-SGD); `None` for
    /// objective perturbation.
    pub mu: Option<(f64, bool)>,
    /// How the TPR was bounded.
    pub method: &'static str,
}

/// The false positive rates [`membership`] reports the TPR at.
pub const FPRS: [f64; 5] = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1];

/// The membership-inference reading of `report`: exact for the Gaussian
/// mechanisms (output perturbation, DP-GD, full-batch DP-SGD:
/// Φ(Φ⁻¹(α) + μ)); from the certified upper profile for subsampled DP-SGD;
/// from the (ε, δ) curve for objective perturbation.
///
/// ```
/// use propdp::privacy::{assess, membership, NoiseLevel, Query};
/// use propdp::core::{accountant::Neighbouring, AlgorithmKind, Model};
/// let q = Query {
///     algorithm: AlgorithmKind::Dpsgd, model: Model::Logistic, lambda: 1.0, steps: 1000, sample_rate: 0.01,
///     clip: Some(1.0), participation: propdp::privacy::Participation::POISSON, neighbouring: Neighbouring::AddRemoveOne, delta_priv: 1e-5, noise: NoiseLevel::Given(1.0),
///     extra_ridge: propdp::core::accountant::ExtraRidge::Auto,
/// };
/// let m = membership(&assess(&q).unwrap()).unwrap();
/// assert!(m.tpr.iter().all(|&(fpr, tpr)| fpr < tpr && tpr < 1.0));
/// ```
pub fn membership(report: &Report) -> crate::Result<Membership> {
    let q = &report.query;
    if q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0 {
        let run = q.dpsgd_run(report.noise);
        let tpr = tpr_upper(&[run], q.neighbouring, &FPRS, BracketSettings::default())
            .map_err(|e| Argument::new("noise", format!(": {e}")))?;
        return Ok(Membership {
            tpr: FPRS.iter().copied().zip(tpr).collect(),
            mu: gdp_mu(&[run], q.neighbouring),
            method: "min over ε of min(e^ε·α + δ⁺(ε), 1 − e^{−ε}(1 − α − δ⁺(ε))), δ⁺ the certified upper profile",
        });
    }
    if let Some(mu) = report.mu {
        return Ok(Membership {
            tpr: FPRS.iter().map(|&a| (a, gaussian_tpr(mu, a))).collect(),
            mu: Some((mu, true)),
            method: "exact: Φ(Φ⁻¹(α) + μ) of μ-GDP",
        });
    }
    let mech = q.mechanism();
    Ok(Membership {
        tpr: FPRS
            .iter()
            .map(|&a| (a, tpr_from_profile(|e| mech.delta(e, report.noise), a)))
            .collect(),
        mu: None,
        method: "min over ε of min(e^ε·α + δ(ε), 1 − e^{−ε}(1 − α − δ(ε))), δ the mechanism's curve",
    })
}

impl Membership {
    /// The reading as `propdp privacy --membership-inference` prints it.
    pub fn text(&self) -> String {
        let mut s = String::from(
            "membership inference: the largest TPR any attack reaches at each FPR
",
        );
        for &(fpr, tpr) in &self.tpr {
            s += &format!(
                "  FPR {fpr:<7e} TPR ≤ {tpr:.6}
"
            );
        }
        match self.mu {
            Some((mu, true)) => {
                s += &format!(
                    "  μ-GDP (exact): μ = {}
",
                    num(mu)
                )
            }
            Some((mu, false)) => {
                s += &format!(
                    "  μ-GDP (central-limit approximation, not a bound): μ ≈ {}
",
                    num(mu)
                )
            }
            None => {}
        }
        s + &format!(
            "  ({})
",
            self.method
        )
    }

    /// The reading as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "fpr": self.tpr.iter().map(|t| t.0).collect::<Vec<_>>(),
            "tpr_upper": self.tpr.iter().map(|t| t.1).collect::<Vec<_>>(),
            "mu": self.mu.map(|m| m.0),
            "mu_exact": self.mu.map(|m| m.1),
            "method": self.method,
        })
    }
}
