//! The covariance of the generated linear state of the long-horizon solver
//! (docs/theory.md §3.3): the θ̃ and ũ windows and the block sums of their
//! dyadic partitions, and with correlated privacy noise (§3.7) the window
//! of its memory (the last b − 1 values w_t, or a BLT's buffers). Every step adds entries that are linear combinations
//! of the current ones plus independent innovations,
//!
//!   Cov(new, j) = Σ_a c_a·Cov(a, j),   Var(new) = Σ_a c_a·Cov(new, a) + innovation,
//!
//! and relays the state out as the new windows and blocks, each a sum of
//! current entries: Cov(N_i, N_j) = Σ_{a∈G_i} Σ_{b∈G_j} Cov(a, b).
//!
//! An entry keeps its position in the matrix for as long as it lives, so a
//! relayout touches only the entries it creates: a window's entries stay
//! where they are as it shifts (θ̃_k is θ̃_k at every step), and only the
//! merged blocks get new rows, written over positions their members free.
//! The cost of a step is O(d·new) instead of O(d²) for d entries (about
//! 10² at 10⁴ steps) and ~1 new block per step.
//!
//! # References
//! - Rasmussen, Williams (2006), *Gaussian Processes for Machine Learning*,
//!   §A.2 (linear maps of Gaussian vectors).

use rustc_hash::FxHashMap;

use crate::dynamics::dyadic::Block;

use super::combine::combine;
use crate::numerics::axpy;

/// An entry of the generated linear Gaussian state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Slot {
    Theta(usize),
    ThetaBlock(Block),
    U(usize),
    UBlock(Block),
    /// The privacy noise w_t.
    Noise(usize),
    /// Buffer i of a BLT strategy at step t: bᵢ,t = θᵢbᵢ,t−1 + w_{t−1}.
    Buffer(usize, usize),
}

/// The covariance of the generated linear state, one entry per position
/// (free positions hold stale values that are never read).
pub(super) struct StateCovariance {
    /// The entry at each position, `None` where the position is free.
    slots: Vec<Option<Slot>>,
    /// The position of each entry (`slots` inverted: a step looks up ~10²).
    index: FxHashMap<Slot, usize>,
    /// Row-major with row length `stride` ≥ the positions (room to grow in place).
    cov: Vec<f64>,
    stride: usize,
    /// The summed rows of [`Self::apply`]'s new entries, kept between steps.
    rows: Vec<f64>,
    /// [`Self::extend`]'s new row and [`Self::follow`]'s, kept between steps.
    col: Vec<f64>,
}

/// Positions a reallocation leaves room for.
const SPARE: usize = 8;

impl StateCovariance {
    pub(super) fn new() -> Self {
        StateCovariance {
            slots: vec![Some(Slot::Theta(0))],
            index: FxHashMap::from_iter([(Slot::Theta(0), 0)]),
            cov: vec![0.0; (1 + SPARE) * (1 + SPARE)],
            stride: 1 + SPARE,
            rows: Vec::new(),
            col: Vec::new(),
        }
    }

    pub(super) fn position(&self, s: &Slot) -> usize {
        *self.index.get(s).expect("a tracked entry")
    }

    /// Name the entries at `changes`' positions anew (`None`: free), the
    /// index with them: every old name leaves before a new one comes, so a
    /// name may move between the positions changed.
    fn rename(&mut self, changes: impl Iterator<Item = (usize, Option<Slot>)> + Clone) {
        for (p, _) in changes.clone() {
            if let Some(old) = self.slots[p].take() {
                self.index.remove(&old);
            }
        }
        for (p, slot) in changes {
            if let Some(s) = slot {
                self.index.insert(s, p);
            }
            self.slots[p] = slot;
        }
    }

    pub(super) fn at(&self, i: usize, j: usize) -> f64 {
        self.cov[i * self.stride + j]
    }

    /// Row i over the current positions (Cov(entry i, ·)).
    pub(super) fn row(&self, i: usize) -> &[f64] {
        &self.cov[i * self.stride..i * self.stride + self.slots.len()]
    }

    pub(super) fn var(&self, s: Slot) -> f64 {
        let i = self.position(&s);
        self.at(i, i)
    }

    /// The positions of `terms`' entries (the same for every atom's state).
    pub(super) fn indexed(&self, terms: &[(Slot, f64)]) -> Vec<(usize, f64)> {
        terms.iter().map(|(s, c)| (self.position(s), *c)).collect()
    }

