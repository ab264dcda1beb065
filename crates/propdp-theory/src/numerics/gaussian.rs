//! Standard normal functions — Φ, φ and Φ⁻¹, `propdp_numerics`' — and
//! closed-form Gaussian moments used by the solvers (from a table of erfcx
//! and Taylor series).

use std::f64::consts::FRAC_1_SQRT_2;

pub use propdp_numerics::normal::{norm_cdf as cdf, norm_pdf as pdf, quantile};

/// Terms of the Taylor series below: (q/2)ⁿ/n! < 1e-19 for q = k² < 1/4.
const SERIES_TERMS: usize = 12;

/// Taylor coefficients in q = k², n = 0..12, of
/// - `Erf`: erf(k/√2)/(√(2/π)·k) = Σ (−1)ⁿqⁿ/(2ⁿ n!(2n+1));
/// - `TruncatedSecond`: (erf(k/√2) − 2kφ(k))/(√(2/π)·k³) =
///   Σₙ₌₁ (−1)ⁿ⁺¹2n qⁿ⁻¹/((2n+1)2ⁿn!) (stored at n − 1);
/// - `Exp`: e^{−q/2} = Σ (−1)ⁿqⁿ/(2ⁿn!).
#[derive(Clone, Copy, PartialEq)]
enum Series {
    Erf,
    TruncatedSecond,
    Exp,
}

const fn series(which: Series) -> [f64; SERIES_TERMS] {
    let mut out = [0.0; SERIES_TERMS];
    // f = (−1)ⁿ/(2ⁿ n!)
    let (mut f, mut n) = (1.0, 0);
    while n <= SERIES_TERMS {
        let odd = (2 * n + 1) as f64;
        match which {
            Series::Erf if n < SERIES_TERMS => out[n] = f / odd,
            Series::TruncatedSecond if n >= 1 => out[n - 1] = -f * (2 * n) as f64 / odd,
            Series::Exp if n < SERIES_TERMS => out[n] = f,
            _ => {}
        }
        f *= -0.5 / (n + 1) as f64;
        n += 1;
    }
    out
}

const ERF_SERIES: [f64; SERIES_TERMS] = series(Series::Erf);
const TRUNCATED_SECOND_SERIES: [f64; SERIES_TERMS] = series(Series::TruncatedSecond);
const EXP_SERIES: [f64; SERIES_TERMS] = series(Series::Exp);

/// The three series' first `N` terms at q by Horner's rule (interleaved: three
/// independent chains).
fn series_sums<const N: usize>(q: f64) -> (f64, f64, f64) {
    let (mut a, mut b, mut e) = (0.0, 0.0, 0.0);
    for n in (0..N).rev() {
        a = a * q + ERF_SERIES[n];
        b = b * q + TRUNCATED_SECOND_SERIES[n];
        e = e * q + EXP_SERIES[n];
    }
    (a, b, e)
}

/// (P, T, 1/√w, k, φ(k)) for Z ~ N(0, w), 0 < w < ∞: the moments of
/// [`central_truncated_jet`] and the pieces its derivatives need.
#[inline(always)]
fn truncated_core(w: f64, c: f64) -> (f64, f64, f64, f64, f64) {
    const INV_SQRT_2PI: f64 = 0.5 * std::f64::consts::FRAC_2_SQRT_PI * FRAC_1_SQRT_2;
    let inv_s = 1.0 / w.sqrt();
    let k = c * inv_s;
    let q = k * k;
    if k < 0.5 {
        // terms with (q/2)ⁿ/n! < 1e-19 at the end of each range
        let (a, b, e) = if q < 1e-4 {
            series_sums::<4>(q)
        } else if q < 0.01 {
            series_sums::<7>(q)
        } else {
            series_sums::<SERIES_TERMS>(q)
        };
        let lead = 2.0 * INV_SQRT_2PI * k;
        return (lead * a, c * c * lead * b, inv_s, k, INV_SQRT_2PI * e);
    }
    // erfc(k/√2) = e^{−k²/2}·erfcx(k/√2): one exponential for P and φ
    let e = (-0.5 * q).exp();
    let phi = INV_SQRT_2PI * e;
    let p = 1.0 - e * erfcx(k * FRAC_1_SQRT_2);
    (p, (w * (p - 2.0 * k * phi)).max(0.0), inv_s, k, phi)
}

