//! Private standardisation of the columns (`standardize`): each feature
//! clipped, centred and scaled by released statistics, then the public map
//!
//!   x_ij ↦ (clip(x_ij, ±C_j) − μ̂_j) / (ŝ_j·√d)
//!
//! applied to every row before the projection onto ‖x‖ ≤ row_norm (the √d
//! puts standardised rows at the scale ‖x‖² ≈ 1 that rows N(0, I/d) have
//! and row_norm = 1 expects). Three Gaussian releases, each a d-vector of
//! per-column sums over the fitted rows, charged to the fit's ledger with
//! the other nuisance releases (one noise multiplier z, the noise's sd z
//! times the release's add/remove ℓ2 sensitivity; replace-one doubles it,
//! the factor the accountant's replace-one pair assumes):
//!
//! 1. **The clip bound.** m̂_j, the mean of clamp(log₂|x_ij|, ±[`LOG_RANGE`])
//!    (a zero counts as −LOG_RANGE): sensitivity LOG_RANGE·√d. The bound is
//!    C_j = 2^(m̂_j + [`CLIP_OCTAVES`]): for a centred Gaussian column of sd
//!    s, E log₂|x| = log₂ s − 0.92, so C_j ≈ 2.1s (4% of its values
//!    clipped), and a column of mean μ ≫ s gets C_j ≈ 4μ. The data's units
//!    are never assumed.
//!
//! The noise of each column's statistics is z·√d/n in units of C_j (C_j²):
//! coarse unless n ≫ z·√d (measured: d = 30, n = 3000, ε = 8, scales within
//! a factor 2). In the proportional regime (d ≥ 200) the scales' errors
//! make the rows anisotropic, which its intervals assume they are not.
//! 2. **The means.** Σᵢ clip(x_ij, ±C_j)/C_j ∈ [−1, 1]: sensitivity √d.
//! 3. **The second moments.** Σᵢ (clip(x_ij, ±C_j)/C_j)² − ½ ∈ [−½, ½]:
//!    sensitivity √d/2. ŝ_j² = C_j²·(mean of squares − mean²), floored at
//!    twice the second moment's noise sd (times C_j²): a variance below its
//!    release's noise is not determined by it, and a tiny ŝ_j would blow the
//!    column up.
//!
//! The map is a function of the releases alone, so every interval after it
//! is for the coefficients of the standardised features: θ*_j per released
//! standard deviation ŝ_j·√d of feature j (the map's μ̂, ŝ and C are
//! reported). Errors of μ̂ and ŝ change the coordinates, not the
//! guarantee or the intervals' validity. The statistics are of the fitted
//! rows; held-out rows are mapped by the same public map, so the test
//! error's release still composes in parallel.
//!
//! # References
//! - Dwork, Roth (2014), *The algorithmic foundations of differential
//!   privacy*, §3.5 and Appendix A (the Gaussian mechanism).
//! - Holohan, Braghin, Mac Aonghusa, Levacher (2019), *Diffprivlib: the IBM
//!   differential privacy library* (private scaling from clipped sums).

use serde::Serialize;

/// The range of log₂|x| in the first release: |x| from 2⁻²⁰ ≈ 10⁻⁶ to
/// 2²⁰ ≈ 10⁶.
pub const LOG_RANGE: f64 = 20.0;

/// Octaves above the released mean log₂-magnitude at which a column is
/// clipped (C_j = 2^(m̂_j + 2)).
pub const CLIP_OCTAVES: f64 = 2.0;

/// How many releases standardisation adds to the ledger.
pub(super) const RELEASES: u64 = 3;

/// The released map of each column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standardization {
    /// C_j, the clip bound of each column (in the data's units).
    pub clip: Vec<f64>,
    /// μ̂_j, the released mean of each clipped column.
    pub mean: Vec<f64>,
    /// ŝ_j, the released standard deviation of each clipped column.
    pub scale: Vec<f64>,
    /// The standard deviation of each release's noise, relative to its
    /// per-row range: log₂-magnitude (in octaves), mean and second moment
    /// (in units of C_j and C_j²).
    pub noise_sd: (f64, f64, f64),
}

