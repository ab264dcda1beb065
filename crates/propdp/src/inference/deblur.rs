//! The Huber residual statistics of output perturbation, de-blurred
//! (docs/theory.md §6, "Huber output perturbation without the noise law").
//!
//! The Huber nuisances need, of the *unperturbed* fit θ̂₀'s training
//! residuals r₀ᵢ, two numbers: P = mean 1{|r₀| ≤ M} and β² = mean min(r₀², M²)
//! (huber.rs: the fixed point sees the label noise only through them).
//! Output perturbation releases θ̂ = θ̂₀ + τb, b ~ N(0, I) independent of the
//! data, so the residual at θ̂ is rᵢ = r₀ᵢ − τxᵢᵀb with τxᵢᵀb ~ N(0, sᵢ²),
//! sᵢ = τ‖xᵢ‖: r₀ blurred by a Gaussian of known variance. Adding our own
//! blur of variance sᵢ² and 2sᵢ² in closed form gives the statistic at the
//! blur levels 1, 2 and 3 (in units of sᵢ²); the quadratic through them,
//! extrapolated to 0 (SIMEX), has the Lagrange weights (3, −3, 1), so each
//! functional F is read from one bounded per-row statistic
//!
//!   ψ_F(r, s) = 3F(r) − 3E F(r + sG) + E F(r + √2·sG),
//!
//!   ψ_P: F = 1{|·| ≤ M}, E F(r + sG) = Φ((M − r)/s) − Φ((−M − r)/s),
//!   ψ_B: F = min(·², M²), E F(r + sG) = E[clip(r + sG, ±M)²] (closed form),
//!
//! released by the Gaussian mechanism as a centred sum whose add/remove
//! sensitivity is ψ's half-range over every r and every blur s ≤ τR (a
//! public function of τ, R and M, scanned here). The law of r₀ has a jump
//! in density at ±M (the prox flattens the residuals there), so the
//! extrapolation is biased by O(√s); measured on ridge-Huber fits (d = 400,
//! Student-t, Gaussian and contaminated noise): α̂ within 3% for τR ≤ M/2,
//! 5% at 0.75M, −6% to −11% at M, and more beyond — allowed for in α̂'s
//! standard error ([`alpha_bias`]).
//!
//! # References
//! - Cook, Stefanski (1994), *Simulation-extrapolation estimation in
//!   parametric measurement error models*, JASA 89, 1314–1328.
//! - Stefanski, Cook (1995), *Simulation-extrapolation: the measurement
//!   error jackknife*, JASA 90, 1247–1256 (the exact-extrapolant variant).

use propdp_theory::numerics::gaussian::{cdf, clipped_square_mean};

/// The relative bias of α̂ allowed for in its standard error at blur
/// b = τR/M: 0.05·max(1, (b/0.75)³), at most 0.6 — an envelope of the
/// measured bias (ridge-Huber fits, Student-t, Gaussian, contaminated and
/// Cauchy noise, δ from 0.1 to 1, M from 0.5 to 2): within 3% for b ≤ 0.5,
/// 4.4% at 0.75, 6–11% at 1, 20–44% at 1.5, 30–54% at 2 (the envelope:
/// 5%, 12%, 40%, 60%); at b ≈ 2.5–5 (ε = 4 and 2 at λ = R = M = 1) the α̂
/// errors measured were 20–41% rms. Beyond b ≈ 1 the output noise
/// dominates σ_eff, so α̂'s error moves the interval's centre little beside
/// its width: coverage 0.957–0.964 there (docs/inference.md).
pub fn alpha_bias(blur: f64) -> f64 {
    (0.05 * (blur / 0.75).powi(3).max(1.0)).min(0.6)
}

/// Which functional of the residual.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Functional {
    /// 1{|r| ≤ M}.
    Inside,
    /// min(r², M²).
    Clipped,
}

impl Functional {
    /// E F(r + sG), G ~ N(0, 1); F(r) at s = 0.
    fn smoothed(self, r: f64, s: f64, m: f64) -> f64 {
        match self {
            Functional::Inside if s == 0.0 => f64::from(u8::from(r.abs() <= m)),
            Functional::Inside => cdf((m - r) / s) - cdf((-m - r) / s),
            Functional::Clipped => clipped_square_mean(r, s, m),
        }
    }

    /// ψ_F(r, s).
    pub(crate) fn psi(self, r: f64, s: f64, m: f64) -> f64 {
        3.0 * self.smoothed(r, 0.0, m) - 3.0 * self.smoothed(r, s, m) + self.smoothed(r, 2f64.sqrt() * s, m)
    }