    /// Room for `len` positions.
    fn reserve(&mut self, len: usize) {
        let old = self.slots.len();
        if len > self.stride {
            let stride = len + SPARE;
            let mut cov = vec![0.0; stride * stride];
            for i in 0..old {
                cov[i * stride..i * stride + old].copy_from_slice(&self.cov[i * self.stride..i * self.stride + old]);
            }
            (self.cov, self.stride) = (cov, stride);
        }
        if len > old {
            self.slots.resize(len, None);
        }
    }

    /// The current entries, kept, plus a new one at the first free position:
    /// Σ c·(entry at its position) plus an independent innovation. Only the
    /// new row and column are computed: Cov(new, j) = Σ c·Cov(b, j) (by rows:
    /// Cov is symmetric) and Var(new) = Σ c·Cov(new, b) + innovation.
    pub(super) fn extend(&mut self, slot: Slot, terms: &[(usize, f64)], innovation: f64) {
        let p = match self.slots.iter().position(Option::is_none) {
            Some(p) => p,
            None => {
                self.reserve(self.slots.len() + 1);
                self.slots.len() - 1
            }
        };
        let (d, st) = (self.slots.len(), self.stride);
        let mut col = std::mem::take(&mut self.col);
        col.resize(d, 0.0);
        let cov = &self.cov;
        combine(&mut col, terms.iter().map(|&(a, c)| (c, &cov[a * st..a * st + d])));
        let var = terms.iter().map(|&(b, c)| c * col[b]).sum::<f64>() + innovation;
        for (i, &x) in col.iter().enumerate() {
            self.cov[i * st + p] = x;
        }
        self.cov[p * st..p * st + d].copy_from_slice(&col);
        self.cov[p * st + p] = var;
        self.rename(std::iter::once((p, Some(slot))));
        self.col = col;
    }

    /// Become Σ_k w_k·C_k for `parts` (w_k, C_k) of one layout, which this
    /// state followed up to their last changes: the positions whose entries
    /// changed since (extended, re-laid out, renamed or freed) get their rows
    /// and columns summed anew; the others' covariances among themselves did
    /// not change in any part, so neither did their sum.
    pub(super) fn follow(&mut self, parts: &[(f64, &StateCovariance)]) {
        let Some(&(_, first)) = parts.first() else {
            return;
        };
        let d = first.slots.len();
        self.reserve(d);
        let changed: Vec<usize> = (0..d).filter(|&p| self.slots[p] != first.slots[p]).collect();
        let st = self.stride;
        let mut row = std::mem::take(&mut self.col);
        row.resize(d, 0.0);
        self.rename(changed.iter().map(|&p| (p, first.slots[p])));
        for &p in &changed {
            if self.slots[p].is_none() {
                continue;
            }
            combine(&mut row, parts.iter().map(|&(w, c)| (w, c.row(p))));
            for (i, &x) in row.iter().enumerate() {
                self.cov[i * st + p] = x;
            }
            self.cov[p * st..p * st + d].copy_from_slice(&row);
        }
        self.col = row;
    }

    /// How to re-lay the state out as `windows` (kept entries) and `blocks`
    /// (sums of the current entries they contain), for θ̃ and ũ, keeping the
    /// privacy noise's entries `noise` (the rest are dropped).
    /// Every atom's state has the same entries at the same positions, so one
    /// layout serves them all.
    pub(super) fn layout(&self, theta: (&[usize], &[Block]), u: (&[usize], &[Block]), noise: &[Slot]) -> Layout {
        let d = self.slots.len();
        let mut l = Layout {
            len: d,
            renamed: Vec::new(),
            kept: Vec::new(),
            fresh: Vec::new(),
            members: Vec::new(),
            starts: vec![0],
            freed: Vec::new(),
        };
        let mut used = vec![false; d];
        for (theta_kind, (window, blocks)) in [(true, theta), (false, u)] {
            // each entry into the block holding it, in one pass (positions ascending; a
            // partition's blocks are contiguous and in order)
            let mut within: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
            for (i, slot) in self.slots.iter().enumerate() {
                let span = match (slot, theta_kind) {
                    (Some(Slot::Theta(k)), true) | (Some(Slot::U(k)), false) => (*k, *k + 1),
                    (Some(Slot::ThetaBlock(b)), true) | (Some(Slot::UBlock(b)), false) => *b,
                    _ => continue,
                };
                let at = blocks.partition_point(|b| b.0 <= span.0);
                if let Some(j) = at.checked_sub(1)
                    && span.1 <= blocks[j].1
                {
                    within[j].push(i);
                }
            }
            let groups = blocks.iter().zip(within).map(|(&b, members)| {
                let slot = if theta_kind {
                    Slot::ThetaBlock(b)
                } else {
                    Slot::UBlock(b)
                };
                (slot, members)
            });
            let singles = window.iter().map(|&k| {
                let s = if theta_kind { Slot::Theta(k) } else { Slot::U(k) };
                (s, vec![self.position(&s)])
            });
            let noise_window = if theta_kind { noise } else { &[] };
            let kept_noise = noise_window.iter().map(|&s| (s, vec![self.position(&s)]));
            for (slot, members) in groups.chain(singles).chain(kept_noise) {
                match members[..] {
                    [a] => {
                        used[a] = true;
                        l.kept.push(a);
                        if self.slots[a] != Some(slot) {
                            l.renamed.push((a, slot));
                        }
                    }
                    _ => {
                        l.fresh.push((slot, 0));
                        l.members.extend(members);
                        l.starts.push(l.members.len());
                    }
                }
            }
        }
        // the new entries take the lowest positions not kept, then new ones
        let mut free = (0..d).filter(|&i| !used[i]);
        for (_, p) in &mut l.fresh {
            *p = free.next().unwrap_or_else(|| {
                l.len += 1;
                l.len - 1
            });
        }
        l.freed = free.filter(|&i| self.slots[i].is_some()).collect();
        l
    }

