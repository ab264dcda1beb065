//! The privacy guarantee a record states (docs/theory.md §4): the budget a
//! point's noise was calibrated to, or DP-GD's μ-GDP.
//!
//! # References
//! - J. Dong, A. Roth, W. Su, "Gaussian differential privacy", JRSS B (2022).

use serde::{Deserialize, Serialize};

use crate::accountant::Neighbouring;
use crate::problem::{Point, Target};

/// A privacy guarantee (docs/theory.md §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Privacy {
    /// "mu-GDP", "(epsilon, delta)-DP" or "rho-zCDP".
    pub notion: String,
    /// "replace-one" or "add/remove-one" ([`Neighbouring::label`]).
    pub neighbouring: String,
    /// μ of μ-GDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu: Option<f64>,
    /// ρ of ρ-zCDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
    /// ε of (ε, δ)-DP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// δ of (ε, δ)-DP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Objective perturbation: the extra ridge Δ added to the config's λ (docs/privacy.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_ridge: Option<f64>,
    /// With an extra ridge: λ + Δ, the point's λ (noise and theory at it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_effective: Option<f64>,
}

impl Privacy {
    /// The guarantee of a point: the budget its noise was calibrated to, or
    /// for DP-GD with σ > 0 on a Lipschitz loss its μ-GDP (none for least
    /// squares, whose gradient is unbounded): per-step replace-one sensitivity
    /// Δ = 2LR (R = 1, L = [`crate::Model::lipschitz`]), μ = √T·Δ/σ
    /// (Gaussian composition, exact). `None` otherwise.
    pub fn of(point: &Point) -> Option<Privacy> {
        let extra_ridge = point.budget().map(|b| b.added_ridge).filter(|&a| a > 0.0);
        let lambda_effective = extra_ridge.map(|_| point.algorithm().lambda());
        let none = |neighbouring: Neighbouring, notion: &str| Privacy {
            notion: notion.into(),
            neighbouring: neighbouring.label().into(),
            mu: None,
            rho: None,
            epsilon: None,
            delta: None,
            extra_ridge,
            lambda_effective,
        };
        if let Some(b) = point.budget() {
            return Some(match b.target {
                Target::Approx { epsilon, delta_priv } => Privacy {
                    epsilon: Some(epsilon),
                    delta: Some(delta_priv),
                    ..none(b.neighbouring, "(epsilon, delta)-DP")
                },
                Target::Zcdp { rho } => Privacy {
                    rho: Some(rho),
                    ..none(b.neighbouring, "rho-zCDP")
                },
            });
        }
        use crate::Algorithm;
        let (sigma, steps) = match point.algorithm() {
            Algorithm::Dpgd { sigma, steps, .. } => (sigma, steps),
            Algorithm::Objective { .. } | Algorithm::Output { .. } | Algorithm::Dpsgd { .. } => return None,
        };
        let relation = Neighbouring::ReplaceOne;
        // an unbounded gradient (least squares) has no finite guarantee
        (sigma > 0.0 && point.model().lipschitz().is_finite()).then(|| Privacy {
            mu: Some(crate::accountant::mu_dpgd(
                point.model().lipschitz(),
                1.0,
                steps,
                sigma,
                relation,
            )),
            ..none(relation, "mu-GDP")
        })
    }
}
