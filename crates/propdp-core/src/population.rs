//! Test metrics of a Gaussian design from its overlaps: for rows
//! x ~ N(0, Σ/d) the test fit ω = xᵀθ̂ and the teacher's field ν = xᵀθ* are
//! jointly Gaussian, with Var ω = q = θ̂ᵀΣθ̂/d, Cov(ω, ν) = m = θ̂ᵀΣθ*/d and
//! Var ν = s² = θ*ᵀΣθ*/d, so ω = bν + τξ (b = m/s², τ² = q − m²/s², ξ
//! independent). The population test metrics of θ̂ — what a fresh sample
//! estimates — are one-dimensional Gaussian expectations in ν, computed by
//! [`crate::panels::normal_expect`]. The theory evaluates them at its
//! predicted overlaps, the simulator at a fitted θ̂'s.
//!
//! For regression labels y = ν + ε the test squared error is
//! q − 2m + s² + Var ε, a closed form ([`test_mse`]).
//!
//! # References
//! - Sur, Candès (2019), *A modern maximum-likelihood theory for
//!   high-dimensional logistic regression*, PNAS (the Gaussian field of a
//!   fresh row).

use crate::loss::{norm_cdf as cdf, sigmoid, softplus};
use crate::panels::{normal_expect, normal_expect_within};

/// E(y − xᵀθ)² on a fresh sample with y = ν + ε, Var ε = `noise_variance`:
/// q − 2m + s² + Var ε.
///
/// ```
/// // θ̂ = θ*: only the label noise is left
/// assert_eq!(propdp_core::population::test_mse(2.0, 2.0, 2.0, 0.25), 0.25);
/// ```
pub fn test_mse(s2: f64, m: f64, q: f64, noise_variance: f64) -> f64 {
    q - 2.0 * m + s2 + noise_variance
}

/// The widest panel of the test errors' integrals over ν: 4τ/|b| (two
/// widths of Φ(−bν/τ)'s ramp each side of its centre), at least 10⁻³ and at
/// most 2 (the sigmoid bends on a scale of 1, its poles at ±iπ). 16-node
/// Gauss–Legendre on such panels agrees with panels eight times narrower to
/// 7·10⁻¹⁵ relative over s² ∈ [¼, 16], m ∈ [10⁻⁴, 4], τ² ∈ [10⁻⁶, 10]
/// (session 41; half as wide before, at twice the cost).
fn panel(b: f64, tp: f64) -> f64 {
    if b != 0.0 {
        (4.0 * tp / b.abs()).clamp(1e-3, 2.0)
    } else {
        2.0
    }
}

/// P(sign(xᵀθ) ≠ y) on a fresh sample when θᵀθ*/d = m and ‖θ‖²/d = q:
/// the field is ω = bν + τξ with b = m/s², τ² = q − m²/s², so by symmetry
/// the error is 2E[sigmoid(ν) Φ(−bν/τ)] (ties, θ = 0, count ½).
///
/// With τ > 0, σ(ν) − ½ = tanh(ν/2)/2 and Φ(−bν/τ) − ½ = −erf(bν/(τ√2))/2
/// are odd in ν, so the error is ½ − E[tanh(|ν|/2)·erf(b|ν|/(τ√2))]/2: the
/// integral over ν ≥ 0 alone, half the nodes (the long-horizon solver
/// evaluates it at every step of every replicate).
///
/// ```
/// use propdp_core::population::test_class_error;
/// // θ ⟂ θ*: a coin; the error falls as θ aligns with θ* and rises against it
/// assert!((test_class_error(4.0, 0.0, 1.0) - 0.5).abs() < 1e-15);
/// let (good, bad) = (test_class_error(4.0, 1.0, 1.0), test_class_error(4.0, -1.0, 1.0));
/// assert!(good < 0.5 && (good + bad - 1.0).abs() < 1e-15);
/// ```
pub fn test_class_error(s2: f64, m: f64, q: f64) -> f64 {
    let b = m / s2;
    let tp = (q - m * m / s2).max(0.0).sqrt();
    if q <= 0.0 {
        return 0.5;
    }
    if tp > 0.0 {
        let c = b / (tp * std::f64::consts::SQRT_2);
        let half = (0.0, f64::INFINITY);
        // E[·; ν ≥ 0] is half of E[·] for an even integrand
        return 0.5
            - normal_expect_within(0.0, s2.sqrt(), half, &[], panel(b, tp), |nu| {
                (0.5 * nu).tanh() * libm::erf(c * nu)
            });
    }
    2.0 * normal_expect(0.0, s2.sqrt(), &[0.0], panel(b, tp), |nu| {
        sigmoid(nu) * f64::from(u8::from(b * nu < 0.0))
    })
}