    /// Re-lay the state out: the new entries' rows are the sums of their
    /// members' rows, Cov(N_i, N_j) the sums of those rows over N_j's
    /// members; kept entries stay where they are.
    pub(super) fn apply(&mut self, l: &Layout) {
        let (d, f) = (self.slots.len(), l.fresh.len());
        let st = self.stride;
        let group = |i: usize| &l.members[l.starts[i]..l.starts[i + 1]];
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.resize(f * d, 0.0);
        for i in 0..f {
            let row = &mut rows[i * d..(i + 1) * d];
            for &a in group(i) {
                axpy(row, 1.0, &self.cov[a * st..a * st + d]);
            }
        }
        let cross: Vec<f64> = (0..f)
            .flat_map(|i| (0..f).map(move |j| (i, j)))
            .map(|(i, j)| group(j).iter().map(|&b| rows[i * d + b]).sum())
            .collect();
        self.reserve(l.len);
        let st = self.stride;
        self.rename(
            l.freed
                .iter()
                .map(|&p| (p, None))
                .chain(l.renamed.iter().map(|&(p, s)| (p, Some(s))))
                .chain(l.fresh.iter().map(|&(s, p)| (p, Some(s)))),
        );
        for (i, &(_, p)) in l.fresh.iter().enumerate() {
            let row = &rows[i * d..(i + 1) * d];
            for &k in &l.kept {
                self.cov[p * st + k] = row[k];
                self.cov[k * st + p] = row[k];
            }
            for (j, &(_, q)) in l.fresh.iter().enumerate() {
                self.cov[p * st + q] = cross[i * f + j];
            }
        }
        self.rows = rows;
    }
}

