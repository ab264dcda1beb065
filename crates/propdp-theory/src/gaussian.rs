//! Standard normal functions (from `libm`'s erfc) and closed-form Gaussian
//! moments used by the solvers.

use std::f64::consts::FRAC_1_SQRT_2;

pub use propdp_core::loss::{norm_cdf as cdf, norm_pdf as pdf};

/// For Z ~ N(0, w): (P(|Z| ≤ c), E[Z² 1{|Z| ≤ c}]).
///
/// With k = c/√w: P = 1 − erfc(k/√2), E[Z²1{|Z|≤c}] = w (P − 2kφ(k)).
pub fn central_truncated_moments(w: f64, c: f64) -> (f64, f64) {
    if w <= 0.0 {
        return (1.0, 0.0);
    }
    if !w.is_finite() {
        return (0.0, 0.0);
    }
    let k = c / w.sqrt();
    let p = 1.0 - libm::erfc(k * FRAC_1_SQRT_2);
    (p, (w * (p - 2.0 * k * pdf(k))).max(0.0))
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
        for &(w, c) in &[(1.0, 0.5), (2.5, 3.0), (0.04, 0.1), (9.0, 0.3)] {
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
