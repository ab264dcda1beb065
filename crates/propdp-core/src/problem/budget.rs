//! Privacy budgets a point's noise can be calibrated to (docs/theory.md §4).

use serde::{Deserialize, Serialize};

pub use crate::accountant::calibrate::Target;
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
