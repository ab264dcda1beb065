//! What a guarantee means for membership inference: the largest true
//! positive rate (TPR) any attack deciding "was this row in the training
//! set" can reach at a given false positive rate (FPR) α.
//!
//! *From the privacy profile.* An (ε, δ)-DP mechanism's tests satisfy
//! α + e^ε·β ≥ 1 − δ and e^ε·α + β ≥ 1 − δ (β = 1 − TPR, the miss rate;
//! Kairouz, Oh, Viswanath 2015), so
//!
//!   TPR ≤ min(1, e^ε·α + δ, 1 − e^{−ε}(1 − α − δ)),
//!
//! at every (ε, δ) the mechanism meets. [`tpr_upper`] takes the smallest of
//! these over a grid of ε with δ = δ⁺(ε) the certified upper profile
//! ([`UpperProfile`]; under replace-one, of the tight replace-one pair
//! (1 − q)N(0, z²) + qN(∓1, z²)): every point is a valid bound, the grid only decides
//! how close to the infimum it gets (the grid of ε is 10⁻³ wide up to the
//! ε where δ⁺ falls below 10⁻¹⁴·α).
//!
//! *Gaussian mechanisms (full-batch DP-SGD, DP-GD, output perturbation).*
//! μ-GDP with μ² = Σ T_i s²/z_i² (s = 1 add/remove-one, 2 replace-one):
//! the trade-off is exact, TPR = Φ(Φ⁻¹(α) + μ) ([`gaussian_tpr`]; Dong,
//! Roth, Su 2022).
//!
//! *Subsampled DP-SGD as μ-GDP.* The central limit theorem of Bu, Dong,
//! Long, Su (2020) gives μ² ≈ T·χ²(P‖Q) to leading order in q, as T → ∞
//! with q√T fixed ([`clt_mu`]): μ ≈ q·√(T(e^{1/z²} − 1)) for add/remove-one
//! and, for replace-one's pair (1 − q)N(0, z²) + qN(∓1, z²), where
//! χ² ≈ q²∫(φ₋₁ − φ₁)²/φ₀ = 4q² sinh(1/z²), μ ≈ 2q·√(T sinh(1/z²)). An
//! approximation, not a bound (it can be optimistic at small T or large q),
//! reported as such.
//!
//! # References
//! - Kairouz, Oh, Viswanath (2015), *The composition theorem for
//!   differential privacy*, ICML.
//! - Dong, Roth, Su (2022), *Gaussian differential privacy*, JRSS B.
//! - Bu, Dong, Long, Su (2020), *Deep learning with Gaussian differential
//!   privacy*, Harvard Data Science Review.
//! - Carlini et al. (2022), *Membership inference attacks from first
//!   principles*, IEEE S&P (TPR at low FPR as the measure of an attack).

use crate::AccountantError;
use crate::bracket::{BracketSettings, UpperProfile};
use crate::events::{Segment, check_segments};
use crate::gaussian::{brent_ulp, log_norm_cdf, norm_cdf};
use crate::neighbouring::{Neighbouring, relation_factor};

/// The grid of ε the profile bound is minimised over.
const EPS_STEP: f64 = 1e-3;

/// The largest TPR at FPR `fpr` of a mechanism meeting (ε, `delta_of(ε)`)
/// for every ε ≥ 0, minimised over ε ∈ {0, 10⁻³, 2·10⁻³, …} up to where
/// both branches at δ = 0 exceed the best bound, δ falls below 10⁻¹⁴·α, or
/// ε = 500.
///
/// ```
/// use propdp_accountant::tradeoff::tpr_from_profile;
/// // pure ε-DP at ε = 1: TPR ≤ e·α at small α
/// let t = tpr_from_profile(|e| if e >= 1.0 { 0.0 } else { 1.0 }, 0.01);
/// assert!((t - 0.01 * 1f64.exp()).abs() < 1e-12);
/// ```
pub fn tpr_from_profile<F: Fn(f64) -> f64>(delta_of: F, fpr: f64) -> f64 {
    let bound = |e: f64, d: f64| {
        let a = e.exp() * fpr + d;
        let b = 1.0 - (-e).exp() * (1.0 - fpr - d);
        a.min(b).min(1.0)
    };
    let mut best = 1.0f64;
    for i in 0u32.. {
        let e = f64::from(i) * EPS_STEP;
        let d = delta_of(e);
        best = best.min(bound(e, d));
        // beyond: both branches at δ = 0, which grow with ε, exceed the best
        // bound; or δ is negligible (then they are within it of those)
        let floor = (e.exp() * fpr).min(1.0 - (-e).exp() * (1.0 - fpr));
        if floor >= best || d <= 1e-14 * fpr || e >= 500.0 {
            break;
        }
    }
    best
}

