//! Cyclic participation and correlated privacy noise in the long-horizon
//! state evolution (docs/theory.md §3.7).
//!
//! Each path is one example: it draws its group g uniformly from the G
//! groups (g = ⌊uG⌋ from a coordinate of its first RQMC point), and its
//! selection at step t is S_t = 1[t ≡ g mod G]·Bernoulli(q); the
//! Rao–Blackwellised drifts weigh a path by its eligibility 1[t ≡ g mod G]
//! times q. Each path's coordinate process θ̃ receives the noise ησw_t of
//! the strategy C, w = C⁻¹z (banded: w_t = (z_t − Σ_{k≥1} c_k w_{t−k})/c₀;
//! BLT: its buffers' recurrence) from its own draws z_t (the noise is
//! exogenous: no memory window). With G = 1 and
//! the identity strategy every draw and every operation is DP-SGD's.
//!
//! # References
//! - C. A. Choquette-Choo et al., "(Amplified) Banded Matrix Factorization",
//!   arXiv:2306.08153 (2023), Alg. 2 (cyclic Poisson sampling).
//! - C. A. Choquette-Choo et al., "Correlated noise provably beats
//!   independent noise for differentially private learning",
//!   arXiv:2310.06771 (2023).

use propdp_core::problem::NoiseRecurrence;

use super::state::Slot;
use crate::dynamics::path::DmftParams;

/// Every path's group (empty for G = 1): ⌊u·G⌋ of its uniform `u`.
pub(super) fn path_groups(p: &DmftParams, uniforms: impl Iterator<Item = f64>) -> Vec<usize> {
    if p.groups <= 1 {
        return Vec::new();
    }
    uniforms
        .map(|u| ((u * p.groups as f64) as usize).min(p.groups - 1))
        .collect()
}

/// The paths eligible at step t (`None`: every path, G = 1).
pub(super) fn eligible(p: &DmftParams, t: usize, groups: &[usize]) -> Option<Vec<bool>> {
    (p.groups > 1).then(|| groups.iter().map(|&g| g == t % p.groups).collect())
}

/// The selections S_t of the `n` paths from their step draws (coordinate 2;
/// none at t = T, where every path is selected as DP-SGD's last step
/// evaluates them all): Bernoulli(q), and with groups only on the eligible
/// paths.
pub(super) fn selections(p: &DmftParams, t: usize, draws: &[[f64; 4]], n: usize, groups: &[usize]) -> Vec<bool> {
    let q = p.sample_rate;
    if t >= p.steps {
        return vec![true; n];
    }
    match eligible(p, t, groups) {
        None if q < 1.0 => draws.iter().map(|x| x[2] < q).collect(),
        None => vec![true; n],
        Some(e) => e.iter().zip(draws).map(|(&e, x)| e && (q >= 1.0 || x[2] < q)).collect(),
    }
}

/// The privacy noise of every path of one mode: the strategy's recurrence
/// over the paths.
pub(super) struct PathNoise(NoiseRecurrence);

impl PathNoise {
    pub(super) fn new(p: &DmftParams, n: usize) -> Self {
        PathNoise(NoiseRecurrence::new(p.strategy, n))
    }

    /// w_t of every path from its draws z_t (in place), the strategy's recurrence.
    pub(super) fn correlate(&mut self, z: &mut [f64]) {
        self.0.correlate(z);
    }
}

/// The noise entries the state keeps after step t: the last b − 1 w of a
/// banded strategy, the m buffers bᵢ,t+1 of a BLT.
pub(super) fn noise_window(p: &DmftParams, t: usize) -> Vec<Slot> {
    match p.strategy.bands() {
        Some(b) if b <= 1 => Vec::new(),
        Some(b) => ((t + 2).saturating_sub(b)..=t).map(Slot::Noise).collect(),
        None => (0..p.strategy.memory_len()).map(|i| Slot::Buffer(i, t + 1)).collect(),
    }
}
