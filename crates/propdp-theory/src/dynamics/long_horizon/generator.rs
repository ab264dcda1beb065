//! The generator of ũ ~ GP(0, C_g): exact Gaussian conditioning, under the
//! estimated C_g, of ũ_{t+1} on its last GEN_WINDOW values and its block sums
//! (docs/theory.md §3.3).
//!
//! # References
//! - Rasmussen, Williams (2006), *Gaussian Processes for Machine Learning*, §2.2
//!   (Gaussian conditioning).

use std::collections::VecDeque;

use nalgebra::{DMatrix, DVector};

use super::state::Slot;
use crate::dynamics::dyadic::{Advance, Dyadic, MergePlan, Partition, Track};
use crate::numerics::cholesky::spd_solve;
use crate::numerics::dots;

/// Values of ũ (and ĝ) the generator conditions on individually.
pub const GEN_WINDOW: usize = 10;
/// Blocks of the generator's features.
pub(super) const GEN_RULE: Dyadic = Dyadic { alpha: 0.5, beta: 0.5 };

/// β = Σ_FF⁻¹Σ_Ft of the Gaussian conditioning, by Cholesky with a relative
/// ridge of 1e-12; when the estimated Σ_FF is not positive definite (its
/// entries come from different kernel rows, so it need not be a Gram matrix),
/// by the pseudo-inverse over its eigenvalues above 1e-10 of the largest.
pub(super) fn conditional_weights(sff: DMatrix<f64>, sft: &DVector<f64>) -> DVector<f64> {
    let dim = sff.nrows();
    let ridge = 1e-12 * sff.trace().max(1e-300) / dim as f64;
    if let Some(beta) = spd_solve(&sff, ridge, sft) {
        return beta;
    }
    let eig = sff.symmetric_eigen();
    let top = eig.eigenvalues.max();
    let coords = eig.eigenvectors.transpose() * sft;
    let scaled = DVector::from_fn(dim, |i, _| {
        let l = eig.eigenvalues[i];
        if l > 1e-10 * top { coords[i] / l } else { 0.0 }
    });
    eig.eigenvectors * scaled
}

/// The target covariance of the generator's features (Cov(U_B, U_B'),
/// Cov(ũ_j, U_B) and the C_g band of the windowed values), kept through the merges.
pub(super) struct GeneratorCovariance {
    pub(super) blocks: Vec<Vec<f64>>,
    pub(super) window: VecDeque<(Vec<f64>, Vec<f64>)>,
}

impl GeneratorCovariance {
    /// C_g(j, j') of two windowed values (j, j' positions in the window).
    pub(super) fn band(&self, j: usize, jp: usize) -> f64 {
        let (hi, lo) = if j >= jp { (j, jp) } else { (jp, j) };
        self.window[hi].1[hi - lo]
    }

    /// The merge of the oldest windowed value into the blocks by `plan`
    /// (each new block's old blocks, and whether the leaving value joins it):
    /// every entry a sum over the sources' pairs, in the sources' order.
    pub(super) fn merge(&mut self, plan: &MergePlan) {
        let (cbw_e, cgb_e) = self.window.pop_front().expect("a full window");
        let k = self.blocks.len();
        let ext = |i: usize, j: usize| match (i < k, j < k) {
            (true, true) => self.blocks[i][j],
            (true, false) => cbw_e[i],
            (false, true) => cbw_e[j],
            (false, false) => cgb_e[0],
        };
        // index k: the leaving value, after the old blocks
        let sources: Vec<Vec<usize>> = plan
            .iter()
            .map(|(srcs, leaving)| srcs.iter().copied().chain(leaving.then_some(k)).collect())
            .collect();
        let kn = plan.len();
        let mut next = vec![vec![0.0; kn]; kn];
        for (a, sa) in sources.iter().enumerate() {
            for (b, sb) in sources.iter().enumerate().skip(a) {
                let mut v = 0.0;
                for &i in sa {
                    for &j in sb {
                        v += ext(i, j);
                    }
                }
                next[a][b] = v;
                next[b][a] = v;
            }
        }
        self.blocks = next;
        // the remaining windowed values j: Cov(ũ_j, ·) over the new blocks, C_g(j, e) at lag j − e
        for (lag, (cbw, cgb)) in self.window.iter_mut().enumerate().map(|(i, x)| (i + 1, x)) {
            let value = |i: usize| if i < k { cbw[i] } else { cgb[lag] };
            *cbw = sources.iter().map(|s| s.iter().map(|&i| value(i)).sum()).collect();
        }
    }
}