/// erfcx(x) = exp(x²)·erfc(x) for x ≥ 0 from the table of
/// `scripts/reference/erfcx_table.py` (relative error 2e-16 on [0, 7)); 0 beyond 7,
/// where exp(−x²)·erfcx(x) = erfc(x) < 5e-23 vanishes against 1.
///
/// Written here because the moments need erfc(x) and exp(−x²) together:
/// sharing the exponential makes erfc one polynomial (libm's erfc takes two
/// exponentials of its own, pxfm's correctly rounded erfcx is 2.5× slower).
fn erfcx(x: f64) -> f64 {
    use super::erfcx_table::{COEFFICIENTS, END, WIDTH};
    if x >= END {
        return 0.0;
    }
    let i = (x / WIDTH) as usize;
    let t = 2.0 * (x - (i as f64 + 0.5) * WIDTH) / WIDTH;
    COEFFICIENTS[i].iter().rev().fold(0.0, |acc, &c| acc * t + c)
}

/// For Z ~ N(0, w): P = P(|Z| ≤ c), T = E[Z² 1{|Z| ≤ c}] and their
/// derivatives, as (P, T, ∂P/∂c, ∂P/∂w, ∂T/∂w); ∂T/∂c = c²·∂P/∂c needs no
/// separate value.
///
/// With k = c/√w: P = 1 − erfc(k/√2), T = w (P − 2kφ(k)),
/// erfc(k/√2) = e^{−k²/2}·erfcx(k/√2) (`erfcx` below).
/// For k < 1/2 the difference P − 2kφ(k) ≈ √(2/π)k³/3 cancels, and w
/// multiplies its round-off (a heavy-tailed mixture reaches w ~ 1e30), so
/// there both come from Taylor series in q = k² (12 terms; 7 for q < 1/100,
/// 4 for q < 1e-4):
/// P = √(2/π)·k·Σₙ₌₀ (−1)ⁿqⁿ/(2ⁿn!(2n+1)) and
/// T = c²√(2/π)·k·Σₙ₌₁ (−1)ⁿ⁺¹ 2n qⁿ⁻¹ / ((2n+1) 2ⁿ n!)
/// (the series of erf(k/√2) − 2kφ(k), divided by k²).
///
/// Derivatives: ∂P/∂c = 2φ(k)/√w, ∂P/∂w = −kφ(k)/w and, from
/// T = w·F(k) with F(k) = P − 2kφ(k) and F′(k) = 2k²φ(k),
/// ∂T/∂w = T/w − k³φ(k) (no cancellation: T/w ≈ 0.27k³ and k³φ(k) ≈ 0.40k³
/// for small k).
pub fn central_truncated_jet(w: f64, c: f64) -> (f64, f64, f64, f64, f64) {
    if w <= 0.0 {
        return (1.0, 0.0, 0.0, 0.0, 1.0);
    }
    if !w.is_finite() {
        return (0.0, 0.0, 0.0, 0.0, 0.0);
    }
    let (p, t, inv_s, k, phi) = truncated_core(w, c);
    let inv_w = inv_s * inv_s;
    (p, t, 2.0 * phi * inv_s, -k * phi * inv_w, t * inv_w - k * k * k * phi)
}