/// A relayout of the state: the entries kept at their positions (some
/// renamed: a window's oldest value becoming a block of one), and the new
/// ones with the positions they take and the current entries each sums
/// (`members[starts[i]..starts[i + 1]]`).
pub(super) struct Layout {
    /// The positions after the relayout.
    len: usize,
    renamed: Vec<(usize, Slot)>,
    kept: Vec<usize>,
    fresh: Vec<(Slot, usize)>,
    members: Vec<usize>,
    starts: Vec<usize>,
    /// Live positions neither kept nor reused.
    freed: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state's covariance against the covariance of explicit linear
    /// combinations of independent normals, through extends and relayouts
    /// that merge, rename and drop entries.
    #[test]
    fn relayouts_keep_the_covariance_of_the_sums() {
        // entries as coefficient vectors over independent N(0, 1) innovations
        let mut state = StateCovariance::new();
        let dims = 40;
        let mut first = vec![0.0; dims];
        first[0] = 1.0;
        let mut exact: Vec<(Slot, Vec<f64>)> = vec![(Slot::Theta(0), first)];
        state.cov[0] = 1.0;
        let check = |state: &StateCovariance, exact: &[(Slot, Vec<f64>)]| {
            for (s, a) in exact {
                for (r, b) in exact {
                    let want: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
                    let got = state.at(state.position(s), state.position(r));
                    assert!((got - want).abs() < 1e-12, "{s:?}, {r:?}: {got} vs {want}");
                }
            }
        };
        for t in 0..12 {
            // θ(t + 1) = 0.9θ(t) − 0.3·(every block) + innovation
            let mut terms = vec![(Slot::Theta(t), 0.9)];
            terms.extend(
                exact
                    .iter()
                    .filter(|(s, _)| matches!(s, Slot::ThetaBlock(_)))
                    .map(|(s, _)| (*s, -0.3)),
            );
            let mut v = vec![0.0; dims];
            for (s, c) in &terms {
                let e = &exact.iter().find(|(x, _)| x == s).unwrap().1;
                axpy(&mut v, *c, e);
            }
            v[t + 1] += 0.5;
            let idx = state.indexed(&terms);
            state.extend(Slot::Theta(t + 1), &idx, 0.25);
            exact.push((Slot::Theta(t + 1), v));
            check(&state, &exact);
            // window of 3, older values in blocks of 2 (singletons where odd)
            let window: Vec<usize> = ((t + 1).saturating_sub(2)..=t + 1).collect();
            let blocks: Vec<Block> = (0..window[0]).step_by(2).map(|b| (b, (b + 2).min(window[0]))).collect();
            let layout = state.layout((&window, &blocks), (&[], &[]), &[]);
            state.apply(&layout);
            let old = std::mem::take(&mut exact);
            let value = |pred: &dyn Fn(&Slot) -> bool| {
                let mut v = vec![0.0; dims];
                for (_, e) in old.iter().filter(|(s, _)| pred(s)) {
                    axpy(&mut v, 1.0, e);
                }
                v
            };
            for &(b0, b1) in &blocks {
                let inside = move |s: &Slot| match *s {
                    Slot::Theta(k) => b0 <= k && k < b1,
                    Slot::ThetaBlock((s0, s1)) => b0 <= s0 && s1 <= b1,
                    _ => false,
                };
                exact.push((Slot::ThetaBlock((b0, b1)), value(&inside)));
            }
            for &k in &window {
                exact.push((Slot::Theta(k), value(&|s: &Slot| *s == Slot::Theta(k))));
            }
            check(&state, &exact);
            assert_eq!(state.slots.iter().flatten().count(), exact.len());
            assert_indexed(&state);
        }
    }

    /// The index holds every live entry at its position and nothing else.
    fn assert_indexed(state: &StateCovariance) {
        let live: FxHashMap<Slot, usize> = (state.slots.iter().enumerate())
            .filter_map(|(p, s)| Some(((*s)?, p)))
            .collect();
        assert_eq!(state.index, live);
    }

    /// A state following two others through extends and relayouts holds
    /// their weighted sum at every live entry.
    #[test]
    fn a_following_state_is_the_weighted_sum_of_its_parts() {
        let (mut a, mut b, mut joint) = (StateCovariance::new(), StateCovariance::new(), StateCovariance::new());
        let weights = [0.7, 2.5];
        for t in 0..15 {
            for (k, state) in [&mut a, &mut b].into_iter().enumerate() {
                let blocks: Vec<(usize, f64)> = state
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| matches!(s, Some(Slot::ThetaBlock(_))))
                    .map(|(i, _)| (i, -0.2 - 0.1 * k as f64))
                    .collect();
                let mut terms = vec![(state.position(&Slot::Theta(t)), 0.9 - 0.3 * k as f64)];
                terms.extend(blocks);
                state.extend(Slot::Theta(t + 1), &terms, 0.25 + k as f64);
                let window: Vec<usize> = ((t + 1).saturating_sub(2)..=t + 1).collect();
                let blocks: Vec<Block> = (0..window[0]).step_by(3).map(|b| (b, (b + 3).min(window[0]))).collect();
                let layout = state.layout((&window, &blocks), (&[], &[]), &[]);
                state.apply(&layout);
            }
            if t % 2 == 1 {
                continue; // follow after two steps' changes as after one
            }
            joint.follow(&[(weights[0], &a), (weights[1], &b)]);
            assert_eq!(joint.slots, a.slots);
            for state in [&a, &b, &joint] {
                assert_indexed(state);
            }
            let live: Vec<usize> = (0..a.slots.len()).filter(|&i| a.slots[i].is_some()).collect();
            for &i in &live {
                for &j in &live {
                    let want = weights[0] * a.at(i, j) + weights[1] * b.at(i, j);
                    assert!(
                        (joint.at(i, j) - want).abs() <= 1e-12 * want.abs().max(1.0),
                        "t = {t}, ({i}, {j})"
                    );
                }
            }
        }
    }
}