impl Standardization {
    /// Releases the map from the fitted `rows` (row-major, d columns) whose
    /// count is released as `fitted`, with noise multiplier `z` and the
    /// standard Gaussians `g` (3d of them).
    pub(super) fn release(rows: &[f64], d: usize, fitted: f64, z: f64, g: &[f64]) -> Self {
        let sqrt_d = (d as f64).sqrt();
        let column_means = |f: &dyn Fn(usize, f64) -> f64, sensitivity: f64, g: &[f64]| -> Vec<f64> {
            let mut sums = vec![0.0; d];
            for row in rows.chunks_exact(d) {
                for (j, (s, &x)) in sums.iter_mut().zip(row).enumerate() {
                    *s += f(j, x);
                }
            }
            sums.iter()
                .zip(g)
                .map(|(s, g)| (s + z * sensitivity * g) / fitted)
                .collect()
        };
        let log = |_: usize, x: f64| {
            if x == 0.0 {
                -LOG_RANGE
            } else {
                x.abs().log2().clamp(-LOG_RANGE, LOG_RANGE)
            }
        };
        let octaves = column_means(&log, LOG_RANGE * sqrt_d, &g[..d]);
        let clip: Vec<f64> = octaves
            .iter()
            .map(|m| (m.clamp(-LOG_RANGE, LOG_RANGE) + CLIP_OCTAVES).exp2())
            .collect();
        let unit = |j: usize, x: f64| x.clamp(-clip[j], clip[j]) / clip[j];
        let first = column_means(&unit, sqrt_d, &g[d..2 * d]);
        let second = column_means(&|j, x| unit(j, x).powi(2) - 0.5, 0.5 * sqrt_d, &g[2 * d..3 * d]);
        let noise = z * sqrt_d / fitted;
        let (mut mean, mut scale) = (Vec::with_capacity(d), Vec::with_capacity(d));
        for j in 0..d {
            let m1 = first[j].clamp(-1.0, 1.0);
            let m2 = (second[j] + 0.5).clamp(0.0, 1.0);
            mean.push(clip[j] * m1);
            // a variance below twice its noise sd is not determined by the release
            scale.push(clip[j] * (m2 - m1 * m1).max(noise).max(f64::MIN_POSITIVE).sqrt());
        }
        Standardization {
            clip,
            mean,
            scale,
            noise_sd: (noise * LOG_RANGE, noise, 0.5 * noise),
        }
    }

    /// Applies the public map to `rows` (row-major, d columns) in place.
    pub(super) fn apply(&self, rows: &mut [f64], d: usize) {
        let sqrt_d = (d as f64).sqrt();
        for row in rows.chunks_exact_mut(d) {
            for (j, x) in row.iter_mut().enumerate() {
                *x = (x.clamp(-self.clip[j], self.clip[j]) - self.mean[j]) / (self.scale[j] * sqrt_d);
            }
        }
    }

    /// The ledger's line for these releases.
    pub(super) fn release_text(&self, z: f64) -> String {
        format!(
            "the columns' standardisation: per column the mean log₂-magnitude (clip bound C_j = 2^(it + \
             {CLIP_OCTAVES})), the mean and the second moment of the column clipped at ±C_j, each a vector by \
             the Gaussian mechanism (noise multiplier {z:.3})"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Standardization;

    /// Without noise the map centres and scales each column to mean 0 and
    /// sd 1/√d (columns of very different units; no value clipped).
    #[test]
    fn without_noise_the_map_standardises() {
        let (n, d) = (400, 2);
        let mut rows = Vec::new();
        for i in 0..n {
            let t = i as f64 / n as f64;
            rows.extend([1000.0 + 300.0 * (7.0 * t).sin(), 0.01 * (3.0 * t).cos()]);
        }
        let s = Standardization::release(&rows, d, n as f64, 0.0, &[0.0; 6]);
        assert!(s.clip[0] > 1300.0 && s.clip[1] > 0.01, "{:?}", s.clip);
        s.apply(&mut rows, d);
        for j in 0..d {
            let col: Vec<f64> = rows.iter().skip(j).step_by(d).copied().collect();
            let mean = col.iter().sum::<f64>() / n as f64;
            let var = col.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            assert!(mean.abs() < 1e-9, "column {j}: mean {mean}");
            assert!((var * d as f64 - 1.0).abs() < 1e-9, "column {j}: var {var}");
        }
    }
}