/// [`test_class_error`] with intercepts (docs/theory.md §3.5):
/// P(sign(xᵀθ + β) ≠ y) on a fresh sample whose label has
/// P(y = 1 | ν) = sigmoid(ν + b*). With ω = bν + τξ as there, it is
/// E[sigmoid(ν + b*) Φ(−(bν + β)/τ) + (1 − sigmoid(ν + b*)) Φ((bν + β)/τ)];
/// at β = b* = 0 it is [`test_class_error`].
pub fn test_class_error_shifted(s2: f64, m: f64, q: f64, beta: f64, b_star: f64) -> f64 {
    let q = q.max(0.0);
    let b = if s2 > 0.0 { m / s2 } else { 0.0 };
    let tp = (q - if s2 > 0.0 { m * m / s2 } else { 0.0 }).max(0.0).sqrt();
    let wrong = |nu: f64| {
        let f = b * nu + beta;
        // P(ω + β < 0 | ν); a field of exactly 0 counts ½
        let neg = if tp > 0.0 {
            cdf(-f / tp)
        } else if f == 0.0 {
            0.5
        } else {
            f64::from(u8::from(f < 0.0))
        };
        let p1 = sigmoid(nu + b_star);
        p1 * neg + (1.0 - p1) * (1.0 - neg)
    };
    let mut breaks = vec![-b_star];
    if b != 0.0 {
        breaks.push(-beta / b);
    }
    breaks.sort_by(f64::total_cmp);
    normal_expect(0.0, s2.max(0.0).sqrt(), &breaks, panel(b, tp), wrong)
}

/// P(sign(xᵀθ + β) ≠ y) on a fresh row of the two-cluster data model
/// (docs/theory.md §3.6): rows centred as standardised data are,
/// x = (y − (2p − 1))·μ + g, P(y = +1) = p, g ~ N(0, Σ_w/d) independent of
/// y, so xᵀθ + β = (y − (2p − 1))·m + β + √c·ξ with m = μᵀθ = θ*ᵀΣ_wθ/d
/// and c = θᵀΣ_wθ/d: the field's class means are 2(1 − p)m + β and
/// −2pm + β, and the error is p·Φ(−(2(1 − p)m + β)/√c) +
/// (1 − p)·Φ((−2pm + β)/√c) (a field of exactly 0 counts ½).
///
/// ```
/// use propdp_core::population::two_cluster_class_error;
/// // θ = 0: a coin; no spread: the sign of the class mean decides
/// assert_eq!(two_cluster_class_error(0.7, 0.0, 0.0, 0.0), 0.5);
/// assert_eq!(two_cluster_class_error(0.75, 1.0, 0.0, 2.0), 0.25);
/// // balanced, no intercept: Φ(−m/√c)
/// let e = two_cluster_class_error(0.5, 1.0, 1.0, 0.0);
/// assert!((e - 0.158_655_253_931_457).abs() < 1e-12);
/// ```
pub fn two_cluster_class_error(balance: f64, m: f64, c: f64, beta: f64) -> f64 {
    let sd = c.max(0.0).sqrt();
    // P(field < 0) for a field of mean `mean`
    let negative = |mean: f64| {
        if sd > 0.0 {
            cdf(-mean / sd)
        } else if mean == 0.0 {
            0.5
        } else {
            f64::from(u8::from(mean < 0.0))
        }
    };
    // centred rows: the class means of the field are (±1 − (2p − 1))·m
    let shift = 2.0 * balance - 1.0;
    balance * negative((1.0 - shift) * m + beta) + (1.0 - balance) * (1.0 - negative((-1.0 - shift) * m + beta))
}

