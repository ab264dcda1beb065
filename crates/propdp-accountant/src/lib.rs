//! propdp's privacy accountant (docs/theory.md §4): the Gaussian-mechanism curve, the
//! guarantees of output perturbation, DP-GD and objective perturbation under
//! both neighbouring relations, conversions, and calibration of the noise to
//! a target (ε, δ) by root finding (`roots`).
//!
//! Conventions: rows have ‖xᵢ‖ ≤ R (= 1 here), the GLM loss has |f'| ≤ L and
//! 0 ≤ f'' ≤ β (Huber: L = M, β = 1; logistic: L = 1, β = 1/4).
//!
//! # References
//! - Balle, Wang (2018), *Improving the Gaussian mechanism for differential privacy*.
//! - Dong, Roth, Su (2022), *Gaussian differential privacy*.
//! - Canonne, Kamath, Steinke (2020), *The discrete Gaussian for differential privacy* (RDP → (ε, δ)).

#![warn(missing_docs)]

pub mod bracket;
pub mod calibrate;
mod error;
pub mod pld;
pub mod rdp;
pub mod sampling;
pub mod tradeoff;

pub use error::AccountantError;

use serde::{Deserialize, Serialize};

/// Φ(x), the standard normal CDF.
///
/// ```
/// assert!((propdp_accountant::norm_cdf(0.0) - 0.5).abs() < 1e-16);
/// ```
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

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

/// log Φ(x), accurate in the far left tail where Φ underflows.
///
/// For x < −30 uses the asymptotic series
/// log Φ(x) = −x²/2 − log(−x√(2π)) + log(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸)
/// (relative error below 1e-12 there); `libm::erfc` elsewhere. No crate offers
/// log Φ in the deep tail, which the Gaussian-mechanism curve needs at large ε/μ.
pub fn log_norm_cdf(x: f64) -> f64 {
    if x > -30.0 {
        return norm_cdf(x).ln();
    }
    let x2 = x * x;
    let series = 1.0 - 1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2) + 105.0 / (x2 * x2 * x2 * x2);
    -0.5 * x2 - (-x * (2.0 * std::f64::consts::PI).sqrt()).ln() + series.ln()
}

/// δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ): the exact (ε, δ) curve of a
/// μ-GDP mechanism (Balle & Wang 2018); `exp` of [`log_delta_gaussian`].
///
/// ```
/// use propdp_accountant::delta_gaussian;
/// // μ = 1, ε = 1: Φ(−0.5) − e Φ(−1.5)
/// assert!((delta_gaussian(1.0, 1.0) - 0.126936).abs() < 1e-6);
/// ```
pub fn delta_gaussian(eps: f64, mu: f64) -> f64 {
    log_delta_gaussian(eps, mu).exp()
}

/// log δ_G(ε; μ) = log Φ(a) + log(1 − e^{ε + log Φ(b) − log Φ(a)}), a = μ/2 − ε/μ,
/// b = −μ/2 − ε/μ; −∞ when δ_G = 0 (μ ≤ 0). Both terms stay in log space, so
/// δ far below f64's smallest number keeps its relative accuracy, and the
/// difference uses `expm1` (at δ = 1e-161, ε = 0.1 the two terms agree to
/// 1 part in 7000).
///
/// ```
/// use propdp_accountant::log_delta_gaussian;
/// // far below f64: δ_G(ε = 40, μ = 1) ≈ Φ(−39.5)
/// assert!(log_delta_gaussian(40.0, 1.0) < -700.0);
/// assert!(log_delta_gaussian(40.0, 1.0).is_finite());
/// ```
pub fn log_delta_gaussian(eps: f64, mu: f64) -> f64 {
    if mu.is_nan() || mu <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let log_a = log_norm_cdf(mu / 2.0 - eps / mu);
    let log_b = eps + log_norm_cdf(-mu / 2.0 - eps / mu);
    let gap = log_b - log_a;
    if gap.is_nan() || gap >= 0.0 {
        return f64::NEG_INFINITY;
    }
    log_a + (-gap.exp_m1()).ln()
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

/// μ of output perturbation: Δ = LR/λ (add/remove) or 2LR/λ (replace), μ = Δ/τ.
pub fn mu_output(l: f64, r: f64, lambda: f64, tau: f64, n: Neighbouring) -> f64 {
    relation_factor(n) * l * r / lambda / tau
}

/// μ of T steps of DP-GD: per-step Δ = LR or 2LR, μ = √T·Δ/σ.
pub fn mu_dpgd(l: f64, r: f64, steps: usize, sigma: f64, n: Neighbouring) -> f64 {
    (steps as f64).sqrt() * relation_factor(n) * l * r / sigma
}

/// Objective perturbation, add/remove-one: privacy loss ≤ c + A|Z| with
/// A = LR/σ, c = log(1 + βR²/λ) + A²/2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectiveBound {
    /// log(1 + βR²/λ).
    pub c0: f64,
    /// A = LR/σ.
    pub a: f64,
}

