//! The privacy noise's covariance in time for the full-memory state
//! evolution (docs/theory.md §3.7): with the strategy C, w = C⁻¹z has
//! K = C⁻¹C⁻ᵀ, K(s, s') = Σ_{u ≤ min(s, s')} h_{s−u}h_{s'−u} (h the first
//! column of C⁻¹), so K(s, s') = K(s − 1, s' − 1) + h_s h_{s'}; the noise
//! term of C_θ(t + 1, t') is η²σ² Σ_{s ≤ t, s' < t'} R(t+1, s)K(s, s')R(t', s')
//! (η²σ² Σ_s R(t+1, s)R(t', s) for the identity, K = I).
//!
//! # References
//! - C. A. Choquette-Choo et al., "Correlated noise provably beats
//!   independent noise for differentially private learning",
//!   arXiv:2310.06771 (2023).

use super::path::DmftParams;

/// K over steps 0..T (none for the identity strategy).
pub(crate) struct NoiseKernel {
    k: Option<Vec<Vec<f64>>>,
}

impl NoiseKernel {
    pub(crate) fn new(p: &DmftParams) -> Self {
        if p.strategy.is_identity() {
            return NoiseKernel { k: None };
        }
        let n = p.steps + 1;
        let h = p.strategy.impulse_response(n);
        let mut k = vec![vec![0.0; n]; n];
        for s in 0..n {
            for s2 in 0..n {
                let before = if s > 0 && s2 > 0 { k[s - 1][s2 - 1] } else { 0.0 };
                k[s][s2] = before + h[s] * h[s2];
            }
        }
        NoiseKernel { k: Some(k) }
    }

    /// Σ_{s ≤ t} R(t+1, s)K(s, ·) over steps ≤ t (`r_next` = R(t+1, ·)), or
    /// `None` for the identity, whose noise term is the plain Σ_s R(t+1, s)R(t', s).
    pub(crate) fn weights(&self, r_next: &[f64], t: usize) -> Option<Vec<f64>> {
        let k = self.k.as_ref()?;
        Some((0..=t).map(|s2| (0..=t).map(|s| r_next[s] * k[s][s2]).sum()).collect())
    }
}

/// The noise term Σ_{s' < t'} W(s')R(t', s') of C_θ(t + 1, t') from
/// [`NoiseKernel::weights`], or the identity's Σ_{s ≤ min(t, t'−1)} R(t+1, s)R(t', s).
pub(crate) fn noise_term(weights: Option<&[f64]>, r_next: &[f64], r_tp: &[f64], t: usize, tp: usize) -> f64 {
    if tp == 0 {
        return 0.0;
    }
    match weights {
        None => (0..=t.min(tp - 1)).map(|s| r_next[s] * r_tp[s]).sum(),
        Some(w) => (0..tp.min(t + 1)).map(|s| w[s] * r_tp[s]).sum(),
    }
}