/// The largest TPR any membership-inference attack reaches at each FPR of
/// `fprs` (each in (0, 1)) against a DP-SGD schedule, from its certified
/// upper profile (or, at q = 1 throughout, the exact Gaussian trade-off);
/// arguments out of range are refused naming them.
///
/// ```
/// use propdp_accountant::tradeoff::tpr_upper;
/// use propdp_accountant::bracket::BracketSettings;
/// use propdp_accountant::events::Segment;
/// use propdp_accountant::Neighbouring;
/// let run = [Segment { noise_multiplier: 1.0, sample_rate: 0.01, steps: 1000 }];
/// let t = tpr_upper(&run, Neighbouring::AddRemoveOne, &[0.001, 0.1], BracketSettings::default()).unwrap();
/// assert!(0.001 < t[0] && t[0] < t[1] && t[1] < 1.0);
/// ```
pub fn tpr_upper(
    segments: &[Segment],
    neighbouring: Neighbouring,
    fprs: &[f64],
    settings: BracketSettings,
) -> Result<Vec<f64>, AccountantError> {
    for &a in fprs {
        if !(a > 0.0 && a < 1.0) {
            return Err(AccountantError::range("fpr", a, "0 < fpr < 1"));
        }
    }
    if segments.iter().all(|s| s.sample_rate >= 1.0) {
        check_segments(segments)?;
        let mu = gdp_mu(segments, neighbouring).map_or(0.0, |m| m.0);
        return Ok(fprs.iter().map(|&a| gaussian_tpr(mu, a)).collect());
    }
    let profile = UpperProfile::new(segments, neighbouring, settings)?;
    Ok(fprs
        .iter()
        .map(|&a| tpr_from_profile(|e| profile.delta_upper(e), a))
        .collect())
}

/// The μ-GDP reading of a schedule and whether it is exact: at q = 1
/// throughout, μ² = Σ T_i s²/z_i² (exact); one subsampled segment, its
/// [`clt_mu`] (an approximation); `None` for a subsampled schedule of
/// several segments.
///
/// ```
/// use propdp_accountant::tradeoff::gdp_mu;
/// use propdp_accountant::events::Segment;
/// use propdp_accountant::Neighbouring;
/// let full = [Segment { noise_multiplier: 10.0, sample_rate: 1.0, steps: 100 }];
/// assert_eq!(gdp_mu(&full, Neighbouring::ReplaceOne), Some((2.0, true)));
/// ```
pub fn gdp_mu(segments: &[Segment], neighbouring: Neighbouring) -> Option<(f64, bool)> {
    let s = relation_factor(neighbouring);
    if segments.iter().all(|g| g.sample_rate >= 1.0) {
        let mu2: f64 = segments
            .iter()
            .map(|g| g.steps as f64 * (s / g.noise_multiplier).powi(2))
            .sum();
        return Some((mu2.sqrt(), true));
    }
    match segments {
        [one] => Some((
            clt_mu(one.noise_multiplier, one.sample_rate, one.steps, neighbouring),
            false,
        )),
        _ => None,
    }
}

/// The exact TPR at FPR α of the best test against μ-GDP: Φ(Φ⁻¹(α) + μ).
///
/// ```
/// use propdp_accountant::tradeoff::gaussian_tpr;
/// // μ = 0: no test beats guessing
/// assert!((gaussian_tpr(0.0, 0.05) - 0.05).abs() < 1e-12);
/// ```
pub fn gaussian_tpr(mu: f64, fpr: f64) -> f64 {
    // Φ⁻¹(α) by Brent on log Φ (accurate in the far tail)
    let x = brent_ulp(|x| log_norm_cdf(x) - fpr.ln(), -40.0, 40.0).unwrap_or(if fpr < 0.5 { -40.0 } else { 40.0 });
    norm_cdf(x + mu)
}

/// The central-limit μ of T steps of Poisson-subsampled DP-SGD:
/// q·√(T(e^{1/z²} − 1)) add/remove-one, 2q·√(T sinh(1/z²)) replace-one
/// (module docs); an approximation, exact in no finite case; at q = 1 use
/// the exact μ = s√T/z instead.
///
/// ```
/// use propdp_accountant::tradeoff::clt_mu;
/// use propdp_accountant::Neighbouring;
/// let mu = clt_mu(1.0, 0.01, 10_000, Neighbouring::AddRemoveOne);
/// assert!((mu - 0.01 * (1e4 * (1f64.exp() - 1.0)).sqrt()).abs() < 1e-12);
/// // at large z replace-one's μ is twice add/remove-one's (a shift of 2)
/// let (a, r) = (clt_mu(100.0, 0.01, 10_000, Neighbouring::AddRemoveOne), clt_mu(100.0, 0.01, 10_000, Neighbouring::ReplaceOne));
/// assert!((r / a - 2.0).abs() < 1e-3);
/// ```
pub fn clt_mu(z: f64, q: f64, steps: u64, neighbouring: Neighbouring) -> f64 {
    let t = steps as f64;
    match neighbouring {
        Neighbouring::AddRemoveOne => q * (t * (1.0 / (z * z)).exp_m1()).sqrt(),
        Neighbouring::ReplaceOne => 2.0 * q * (t * (1.0 / (z * z)).sinh()).sqrt(),
    }
}