    /// (mid, half) of ψ's range over r ∈ ℝ and s ∈ [0, s_max]: a scan of s
    /// over 64 levels and, at each, of r over ±(M + 8√2·s) in steps of
    /// max(M, s)/500 (where ψ varies on the scale of M or of the blur) and
    /// within 8√2·s of the jumps at ±M in steps of s/200 (where the blurred
    /// terms vary on the scale of s), with both one-sided limits at ±M; the
    /// half-range widened by 1e-3 of itself for what falls between the
    /// grid's points. About 2·10⁴ evaluations per level at any blur. F's
    /// own range at s_max = 0.
    pub(crate) fn range(self, m: f64, s_max: f64) -> (f64, f64) {
        if s_max == 0.0 {
            // ψ = F: 1{·} ∈ [0, 1], min(·², M²) ∈ [0, M²]
            let top = if self == Functional::Inside { 1.0 } else { m * m };
            return (0.5 * top, 0.5 * top);
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut scan = |from: f64, to: f64, step: f64, s: f64| {
            let n = ((to - from) / step).ceil().max(1.0) as usize;
            for i in 0..=n {
                let v = self.psi(from + (to - from) * i as f64 / n as f64, s, m);
                lo = lo.min(v);
                hi = hi.max(v);
            }
        };
        // far out ψ tends to F's limit (ψ_P → 0, ψ_B → M²)
        let far = 1e3 * (m + 8.0 * 2f64.sqrt() * s_max);
        scan(far, far, 1.0, s_max);
        for k in 0..=64 {
            let s = s_max * f64::from(k) / 64.0;
            let spread = 8.0 * 2f64.sqrt() * s;
            scan(-m - spread, m + spread, m.max(s) / 500.0, s);
            for edge in [m, -m] {
                if s > 0.0 {
                    scan(edge - spread, edge + spread, s / 200.0, s);
                }
                for side in [-1.0, 1.0] {
                    scan(edge + side * m * 1e-12, edge + side * m * 1e-12, 1.0, s);
                }
            }
        }
        (0.5 * (hi + lo), 0.5 * (hi - lo) * (1.0 + 1e-3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extrapolation is exact for a functional quadratic in the blur's variance (F(r) = r²:
    /// 3r² − 3(r² + s²) + (r² + 2s²) = r²). With r₀ ~ N(0.2, 0.36) (no jump at ±M = 1), P and
    /// β² of r₀ from the mean ψ of r₀ + sG, by quadrature: the error is below 0.05 of the
    /// blurred statistic's up to s = 0.3 and 0.2 of it at s = 0.5 (written, at s = 0.1, 0.3,
    /// 0.5: P 4e-4, 2e-3, 0.06 of it; β² 7e-4, 0.04, 0.16).
    #[test]
    fn the_statistics_undo_a_gaussian_blur() {
        let m = 1.0;
        let (mu, v): (f64, f64) = (0.2, 0.36);
        for s in [0.1f64, 0.3, 0.5] {
            for f in [Functional::Inside, Functional::Clipped] {
                // E over r = r₀ + sG ~ N(μ, v + s²) of ψ(r, s), and of F(r₀) itself
                let blurred_sd = (v + s * s).sqrt();
                let deblurred = propdp_core::panels::normal_expect(mu, blurred_sd, &[-m, m], 0.05, |r| f.psi(r, s, m));
                let naive =
                    propdp_core::panels::normal_expect(mu, blurred_sd, &[-m, m], 0.05, |r| f.smoothed(r, 0.0, m));
                let truth = f.smoothed(mu, v.sqrt(), m);
                let (err, err_naive) = ((deblurred - truth).abs(), (naive - truth).abs());
                let most = if s <= 0.3 { 0.05 } else { 0.2 };
                assert!(
                    err < most * err_naive,
                    "{f:?}, s = {s}: de-blurred {deblurred:.5}, naive {naive:.5}, truth {truth:.5}"
                );
            }
        }
    }

    /// The scanned range holds ψ at every (r, s) of a denser, shifted grid (what the
    /// sensitivity needs), and at small blur ψ_P spans its limit [−1, 2] (3 − 3/2 + 1/2 just
    /// inside M, −3/2 + 1/2 just outside).
    #[test]
    fn the_scanned_range_holds_every_value_of_the_statistic() {
        let m = 1.3;
        for s_max in [0.05, 0.4, 0.75 * m, 5.0 * m] {
            for f in [Functional::Inside, Functional::Clipped] {
                let (mid, half) = f.range(m, s_max);
                for k in 0..=97 {
                    let s = s_max * (f64::from(k) + 0.37) / 97.37;
                    for i in 0..=7001 {
                        let reach = 2.0 * m + 12.0 * s_max;
                        let r = -reach + 2.0 * reach * (f64::from(i) + 0.29) / 7001.0;
                        let v = f.psi(r, s, m);
                        assert!(
                            (v - mid).abs() <= half,
                            "{f:?}, s = {s}, r = {r}: ψ = {v} outside {mid} ± {half}"
                        );
                    }
                }
            }
        }
        let (mid, half) = Functional::Inside.range(1.0, 0.05);
        assert!((mid - 0.5).abs() < 2e-3 && (half - 1.5).abs() < 3e-3, "{mid} ± {half}");
    }
}
