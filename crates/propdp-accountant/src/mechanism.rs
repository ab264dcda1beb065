//! The four algorithms of docs/theory.md §4 as mechanisms (DP-SGD also in
//! a fixed order with correlated noise): their privacy
//! [`Event`] at a noise level ([`Mechanism::event`], which
//! [`crate::epsilon`] reads and [`crate::calibrate::calibrate`] solves),
//! their δ(ε) curves and zCDP ρ, and objective perturbation's floor and
//! extra ridge.

use crate::dpsgd::dpsgd_log_delta;
use crate::events::Event;
use crate::gaussian::{log_delta_gaussian, mu_dpgd, mu_output};
use crate::neighbouring::Neighbouring;
use crate::objective::ObjectiveBound;

/// What a calibration does when objective perturbation's floor exceeds
/// half the budget ([`Mechanism::extra_ridge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtraRidge {
    /// Add the extra ridge Δ to λ that brings the floor to half the budget
    /// and spend the other half on the noise (the standard algorithm).
    #[default]
    Auto,
    /// Keep λ; refuse a budget at or below the floor.
    Refuse,
}

impl ExtraRidge {
    /// "auto" or "refuse", as configs and arguments spell it.
    pub fn name(self) -> &'static str {
        match self {
            ExtraRidge::Auto => "auto",
            ExtraRidge::Refuse => "refuse",
        }
    }

    /// The policy named `name`, or `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(ExtraRidge::Auto),
            "refuse" => Some(ExtraRidge::Refuse),
            _ => None,
        }
    }
}

/// A mechanism whose noise can be calibrated, with its loss constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mechanism {
    /// The algorithm and what its guarantee depends on.
    pub kind: MechanismKind,
    /// |f'| ≤ L (Huber: M; logistic: 1).
    pub lipschitz: f64,
    /// 0 ≤ f'' ≤ β (Huber: 1; logistic: 1/4).
    pub curvature: f64,
    /// The relation the guarantee holds for.
    pub neighbouring: Neighbouring,
}

/// The four algorithms of docs/theory.md §4 (objective and output perturbation,
/// DP-GD, DP-SGD), with what their guarantees depend on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MechanismKind {
    /// Objective perturbation with ridge λ.
    Objective {
        /// Ridge strength λ.
        lambda: f64,
    },
    /// Output perturbation with ridge λ.
    Output {
        /// Ridge strength λ.
        lambda: f64,
    },
    /// DP-GD with T steps.
    Dpgd {
        /// Number of steps T.
        steps: usize,
    },
    /// Mini-batch DP-SGD: T steps of the Poisson-subsampled Gaussian
    /// mechanism at rate q, per-example gradients clipped to C.
    Dpsgd {
        /// Number of steps T.
        steps: usize,
        /// Poisson sample rate q.
        sample_rate: f64,
        /// Clipping norm C (none: the loss's Lipschitz constant bounds the gradient).
        clip: Option<f64>,
    },
    /// DP-SGD in a fixed cyclic order with correlated noise (the matrix
    /// mechanism, sample rate 1, no amplification): the noisy stream
    /// C·g + σz is one Gaussian release of sensitivity s·min(C, L), s the
    /// strategy's participation sensitivity (`Strategy::sensitivity` of
    /// propdp-core).
    FixedOrder {
        /// s, per unit bound on a per-example gradient.
        sensitivity: f64,
        /// Clipping norm C (none: the loss's Lipschitz constant bounds the gradient).
        clip: Option<f64>,
    },
}

impl Mechanism {
    /// The mechanism of `kind` for a loss with |f'| ≤ `lipschitz` and
    /// 0 ≤ f'' ≤ `curvature` (rows ‖x‖ ≤ 1), under `neighbouring`.
    pub fn new(kind: MechanismKind, lipschitz: f64, curvature: f64, neighbouring: Neighbouring) -> Self {
        Mechanism {
            kind,
            lipschitz,
            curvature,
            neighbouring,
        }
    }

    /// The budget level no noise reaches, ε (or ρ with `zcdp`): objective
    /// perturbation keeps log(1 + βR²/λ) per neighbour however large σ is
    /// (×2 in ε and ×4 in ρ under replace-one); 0 for the Gaussian mechanisms.
    ///
    /// ```
    /// use propdp_accountant::{Mechanism, MechanismKind, Neighbouring};
    /// let m = Mechanism::new(MechanismKind::Objective { lambda: 0.25 }, 1.0, 0.25, Neighbouring::ReplaceOne);
    /// assert!((m.floor(false) - 2.0 * 2f64.ln()).abs() < 1e-15);
    /// ```
    pub fn floor(&self, zcdp: bool) -> f64 {
        let MechanismKind::Objective { lambda } = self.kind else {
            return 0.0;
        };
        let c0 = (self.curvature / lambda).ln_1p();
        match (zcdp, self.neighbouring) {
            (false, Neighbouring::ReplaceOne) => 2.0 * c0,
            (true, Neighbouring::ReplaceOne) => 4.0 * c0,
            (_, Neighbouring::AddRemoveOne) => c0,
        }
    }