/// E ρ(−y·xᵀθ) on a fresh sample (the population test log-loss) when
/// θᵀθ*/d = m, ‖θ‖²/d = q and the teacher's field has variance s²: with
/// ω = bν + τξ as in [`test_class_error`], by symmetry it is
/// 2E[sigmoid(ν) E_ξ ρ(−bν − τξ)].
pub fn test_logloss(s2: f64, m: f64, q: f64) -> f64 {
    if s2 <= 0.0 {
        // no teacher signal: y = ±1 with probability ½ whatever the field
        return softplus_mean(0.0, q.max(0.0).sqrt());
    }
    let b = m / s2;
    let tp = (q - m * m / s2).max(0.0).sqrt();
    2.0 * normal_expect(0.0, s2.sqrt(), &[0.0], 1.0, |nu| {
        sigmoid(nu) * softplus_mean(-b * nu, tp)
    })
}

/// [`test_logloss`] with intercepts (docs/theory.md §2.6): E ρ(−y·(xᵀθ + β))
/// on a fresh sample whose label has P(y = 1 | ν) = sigmoid(ν + b*), that is
/// E[sigmoid(ν + b*) E_ξ ρ(−bν − β − τξ) + (1 − sigmoid(ν + b*)) E_ξ ρ(bν + β + τξ)];
/// at β = b* = 0 it is [`test_logloss`].
pub fn test_logloss_shifted(s2: f64, m: f64, q: f64, beta: f64, b_star: f64) -> f64 {
    let q = q.max(0.0);
    let b = if s2 > 0.0 { m / s2 } else { 0.0 };
    let tp = (q - if s2 > 0.0 { m * m / s2 } else { 0.0 }).max(0.0).sqrt();
    normal_expect(0.0, s2.max(0.0).sqrt(), &[-b_star], 1.0, |nu| {
        let p1 = sigmoid(nu + b_star);
        let f = b * nu + beta;
        p1 * softplus_mean(-f, tp) + (1.0 - p1) * softplus_mean(f, tp)
    })
}

/// E ρ(X) for X ~ N(mean, sd²) (ρ = softplus, kink of width 1 at 0).
pub fn softplus_mean(mean: f64, sd: f64) -> f64 {
    normal_expect(mean, sd, &[0.0], 4.0, softplus)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The half-line form against 2E[σ(ν)Φ(−bν/τ)] over the whole line
    /// (the form it replaced) on the same panels, over the ranges the
    /// panels' accuracy was established on, aligned and anti-aligned:
    /// within 2e-14. Against 30-digit mpmath quadratures at s² = ¼,
    /// τ² = 10⁻⁶: m = 1, both within 1.3e-15; m = −½, the whole line's
    /// 1.3e-14 off, the half line's 1.3e-15; m = 4 (Φ's ramp 6e-5 wide, the
    /// panels at their 10⁻³ floor) both 1.3e-12 off, alike.
    #[test]
    fn the_half_line_class_error_is_the_whole_lines() {
        for s2 in [0.25_f64, 1.0, 4.0, 16.0] {
            for m in [1e-4, 0.1, 1.0, 4.0, -0.5] {
                for tau2 in [1e-6_f64, 0.01, 1.0, 10.0] {
                    let q = tau2 + m * m / s2;
                    let (b, tp) = (m / s2, tau2.sqrt());
                    let whole = 2.0
                        * normal_expect(0.0, s2.sqrt(), &[0.0], panel(b, tp), |nu| {
                            sigmoid(nu) * cdf(-b * nu / tp)
                        });
                    let got = test_class_error(s2, m, q);
                    assert!((got - whole).abs() < 2e-14, "s2 {s2} m {m} τ² {tau2}: {got} vs {whole}");
                }
            }
        }
    }
}
