//! Composite Gauss–Legendre quadrature for Gaussian expectations whose
//! integrand has structure (kinks, steep ramps) on a scale much smaller than
//! the Gaussian's width, where Gauss–Hermite does not converge.
//!
//! The window [μ − Lσ, μ + Lσ] (L = 8.5, φ(8.5) ≈ 2e-16) is split at the
//! given break points and then into panels no wider than `max_width` and 2σ,
//! each integrated with a fixed 16-node Gauss–Legendre rule from `gauss-quad`.

use gauss_quad::legendre::GaussLegendre;
use std::num::NonZeroUsize;
use std::sync::OnceLock;

/// Half-width of the Gaussian window, in standard deviations.
pub const WINDOW: f64 = 8.5;

/// Gauss–Legendre nodes and weights on [−1, 1] (16 nodes).
pub fn legendre16() -> &'static [(f64, f64)] {
    static RULE: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    RULE.get_or_init(|| {
        let gl = GaussLegendre::new(NonZeroUsize::new(16).expect("16 > 0"));
        gl.iter().map(|(x, w)| (*x, *w)).collect()
    })
}

/// Break an interval [a, b] at `breaks` (those strictly inside) and then into
/// pieces no wider than `max_width`; calls `panel(lo, hi)` for each piece.
pub fn for_each_panel<F: FnMut(f64, f64)>(a: f64, b: f64, breaks: &[f64], max_width: f64, mut panel: F) {
    let mut pts: Vec<f64> = std::iter::once(a)
        .chain(breaks.iter().copied().filter(|&x| x > a && x < b))
        .chain(std::iter::once(b))
        .collect();
    pts.sort_by(f64::total_cmp);
    for w in pts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let n = ((hi - lo) / max_width).ceil().max(1.0);
        let h = (hi - lo) / n;
        for i in 0..n as usize {
            panel(lo + i as f64 * h, lo + (i + 1) as f64 * h);
        }
    }
}

/// Most panels of one [`normal_expect`]: beyond, panels widen (only at
/// extreme sd, e.g. s² = 1e12, where a fixed width would need 1e10 panels).
const MAX_PANELS: f64 = 4096.0;

/// E f(X) for X ~ N(mean, sd²), with panels split at `breaks` and no wider
/// than `max_width` (nor 2·sd), at most about 4096 of them.
///
/// ```
/// use propdp_core::panels::normal_expect;
/// // E|X| for X ~ N(0.3, 4): kink at 0
/// let e = normal_expect(0.3, 2.0, &[0.0], 1.0, |x: f64| x.abs());
/// let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
/// let cdf = |x: f64| 0.5 * libm::erfc(-x / 2f64.sqrt());
/// let exact = 2.0 * 2.0 * phi(0.15) + 0.3 * (2.0 * cdf(0.15) - 1.0);
/// assert!((e - exact).abs() < 1e-12);
/// ```
pub fn normal_expect<F: Fn(f64) -> f64>(mean: f64, sd: f64, breaks: &[f64], max_width: f64, f: F) -> f64 {
    normal_expect_within(mean, sd, (f64::NEG_INFINITY, f64::INFINITY), breaks, max_width, f)
}

/// E[f(X)·1{lo ≤ X ≤ hi}] for X ~ N(mean, sd²), as [`normal_expect`] on
/// the part of its window inside [lo, hi] (an integrand that vanishes
/// outside, or half of a symmetric one, at the nodes' cost of that part).
///
/// ```
/// use propdp_core::panels::{normal_expect, normal_expect_within};
/// // E[X²; X ≥ 0] = ½ for X ~ N(0, 1)
/// let half = normal_expect_within(0.0, 1.0, (0.0, f64::INFINITY), &[], 1.0, |x: f64| x * x);
/// assert!((half - 0.5).abs() < 1e-14);
/// assert!((normal_expect(0.0, 1.0, &[0.0], 1.0, |x: f64| x * x) - 2.0 * half).abs() < 1e-14);
/// ```
pub fn normal_expect_within<F: Fn(f64) -> f64>(
    mean: f64,
    sd: f64,
    (lo, hi): (f64, f64),
    breaks: &[f64],
    max_width: f64,
    f: F,
) -> f64 {
    if sd <= 0.0 {
        return if (lo..=hi).contains(&mean) { f(mean) } else { 0.0 };
    }
    let (a, b) = ((mean - WINDOW * sd).max(lo), (mean + WINDOW * sd).min(hi));
    if a >= b {
        return 0.0;
    }
    let rule = legendre16();
    let mut acc = 0.0;
    for_each_panel(
        a,
        b,
        breaks,
        max_width.min(2.0 * sd).max(2.0 * WINDOW * sd / MAX_PANELS),
        |lo, hi| {
            let (mid, half) = (0.5 * (lo + hi), 0.5 * (hi - lo));
            for &(x, w) in rule {
                let t = mid + half * x;
                let z = (t - mean) / sd;
                acc += half * w * f(t) * (-0.5 * z * z).exp();
            }
        },
    );
    acc / (sd * (2.0 * std::f64::consts::PI).sqrt())
}