/// The generator family: ĝ's block history and the target covariance of ũ's
/// features (every mode's ũᵏ is an independent GP(0, C_g)).
pub(super) struct Generator {
    pub(super) part: Partition,
    pub(super) g: Track,
    pub(super) target: GeneratorCovariance,
}

/// ũ_t's law given its features (U_B, ũ_{t−nw..t−1}) under the target
/// covariance — the same for every mode — and C_g(t, ·)'s row.
pub(super) struct Conditional {
    /// ũ_t's terms over the state's entries.
    pub(super) terms: Vec<(Slot, f64)>,
    /// The innovation's variance.
    pub(super) sd2: f64,
    pub(super) beta: DVector<f64>,
    /// Blocks and windowed values conditioned on.
    pub(super) blocks: usize,
    pub(super) nw: usize,
    /// C_g(t, B) over the generator's blocks, and C_g(t, t − l), l = 0..=nw.
    pub(super) row_blocks: Vec<f64>,
    pub(super) cgb: Vec<f64>,
}

impl Generator {
    pub(super) fn new(n: usize) -> Self {
        Generator {
            part: Partition::new(GEN_WINDOW, GEN_RULE),
            g: Track::new(n, GEN_WINDOW),
            target: GeneratorCovariance {
                blocks: Vec::new(),
                window: VecDeque::new(),
            },
        }
    }

    /// C_g(t, ·) = a·E[ĝ_t ĝ_s] (s ≤ t), the Gram matrix of the selected
    /// gradients (positive semi-definite by construction), and ũ_t's law.
    pub(super) fn conditional(&self, g: &[f64], a: f64, t: usize) -> Conditional {
        let blocks_u = self.part.blocks().len();
        let nw = t.min(GEN_WINDOW);
        // a·E[ĝ_t·x] over the block sums, then ĝ_{t−l}, l = 0..=nw
        let rows: Vec<&[f64]> = (0..blocks_u)
            .map(|b| self.g.sum(b))
            .chain([g])
            .chain((1..=nw).map(|l| self.g.value(&self.part, t - l)))
            .collect();
        let mut products = vec![0.0; rows.len()];
        dots(g, &rows, &mut products);
        products.iter_mut().for_each(|x| *x = a * *x / g.len() as f64);
        let cgb = products.split_off(blocks_u);
        let row_blocks = products;
        let dim = blocks_u + nw;
        let mut terms: Vec<(Slot, f64)> = Vec::with_capacity(dim);
        let (sd2, beta) = if dim == 0 {
            (cgb[0], DVector::zeros(0))
        } else {
            let target = &self.target;
            let sff = DMatrix::from_fn(dim, dim, |i, j| match (i < blocks_u, j < blocks_u) {
                (true, true) => target.blocks[i][j],
                (true, false) => target.window[j - blocks_u].0[i],
                (false, true) => target.window[i - blocks_u].0[j],
                (false, false) => target.band(i - blocks_u, j - blocks_u),
            });
            // the windowed value at position j is ũ_{t − nw + j}, lag nw − j
            let sft = DVector::from_fn(dim, |i, _| {
                if i < blocks_u {
                    row_blocks[i]
                } else {
                    cgb[nw - (i - blocks_u)]
                }
            });
            let beta = conditional_weights(sff, &sft);
            ((cgb[0] - beta.dot(&sft)).max(0.0), beta)
        };
        for (i, &bi) in beta.iter().enumerate() {
            terms.push(if i < blocks_u {
                (Slot::UBlock(self.part.blocks()[i]), bi)
            } else {
                (Slot::U(t - nw + (i - blocks_u)), bi)
            });
        }
        Conditional {
            terms,
            sd2,
            beta,
            blocks: blocks_u,
            nw,
            row_blocks,
            cgb,
        }
    }

    /// Keep step t's C_g row in the target and ĝ_t in the history.
    pub(super) fn advance(&mut self, cond: Conditional, g: &[f64]) -> Advance {
        self.target.window.push_back((cond.row_blocks, {
            let mut v = cond.cgb;
            v.resize(GEN_WINDOW + 1, 0.0);
            v
        }));
        let step = self.part.advance();
        if let Some((_, plan)) = &step.merge {
            self.target.merge(plan);
        }
        self.g.push(&self.part, &step, g);
        step
    }
}
