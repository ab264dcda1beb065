//! Privacy budgets a point's noise can be calibrated to (docs/theory.md §4).

use serde::{Deserialize, Serialize};

use crate::accountant::bracket::BracketSettings;
pub use crate::accountant::calibrate::Target;
use crate::accountant::calibrate::{Knob, calibrate};
use crate::accountant::{ExtraRidge, MechanismKind, Neighbouring};
use crate::error::ConfigError;
use crate::parameters;
use crate::problem::{Algorithm, Model};

/// A privacy budget the point's noise was calibrated to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The notion and its level.
    pub target: Target,
    /// The neighbouring relation the guarantee holds for.
    pub neighbouring: Neighbouring,
    /// Objective perturbation whose floor exceeds half the budget: add the
    /// extra ridge Δ (`auto`, the default) or refuse.
    #[serde(default)]
    pub extra_ridge: ExtraRidge,
    /// The ridge Δ that `extra_ridge = auto` added to λ (0: none); the
    /// point's λ includes it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub added_ridge: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Budget {
    /// The smallest noise of `kind` on `model` meeting this budget, or None
    /// when no noise does: [`crate::accountant::calibrate::calibrate`] of
    /// the mechanism's event ([`crate::accountant::Mechanism::event`]), its
    /// ε read back by [`crate::accountant::epsilon`] at most the target.
    ///
    /// ```
    /// use propdp_core::accountant::{MechanismKind, Neighbouring};
    /// use propdp_core::problem::{Budget, Target};
    /// use propdp_core::Model;
    /// let b = Budget::new(Target::Zcdp { rho: 0.5 }, Neighbouring::ReplaceOne);
    /// // DP-GD, T = 10 steps: ρ = μ²/2 with μ = √T·2/σ
    /// let sigma = b.calibrate(&Model::Logistic, MechanismKind::Dpgd { steps: 10 }).unwrap();
    /// assert!((sigma / 40f64.sqrt() - 1.0).abs() < 1e-9);
    /// ```
    pub fn calibrate(&self, model: &Model, kind: MechanismKind) -> Option<f64> {
        let mech = model.mechanism(kind, self.neighbouring);
        let settings = BracketSettings::default();
        calibrate(
            Knob::NoiseMultiplier,
            |s| mech.event(s),
            self.target,
            self.neighbouring,
            settings,
        )
        .ok()
        .map(|c| c.value)
    }

    /// A budget under `neighbouring` with the default extra-ridge policy
    /// (`auto`) and no ridge added yet.
    pub fn new(target: Target, neighbouring: Neighbouring) -> Self {
        Budget {
            target,
            neighbouring,
            extra_ridge: ExtraRidge::default(),
            added_ridge: 0.0,
        }
    }

    /// The ridge Δ this budget adds to objective perturbation's λ (`kind`
    /// at the user's λ) on `model`: [`crate::accountant::Mechanism::extra_ridge`]
    /// under `auto`, 0 under `refuse` and for every other mechanism.
    ///
    /// ```
    /// use propdp_core::accountant::{MechanismKind, Neighbouring};
    /// use propdp_core::problem::{Budget, Target};
    /// use propdp_core::Model;
    /// let b = Budget::new(Target::Approx { epsilon: 1.0, delta_priv: 1e-6 }, Neighbouring::ReplaceOne);
    /// // logistic (β = 1/4) at λ = 0.1: floor 2·log(1 + 2.5) = 2.51 > ε/2; at λ + Δ it is ε/2
    /// let extra = b.ridge_to_add(&Model::Logistic, MechanismKind::Objective { lambda: 0.1 });
    /// assert!((2.0 * (0.25 / (0.1 + extra)).ln_1p() - 0.5).abs() < 1e-12);
    /// ```
    pub fn ridge_to_add(&self, model: &Model, kind: MechanismKind) -> f64 {
        if self.extra_ridge == ExtraRidge::Refuse {
            return 0.0;
        }
        let (level, zcdp) = match self.target {
            Target::Approx { epsilon, .. } => (epsilon, false),
            Target::Zcdp { rho } => (rho, true),
        };
        model.mechanism(kind, self.neighbouring).extra_ridge(level, zcdp)
    }
}

/// DP-SGD's sample rate 0 < q ≤ 1 and clipping norm 0 < C < ∞, naming the field.
pub(crate) fn check_dpsgd_privacy_fields(sample_rate: f64, clip: Option<f64>) -> Result<(), ConfigError> {
    parameters::check("sample_rate", "algorithm.sample_rate", sample_rate)?;
    clip.map_or(Ok(()), |c| parameters::check("clip", "algorithm.clip", c))
}

/// What calibrating the noise to a budget needs: a bounded per-example
/// gradient (a Lipschitz loss, or DP-SGD's `clip`), and for DP-SGD valid q
/// and C and a strategy of at most `groups` bands (amplified BandMF,
/// certified as Poisson DP-SGD over ⌈T/G⌉ rounds: [`super::rounds`]), or
/// any strategy in the fixed order (sample rate 1: one Gaussian release);
/// more bands than groups with sampling have no certified ε here: refused,
/// never another pattern's ε.
pub(crate) fn check_budget_applies(model: &Model, algorithm: &Algorithm) -> Result<(), ConfigError> {
    let (sample_rate, clip) = match *algorithm {
        Algorithm::Dpsgd {
            groups,
            strategy,
            sample_rate,
            ..
        } if sample_rate < 1.0 && strategy.bands().is_none_or(|b| b > groups) => {
            let bands = strategy.bands().map_or("a BLT strategy (every band)".to_string(), |b| {
                format!("a strategy of {b} bands")
            });
            return Err(ConfigError::not_applicable(
                "algorithm.strategy",
                &format!(
                    "a budget (epsilon or rho) has no certified ε for {bands} in {groups} group(s): \
                     with more bands than groups an example's participations meet overlapping rows of the \
                     strategy, whose amplified guarantee (MMCC) propdp does not compute; use at most {groups} \
                     bands (amplified BandMF), the fixed order (sample_rate = 1: one Gaussian release, its \
                     sensitivity the strategy's), or give sigma instead (the theory and the simulation run for \
                     a given σ)"
                ),
            ));
        }
        Algorithm::Dpsgd { sample_rate, clip, .. } => (sample_rate, clip),
        Algorithm::Objective { .. } | Algorithm::Output { .. } | Algorithm::Dpgd { .. } => {
            if model.lipschitz().is_infinite() {
                return Err(ConfigError::range(
                    "algorithm.kind",
                    format!("\"{}\"", algorithm.name()),
                    &format!(
                        "\"dpsgd\" with clip for a privacy budget with model = \"{}\": its gradient is unbounded, \
                     so only clipping bounds the privacy loss",
                        model.kind().name()
                    ),
                ));
            }
            return Ok(());
        }
    };
    check_dpsgd_privacy_fields(sample_rate, clip)?;
    if clip.is_none() && model.lipschitz().is_infinite() {
        return Err(ConfigError::missing(
            "algorithm.clip",
            &format!(
                "a privacy budget with model = \"{}\" needs clip > 0: its gradient is unbounded, so without \
                 clipping no noise bounds the privacy loss",
                model.kind().name()
            ),
        ));
    }
    Ok(())
}
