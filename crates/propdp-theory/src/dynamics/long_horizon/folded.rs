//! The logistic label folded into the teacher field (docs/theory.md §3.3,
//! "Folded logistic labels").
//!
//! A logistic sample is (ν, y) with ν ~ N(0, ρ) and P(y = 1 | ν) = σ(ν).
//! Its path is odd under the flip (ν, y, ũ, ξ̃) → (−ν, −y, −ũ, −ξ̃): the
//! clipped slope is odd in (y, r), r = w − ηO is linear in (ν, ũ, ξ̃, ĝ),
//! so every ĝ_t, r_t and field changes sign while ĥ_t and the loss do not.
//! The flip leaves the Gaussian ũ, ξ̃ unchanged in law, so every quantity
//! the state evolution averages — C_g, R_g, E[νĝ], the loss — has the same
//! mean over paths drawn as (ν', +1), with ν' = yν of density
//!
//!   f(ν') = 2φ_ρ(ν')σ(ν')
//!
//! (P(yν ∈ dv) = φ_ρ(v)σ(v) + φ_ρ(−v)(1 − σ(−v)) = 2φ_ρ(v)σ(v)). The
//! label then no longer jumps with the RQMC point: ν' is the smooth
//! quantile of one uniform, which restores the RQMC convergence the
//! indicator 1{u < σ(ν)} destroyed (clipped logistic DP-GD, q = 1,
//! T = 300: from 1024 to 4096 paths the standard error of norm2 fell 1.5×
//! before, 2.8× now; at 4096 paths it is 4.3× below the old one). ν' is not
//! centred: E ν' = 2E[νσ(ν)], which the Stein drift's control variate needs
//! (`stein_drift`).
//!
//! An intercept (docs/theory.md §3.5: P(y = 1 | ν) = σ(ν + b*), the field
//! shifted by β_t) breaks the flip, so its paths keep their labels: y = +1
//! with probability π = E σ(ν + b*) and then ν from the tilted law
//! φ_ρ(ν)σ(ν + b*)/π ([`Folded::tilted`] at b*), y = −1 otherwise and ν the
//! mirror of the tilted law at −b* (φ_ρ(ν)σ(−ν − b*)/(1 − π)). One uniform
//! gives both, its cut at 1 − π the only jump, fixed across the point set.
//!
//! # References
//! - Owen (2013), *Monte Carlo theory, methods and examples* (variance
//!   reduction by conditioning; randomised QMC on discontinuous integrands).

use propdp_core::loss::sigmoid;
use propdp_core::panels::{WINDOW, legendre16, normal_expect};

use crate::numerics::roots::brent_absolute;

/// Width, in standard deviations of ν, of the cells of the folded law's
/// cumulative table (each cell integrated by 16-node Gauss–Legendre: its
/// error is far below rounding at this width).
const CELL: f64 = 0.05;

/// The folded teacher field's law for a teacher field of variance ρ, or its
/// tilted law φ_ρ(ν)σ(ν + b)/π(b), π(b) = E σ(ν + b) (the folded one is
/// b = 0, π = ½): its cumulative distribution tabulated on [−8.5, 8.5]
/// standard deviations.
pub(super) struct Folded {
    sd: f64,
    /// The tilt b.
    tilt: f64,
    /// π(b), the law's normalisation: P(y = 1) of labels σ(ν + b).
    pub(super) mass: f64,
    /// F at the cells' left ends, and 1 at the right end of the last.
    cdf: Vec<f64>,
}

impl Folded {
    pub(super) fn new(rho: f64) -> Self {
        Folded::tilted(rho, 0.0)
    }

    /// The tilted law at b (b = 0: [`Folded::new`], exactly).
    pub(super) fn tilted(rho: f64, tilt: f64) -> Self {
        let sd = rho.sqrt();
        let mass = if tilt == 0.0 {
            0.5
        } else {
            normal_expect(0.0, sd, &[-tilt], 0.5, |x| sigmoid(x + tilt))
        };
        let mut law = Folded {
            sd,
            tilt,
            mass,
            cdf: Vec::new(),
        };
        let cells = (2.0 * WINDOW / CELL).round() as usize;
        law.cdf = std::iter::once(0.0)
            .chain((0..cells).scan(0.0, |acc, k| {
                *acc += law.mass_between(left(k), left(k + 1));
                Some(*acc)
            }))
            .collect();
        law
    }

    /// The quantile ν' of `u` ∈ (0, 1): F(ν') = u, to rounding (Brent
    /// within the table's cell; beyond the table, its end: the mass there
    /// is below 1e-16).
    pub(super) fn quantile(&self, u: f64) -> f64 {
        let cells = self.cdf.len() - 1;
        let k = self.cdf.partition_point(|&c| c <= u);
        if k == 0 || k > cells {
            return self.sd * if k == 0 { -WINDOW } else { WINDOW };
        }
        let (lo, base) = (left(k - 1), self.cdf[k - 1]);
        let f = |z: f64| base + self.mass_between(lo, z) - u;
        let z = brent_absolute(lo, left(k), f, 1e-15, 100).unwrap_or_else(|| {
            // F is continuous and increasing and brackets u in its cell: only rounding at the
            // cell's ends fails Brent, and there the end is the answer
            if f(lo).abs() < f(left(k)).abs() { lo } else { left(k) }
        });
        self.sd * z
    }