impl ObjectiveBound {
    /// The bound for loss constants (L, β), ‖x‖ ≤ R, ridge λ and noise σ.
    pub fn new(l: f64, beta: f64, r: f64, lambda: f64, sigma: f64) -> Self {
        ObjectiveBound {
            c0: (beta * r * r / lambda).ln_1p(),
            a: l * r / sigma,
        }
    }

    /// c = c0 + A²/2.
    pub fn c(&self) -> f64 {
        self.c0 + 0.5 * self.a * self.a
    }

    /// δ(ε) = E[(1 − e^{ε − c − A|Z|})₊]: `exp` of [`ObjectiveBound::log_delta`].
    pub fn delta(&self, eps: f64) -> f64 {
        self.log_delta(eps).exp()
    }

    /// log δ(ε): 2·δ_G(ε − c0; A) for ε ≥ c and, where the integrand is
    /// positive for every Z, 1 − 2e^{ε − c + A²/2}Φ(−A) (from
    /// E e^{−A|Z|} = 2e^{A²/2}Φ(−A)); the two agree at ε = c.
    pub fn log_delta(&self, eps: f64) -> f64 {
        if eps >= self.c() {
            std::f64::consts::LN_2 + log_delta_gaussian(eps - self.c0, self.a)
        } else {
            let log_term = std::f64::consts::LN_2 + eps - self.c() + 0.5 * self.a * self.a + log_norm_cdf(-self.a);
            if log_term < 0.0 {
                (-log_term.exp_m1()).ln()
            } else {
                f64::NEG_INFINITY
            }
        }
    }

    /// RDP of order α > 1: c0 + αA²/2 + log(2Φ((α−1)A))/(α−1).
    pub fn rdp(&self, alpha: f64) -> f64 {
        self.c0 + alpha * self.a * self.a / 2.0 + (2.0f64.ln() + log_norm_cdf((alpha - 1.0) * self.a)) / (alpha - 1.0)
    }

    /// zCDP ρ = c0 + A√(2/π) + A²/2.
    pub fn zcdp(&self) -> f64 {
        self.c0 + self.a * (2.0 / std::f64::consts::PI).sqrt() + 0.5 * self.a * self.a
    }
}

/// Objective perturbation under replace-one: group privacy of size 2 applied
/// to the add/remove guarantee (ε, δ) → (2ε, (1 + e^ε)δ).
pub fn objective_replace_one(bound: &ObjectiveBound, eps_add_remove: f64) -> (f64, f64) {
    (
        2.0 * eps_add_remove,
        (1.0 + eps_add_remove.exp()) * bound.delta(eps_add_remove),
    )
}