    /// Objective perturbation's extra ridge Δ ≥ 0 for a budget `level` (ε,
    /// or ρ with `zcdp`): the smallest Δ whose floor is at most half the
    /// budget, floor(λ + Δ) ≤ level/2, so that the other half is left for
    /// the noise (Chaudhuri, Monteleoni, Sarwate 2011, Alg. 2; Kifer, Smith,
    /// Thakurta 2012). With floor(λ) = k·log(1 + β/λ) (R = 1; k = 1 under
    /// add/remove, 2 in ε and 4 in ρ under replace-one),
    ///
    ///   Δ = max(0, β/(e^{level/(2k)} − 1) − λ),
    ///
    /// 0 where the floor is already at most half the budget (continuous
    /// there) and for the Gaussian mechanisms. docs/privacy.md derives it.
    ///
    /// ```
    /// use propdp_accountant::{Mechanism, MechanismKind, Neighbouring};
    /// // logistic (β = 1/4), λ = 0.1, ε = 1, replace-one: the floor 2·log(1 + β/λ) = 2.51 > ε
    /// let m = Mechanism::new(MechanismKind::Objective { lambda: 0.1 }, 1.0, 0.25, Neighbouring::ReplaceOne);
    /// let extra = m.extra_ridge(1.0, false);
    /// let m2 = Mechanism::new(MechanismKind::Objective { lambda: 0.1 + extra }, 1.0, 0.25, Neighbouring::ReplaceOne);
    /// assert!((m2.floor(false) - 0.5).abs() < 1e-12);
    /// assert_eq!(m.extra_ridge(6.0, false), 0.0); // 2.51 ≤ 6/2
    /// ```
    pub fn extra_ridge(&self, level: f64, zcdp: bool) -> f64 {
        let MechanismKind::Objective { lambda } = self.kind else {
            return 0.0;
        };
        let k = match (zcdp, self.neighbouring) {
            (_, Neighbouring::AddRemoveOne) => 1.0,
            (false, Neighbouring::ReplaceOne) => 2.0,
            (true, Neighbouring::ReplaceOne) => 4.0,
        };
        (self.curvature / (level / (2.0 * k)).exp_m1() - lambda).max(0.0)
    }

    /// δ(ε) at noise level `noise` (σ for objective and DP-GD, τ for output),
    /// R = 1: `exp` of [`Mechanism::log_delta`].
    pub fn delta(&self, eps: f64, noise: f64) -> f64 {
        self.log_delta(eps, noise).exp()
    }

    /// log δ(ε) at noise level `noise`, R = 1 (−∞ where δ = 0).
    pub fn log_delta(&self, eps: f64, noise: f64) -> f64 {
        let (l, n) = (self.lipschitz, self.neighbouring);
        match self.kind {
            MechanismKind::Output { lambda } => log_delta_gaussian(eps, mu_output(l, 1.0, lambda, noise, n)),
            MechanismKind::Dpgd { steps } => log_delta_gaussian(eps, mu_dpgd(l, 1.0, steps, noise, n)),
            MechanismKind::Dpsgd {
                steps,
                sample_rate,
                clip,
            } => dpsgd_log_delta(eps, noise / self.dpsgd_sensitivity(clip), sample_rate, steps, n),
            MechanismKind::FixedOrder { sensitivity, clip } => log_delta_gaussian(
                eps,
                mu_dpgd(sensitivity * self.dpsgd_sensitivity(clip), 1.0, 1, noise, n),
            ),
            MechanismKind::Objective { lambda } => {
                let b = ObjectiveBound::new(l, self.curvature, 1.0, lambda, noise);
                match n {
                    Neighbouring::AddRemoveOne => b.log_delta(eps),
                    // group privacy of size 2: (ε/2, δ) add/remove → (ε, (1 + e^{ε/2})δ);
                    // δ ≥ 1 is vacuous (every mechanism is (ε, 1)-DP), so cap at 1
                    Neighbouring::ReplaceOne => b.log_delta_replace(eps),
                }
            }
        }
    }

