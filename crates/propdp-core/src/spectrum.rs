//! The spectrum of XᵀX for a design with i.i.d. entries of variance 1/d and
//! aspect ratio δ = d/n: the Marchenko–Pastur law scaled by 1/δ,
//!
//!   μ = (1 − 1/δ)₊ δ₀ + √((λ₊ − λ)(λ − λ₋)) / (2πλ) dλ on [λ₋, λ₊],
//!   λ± = (1 ± √δ)²/δ,   ∫λ dμ = 1/δ,
//!
//! with an exact quadrature for it and its Stieltjes transform. Least-squares
//! gradient descent is a function of XᵀX, so its error is an integral over μ
//! (docs/theory.md §3.2); the largest eigenvalue λ₊ bounds every step size.
//!
//! # References
//! - V. A. Marchenko, L. A. Pastur, "Distribution of eigenvalues for some
//!   sets of random matrices", Math. USSR-Sbornik 1 (1967).
//! - Z. Bai, J. W. Silverstein, *Spectral Analysis of Large Dimensional
//!   Random Matrices*, Springer (2010), ch. 3 (the Stieltjes transform).

use crate::error::ConfigError;

/// λ₊ = (1 + √δ)²/δ: the largest eigenvalue of XᵀX in the limit, the
/// bound of every smoothness constant ([`crate::Point::smoothness`]).
pub fn right_edge(delta: f64) -> f64 {
    (1.0 + delta.sqrt()).powi(2) / delta
}

/// The limiting spectral law of XᵀX at aspect ratio δ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MarchenkoPastur {
    delta: f64,
}

impl MarchenkoPastur {
    /// The law at δ = d/n > 0.
    ///
    /// ```
    /// use propdp_core::spectrum::MarchenkoPastur;
    /// let (lo, hi) = MarchenkoPastur::new(0.25).unwrap().edges();
    /// assert!((lo - 1.0).abs() < 1e-15 && (hi - 9.0).abs() < 1e-15);
    /// assert!(MarchenkoPastur::new(0.0).is_err());
    /// ```
    pub fn new(delta: f64) -> Result<Self, ConfigError> {
        crate::parameters::check("delta", "problem.delta", delta)?;
        Ok(MarchenkoPastur { delta })
    }

    /// The support's edges (λ₋, λ₊) of the continuous part.
    pub fn edges(&self) -> (f64, f64) {
        let r = self.delta.sqrt();
        ((1.0 - r).powi(2) / self.delta, right_edge(self.delta))
    }

    /// The Stieltjes transform m(z) = ∫ dμ(λ)/(λ − z) at a real z outside
    /// [λ₋, λ₊] and ≠ 0 (so that the atom at 0, when δ > 1, is finite).
    pub fn stieltjes(&self, z: f64) -> f64 {
        let d = self.delta;
        // m(z) = δ·m_W(δz) with m_W the transform of the law of ratio δ and mean 1
        let w = d * z;
        let u = w - 1.0 - d;
        let root = u * (1.0 - 4.0 * d / (u * u)).sqrt();
        d * (1.0 - d - w + root) / (2.0 * d * w)
    }

    /// A quadrature rule with `k` + 1 nodes exact for every polynomial of
    /// degree ≤ 2k: ∫f dμ = f(0) + ∫(f(λ) − f(0))/λ · √((λ₊−λ)(λ−λ₋))/(2π) dλ,
    /// the second integral by Gauss–Chebyshev of the second kind; the node
    /// at 0 carries the atom when δ > 1 (its weight tends to 1 − 1/δ as k
    /// grows). Returns (nodes, weights).
    ///
    /// ```
    /// use propdp_core::spectrum::MarchenkoPastur;
    /// let mp = MarchenkoPastur::new(2.0).unwrap();
    /// let (x, w) = mp.rule(8);
    /// let mass: f64 = w.iter().sum();
    /// let mean: f64 = x.iter().zip(&w).map(|(x, w)| x * w).sum();
    /// assert!((mass - 1.0).abs() < 1e-14 && (mean - 0.5).abs() < 1e-14);
    /// let second: f64 = x.iter().zip(&w).map(|(x, w)| x * x * w).sum();
    /// assert!((second - 0.75).abs() < 1e-14); // (1 + δ)/δ² (Narayana)
    /// ```
    pub fn rule(&self, k: usize) -> (Vec<f64>, Vec<f64>) {
        let d = self.delta;
        let (c, r) = ((1.0 + d) / d, 2.0 / d.sqrt());
        let mut x = vec![0.0; k + 1];
        let mut w = vec![0.0; k + 1];
        for j in 1..=k {
            let phi = j as f64 * std::f64::consts::PI / (k + 1) as f64;
            x[j] = c + r * phi.cos();
            w[j] = r * r * phi.sin().powi(2) / (2.0 * (k + 1) as f64 * x[j]);
        }
        w[0] = 1.0 - w[1..].iter().sum::<f64>();
        (x, w)
    }