/// (ε, δ) from RDP ε(α) by the conversion of Canonne, Kamath & Steinke
/// (2020): ε = min_α ε(α) + log((α−1)/α) − (log δ + log α)/(α−1), minimised
/// over α on a log grid refined by golden-section search.
pub fn rdp_to_eps<F: Fn(f64) -> f64>(rdp: F, delta: f64) -> f64 {
    let f = |alpha: f64| rdp(alpha) + ((alpha - 1.0) / alpha).ln() - (delta.ln() + alpha.ln()) / (alpha - 1.0);
    // coarse grid over α ∈ (1, 1e4]
    let grid: Vec<f64> = (1..=400)
        .map(|i| 1.0 + 10f64.powf(-3.0 + 7.0 * i as f64 / 400.0))
        .collect();
    let (mut best, mut arg) = (f64::INFINITY, 2.0);
    for &a in &grid {
        let v = f(a);
        if v < best {
            best = v;
            arg = a;
        }
    }
    // golden-section refinement on [arg/1.05, arg·1.05] ∩ (1, ∞)
    let (mut lo, mut hi) = ((1.0 + (arg - 1.0) / 1.1).max(1.0 + 1e-9), 1.0 + (arg - 1.0) * 1.1);
    let g = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..100 {
        let (x1, x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if f(x1) < f(x2) { hi = x2 } else { lo = x1 }
    }
    best.min(f(0.5 * (lo + hi))).max(0.0)
}

/// (ε, δ) of ρ-zCDP (RDP ε(α) = ρα).
pub fn zcdp_to_eps(rho: f64, delta: f64) -> f64 {
    rdp_to_eps(|a| rho * a, delta)
}

/// ε at which a μ-GDP mechanism reaches `delta` (inverse of δ_G in ε).
pub fn gdp_to_eps(mu: f64, delta: f64) -> Option<f64> {
    eps_at(|e| log_delta_gaussian(e, mu), delta)
}

/// The smallest ε ≥ 0 with δ(ε) ≤ `delta`, for a decreasing log δ(ε); `None`
/// beyond ε = 1e5. The root is taken of log δ(ε) − log δ, which is O(1)
/// where δ(ε) − δ would be as small as δ itself (see [`brent_root`]).
pub(crate) fn eps_at<F: Fn(f64) -> f64>(log_delta_of: F, delta: f64) -> Option<f64> {
    let log_target = delta.ln();
    let g = |e: f64| log_delta_of(e).max(LOG_FLOOR) - log_target;
    if g(0.0) <= 0.0 {
        return Some(0.0);
    }
    let mut hi = 1.0;
    while g(hi) > 0.0 {
        hi *= 2.0;
        // ε of 10¹⁵ is no privacy, but a finite statement (T = 10⁹ steps at σ = 1: ε ≈ 2·10⁹)
        if hi > 1e15 {
            return None;
        }
    }
    brent_root(g, 0.0, hi)
}

/// log δ values below this are clamped so root finding sees finite numbers
/// (δ = e^-1e5 is far below any target: `delta_priv` ≥ f64's smallest).
const LOG_FLOOR: f64 = -1e5;

/// Root of a monotone function on [lo, hi] by Brent (`roots`), to 4 ulp
/// relative in x (or f exactly 0). `f` must be O(1)-scaled near the root:
/// `roots` tests signs by the product f(a)·f(s), which underflows to 0 for
/// values near 1e-161 and sends the bracket the wrong way (ε = 0.100001 was
/// reported for δ = 1e-161, ε = 0.1); callers pass log-space differences.
pub(crate) fn brent_root<F: Fn(f64) -> f64>(f: F, lo: f64, hi: f64) -> Option<f64> {
    roots::find_root_brent(lo, hi, &f, &mut Relative).ok()
}

/// Convergence of [`brent_root`]: an absolute x tolerance cannot be met by
/// roots far from 0 (at ε ≈ 1e4 the spacing of doubles is 2e-12), so the
/// bracket is asked to shrink to 4 ulp of its end points; and no absolute
/// |f| is small enough to stop on (at δ = 1e-75 every δ(ε) − δ is below
/// 1e-15), so only an exact 0 does.
struct Relative;

impl roots::Convergency<f64> for Relative {
    fn is_root_found(&mut self, y: f64) -> bool {
        y == 0.0
    }
    fn is_converged(&mut self, x1: f64, x2: f64) -> bool {
        (x1 - x2).abs() <= 4.0 * f64::EPSILON * x1.abs().max(x2.abs()) + f64::MIN_POSITIVE
    }
    fn is_iteration_limit_reached(&mut self, iter: usize) -> bool {
        iter >= 500
    }
}

/// The smallest noise (σ, τ, or DP-GD σ) whose guarantee meets (ε, δ):
/// `log_delta_of(noise)` is log δ and must decrease in the noise. Solved in
/// log-noise over [e^-200, e^40]; `None` when the root is outside (no noise
/// meets the target, or any noise does).
pub fn calibrate<F: Fn(f64) -> f64>(log_delta_of: F, target_delta: f64) -> Option<f64> {
    let g = |log_s: f64| log_delta_of(log_s.exp()).max(LOG_FLOOR) - target_delta.ln();
    let (mut lo, mut hi) = (-30.0f64, 1.0f64);
    while g(hi) > 0.0 {
        hi += 2.0;
        if hi > 40.0 {
            return None;
        }
    }
    while g(lo) < 0.0 {
        lo -= 5.0;
        if lo < -200.0 {
            // every noise ≥ e^-200 meets the target: no smallest noise is
            // calibrated (0 would claim privacy without noise)
            return None;
        }
    }
    brent_root(g, lo, hi).map(f64::exp)
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

/// Grid width of the PLD accountant behind [`MechanismKind::Dpsgd`]: ε within
/// about 1e-4 relative of the continuous curve at T = 10⁴ (`tests/dpsgd_accountant.rs`),
/// always above it (pessimistic rounding).
pub const DPSGD_GRID: f64 = 1e-3;

/// Tail mass the PLD leaves out per step (counted into δ), at most.
pub const DPSGD_TAIL: f64 = 1e-15;

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
    /// certified search of [`calibrate::calibrate`] (its ε read back by
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
            let run = bracket::Segment {
                noise_multiplier: 1.0,
                sample_rate,
                steps: steps as u64,
            };
            let target = calibrate::Target::Epsilon { epsilon: eps, delta };
            let settings = bracket::BracketSettings::default();
            let z = calibrate::calibrate(
                calibrate::Knob::NoiseMultiplier,
                run,
                target,
                self.neighbouring,
                settings,
            )
            .ok()?
            .run
            .noise_multiplier;
            // met at the smallest multiplier searched: no smallest noise to calibrate
            if z <= calibrate::Knob::NoiseMultiplier.limits().0 {
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
            calibrate(|s| self.log_delta(eps, s), delta)
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
        self.epsilon_bracket(noise, delta, bracket::BracketSettings::default())
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
        calibrate(|s| self.rho(s).ln(), rho)
    }

    /// DP-SGD's per-example sensitivity min(C, L) (R = 1); L alone without clipping.
    pub fn dpsgd_sensitivity(&self, clip: Option<f64>) -> f64 {
        clip.map_or(self.lipschitz, |c| c.min(self.lipschitz))
    }

    /// A certified [lower, upper] ε at `delta` for noise level `noise`
    /// ([`bracket`]): for DP-SGD below the full batch the PLD bracket, its
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
    pub fn epsilon_bracket(
        &self,
        noise: f64,
        delta: f64,
        settings: bracket::BracketSettings,
    ) -> Option<bracket::EpsilonBracket> {
        let closed = |e: f64| bracket::EpsilonBracket {
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
        let run = bracket::Segment {
            noise_multiplier: noise / self.dpsgd_sensitivity(clip),
            sample_rate,
            steps: steps as u64,
        };
        if !(run.noise_multiplier > 0.0 && run.noise_multiplier.is_finite()) {
            return self.epsilon(noise, delta).map(closed);
        }
        calibrate::certified_epsilon(&run, delta, self.neighbouring, settings)
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
            let pld = dpsgd_epsilon(z, sample_rate, steps, delta, n);
            let rdp = Some(dpsgd_rdp_epsilon(z, sample_rate, steps as u64, delta, n)).filter(|e| e.is_finite());
            let full = eps_at(
                |e| log_delta_gaussian(e, mu_dpgd(sensitivity, 1.0, steps, noise, n)),
                delta,
            );
            return [pld, rdp, full].into_iter().flatten().reduce(f64::min);
        }
        eps_at(|e| self.log_delta(e, noise), delta)
    }
}

/// log δ(ε) of T steps of DP-SGD at noise multiplier z = σ/C and rate q
/// (docs/theory.md §4.1): at q = 1 the Gaussian mechanism, exact, with
/// μ = √T·Δ/σ (Δ = C add/remove, 2C replace: DP-GD's curve); below, the PLD
/// accountant on the relation's pair ([`pld::composed`]: add/remove-one's
/// worse direction, or replace-one's pair (1 − q)N(0, z²) + qN(∓1, z²)).
/// 0 (δ = 1) without noise or with an unbounded gradient (z = 0).
fn dpsgd_log_delta(eps: f64, z: f64, q: f64, steps: usize, n: Neighbouring) -> f64 {
    if !(z > 0.0 && z.is_finite()) {
        return if z == f64::INFINITY { f64::NEG_INFINITY } else { 0.0 };
    }
    if q >= 1.0 {
        return log_delta_gaussian(eps, mu_dpgd(1.0, 1.0, steps, z, n));
    }
    let m = pld::SubsampledGaussian { z, q };
    if !pld_fits(m, steps, n) {
        return 0.0; // no PLD guarantee claimed (δ = 1); the RDP bound stands
    }
    let max_len = 4 * PLD_MAX_POINTS as usize;
    match pld::composed(m, steps as u64, DPSGD_GRID, DPSGD_TAIL, max_len, n) {
        Some(plds) => plds.iter().map(|p| p.delta(eps)).fold(0.0, f64::max).min(1.0).ln(),
        None => 0.0, // too large to compose: no PLD guarantee claimed (δ = 1)
    }
}

/// Most grid points the DP-SGD PLD may span (one step, or the composition's
/// reach): 2^20; beyond, the RDP bound stands alone (q = 0.5, z = 2,
/// T = 10⁴ spans 7·10⁶ and its FFTs needed over 3.6 GB).
const PLD_MAX_POINTS: f64 = 1_048_576.0;

/// Most steps the DP-SGD PLD composes (beyond, the composition's support
/// outgrows memory: T = 10⁷ at q = 0.001, z = 0.5 needed over 3 GB); the RDP
/// bound stands alone there.
const PLD_MAX_STEPS: usize = 1_000_000;

/// Whether the PLD of T steps at (z, q) fits in [`PLD_MAX_POINTS`]: one
/// step's support reaches about the loss at x = 1 + 8.5z, (1 + 17z)/(2z²)
/// (tiny z: huge; twice that under replace-one), the composition's bulk
/// spans about 20 standard deviations, 20·√T·sd(one step's loss), and
/// add/remove-one's T·|log(1 − q)| (huge T).
fn pld_fits(m: pld::SubsampledGaussian, steps: usize, n: Neighbouring) -> bool {
    if steps > PLD_MAX_STEPS {
        return false;
    }
    let top = relation_factor(n) * (1.0 + 17.0 * m.z) / (2.0 * m.z * m.z);
    if top.is_nan() || top / DPSGD_GRID > PLD_MAX_POINTS {
        return false;
    }
    let direction = pld::Direction::of(n)[0];
    let one = m.pld(direction, DPSGD_GRID, DPSGD_TAIL);
    let loss = |i: usize| (one.offset + i as i64) as f64 * one.grid;
    let mean: f64 = one.pmf.iter().enumerate().map(|(i, p)| p * loss(i)).sum();
    let var: f64 = one
        .pmf
        .iter()
        .enumerate()
        .map(|(i, p)| p * (loss(i) - mean).powi(2))
        .sum();
    // the remove direction's loss is ≥ log(1 − q) per step, and its partial
    // compositions keep everything up to T·|log(1 − q)| above the ceiling
    let reach = match n {
        Neighbouring::AddRemoveOne => steps as f64 * -(1.0 - m.q).ln(),
        Neighbouring::ReplaceOne => 0.0,
    };
    20.0 * (steps as f64 * var).sqrt() / DPSGD_GRID <= PLD_MAX_POINTS && reach / DPSGD_GRID <= PLD_MAX_POINTS
}

/// ε at δ of T steps of DP-SGD (as [`dpsgd_log_delta`]), read off the
/// composed PLDs of the relation's pair.
fn dpsgd_epsilon(z: f64, q: f64, steps: usize, delta: f64, n: Neighbouring) -> Option<f64> {
    if !(z > 0.0 && z.is_finite()) {
        return (z == f64::INFINITY).then_some(0.0);
    }
    if q >= 1.0 {
        return gdp_to_eps(mu_dpgd(1.0, 1.0, steps, z, n), delta);
    }
    let m = pld::SubsampledGaussian { z, q };
    if !pld_fits(m, steps, n) {
        return None;
    }
    // the same PLDs as `dpsgd_log_delta` (same tail), so that a noise
    // calibrated there reads back to at most its target here
    let plds = pld::composed(m, steps as u64, DPSGD_GRID, DPSGD_TAIL, 4 * PLD_MAX_POINTS as usize, n)?;
    plds.iter()
        .map(|p| p.epsilon(delta))
        .try_fold(0.0f64, |worst, e| e.map(|e| worst.max(e)))
}

/// The smallest noise multiplier z meeting (ε, δ) for T steps of DP-SGD at
/// rate q, to about 1e-9 relative, on the safe side (δ(ε) ≤ target is
/// checked at the z returned).
///
/// Bracket: the full batch's z (q = 1, exact Gaussian) meets the target at
/// every q — one step's pair at rate q is a mixture of the full pair and of
/// (P, P), and by joint convexity its hockey-stick divergence is at most the
/// full pair's, at every ε — so it bounds z from above; halving finds the
/// lower end. Root: Brent in log z on log δ_PLD(ε; z) − log δ. Where the
/// PLD cannot confirm the full batch's z (a δ below the FFT's floor, or a
/// PLD that does not fit) the smaller of that z and the RDP-calibrated z is
/// returned, both valid.
fn calibrate_dpsgd(eps: f64, delta: f64, q: f64, steps: usize, n: Neighbouring) -> Option<f64> {
    if !(eps > 0.0 && eps.is_finite() && delta > 0.0 && delta < 1.0) {
        return None;
    }
    let full = calibrate(|z| log_delta_gaussian(eps, mu_dpgd(1.0, 1.0, steps, z, n)), delta)?;
    if q >= 1.0 {
        return Some(full);
    }
    let log_target = delta.ln();
    let g = |z: f64| dpsgd_log_delta(eps, z, q, steps, n) - log_target;
    let mut hi = full;
    if g(hi) > 0.0 {
        return Some(calibrate_dpsgd_rdp(eps, delta, q, steps, n).map_or(full, |z| z.min(full)));
    }
    let mut lo = hi / 2.0;
    while g(lo) <= 0.0 {
        hi = lo;
        lo /= 2.0;
        if lo < 1e-12 {
            return None;
        }
    }
    // g is monotone only up to the grid's rounding, so the root is checked
    // and nudged up until the PLD confirms it
    let root = brent_root(|x| g(x.exp()), lo.ln(), hi.ln()).map_or(hi, f64::exp);
    let mut step = 1e-9 * root;
    let mut z = root;
    while g(z) > 0.0 {
        z += step;
        step *= 4.0;
        if z >= hi {
            return Some(hi);
        }
    }
    Some(z)
}

/// The RDP-calibrated noise multiplier for (ε, δ) (replace-one as
/// (ε/2, δ/(1 + e^{ε/2})) add/remove), to 1e-3 relative on the safe side,
/// by bisection in log z over [1e-4, 1e8].
fn calibrate_dpsgd_rdp(eps: f64, delta: f64, q: f64, steps: usize, n: Neighbouring) -> Option<f64> {
    let (e_ar, d_ar) = match n {
        Neighbouring::AddRemoveOne => (eps, delta),
        Neighbouring::ReplaceOne => (eps / 2.0, delta / (1.0 + (eps / 2.0).exp())),
    };
    // NaN (the RDP sum overflowing at tiny q and z) counts as above
    let above = |z: f64| rdp::epsilon(z, q, steps as u64, d_ar).partial_cmp(&e_ar) != Some(std::cmp::Ordering::Less);
    let (mut lo, mut hi) = (1e-4f64, 1e8f64);
    if above(hi) {
        return None;
    }
    while hi / lo > 1.001 {
        let mid = (lo * hi).sqrt();
        if above(mid) { lo = mid } else { hi = mid }
    }
    Some(hi)
}

/// The RDP accountant's ε at δ for T steps of DP-SGD at noise multiplier z
/// and rate q ([`rdp::epsilon`], integer and fractional orders): looser than the PLD, a
/// cross-check. Replace-one: at q = 1 the 2C shift (z/2); below, group
/// privacy of size 2, the smallest e with ε_RDP(δ/(1 + e^e)) ≤ e, as 2e —
/// a valid upper bound, looser than the replace-one pair's PLD, and used
/// only as an upper end.
pub fn dpsgd_rdp_epsilon(z: f64, q: f64, steps: u64, delta: f64, n: Neighbouring) -> f64 {
    match n {
        Neighbouring::AddRemoveOne => rdp::epsilon(z, q, steps, delta),
        Neighbouring::ReplaceOne if q >= 1.0 => rdp::epsilon(z / 2.0, q, steps, delta),
        Neighbouring::ReplaceOne => {
            let curve = rdp::Curve::cached(z, q);
            let holds = |e: f64| curve.epsilon(steps, delta / (1.0 + e.exp())) <= e;
            let mut hi = curve.epsilon(steps, delta * 1e-6).max(1e-9);
            while !holds(hi) {
                hi *= 2.0;
                if hi.is_nan() || hi >= 1e6 {
                    return f64::INFINITY;
                }
            }
            let mut lo = 0.0;
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if holds(mid) { hi = mid } else { lo = mid }
            }
            2.0 * hi
        }
    }
}