    /// zCDP ρ at noise level `noise` (R = 1) as `propdp privacy` and tune
    /// report it: μ²/2 for output perturbation, DP-GD and DP-SGD (μ of the
    /// full batch under the relation: subsampling gives no zCDP
    /// amplification), c0 + A√(2/π) + A²/2 for objective perturbation under
    /// add/remove-one and 4ρ under replace-one (docs/theory.md §4) — the ρ
    /// of [`Mechanism::event`] ([`crate::events::Parts::rho`]) up to
    /// rounding (μ² through √T here, T·s²/(2z²) there).
    pub fn rho(&self, noise: f64) -> f64 {
        let (l, n) = (self.lipschitz, self.neighbouring);
        match self.kind {
            MechanismKind::Output { lambda } => 0.5 * mu_output(l, 1.0, lambda, noise, n).powi(2),
            MechanismKind::Dpgd { steps } => 0.5 * mu_dpgd(l, 1.0, steps, noise, n).powi(2),
            MechanismKind::Dpsgd { steps, clip, .. } => {
                0.5 * mu_dpgd(self.dpsgd_sensitivity(clip), 1.0, steps, noise, n).powi(2)
            }
            MechanismKind::FixedOrder { sensitivity, clip } => {
                0.5 * mu_dpgd(sensitivity * self.dpsgd_sensitivity(clip), 1.0, 1, noise, n).powi(2)
            }
            MechanismKind::Objective { lambda } => {
                let rho = ObjectiveBound::new(l, self.curvature, 1.0, lambda, noise).zcdp();
                match n {
                    Neighbouring::AddRemoveOne => rho,
                    Neighbouring::ReplaceOne => 4.0 * rho,
                }
            }
        }
    }

    /// The privacy event of the mechanism at noise level `noise` (σ for
    /// objective perturbation, DP-GD and DP-SGD, τ for output
    /// perturbation), R = 1: output perturbation is a Gaussian release of
    /// sensitivity L/λ; DP-GD T of sensitivity L; DP-SGD T Poisson-sampled
    /// ones of sensitivity min(C, L) (noise multiplier σ/min(C, L)), in a
    /// fixed order with correlated noise one of sensitivity s·min(C, L);
    /// objective perturbation its release's bound. [`crate::epsilon`] reads
    /// it; [`crate::calibrate::calibrate`] takes `|s| m.event(s)`.
    ///
    /// ```
    /// use propdp_accountant::{epsilon, Mechanism, MechanismKind, Neighbouring};
    /// use propdp_accountant::bracket::BracketSettings;
    /// use propdp_accountant::calibrate::{calibrate, Knob, Target};
    /// let m = Mechanism::new(MechanismKind::Output { lambda: 1.0 }, 1.0, 0.25, Neighbouring::ReplaceOne);
    /// let (n, s) = (m.neighbouring, BracketSettings::default());
    /// let target = Target::Approx { epsilon: 1.0, delta_priv: 1e-6 };
    /// let tau = calibrate(Knob::NoiseMultiplier, |t| m.event(t), target, n, s).unwrap().value;
    /// assert!((m.delta(1.0, tau) / 1e-6 - 1.0).abs() < 1e-9);
    /// assert!(epsilon(&m.event(tau), 1e-6, n, s).unwrap().unwrap().upper <= 1.0);
    /// ```
    pub fn event(&self, noise: f64) -> Event {
        let l = self.lipschitz;
        match self.kind {
            MechanismKind::Output { lambda } => Event::Gaussian {
                noise,
                sensitivity: l / lambda,
            },
            MechanismKind::Dpgd { steps } => Event::Gaussian { noise, sensitivity: l }.repeated(steps as u64),
            MechanismKind::Dpsgd {
                steps,
                sample_rate,
                clip,
            } => Event::PoissonSampled {
                sample_rate,
                event: Box::new(Event::Gaussian {
                    noise,
                    sensitivity: self.dpsgd_sensitivity(clip),
                }),
            }
            .repeated(steps as u64),
            MechanismKind::FixedOrder { sensitivity, clip } => Event::Gaussian {
                noise,
                sensitivity: sensitivity * self.dpsgd_sensitivity(clip),
            },
            MechanismKind::Objective { lambda } => {
                Event::Objective(ObjectiveBound::new(l, self.curvature, 1.0, lambda, noise))
            }
        }
    }

    /// DP-SGD's per-example sensitivity min(C, L) (R = 1); L alone without clipping.
    pub fn dpsgd_sensitivity(&self, clip: Option<f64>) -> f64 {
        clip.map_or(self.lipschitz, |c| c.min(self.lipschitz))
    }
}
