//! The four algorithms of docs/theory.md §4 as calibratable mechanisms:
//! their δ(ε), ε, zCDP ρ and certified ε bracket at a noise level, and the
//! smallest noise meeting a target.

use crate::account::certified;
use crate::bracket::{BracketSettings, EpsilonBracket};
use crate::calibrate::{Knob, Target};
use crate::dpsgd::{calibrate_dpsgd, dpsgd_log_delta, fast_epsilon, rdp_epsilon};
use crate::events::Segment;
use crate::gaussian::{eps_at, log_delta_gaussian, mu_dpgd, mu_output, smallest_noise};
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

    /// The smallest noise meeting (ε, δ). DP-SGD below the full batch: the
    /// certified search of [`crate::calibrate::calibrate`] (its ε read back by
    /// [`Mechanism::epsilon_bracket`] is at most the target). Otherwise, as
    /// [`Mechanism::epsilon`] reads it back: the closed form's calibration,
    /// raised (by factors of 1.1 up to 10³, then bisection to 1e-12
    /// relative) if its ε read back exceeds the target.
    /// `None` when no noise in the accountant's range meets it
    /// ([`Mechanism::meets`] tells whether the target is too strict or too loose).
    ///
    /// ```
    /// use propdp_accountant::{Mechanism, MechanismKind, Neighbouring};
    /// let m = Mechanism::new(MechanismKind::Output { lambda: 1.0 }, 1.0, 0.25, Neighbouring::ReplaceOne);
    /// let tau = m.calibrate(1.0, 1e-6).unwrap();
    /// assert!((m.delta(1.0, tau) / 1e-6 - 1.0).abs() < 1e-9);
    /// ```
    pub fn calibrate(&self, eps: f64, delta: f64) -> Option<f64> {
        if let MechanismKind::Dpsgd {
            steps,
            sample_rate,
            clip,
        } = self.kind
            && sample_rate < 1.0
        {
            let sensitivity = self.dpsgd_sensitivity(clip);
            let run = Segment {
                noise_multiplier: 1.0,
                sample_rate,
                steps: steps as u64,
            };
            let target = Target::Approx {
                epsilon: eps,
                delta_priv: delta,
            };
            let settings = BracketSettings::default();
            let z = crate::calibrate::calibrate(Knob::NoiseMultiplier, run, target, self.neighbouring, settings)
                .ok()?
                .run
                .noise_multiplier;
            // met at the smallest multiplier searched: no smallest noise to calibrate
            if z <= Knob::NoiseMultiplier.limits().0 {
                return None;
            }
            // the noise whose multiplier, as epsilon_bracket divides it back, is at least z
            let mut noise = z * sensitivity;
            while noise / sensitivity < z {
                noise = noise.next_up();
            }
            return Some(noise);
        }
        let first = if let MechanismKind::Dpsgd {
            steps,
            sample_rate,
            clip,
        } = self.kind
        {
            let sensitivity = self.dpsgd_sensitivity(clip);
            calibrate_dpsgd(eps, delta, sample_rate, steps, self.neighbouring).map(|z| z * sensitivity)
        } else {
            smallest_noise(|s| self.log_delta(eps, s), delta)
        }?;
        if self.meets(first, eps, delta) {
            return Some(first);
        }
        let mut hi = first;
        loop {
            hi *= 1.1;
            // the accountants agree to far better than 10³: beyond, refuse
            if !hi.is_finite() || hi > 1e3 * first {
                return None;
            }
            if self.meets(hi, eps, delta) {
                break;
            }
        }
        let mut lo = hi / 1.1;
        while hi / lo > 1.0 + 1e-12 {
            let mid = (lo * hi).sqrt();
            if self.meets(mid, eps, delta) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// Whether `noise` meets (ε, δ) as the certified ε reports it (the
    /// upper end of [`Mechanism::epsilon_bracket`]; the closed forms' ε).
    pub fn meets(&self, noise: f64, eps: f64, delta: f64) -> bool {
        self.epsilon_bracket(noise, delta, BracketSettings::default())
            .is_some_and(|b| b.upper <= eps)
    }

    /// zCDP ρ at noise level `noise` (R = 1): μ²/2 for output perturbation and
    /// DP-GD (μ under the relation), c0 + A√(2/π) + A²/2 for objective
    /// perturbation under add/remove-one and 4ρ under replace-one (docs/theory.md §4).
    pub fn rho(&self, noise: f64) -> f64 {
        let (l, n) = (self.lipschitz, self.neighbouring);
        match self.kind {
            MechanismKind::Output { lambda } => 0.5 * mu_output(l, 1.0, lambda, noise, n).powi(2),
            MechanismKind::Dpgd { steps } => 0.5 * mu_dpgd(l, 1.0, steps, noise, n).powi(2),
            // subsampling gives no zCDP amplification: the subsampled Gaussian's
            // RDP ε(α) ≤ α/(2z²) and ε(α)/α → 1/(2z²) as α → ∞, so ρ = T/(2z²)
            // (×4 under replace-one: its pair is a mixture of (N(0), N(0)) and
            // (N(−1), N(1)), a shift of 2) — DP-GD's ρ with L → min(C, L)
            MechanismKind::Dpsgd { steps, clip, .. } => {
                0.5 * mu_dpgd(self.dpsgd_sensitivity(clip), 1.0, steps, noise, n).powi(2)
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

    /// The smallest noise meeting ρ-zCDP; `None` when no noise does
    /// (objective perturbation keeps ρ ≥ log(1 + βR²/λ), ×4 under replace-one).
    ///
    /// ```
    /// use propdp_accountant::{Mechanism, MechanismKind, Neighbouring};
    /// let m = Mechanism::new(MechanismKind::Dpgd { steps: 10 }, 1.0, 0.25, Neighbouring::ReplaceOne);
    /// let sigma = m.calibrate_rho(0.5).unwrap();
    /// // μ = √T·2LR/σ and ρ = μ²/2 give σ = √(T·4/(2ρ)) = √40
    /// assert!((sigma / 40f64.sqrt() - 1.0).abs() < 1e-9);
    /// ```
    pub fn calibrate_rho(&self, rho: f64) -> Option<f64> {
        if !(rho > 0.0 && rho.is_finite()) || self.rho(f64::MAX.sqrt()) >= rho {
            return None;
        }
        smallest_noise(|s| self.rho(s).ln(), rho)
    }

    /// DP-SGD's per-example sensitivity min(C, L) (R = 1); L alone without clipping.
    pub fn dpsgd_sensitivity(&self, clip: Option<f64>) -> f64 {
        clip.map_or(self.lipschitz, |c| c.min(self.lipschitz))
    }

    /// A certified [lower, upper] ε at `delta` for noise level `noise`
    /// ([`crate::bracket`]): for DP-SGD below the full batch the PLD bracket, its
    /// upper end replaced by the RDP or the full batch's bound where those
    /// are smaller (both valid; the lower end then no higher than the
    /// upper); for the closed-form curves (output and objective perturbation,
    /// DP-GD, the full batch) [ε, ε] with ε as [`Mechanism::epsilon`]
    /// reports it. `None` when no finite ε is reached.
    ///
    /// ```
    /// use propdp_accountant::{Mechanism, MechanismKind, Neighbouring};
    /// use propdp_accountant::bracket::BracketSettings;
    /// let kind = MechanismKind::Dpsgd { steps: 1000, sample_rate: 0.01, clip: Some(1.0) };
    /// let m = Mechanism::new(kind, 1.0, 0.25, Neighbouring::AddRemoveOne);
    /// let b = m.epsilon_bracket(1.0, 1e-5, BracketSettings::default()).unwrap();
    /// assert!(b.lower <= b.upper && b.upper - b.lower <= 1e-3 * b.upper);
    /// ```
    pub fn epsilon_bracket(&self, noise: f64, delta: f64, settings: BracketSettings) -> Option<EpsilonBracket> {
        let closed = |e: f64| EpsilonBracket {
            lower: e,
            upper: e,
            grid: 0.0,
            reached: true,
        };
        let MechanismKind::Dpsgd {
            steps,
            sample_rate,
            clip,
        } = self.kind
        else {
            return self.epsilon(noise, delta).map(closed);
        };
        let run = Segment {
            noise_multiplier: noise / self.dpsgd_sensitivity(clip),
            sample_rate,
            steps: steps as u64,
        };
        if !(run.noise_multiplier > 0.0 && run.noise_multiplier.is_finite()) {
            return self.epsilon(noise, delta).map(closed);
        }
        certified(&run, delta, self.neighbouring, settings)
    }

    /// DP-SGD's ε at `delta` by the RDP accountant at noise level `noise`
    /// (integer and fractional orders; replace-one by group privacy of size
    /// 2 below the full batch): looser than the PLD, a cross-check. `None`
    /// for the other algorithms, or where no finite ε is reached.
    pub fn rdp_epsilon(&self, noise: f64, delta: f64) -> Option<f64> {
        let MechanismKind::Dpsgd {
            steps,
            sample_rate,
            clip,
        } = self.kind
        else {
            return None;
        };
        let z = noise / self.dpsgd_sensitivity(clip);
        Some(rdp_epsilon(z, sample_rate, steps as u64, delta, self.neighbouring)).filter(|e| e.is_finite())
    }

    /// The ε reached at `delta` by noise level `noise`: the closed forms'
    /// ε; for subsampled DP-SGD a fast upper bound (the fixed-grid PLD,
    /// Δ = 10⁻³, the RDP and the full batch's, whichever is smallest;
    /// about 0.5% above the certified bracket's upper end, which is what
    /// [`Mechanism::calibrate`] meets).
    pub fn epsilon(&self, noise: f64, delta: f64) -> Option<f64> {
        if let MechanismKind::Dpsgd {
            steps,
            sample_rate,
            clip,
        } = self.kind
        {
            // both accountants give upper bounds: the PLD's is the tighter,
            // except where it would not fit, where the RDP's stands;
            // and subsampling never costs privacy: the full batch's exact
            // Gaussian ε bounds every q (where the subsampled accountants
            // run out of range, e.g. at δ = 1e-300 or T = 10⁹)
            let sensitivity = self.dpsgd_sensitivity(clip);
            let (z, n) = (noise / sensitivity, self.neighbouring);
            let pld = fast_epsilon(z, sample_rate, steps, delta, n);
            let rdp = Some(rdp_epsilon(z, sample_rate, steps as u64, delta, n)).filter(|e| e.is_finite());
            let full = eps_at(
                |e| log_delta_gaussian(e, mu_dpgd(sensitivity, 1.0, steps, noise, n)),
                delta,
            );
            return [pld, rdp, full].into_iter().flatten().reduce(f64::min);
        }
        eps_at(|e| self.log_delta(e, noise), delta)
    }
}
