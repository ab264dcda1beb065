//! Privacy budgets a point's noise can be calibrated to (docs/theory.md §4).

use serde::{Deserialize, Serialize};

use crate::accountant::{MechanismKind, Neighbouring};
use crate::problem::Model;

/// A privacy budget the point's noise was calibrated to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The notion and its level.
    pub target: Target,
    /// The neighbouring relation the guarantee holds for.
    pub neighbouring: Neighbouring,
}

/// The notion and level of a budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "notion", rename_all = "snake_case")]
pub enum Target {
    /// (ε, δ)-DP.
    Approx {
        /// ε.
        epsilon: f64,
        /// δ (named `delta_priv` to keep it apart from the aspect ratio δ = d/n).
        delta_priv: f64,
    },
    /// ρ-zCDP.
    Zcdp {
        /// ρ.
        rho: f64,
    },
}

impl Target {
    /// The parameter name of the budget's level: "epsilon" or "rho".
    pub fn param(&self) -> &'static str {
        match self {
            Target::Approx { .. } => "epsilon",
            Target::Zcdp { .. } => "rho",
        }
    }

    /// The level: ε or ρ.
    pub fn level(&self) -> f64 {
        match *self {
            Target::Approx { epsilon, .. } => epsilon,
            Target::Zcdp { rho } => rho,
        }
    }
}

impl Budget {
    /// The smallest noise of `kind` on `model` meeting this budget, or None
    /// when no noise does.
    ///
    /// ```
    /// use propdp_core::accountant::{MechanismKind, Neighbouring};
    /// use propdp_core::problem::{Budget, Target};
    /// use propdp_core::Model;
    /// let b = Budget { target: Target::Zcdp { rho: 0.5 }, neighbouring: Neighbouring::ReplaceOne };
    /// // DP-GD, T = 10 steps: ρ = μ²/2 with μ = √T·2/σ
    /// let sigma = b.calibrate(&Model::Logistic, MechanismKind::Dpgd { steps: 10 }).unwrap();
    /// assert!((sigma / 40f64.sqrt() - 1.0).abs() < 1e-9);
    /// ```
    pub fn calibrate(&self, model: &Model, kind: MechanismKind) -> Option<f64> {
        let mech = model.mechanism(kind, self.neighbouring);
        match self.target {
            Target::Approx { epsilon, delta_priv } => mech.calibrate(epsilon, delta_priv),
            Target::Zcdp { rho } => mech.calibrate_rho(rho),
        }
    }
}