    /// The gain G of the batch-sampling noise of unclipped least-squares
    /// DP-SGD at ridge `lambda`, step `eta` and rate `q`: the mass of the
    /// renewal kernel that feeds the training loss back into the iterates'
    /// variance (docs/theory.md §3.2),
    ///
    ///   G = η²q(1 − q)δ ∫ λ²/(1 − ρ(λ)²) dμ,  ρ(λ) = 1 − ηλ_r − ηqλ,
    ///
    /// in closed form by partial fractions: with a = λ_r/q, b = (2 − ηλ_r)/(ηq),
    /// G = (1 − q)δ/q·[−1 + (a²m(−a) − b²m(b))/(a + b)]. Second moments stay
    /// bounded iff ηL_q < 2 (b > λ₊) and G < 1; ∞ when b ≤ λ₊.
    ///
    /// ```
    /// use propdp_core::spectrum::MarchenkoPastur;
    /// let mp = MarchenkoPastur::new(0.5).unwrap();
    /// assert_eq!(mp.sgd_noise_gain(0.1, 0.3, 1.0), 0.0); // full batch: no sampling noise
    /// assert!(mp.sgd_noise_gain(0.05, 9.235, 0.01) > 1.0); // η < 2/L_q = 18.5, yet divergent
    /// assert!(mp.sgd_noise_gain(0.05, 2.2947, 0.01) < 1.0);
    /// ```
    pub fn sgd_noise_gain(&self, lambda: f64, eta: f64, q: f64) -> f64 {
        let (a, b) = (lambda / q, (2.0 - eta * lambda) / (eta * q));
        if b <= self.edges().1 {
            return f64::INFINITY;
        }
        let left = if a > 0.0 { a * a * self.stieltjes(-a) } else { 0.0 };
        let right = b * b * self.stieltjes(b);
        ((1.0 - q) * self.delta / q * (-1.0 + (left - right) / (a + b))).max(0.0)
    }

    /// The largest step η with [`Self::sgd_noise_gain`] below `gain` (< 1),
    /// by bisection (G grows with η).
    pub fn sgd_max_step(&self, lambda: f64, q: f64, gain: f64) -> f64 {
        let mut hi = 2.0 / (q * self.edges().1 + lambda);
        if self.sgd_noise_gain(lambda, hi * (1.0 - 1e-12), q) < gain {
            return hi;
        }
        let mut lo = 0.0;
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.sgd_noise_gain(lambda, mid, q) < gain {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Narayana: the moments of the law of ratio δ and mean 1 are
    /// Σ_k N(j, k) δ^{k−1}; μ's are those over δ^j.
    fn moment(delta: f64, j: u32) -> f64 {
        let binom = |n: u64, k: u64| (0..k).fold(1.0, |a, i| a * (n - i) as f64 / (i + 1) as f64);
        let j64 = u64::from(j);
        let sum: f64 = (1..=j64)
            .map(|k| binom(j64, k) * binom(j64, k - 1) / j as f64 * delta.powi(k as i32 - 1))
            .sum();
        sum / delta.powi(j as i32)
    }

    #[test]
    fn the_rule_integrates_the_moments_exactly_up_to_degree_2k() {
        for delta in [0.1, 0.5, 1.0, 2.0, 7.0] {
            let mp = MarchenkoPastur::new(delta).unwrap();
            let (x, w) = mp.rule(10);
            for j in 0..=20 {
                let q: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(j)).sum();
                let exact = if j == 0 { 1.0 } else { moment(delta, j as u32) };
                assert!(
                    (q - exact).abs() <= 1e-12 * exact,
                    "δ = {delta}, j = {j}: {q} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn the_noise_gain_is_the_rule_s_integral_and_grows_with_the_step() {
        for (delta, lambda, q) in [(0.5, 0.1, 0.2), (2.0, 0.0, 0.05), (1.0, 0.3, 0.5), (4.0, 1e-3, 0.01)] {
            let mp = MarchenkoPastur::new(delta).unwrap();
            let (x, w) = mp.rule(2000);
            let limit = 2.0 / (q * mp.edges().1 + lambda);
            let mut last = 0.0;
            for f in [0.1, 0.3, 0.6, 0.9] {
                let eta = f * limit;
                let rho = |l: f64| 1.0 - eta * lambda - eta * q * l;
                let quad: f64 = eta
                    * eta
                    * q
                    * (1.0 - q)
                    * delta
                    * x.iter()
                        .zip(&w)
                        .filter(|(x, _)| **x > 0.0)
                        .map(|(x, w)| w * x * x / (1.0 - rho(*x).powi(2)))
                        .sum::<f64>();
                let g = mp.sgd_noise_gain(lambda, eta, q);
                assert!(
                    (g - quad).abs() < 1e-9 * quad.max(1e-3),
                    "{delta} {lambda} {q} {f}: {g} vs {quad}"
                );
                assert!(g > last);
                last = g;
            }
            let eta = mp.sgd_max_step(lambda, q, 1.0);
            assert!(eta <= limit);
            if eta < limit {
                assert!((mp.sgd_noise_gain(lambda, eta, q) - 1.0).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn the_stieltjes_transform_is_the_rule_s_integral_of_one_over_lambda_minus_z() {
        for delta in [0.3, 1.0, 2.5] {
            let mp = MarchenkoPastur::new(delta).unwrap();
            let (lo, hi) = mp.edges();
            let (x, w) = mp.rule(400);
            for z in [-5.0, -0.5, hi + 0.5, hi * 3.0] {
                let q: f64 = x.iter().zip(&w).map(|(x, w)| w / (x - z)).sum();
                let m = mp.stieltjes(z);
                assert!((q - m).abs() < 1e-9 * m.abs(), "δ = {delta}, z = {z}: {q} vs {m}");
            }
            assert!(lo >= 0.0);
        }
    }
}
