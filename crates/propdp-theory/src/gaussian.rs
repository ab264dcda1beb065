//! Standard normal functions (from `libm`'s erfc) and closed-form Gaussian
//! moments used by the solvers.

use std::f64::consts::FRAC_1_SQRT_2;

pub use propdp_core::loss::{norm_cdf as cdf, norm_pdf as pdf};

/// For Z ~ N(0, w): (P(|Z| ≤ c), E[Z² 1{|Z| ≤ c}]).
///
/// With k = c/√w: P = 1 − erfc(k/√2), E[Z²1{|Z|≤c}] = w (P − 2kφ(k)).
/// For k < 1/2 the difference P − 2kφ(k) ≈ √(2/π)k³/3 cancels, and w
/// multiplies its round-off (a heavy-tailed mixture reaches w ~ 1e30), so
/// E[Z²1{|Z|≤c}] = c²√(2/π)·k·Σₙ₌₁ (−1)ⁿ⁺¹ 2n k²⁽ⁿ⁻¹⁾ / ((2n+1) 2ⁿ n!) there
/// (the Taylor series of erf(k/√2) − 2kφ(k), divided by k²).
pub fn central_truncated_moments(w: f64, c: f64) -> (f64, f64) {
    if w <= 0.0 {
        return (1.0, 0.0);
    }
    if !w.is_finite() {
        return (0.0, 0.0);
    }
    let k = c / w.sqrt();
    if k < 0.5 {
        let q = k * k;
        // f = (−1)ⁿ⁺¹/(2ⁿ n!), qn = qⁿ⁻¹
        let (mut f, mut qn, mut sum) = (0.5, 1.0, 0.0);
        for n in 1..40 {
            let term = f * qn * (2 * n) as f64 / (2 * n + 1) as f64;
            sum += term;
            if term.abs() <= 1e-17 * sum.abs() {
                break;
            }
            f *= -1.0 / (2.0 * (n + 1) as f64);
            qn *= q;
        }
        let p = libm::erf(k * FRAC_1_SQRT_2);
        return (p, c * c * std::f64::consts::FRAC_2_SQRT_PI * FRAC_1_SQRT_2 * k * sum);
    }
    let p = 1.0 - libm::erfc(k * FRAC_1_SQRT_2);
    (p, (w * (p - 2.0 * k * pdf(k))).max(0.0))
}

/// The derivatives of [`central_truncated_moments`] (P, T) for Z ~ N(0, w):
/// (∂P/∂c, ∂P/∂w, ∂T/∂w); ∂T/∂c = c²·∂P/∂c needs no separate value.
///
/// With k = c/√w: ∂P/∂c = 2φ(k)/√w, ∂P/∂w = −kφ(k)/w and, from
/// T = w·F(k) with F(k) = P − 2kφ(k) and F′(k) = 2k²φ(k),
/// ∂T/∂w = T/w − k³φ(k) (no cancellation: T/w ≈ 0.27k³ and k³φ(k) ≈ 0.40k³
/// for small k). `t` is the T of [`central_truncated_moments`] at (w, c).
pub fn central_truncated_derivatives(w: f64, c: f64, t: f64) -> (f64, f64, f64) {
    if w <= 0.0 || !w.is_finite() {
        return (0.0, 0.0, 0.0);
    }
    let s = w.sqrt();
    let k = c / s;
    let phi = pdf(k);
    (2.0 * phi / s, -k * phi / w, t / w - k * k * k * phi)
}

/// E[clip(μ + τG, −M, M)²] for G ~ N(0, 1), τ ≥ 0.
pub fn clipped_square_mean(mu: f64, tau: f64, m: f64) -> f64 {
    if tau == 0.0 {
        let c = mu.clamp(-m, m);
        return c * c;
    }
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

    /// Closed forms against plain midpoint integration of the density.
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

    /// The derivatives against central differences of the moments.
    #[test]
    fn derivatives_match_central_differences() {
        for &(w, c) in &[(1.0, 0.5), (2.5, 3.0), (0.04, 0.1), (9.0, 0.3), (1e4, 2.0), (0.3, 0.2)] {
            let (_, t) = central_truncated_moments(w, c);
            let (p_c, p_w, t_w) = central_truncated_derivatives(w, c, t);
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