/// E[clip(μ + τG, −M, M)²] for G ~ N(0, 1), τ ≥ 0.
pub fn clipped_square_mean(mu: f64, tau: f64, m: f64) -> f64 {
    if tau == 0.0 {
        let c = mu.clamp(-m, m);
        return c * c;
    }
    // beyond M + 40τ the mass inside ±M underflows and the value is M²: clamping there keeps μ²
    // finite (μ² overflows for |μ| > 1.3e154, and inf·0 would be NaN) without changing the result
    let far = m + 40.0 * tau;
    let mu = mu.clamp(-far, far);
    let a = (-m - mu) / tau;
    let b = (m - mu) / tau;
    let (pa, pb) = (pdf(a), pdf(b));
    let inside = cdf(b) - cdf(a);
    let second = (mu * mu + tau * tau) * inside + 2.0 * mu * tau * (pa - pb) + tau * tau * (a * pa - b * pb);
    second + m * m * (1.0 - inside)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (P, T) of [`central_truncated_jet`].
    fn central_truncated_moments(w: f64, c: f64) -> (f64, f64) {
        let (p, t, ..) = central_truncated_jet(w, c);
        (p, t)
    }

    /// Closed forms against plain midpoint integration of the density.
    /// E[clip(μ + τG, ±M)²] by midpoint integration over ±12τ, against the closed form, and
    /// its limit M² for every finite μ far out (μ² overflows beyond 1.3e154).
    #[test]
    fn clipped_square_mean_is_finite_and_right_for_every_mean() {
        for &(mu, tau, m) in &[(0.3, 0.5, 1.0), (1.1, 0.2, 1.0), (-4.0, 2.0, 1.5), (50.0, 1.0, 2.0)] {
            let k = 200_000;
            let h = 24.0 * tau / f64::from(k);
            let direct: f64 = (0..k)
                .map(|i| {
                    let g = -12.0 + 24.0 * (f64::from(i) + 0.5) / f64::from(k);
                    let c = (mu + tau * g).clamp(-m, m);
                    c * c * pdf(g) * h / tau
                })
                .sum();
            let closed = clipped_square_mean(mu, tau, m);
            assert!((closed - direct).abs() < 1e-6, "μ {mu}, τ {tau}: {closed} vs {direct}");
        }
        for mu in [1e154, 1e155, -1e200, f64::MAX, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(clipped_square_mean(mu, 0.7, 1.2), 1.2 * 1.2, "μ = {mu}");
        }
    }

    #[test]
    fn truncated_moments_match_direct_integration() {
        for &(w, c) in &[
            (1.0, 0.5),
            (2.5, 3.0),
            (0.04, 0.1),
            (9.0, 0.3),
            (4.0, 0.99),
            (4.0, 1.01),
            (1e4, 2.0),
        ] {
            let (p, t2) = central_truncated_moments(w, c);
            let s = w.sqrt();
            let n = 200_000;
            let h = 2.0 * c / n as f64;
            let (mut ip, mut it) = (0.0, 0.0);
            for i in 0..n {
                let z = -c + (i as f64 + 0.5) * h;
                let dens = pdf(z / s) / s;
                ip += dens * h;
                it += z * z * dens * h;
            }
            assert!((p - ip).abs() < 1e-9, "P: {p} vs {ip}");
            assert!((t2 - it).abs() < 1e-9 * w.max(1.0), "T2: {t2} vs {it}");
        }
    }

    /// For k = c/√w → 0, E[Z²1{|Z|≤c}] → 2c³/(3√(2πw)) with relative
    /// accuracy, however large w (the series branch; the closed form there
    /// would be round-off times w).
    #[test]
    fn truncated_second_moment_is_accurate_at_huge_variance() {
        for &(w, c) in &[(1e6, 0.05), (1e20, 1.0), (1e31, 0.05)] {
            let (p, t2) = central_truncated_moments(w, c);
            let k: f64 = c / f64::sqrt(w);
            let lead = 2.0 * c * c * c / (3.0 * (2.0 * std::f64::consts::PI * w).sqrt());
            assert!(
                (t2 / lead - 1.0).abs() < 2.0 * k * k + 1e-14,
                "w={w} c={c}: {t2} vs {lead}"
            );
            assert!(
                (p / (2.0 * k * pdf(0.0)) - 1.0).abs() < k * k + 1e-14,
                "w={w} c={c}: P {p}"
            );
        }
    }

    /// The Taylor branch (k < 1/2) against libm's erf and, where the closed
    /// form loses at most a few digits (k ≥ 0.2), against w(P − 2kφ(k)).
    #[test]
    fn series_branch_matches_closed_forms() {
        for i in 1..500 {
            let k = i as f64 / 1000.0;
            let (p, t) = central_truncated_moments(1.0, k);
            let erf = libm::erf(k * FRAC_1_SQRT_2);
            assert!((p - erf).abs() <= 4e-16 * erf, "k={k}: {p} vs {erf}");
            if k >= 0.2 {
                let closed = erf - 2.0 * k * pdf(k);
                assert!((t - closed).abs() <= 1e-12 * closed, "k={k}: {t} vs {closed}");
            }
        }
    }

    /// The table of erfcx against libm's erfc: erfc(x) = e^{−x²}·erfcx(x)
    /// within 1e-14 relative on [0, 7) (the rounding of x² in e^{−x²} alone
    /// is up to 49·1.1e-16), and erfc(x) < 5e-23 beyond.
    #[test]
    fn erfcx_table_matches_libm_erfc() {
        for i in 0..70_000 {
            let x = i as f64 * 1e-4;
            let (ours, libm) = ((-x * x).exp() * erfcx(x), libm::erfc(x));
            assert!((ours - libm).abs() <= 1e-14 * libm, "x={x}: {ours} vs {libm}");
        }
        assert!(libm::erfc(7.0) < 5e-23 && erfcx(7.0) == 0.0);
    }

    /// The derivatives against central differences of the moments.
    #[test]
    fn derivatives_match_central_differences() {
        for &(w, c) in &[(1.0, 0.5), (2.5, 3.0), (0.04, 0.1), (9.0, 0.3), (1e4, 2.0), (0.3, 0.2)] {
            let (_, _, p_c, p_w, t_w) = central_truncated_jet(w, c);
            let (hc, hw) = (1e-5 * c, 1e-5 * w);
            let diff = |dw: f64, dc: f64| {
                let (a, b) = (
                    central_truncated_moments(w + dw, c + dc),
                    central_truncated_moments(w - dw, c - dc),
                );
                let h = if dw != 0.0 { 2.0 * dw } else { 2.0 * dc };
                ((a.0 - b.0) / h, (a.1 - b.1) / h)
            };
            let ((fp_c, ft_c), (fp_w, ft_w)) = (diff(0.0, hc), diff(hw, 0.0));
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-7 * y.abs().max(1e-12);
            assert!(close(p_c, fp_c), "∂P/∂c at w={w} c={c}: {p_c} vs {fp_c}");
            assert!(
                close(c * c * p_c, ft_c),
                "∂T/∂c at w={w} c={c}: {} vs {ft_c}",
                c * c * p_c
            );
            assert!(close(p_w, fp_w), "∂P/∂w at w={w} c={c}: {p_w} vs {fp_w}");
            assert!(close(t_w, ft_w), "∂T/∂w at w={w} c={c}: {t_w} vs {ft_w}");
        }
    }

    #[test]
    fn clipped_square_mean_matches_direct_integration() {
        for &(mu, tau, m) in &[(0.3, 1.0, 1.0), (-2.0, 0.5, 1.5), (5.0, 2.0, 0.7)] {
            let n = 400_000;
            let lo = -12.0;
            let h = 24.0 / n as f64;
            let mut acc = 0.0;
            for i in 0..n {
                let g = lo + (i as f64 + 0.5) * h;
                let x: f64 = (mu + tau * g).clamp(-m, m);
                acc += x * x * pdf(g) * h;
            }
            let cf = clipped_square_mean(mu, tau, m);
            assert!((cf - acc).abs() < 1e-9, "{cf} vs {acc}");
        }
    }
}
