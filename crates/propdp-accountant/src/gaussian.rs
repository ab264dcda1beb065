//! The Gaussian mechanism's maths: Φ and log Φ in the far tail, the exact
//! (ε, δ) curve δ_G of a μ-GDP mechanism, the μ of output perturbation and
//! DP-GD, the conversions RDP, zCDP and GDP → (ε, δ), and the search for
//! the smallest noise; Φ, log Φ and Brent are `propdp_numerics`'.
//!
//! # References
//! - Balle, Wang (2018), *Improving the Gaussian mechanism for differential privacy*.
//! - Dong, Roth, Su (2022), *Gaussian differential privacy*.
//! - Canonne, Kamath, Steinke (2020), *The discrete Gaussian for differential privacy* (RDP → (ε, δ)).

use crate::neighbouring::{Neighbouring, relation_factor};

pub use propdp_numerics::normal::{log_norm_cdf, norm_cdf};
pub(crate) use propdp_numerics::roots::brent_ulp;

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

/// log(1 + e^x), without overflow (e^x leaves f64 beyond x ≈ 709.78).
pub(crate) fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
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
/// where δ(ε) − δ would be as small as δ itself (see [`brent_ulp`]).
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
    brent_ulp(g, 0.0, hi)
}

/// log δ values below this are clamped so root finding sees finite numbers
/// (δ = e^-1e5 is far below any target: `delta_priv` ≥ f64's smallest).
const LOG_FLOOR: f64 = -1e5;

/// The smallest noise (σ, τ, or DP-GD σ) whose guarantee meets (ε, δ):
/// `log_delta_of(noise)` is log δ and must decrease in the noise. Solved in
/// log-noise over [e^-200, e^40]; `None` when the root is outside (no noise
/// meets the target, or any noise does).
pub(crate) fn smallest_noise<F: Fn(f64) -> f64>(log_delta_of: F, target_delta: f64) -> Option<f64> {
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
    brent_ulp(g, lo, hi).map(f64::exp)
}