    /// E ν' = E[νσ(ν + b)]/π(b), ν ~ N(0, ρ) (2E[νσ(ν)] folded).
    pub(super) fn mean(&self) -> f64 {
        let b = self.tilt;
        2.0 * normal_expect(0.0, self.sd, &[0.0 - b], 0.5, |x| x * sigmoid(x + b)) * (0.5 / self.mass)
    }

    /// The density of z' = ν'/√ρ: φ(z)σ(√ρ z + b)/π(b) (2φ(z)σ(√ρ z) folded).
    fn density(&self, z: f64) -> f64 {
        let phi2 = 2.0 * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        phi2 * sigmoid(self.sd * z + self.tilt) * (0.5 / self.mass)
    }

    /// P(lo < z' ≤ hi) for hi − lo ≤ CELL, by 16-node Gauss–Legendre.
    fn mass_between(&self, lo: f64, hi: f64) -> f64 {
        let (mid, half) = (0.5 * (lo + hi), 0.5 * (hi - lo));
        legendre16()
            .iter()
            .map(|&(x, w)| half * w * self.density(mid + half * x))
            .sum()
    }
}

/// The left end of the table's cell k (in z' = ν'/√ρ).
fn left(k: usize) -> f64 {
    -WINDOW + k as f64 * CELL
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |ν'| = |ν| in law, so E ν'² = ρ; E ν' = 2E[νσ(ν)]; both by the table's quantiles over a
    /// fine midpoint grid of u, against quadrature of the Gaussian.
    #[test]
    fn quantiles_of_the_folded_law_have_its_moments() {
        for rho in [0.01, 1.0, 4.0, 100.0] {
            let folded = Folded::new(rho);
            let m = 200_000;
            let (mut s1, mut s2) = (0.0, 0.0);
            for i in 0..m {
                let x = folded.quantile((i as f64 + 0.5) / m as f64);
                s1 += x;
                s2 += x * x;
            }
            let (mean, second) = (s1 / m as f64, s2 / m as f64);
            let exact = 2.0 * normal_expect(0.0, rho.sqrt(), &[0.0], 0.5, |x| x * sigmoid(x));
            assert!((folded.mean() - exact).abs() < 1e-12);
            assert!(
                (mean - exact).abs() < 2e-3 * rho.sqrt(),
                "ρ = {rho}: mean {mean} vs {exact}"
            );
            assert!(
                (second / rho - 1.0).abs() < 2e-3,
                "ρ = {rho}: E ν'² = {second} vs {rho}"
            );
        }
    }

    /// The tilted laws at b and −b are the two labels' conditional laws of ν
    /// (the second mirrored): their masses add to 1, their mixture has mean 0
    /// and second moment ρ, and the quantiles over a grid have the stated mean.
    #[test]
    fn the_tilted_laws_are_the_labels_conditional_laws() {
        for (rho, b) in [(1.0, 0.8), (4.0, 0.8), (2.37, -2.3), (0.01, 5.0)] {
            let (plus, minus) = (Folded::tilted(rho, b), Folded::tilted(rho, -b));
            assert!((plus.mass + minus.mass - 1.0).abs() < 1e-12, "ρ = {rho}, b = {b}");
            let centre = plus.mass * plus.mean() - minus.mass * minus.mean();
            assert!(centre.abs() < 1e-12 * rho.sqrt(), "ρ = {rho}, b = {b}: E ν = {centre}");
            let m = 100_000;
            let moments = |law: &Folded| {
                let (mut s1, mut s2) = (0.0, 0.0);
                for i in 0..m {
                    let x = law.quantile((i as f64 + 0.5) / m as f64);
                    s1 += x;
                    s2 += x * x;
                }
                (s1 / m as f64, s2 / m as f64)
            };
            let ((m1p, m2p), (m1m, m2m)) = (moments(&plus), moments(&minus));
            assert!(
                (m1p - plus.mean()).abs() < 2e-3 * rho.sqrt(),
                "ρ = {rho}, b = {b}: {m1p}"
            );
            assert!(
                (m1m - minus.mean()).abs() < 2e-3 * rho.sqrt(),
                "ρ = {rho}, b = {b}: {m1m}"
            );
            let second = plus.mass * m2p + minus.mass * m2m;
            assert!((second / rho - 1.0).abs() < 2e-3, "ρ = {rho}, b = {b}: E ν² = {second}");
        }
    }

    #[test]
    fn the_quantile_inverts_the_cumulative_distribution() {
        let folded = Folded::new(4.0);
        for u in [1e-9, 1e-4, 0.1, 0.5, 0.77, 0.999, 1.0 - 1e-9] {
            let z = folded.quantile(u) / 2.0;
            // F(z) by integrating the density from the window's left end, panel by panel
            let mut f = 0.0;
            let mut lo = -WINDOW;
            while lo < z {
                let hi = (lo + CELL).min(z);
                f += folded.mass_between(lo, hi);
                lo = hi;
            }
            assert!((f - u).abs() < 1e-14, "u = {u}: F = {f}");
        }
    }
}
