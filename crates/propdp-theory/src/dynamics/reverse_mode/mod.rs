//! The responses R_g(t, t − m) = a·E[ĥ_t·∂r_t/∂w_{t−m}], m < W, of the
//! long-horizon state evolution by reverse mode over each path's recent
//! history: with b_t = 1 and, going back, b_k = −η·ĥ_k·Σ_{k<j≤t} R_θ(j,k)·b_j,
//! R_g(t,k) = a·E[ω_t b_k] where ω_t is the terminal weight (ĥ_t, or its
//! Rao–Blackwellised q·ℓ''_t·1{|ℓ'_t| < C}). Only steps with ĥ_k ≠ 0 (the
//! path's events: selected and unclipped) carry a non-zero adjoint, so at
//! small q each path's pass costs (its events in the window)², a handful,
//! with R_θ between its own events kept beside them (copied from the current
//! row R_θ(t,·) when an event is recorded: the pass reads only the path's own
//! memory and that row, never the W×W triangle); when a path has many events
//! in the window (q near 1; the choice by estimated cost, `dense`) the pass
//! runs densely over the window, LANES paths at a time
//! with their adjoints side by side (the inner loop vectorises over the
//! lanes). The dense sum over j keeps the lags j − k ≤ NEAR_LAGS and the
//! steps t − j < NEAR_TERMINAL exactly and, in between, acts with R_θ(·, k)'s
//! mean over blocks of lags growing like α·lag (α = LAG_ALPHA) on the
//! adjoints' block sums (prefix sums of b): O(log W) terms per step instead
//! of O(W), the transpose of the memories' far field (docs/theory.md §3.3).
//! In both passes the far lags, small and many, are estimated from a prefix
//! of the paths (one in FAR_SHARE): beyond FAR_LAGS in the sparse pass (the
//! other paths' events older than that are neither recorded in pairs nor
//! run), beyond DENSE_PREFIX_LAGS in the dense pass: an unbiased
//! estimate whose extra spread the replicates' standard error includes. The
//! sparse pass keeps R_θ between events in single precision (`SparsePass`).
//! A dense pass may also reuse the far lags
//! of the last pass that ran them (the caller chooses when:
//! `long_horizon::far_adjoints`), and a pass that runs them reports how far
//! they moved since the oldest of the last FAR_RUNS runs, summed over
//! dyadic lag blocks (`block_change`).
//!
//! # References
//! - Griewank, Walther (2008), *Evaluating Derivatives*, 2nd ed., ch. 3
//!   (the reverse mode).

use std::collections::VecDeque;

use crate::numerics::dot_lanes;

mod dense;
mod pass;

use dense::{Adjoints, DensePass, LAG_ALPHA, LANES, LagTerms, NEAR_LAGS, NEAR_TERMINAL};
use pass::{Pass, run};

/// Lags m < FAR_LAGS of the dense pass run on every path; beyond, on a prefix.
const FAR_LAGS: usize = 32;

/// Lags m ≥ DENSE_PREFIX_LAGS of the dense pass run on the prefix of the
/// paths only (FAR_LAGS stays the lag from which a pass may reuse the last
/// run's): its pass over every path's near lags is its cost at q near 1 —
/// 16 instead of 32 took a T = 10⁴, q = 1 Huber solve from 8.4 s to 6.5 s,
/// every checkpoint within 0.13 standard errors and the precision reached
/// unchanged (0.22%); 8 gave 5.8 s at 0.30%.
const DENSE_PREFIX_LAGS: usize = 16;

/// The prefix of the paths that runs the dense pass beyond FAR_LAGS: one in
/// FAR_SHARE, at least FAR_MIN_PATHS.
const FAR_SHARE: usize = 8;

/// See [`FAR_SHARE`]. One in eight at the 1024-path pilot (256 were a
/// quarter there): over the 16 points of the precision study the standard
/// errors did not move (docs/performance.md, "Session 39").
const FAR_MIN_PATHS: usize = 128;

/// (lags from which the dense pass runs on a prefix of the paths, that
/// prefix) for `n` paths. The paths are the points of a scrambled Sobol'
/// sequence, so a prefix is itself a randomised QMC set (a net when its size
/// is a power of two): the far lags' estimate stays unbiased, with more
/// spread, which the replicates' spread carries into the standard error.
fn far_split(n: usize) -> (usize, usize) {
    (
        FAR_LAGS,
        (n / FAR_SHARE).max(FAR_MIN_PATHS).next_multiple_of(LANES).min(n),
    )
}

/// Expected events per window from which the dense pass is used.
const DENSE_EVENTS: f64 = 16.0;

/// Each path's recent events.
pub(crate) enum Events {
    /// ĥ of every path at the last W steps, a group of LANES paths' history
    /// side by side (the pass reads it step by step): path g·LANES + l at
    /// h[(g·W + k mod W)·LANES + l], zero past the last path; the
    /// response triangle R_θ(k + l, k) at rth[(k mod W)·W + l − 1], l = 1..=W,
    /// and its rows' running sums Σ_{l' ≤ l} R_θ(k + l', k) beside it in `cum`;
    /// the far lags of the last FAR_RUNS passes that ran them (`far`,
    /// oldest first, each its step and its lag-indexed values), the newest
    /// of which a pass may reuse ([`Events::adjoints`]).
    Dense {
        h: Vec<f64>,
        rth: Vec<f64>,
        cum: Vec<f64>,
        far: VecDeque<(usize, Vec<f64>)>,
        terms: LagTerms,
        adjoints: Adjoints,
    },
    /// A ring of each path's last events (step, ĥ; [`Rings`]: the window's
    /// for the prefix that runs the far lags, FAR_LAGS steps' for the other
    /// paths), and for every pair of them R_θ(later, earlier) in single
    /// precision at pair[pair_base(i) + earlier·cap(i) + later] (an earlier
    /// event's responses side by side, as the pass reads them).
    Sparse {
        rings: Rings,
        step: Vec<usize>,
        h: Vec<f64>,
        pair: Vec<f32>,
        len: Vec<usize>,
        next: Vec<usize>,
    },
}

/// The sparse ring's capacity: the window's events with overwhelming
/// probability (mean + 6 sd + 8; an older event beyond it is dropped, as if
/// outside the window).
fn capacity(w: usize, q: f64) -> usize {
    let mean = q * w as f64;
    w.min((mean + 6.0 * mean.sqrt() + 8.0).ceil() as usize)
}

/// Where each path's ring sits in the sparse form: the prefix of
/// [`far_split`], which runs every lag, with rings of `cap` events (the
/// window's), then the other paths, which run the lags below FAR_LAGS only,
/// with rings of `near` (FAR_LAGS steps' events, by the same rule). The
/// pair table is what the sparse pass waits on (a row per event, read at
/// random): at 1024 paths, q = 0.1, W ≈ 700 it was 65 MB with every ring
/// the window's, 10 MB so.
#[derive(Clone, Copy)]
pub(crate) struct Rings {
    prefix: usize,
    cap: usize,
    near: usize,
}

impl Rings {
    fn new(n: usize, w: usize, q: f64) -> Self {
        let (far_from, prefix) = far_split(n);
        let cap = capacity(w, q);
        Rings {
            prefix,
            cap,
            near: capacity(far_from.min(w), q).min(cap),
        }
    }

    /// Path i's ring capacity.
    fn cap(&self, i: usize) -> usize {
        if i < self.prefix { self.cap } else { self.near }
    }

    /// Path i's first slot (the first of every path after i's ring: `base(n)` slots in all).
    fn base(&self, i: usize) -> usize {
        let prefix = i.min(self.prefix);
        prefix * self.cap + (i - prefix) * self.near
    }

    /// Path i's first pair (`pair_base(n)` pairs in all).
    fn pair_base(&self, i: usize) -> usize {
        let prefix = i.min(self.prefix);
        prefix * self.cap * self.cap + (i - prefix) * self.near * self.near
    }
}

/// The sparse ring's largest capacity.
const SPARSE_MAX_CAP: usize = 256;

/// The sparse pair table's largest size (N·cap² floats), in bytes.
const SPARSE_MAX_BYTES: f64 = 1e9;

/// Steps a dense pass over a full window reuses its far lags for, from
/// t = 2W on ([`Events::adjoints`]; the schedule is
/// `long_horizon::far_adjoints`; [`EARLY_STRIDE`] before). 16 instead of 8
/// (session 43; docs/theory.md §3.3): logistic q = 1 with 20 atoms,
/// T = 10⁴, 11.0 → 10.1 s, against 8 with common random numbers every step
/// and metric within 0.6 standard errors (mean 0.12), the standard errors
/// unchanged.
pub(crate) const FAR_STRIDE: usize = 16;

/// Steps a dense pass over a full window reuses its far lags for between
/// t = W and 2W, while the first steps' transient is still in the window
/// (session 44): against running them every step there, common random
/// numbers, Huber C = 1, q = 0.3 and logistic C = 0.5, q = 1, 20 atoms,
/// T = 10⁴: every step and metric within 0.21 standard errors (smoothed
/// over ±250 steps), mean below 0.005, the standard errors unchanged.
pub(crate) const EARLY_STRIDE: usize = 4;

/// Runs of the far lags back that a run measures their change against
/// ([`FarChange`]): over FAR_RUNS strides the paths' spread between two
/// runs is FAR_RUNS times smaller beside the drift it hides.
pub(crate) const FAR_RUNS: usize = 8;

/// What a dense pass that ran its far lags over a full window measured:
/// Σ over dyadic lag blocks B ≥ FAR_LAGS of |Σ_{m ∈ B} ΔR_g(t, t − m)|
/// against the oldest kept run, `age` steps before (at most FAR_RUNS runs
/// back), and the steps since the last run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FarChange {
    pub(crate) change: f64,
    pub(crate) age: usize,
    pub(crate) since_last: usize,
}

/// Whether the dense pass is used for `n` paths at window `w`, sample rate
/// `q` and horizon `steps`: from DENSE_EVENTS expected events per window,
/// when its cost per step is below the sparse pass's, or when the sparse
/// ring would exceed SPARSE_MAX_CAP or its pair table SPARSE_MAX_BYTES. The
/// dense pass: the lag terms (about 5 ns each, their values rewritten every
/// step) and about 4 ns per term and lane group with an event, over every
/// lag for the prefix that runs the far lags and over the DENSE_PREFIX_LAGS
/// near ones for the others — and from t = W on (a share of the horizon),
/// the lags beyond FAR_LAGS only every EARLY_STRIDE, from 2W every
/// FAR_STRIDE steps (their reuse); the sparse pass: about 2 ns per pair of a
/// selected path's events in the lags it runs (1 ns until session 44, which
/// chose the sparse pass at q = 0.3, W ≈ 400, T = 2000–3000: 3.2–5.0 s a
/// solve against 1.4–2.2 s dense). At q = 0.01 with a window over the whole
/// horizon (no ridge) the sparse pass is ~30× cheaper; at q = 0.1, W ≈ 850,
/// T = 10⁴ (20 atoms) ~2× (10.9 s against 18.8 s a solve); at q = 0.3,
/// W ≈ 560, T = 10⁴ the dense pass with its reuse (38.8 s → 12.3 s,
/// session 44).
fn dense(n: usize, w: usize, q: f64, steps: usize) -> bool {
    let mean = q * w as f64;
    if mean < DENSE_EVENTS {
        return false;
    }
    let cap = capacity(w, q);
    if cap > SPARSE_MAX_CAP || 4.0 * Rings::new(n, w, q).pair_base(n) as f64 > SPARSE_MAX_BYTES {
        return true;
    }
    let (far_from, prefix) = far_split(n);
    let (prefix, rest) = (prefix as f64, n.saturating_sub(prefix) as f64);
    let terms = |span: usize| {
        let span = span.min(w) as f64;
        let blocks = 2.0 * (span / NEAR_LAGS as f64).ln().max(0.0) / (1.0 + LAG_ALPHA).ln();
        span * ((NEAR_LAGS + NEAR_TERMINAL) as f64 + blocks).min(span)
    };
    let busy = 1.0 - (1.0 - q).powi(LANES as i32);
    let pass_ns = |all: f64, near: f64| 5.0 * all + 4.0 * busy / LANES as f64 * (prefix * all + rest * near);
    let near = terms(DENSE_PREFIX_LAGS);
    let every_lag = pass_ns(terms(w), near);
    let reusing = |stride: usize| pass_ns(terms(far_from), near) + every_lag / stride as f64;
    let share = |steps_in: usize| steps_in as f64 / steps.max(1) as f64;
    let (early, late) = (
        share(steps.min(2 * w).saturating_sub(w)),
        share(steps.saturating_sub(2 * w)),
    );
    let dense_ns = (1.0 - early - late) * every_lag + early * reusing(EARLY_STRIDE) + late * reusing(FAR_STRIDE);
    let pairs = |events: f64| events * events / 2.0 + events;
    let sparse_ns = 2.0 * q * (prefix * pairs(mean) + rest * pairs(q * far_from.min(w) as f64));
    dense_ns < sparse_ns
}

/// Bytes the events of `n` paths take at window `w`, sample rate `q` and
/// horizon `steps`.
pub(crate) fn bytes(n: usize, w: usize, q: f64, steps: usize) -> f64 {
    let (nf, wf) = (n as f64, w as f64);
    if dense(n, w, q, steps) {
        8.0 * (wf * n.next_multiple_of(LANES) as f64 + 2.0 * wf * wf)
    } else {
        let rings = Rings::new(n, w, q);
        4.0 * rings.pair_base(n) as f64 + 16.0 * rings.base(n) as f64 + 16.0 * nf
    }
}

impl Events {
    /// Whether the events are kept densely (every path's ĥ over the window).
    #[cfg(test)]
    fn is_dense(&self) -> bool {
        matches!(self, Events::Dense { .. })
    }

    /// Storage for `n` paths, window `w`, sample rate `q` (dense or sparse
    /// as [`dense`] chooses).
    pub(crate) fn new(n: usize, w: usize, q: f64, steps: usize) -> Self {
        if dense(n, w, q, steps) {
            Self::dense_form(n, w)
        } else {
            Self::sparse_form(n, w, q)
        }
    }

    /// The dense form for `n` paths at window `w`.
    fn dense_form(n: usize, w: usize) -> Self {
        Events::Dense {
            h: vec![0.0; w * n.next_multiple_of(LANES)],
            rth: vec![0.0; w * w],
            cum: vec![0.0; w * w],
            far: VecDeque::with_capacity(FAR_RUNS),
            terms: LagTerms::default(),
            adjoints: Adjoints::default(),
        }
    }

    /// The sparse form for `n` paths at window `w` and sample rate `q`.
    fn sparse_form(n: usize, w: usize, q: f64) -> Self {
        let rings = Rings::new(n, w, q);
        Events::Sparse {
            rings,
            step: vec![0; rings.base(n)],
            h: vec![0.0; rings.base(n)],
            pair: vec![0.0; rings.pair_base(n)],
            len: vec![0; n],
            next: vec![0; n],
        }
    }

    /// The events of `n` paths recorded up to step t at window `w`, at the
    /// wider window `wider`: the steps t − w < k ≤ t keep their events (ĥ,
    /// and R_θ between them or the rows R_θ(·, k)), the older ones are
    /// dropped (their lags were beyond `w`); at t = w − 1 this is what
    /// [`Events::new`] at `wider` would hold. `false` (unchanged) when `new`
    /// would choose the other form at `wider`.
    pub(crate) fn widen(&mut self, n: usize, w: usize, wider: usize, t: usize, (q, steps): (f64, usize)) -> bool {
        if dense(n, wider, q, steps) != matches!(self, Events::Dense { .. }) {
            return false;
        }
        let mut grown = Events::new(n, wider, q, steps);
        let held = (t + 1).saturating_sub(w)..=t;
        match (&*self, &mut grown) {
            (
                Events::Dense { h, rth, cum, .. },
                Events::Dense {
                    h: h2,
                    rth: r2,
                    cum: c2,
                    ..
                },
            ) => {
                for g in 0..n.div_ceil(LANES) {
                    for k in held.clone() {
                        let (from, to) = ((g * w + k % w) * LANES, (g * wider + k % wider) * LANES);
                        h2[to..to + LANES].copy_from_slice(&h[from..from + LANES]);
                    }
                }
                for k in held {
                    r2[k % wider * wider..][..w].copy_from_slice(&rth[k % w * w..][..w]);
                    c2[k % wider * wider..][..w].copy_from_slice(&cum[k % w * w..][..w]);
                }
            }
            (
                Events::Sparse {
                    rings,
                    step,
                    h,
                    pair,
                    len,
                    next,
                },
                Events::Sparse {
                    rings: rings2,
                    step: step2,
                    h: h2,
                    pair: pair2,
                    len: len2,
                    next: next2,
                },
            ) => {
                // each path's events still in the window, oldest first, from slot 0 of its wider ring
                for i in 0..n {
                    let (cap, base, pairs) = (rings.cap(i), rings.base(i), rings.pair_base(i));
                    let (wide, base2, pairs2) = (rings2.cap(i), rings2.base(i), rings2.pair_base(i));
                    let old = |e: usize| (next[i] + cap - len[i] + e) % cap;
                    let kept: Vec<usize> = (0..len[i])
                        .map(old)
                        .filter(|&slot| held.contains(&step[base + slot]))
                        .collect();
                    for (e, &from) in kept.iter().enumerate() {
                        step2[base2 + e] = step[base + from];
                        h2[base2 + e] = h[base + from];
                        for (later, &to) in kept.iter().enumerate().skip(e + 1) {
                            pair2[pairs2 + e * wide + later] = pair[pairs + from * cap + to];
                        }
                    }
                    len2[i] = kept.len();
                    next2[i] = kept.len() % wide;
                }
            }
            _ => unreachable!("the same form"),
        }
        *self = grown;
        true
    }

    /// Keep the row R_θ(t, ·) (`now[s mod W]` = R_θ(t, s)) for the dense pass.
    pub(crate) fn store_row(&mut self, t: usize, w: usize, now: &[f64]) {
        if let Events::Dense { rth, cum, .. } = self {
            for l in 1..=w.min(t) {
                let s = t - l;
                let at = (s % w) * w + l - 1;
                rth[at] = now[s % w];
                cum[at] = if l == 1 { 0.0 } else { cum[at - 1] } + now[s % w];
            }
        }
    }

    /// Record ĥ_t of every path (zero: no event); `now[s mod W]` = R_θ(t, s).
    pub(crate) fn record(&mut self, t: usize, w: usize, hs: &[f64], now: &[f64]) {
        match self {
            Events::Dense { h, .. } => {
                for (g, group) in hs.chunks(LANES).enumerate() {
                    let at = (g * w + t % w) * LANES;
                    h[at..at + group.len()].copy_from_slice(group);
                }
            }
            Events::Sparse {
                rings,
                step,
                h,
                pair,
                len,
                next,
            } => {
                let (far_from, far_paths) = far_split(hs.len());
                for (i, &x) in hs.iter().enumerate().filter(|(_, x)| **x != 0.0) {
                    let (cap, base, pairs) = (rings.cap(i), rings.base(i), rings.pair_base(i));
                    let slot = next[i];
                    // R_θ(t, k) for the path's events k still in the window (beyond the prefix
                    // that runs the far lags: in the near lags, all the pass reads)
                    let oldest = if i < far_paths { w } else { far_from.min(w) };
                    for e in 0..len[i].min(cap - 1) {
                        let old = (slot + cap - 1 - e) % cap;
                        let k = step[base + old];
                        if k + oldest <= t {
                            break;
                        }
                        // single precision: see SparsePass
                        pair[pairs + old * cap + slot] = now[k % w] as f32;
                    }
                    step[base + slot] = t;
                    h[base + slot] = x;
                    next[i] = (slot + 1) % cap;
                    len[i] = (len[i] + 1).min(cap);
                }
            }
        }
    }

    /// Σ_paths ω_t·b_{t−m}, m < min(W, t + 1), into `acc` (zeroed here);
    /// `now[s mod W]` = R_θ(t, s).
    ///
    /// With `reuse_far`, a dense pass over a full window whose far lags
    /// (m ≥ FAR_LAGS) were run at an earlier step runs the near lags only
    /// and takes the far ones from that step (R_g(t, t − m) ≈ R_g(t', t' − m):
    /// the far lags change slowly once the window is full); returns `None`.
    /// A pass that runs its far lags over a full window returns their
    /// [`FarChange`] against the oldest of the last FAR_RUNS runs kept, or
    /// `None` when there were none.
    #[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
    pub(crate) fn adjoints(
        &mut self,
        t: usize,
        w: usize,
        now: &[f64],
        eta: f64,
        omega: &[f64],
        acc: &mut [f64],
        reuse_far: bool,
    ) -> Option<FarChange> {
        let span = w.min(t + 1);
        acc[..span].fill(0.0);
        match self {
            Events::Dense {
                h,
                rth,
                cum,
                far,
                terms,
                adjoints,
            } => {
                let (far_from, far_paths) = far_split(omega.len());
                let full = span == w && far_from < span;
                let reuse = reuse_far && full && !far.is_empty();
                let ran = if reuse { far_from } else { span };
                terms.build(t, ran, w, rth, cum);
                let mut pass = DensePass {
                    t,
                    w,
                    eta,
                    h,
                    terms,
                    far_from: DENSE_PREFIX_LAGS,
                    far_paths,
                    adjoints,
                };
                run(&mut pass, now, omega, acc);
                if let Some((_, last)) = far.back().filter(|_| reuse) {
                    acc[far_from..span].copy_from_slice(&last[far_from..span]);
                    return None;
                }
                if !full {
                    return None;
                }
                let change = far.front().zip(far.back()).map(|((first, kept), (last, _))| FarChange {
                    change: block_change(&acc[..span], &kept[..span], far_from),
                    age: t - first,
                    since_last: t - last,
                });
                let mut run = if far.len() == FAR_RUNS {
                    far.pop_front().map(|(_, v)| v).unwrap_or_default()
                } else {
                    vec![0.0; w]
                };
                run[far_from..span].copy_from_slice(&acc[far_from..span]);
                far.push_back((t, run));
                change
            }
            Events::Sparse {
                rings,
                step,
                h,
                pair,
                len,
                next,
            } => {
                let mut pass = SparsePass {
                    t,
                    w,
                    eta,
                    rings: *rings,
                    step,
                    h,
                    pair,
                    len,
                    next,
                };
                run(&mut pass, now, omega, acc);
                None
            }
        }
    }
}

/// Σ_B |Σ_{m ∈ B} (new_m − kept_m)| over blocks of lags from `from`,
/// [l, l + max(1, ⌊α·l⌋)) with α = LAG_ALPHA, as the memories read R_g's far
/// lags (block sums, docs/theory.md §3.3): the change a reuse makes to what
/// the dynamics see, without the lag-to-lag spread of the paths' estimate,
/// which the block sums average out as the memories do.
fn block_change(new: &[f64], kept: &[f64], from: usize) -> f64 {
    let mut lo = from;
    let mut total = 0.0;
    while lo < new.len() {
        let hi = (2 * lo).min(new.len());
        let moved: f64 = new[lo..hi].iter().zip(&kept[lo..hi]).map(|(x, y)| x - y).sum();
        total += moved.abs();
        lo = hi;
    }
    total
}

/// One sparse pass: every selected path's events, newest first, each
/// adjoint b_k = −η·ĥ_k·(R_θ(t, k) + Σ_{later j} R_θ(j, k)·b_j); the later
/// events' slots follow k's in the ring, so the sum is a dot product over
/// at most two contiguous stretches of the pair table and of the adjoints
/// kept by slot.
///
/// The pair table holds R_θ in single precision: it is the pass's memory
/// traffic (N·cap² entries, each read at every selected step of its path
/// while both events are in the window, about q·W times), and rounding
/// R_θ to 2⁻²⁴ of itself moves each adjoint by a like relative amount
/// (the recursion is linear in R_θ, its terms bounded by the truncation
/// criterion's relaxation), four orders below the paths' Monte Carlo error
/// of R_g (measured at T = 10⁴, q = 0.1: est_err2 ≈ 0.23 moved by 1.5e-11).
struct SparsePass<'a> {
    t: usize,
    w: usize,
    eta: f64,
    rings: Rings,
    step: &'a [usize],
    h: &'a [f64],
    pair: &'a [f32],
    len: &'a [usize],
    next: &'a [usize],
}

impl Pass for SparsePass<'_> {
    #[inline(always)]
    #[allow(clippy::inline_always)]
    fn run(&mut self, now: &[f64], omega: &[f64], acc: &mut [f64]) {
        let (t, w) = (self.t, self.w);
        let (far_from, far_paths) = far_split(omega.len());
        let mut adjoint = vec![0.0; self.rings.cap];
        for (i, &wt) in omega.iter().enumerate().filter(|(_, x)| **x != 0.0) {
            acc[0] += wt;
            let (cap, base, pairs) = (self.rings.cap(i), self.rings.base(i), self.rings.pair_base(i));
            let oldest = if i < far_paths { w } else { far_from.min(w) };
            for e in 0..self.len[i] {
                let slot = (self.next[i] + cap - 1 - e) % cap;
                let k = self.step[base + slot];
                if k + oldest <= t {
                    break;
                }
                let row = &self.pair[pairs + slot * cap..pairs + (slot + 1) * cap];
                // the e later events at slots slot + 1, …, wrapping past cap
                let lo = slot + 1;
                let first = e.min(cap - lo);
                let later = dot_lanes(&row[lo..lo + first], &adjoint[lo..lo + first])
                    + dot_lanes(&row[..e - first], &adjoint[..e - first]);
                let bk = -self.eta * self.h[base + slot] * (now[k % w] + later);
                acc[t - k] += wt * bk;
                adjoint[slot] = bk;
            }
        }
        let span = acc.len();
        if far_paths < omega.len() && far_from < span {
            let scale = omega.len() as f64 / far_paths as f64;
            acc[far_from..].iter_mut().for_each(|x| *x *= scale);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R_θ(j, k) of a stationary, slowly decaying, oscillating response.
    fn kernel(lag: usize) -> f64 {
        let l = lag as f64;
        if lag == 0 {
            1.0
        } else {
            (-0.02 * l).exp() * (1.0 + 0.5 * (0.05 * l).cos())
        }
    }

    /// ĥ of path i at step k: pseudo-random in [0, 0.25), zero where not selected.
    fn curvature(i: usize, k: usize, q: f64) -> f64 {
        let x = ((i * 7919 + k * 104_729) % 1009) as f64 / 1009.0;
        let y = ((i * 31 + k * 17) % 97) as f64 / 97.0;
        if y < q { 0.25 * x } else { 0.0 }
    }

    /// The pass over steps 0..t by the definition: b_t = 1,
    /// b_k = −η·ĥ_k·Σ_{k<j≤t} R_θ(j,k)·b_j.
    fn naive(n: usize, t: usize, w: usize, q: f64, eta: f64, omega: &[f64]) -> Vec<f64> {
        let span = w.min(t + 1);
        let mut acc = vec![0.0; span];
        for (i, &wt) in omega.iter().enumerate().take(n) {
            let mut b = vec![0.0; span];
            b[0] = 1.0;
            for m in 1..span {
                let s: f64 = (0..m).map(|mp| kernel(m - mp) * b[mp]).sum();
                b[m] = -eta * curvature(i, t - m, q) * s;
            }
            for (a, bm) in acc.iter_mut().zip(&b) {
                *a += wt * bm;
            }
        }
        acc
    }

    /// The events' pass after steps 0..t recorded as the solver records them.
    fn pass(n: usize, t: usize, w: usize, q: f64, eta: f64, omega: &[f64]) -> Vec<f64> {
        pass_in(Events::new(n, w, q, 0), n, t, w, q, eta, omega)
    }

    /// [`pass`] in the given form of the events.
    fn pass_in(mut events: Events, n: usize, t: usize, w: usize, q: f64, eta: f64, omega: &[f64]) -> Vec<f64> {
        let now = |t: usize| -> Vec<f64> {
            let mut v = vec![0.0; w];
            for s in t.saturating_sub(w - 1)..=t {
                v[s % w] = kernel(t - s);
            }
            v
        };
        for k in 0..t {
            let h: Vec<f64> = (0..n).map(|i| curvature(i, k, q)).collect();
            events.record(k, w, &h, &now(k));
            events.store_row(k + 1, w, &now(k + 1));
        }
        let mut acc = vec![0.0; w.min(t + 1)];
        events.adjoints(t, w, &now(t), eta, omega, &mut acc, false);
        acc
    }

    #[test]
    fn a_pass_reusing_the_far_lags_takes_them_from_the_last_run_and_the_next_run_reports_their_change() {
        let (n, w, q, eta) = (512, 200, 1.0, 0.3);
        let omega: Vec<f64> = (0..n).map(|i| 0.05 + 0.2 * curvature(i, 9000, 1.0)).collect();
        let now = |t: usize| -> Vec<f64> {
            let mut v = vec![0.0; w];
            for s in t.saturating_sub(w - 1)..=t {
                v[s % w] = kernel(t - s);
            }
            v
        };
        let mut events = Events::new(n, w, q, 0);
        let mut runs = Vec::new();
        for t in 0..=420 {
            let fresh = [400, 410, 420].contains(&t);
            if t >= 400 {
                let mut acc = vec![0.0; w];
                let change = events.adjoints(t, w, &now(t), eta, &omega, &mut acc, !fresh);
                runs.push((t, acc, change));
            }
            let h: Vec<f64> = (0..n).map(|i| curvature(i, t, q)).collect();
            events.record(t, w, &h, &now(t));
            events.store_row(t + 1, w, &now(t + 1));
        }
        let (far_from, _) = far_split(n);
        let at = |t: usize| &runs[t - 400];
        // the first run has nothing to compare with; reusing passes report nothing
        assert!(at(400).2.is_none() && at(405).2.is_none());
        // a reusing pass: its near lags are the pass's own, its far lags the last run's
        let exact = naive(n, 405, w, q, eta, &omega);
        assert!(Events::new(n, w, q, 0).is_dense());
        assert!(worst(&at(405).1[..DENSE_PREFIX_LAGS], &exact[..DENSE_PREFIX_LAGS]) < 1e-4);
        assert_ne!(
            at(405).1[DENSE_PREFIX_LAGS..far_from],
            at(400).1[DENSE_PREFIX_LAGS..far_from]
        );
        assert_eq!(at(405).1[far_from..], at(400).1[far_from..]);
        assert!(
            worst(&at(405).1[far_from..], &exact[far_from..]) > 1e-3,
            "the far lags moved since step 400"
        );
        // the next run replaces them and reports their change over the 10 steps
        let first = at(410).2.expect("a run after a run");
        assert_eq!((first.age, first.since_last), (10, 10));
        assert_eq!(first.change, block_change(&at(410).1, &at(400).1, far_from));
        assert!(first.change > 0.0);
        // a later run measures against the oldest run kept
        let second = at(420).2.expect("a run after two runs");
        assert_eq!((second.age, second.since_last), (20, 10));
        assert_eq!(second.change, block_change(&at(420).1, &at(400).1, far_from));
    }

    fn worst(a: &[f64], b: &[f64]) -> f64 {
        let scale = b.iter().fold(0.0, |m: f64, x| m.max(x.abs()));
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale
    }

    #[test]
    fn a_short_dense_window_is_the_recursion_and_the_sparse_events_are_to_single_precision() {
        let omega: Vec<f64> = (0..64).map(|i| 0.1 + 0.02 * (i % 11) as f64).collect();
        let dense = pass_in(Events::dense_form(64, 16), 64, 40, 16, 1.0, 0.3, &omega);
        assert!(worst(&dense, &naive(64, 40, 16, 1.0, 0.3, &omega)) < 1e-13);
        // the pair table holds R_θ to 2⁻²⁴ of itself (SparsePass)
        let omega = &omega[..11];
        for (t, w, q) in [(40, 16, 1.0), (400, 150, 0.05)] {
            let sparse = pass_in(Events::sparse_form(11, w, q), 11, t, w, q, 0.3, omega);
            let err = worst(&sparse, &naive(11, t, w, q, 0.3, omega));
            assert!(err < 1e-6, "W = {w}, q = {q}: {err:e}");
        }
    }

    /// The cost model counts the dense pass's far-lag reuse from t = 2W on:
    /// at q = 0.3, W = 560 (20 atoms) the dense pass over T = 10⁴ steps
    /// (measured 12.3 s against the sparse pass's 38.8 s, session 44; at
    /// W ≈ 400, T = 2000–3000: 1.4–2.2 s against 3.2–5.0 s), the
    /// sparse one when the horizon ends before W (no reuse); at q = 0.1, W = 850 the
    /// sparse pass whatever the horizon (measured 10.9 s against 18.8 s).
    #[test]
    fn the_dense_pass_is_chosen_where_its_far_reuse_makes_it_cheaper() {
        assert!(dense(1024, 560, 0.3, 10_000) && dense(1024, 430, 0.3, 2000) && dense(1024, 404, 0.3, 3000));
        assert!(!dense(1024, 560, 0.3, 500));
        assert!(!dense(1024, 850, 0.1, 10_000) && !dense(1024, 850, 0.1, 1000));
        assert!(dense(1024, 440, 1.0, 10_000) && dense(1024, 440, 1.0, 500));
        assert_eq!(
            bytes(1024, 560, 0.3, 10_000),
            8.0 * (560.0 * 1024.0 + 2.0 * 560.0 * 560.0)
        );
    }

    /// Runs are measured against the oldest of the last FAR_RUNS kept.
    #[test]
    fn a_run_measures_the_far_lags_change_since_at_most_far_runs_runs_back() {
        let (n, w, q, eta) = (64, 40, 1.0, 0.3);
        let omega: Vec<f64> = (0..n).map(|i| 0.05 + 0.2 * curvature(i, 100, q)).collect();
        let mut events = Events::new(n, w, q, 0);
        let mut ages = Vec::new();
        for t in 0..=200 {
            if t >= w {
                let now: Vec<f64> = (0..w).map(|s| 0.5f64.powi(((t + w - s % w) % w) as i32)).collect();
                let mut acc = vec![0.0; w];
                let reuse = !(t - w).is_multiple_of(4);
                if let Some(c) = events.adjoints(t, w, &now, eta, &omega, &mut acc, reuse) {
                    ages.push((c.age, c.since_last));
                }
            }
            let h: Vec<f64> = (0..n).map(|i| curvature(i, t, q)).collect();
            let row: Vec<f64> = (0..w).map(|l| 0.9f64.powi(l as i32)).collect();
            events.record(t, w, &h, &row);
            events.store_row(t + 1, w, &row);
        }
        // runs every 4 steps from t = W: 1, 2, …, FAR_RUNS runs back, then FAR_RUNS
        let want: Vec<(usize, usize)> = (1..=(200 - w) / 4).map(|k| (4 * k.min(FAR_RUNS), 4)).collect();
        assert_eq!(ages, want);
    }

    #[test]
    fn the_blocked_dense_pass_stays_close_to_the_recursion_over_a_long_window() {
        let omega: Vec<f64> = (0..24).map(|i| 0.05 + 0.01 * i as f64).collect();
        let (exact, blocked) = (
            naive(24, 700, 300, 1.0, 0.3, &omega),
            pass(24, 700, 300, 1.0, 0.3, &omega),
        );
        // measured 2.9e-5 of the largest entry
        let err = worst(&blocked, &exact);
        assert!(err < 1e-4, "{err:e}");
    }

    #[test]
    fn the_far_lags_from_a_prefix_of_the_paths_estimate_the_mean_over_all() {
        let n = 2048;
        let omega: Vec<f64> = (0..n).map(|i| 0.05 + 0.2 * curvature(i, 5000, 1.0)).collect();
        let (exact, split) = (
            naive(n, 400, 200, 1.0, 0.3, &omega),
            pass(n, 400, 200, 1.0, 0.3, &omega),
        );
        assert_eq!(far_split(n), (FAR_LAGS, n / FAR_SHARE));
        assert!(Events::new(n, 200, 1.0, 0).is_dense());
        // every path below DENSE_PREFIX_LAGS: only the blocking's error (as in the test above)
        let near = worst(&split[..DENSE_PREFIX_LAGS], &exact[..DENSE_PREFIX_LAGS]);
        assert!(near < 1e-4, "{near:e}");
        // beyond, a prefix of an eighth, rescaled to the mean over all paths
        let far = worst(&split[DENSE_PREFIX_LAGS..], &exact[DENSE_PREFIX_LAGS..]);
        // measured 1.9e-2 of the largest far entry with the prefix from lag 32 (without the rescaling: 0.87)
        assert!(far < 0.05, "{far:e}");
    }

    #[test]
    fn the_sparse_events_take_the_far_lags_from_the_same_prefix() {
        let (n, t, w, q) = (2048, 400, 200, 0.1);
        assert!(!Events::new(n, w, q, 0).is_dense());
        let omega: Vec<f64> = (0..n).map(|i| curvature(i, 5000, 1.0)).collect();
        let (exact, split) = (naive(n, t, w, q, 0.3, &omega), pass(n, t, w, q, 0.3, &omega));
        let near = worst(&split[..FAR_LAGS], &exact[..FAR_LAGS]);
        assert!(near < 1e-6, "{near:e}");
        // beyond, the prefix's sum scaled to all paths: an estimate of the whole sum
        let (_, prefix) = far_split(n);
        let scale = n as f64 / prefix as f64;
        let from_prefix: Vec<f64> = naive(prefix, t, w, q, 0.3, &omega[..prefix])
            .iter()
            .map(|x| scale * x)
            .collect();
        let far = worst(&split[FAR_LAGS..], &from_prefix[FAR_LAGS..]);
        assert!(far < 1e-6, "{far:e}");
        assert!(
            worst(&split[FAR_LAGS..], &exact[FAR_LAGS..]) > 1e-3,
            "the prefix is not all paths"
        );
    }

    /// The pass after steps 0..t recorded at window `w` up to step `at`,
    /// widened to `wider` there, and recorded at `wider` after.
    fn widened_pass(
        form: Events,
        (n, t, w, q, eta): (usize, usize, usize, f64, f64),
        at: usize,
        wider: usize,
    ) -> Vec<f64> {
        let now = |t: usize, w: usize| -> Vec<f64> {
            let mut v = vec![0.0; w];
            for s in t.saturating_sub(w - 1)..=t {
                v[s % w] = kernel(t - s);
            }
            v
        };
        let mut events = form;
        let omega: Vec<f64> = (0..n).map(|i| 0.1 + 0.02 * (i % 11) as f64).collect();
        for k in 0..t {
            let window = if k <= at { w } else { wider };
            let h: Vec<f64> = (0..n).map(|i| curvature(i, k, q)).collect();
            events.record(k, window, &h, &now(k, window));
            if k == at {
                assert!(events.widen(n, w, wider, k, (q, 0)), "the same form at {wider}");
            }
            let window = if k < at { w } else { wider };
            events.store_row(k + 1, window, &now(k + 1, window));
        }
        let mut acc = vec![0.0; wider.min(t + 1)];
        events.adjoints(t, wider, &now(t, wider), eta, &omega, &mut acc, false);
        acc
    }

    #[test]
    fn paths_past_the_prefix_keep_rings_of_the_near_lags_and_widen_as_the_prefix_does() {
        let (n, q, w, wider) = (300, 0.1, 60, 150);
        let (far_from, prefix) = far_split(n);
        let rings = Rings::new(n, w, q);
        assert_eq!(
            (prefix, rings.cap(0), rings.cap(prefix)),
            (128, capacity(w, q), capacity(far_from, q))
        );
        assert!(rings.cap(prefix) < rings.cap(0));
        assert_eq!(rings.base(n), prefix * rings.cap(0) + (n - prefix) * rings.cap(prefix));
        // the pass against the recursion: every lag for the prefix, the near ones for all
        let omega: Vec<f64> = (0..n).map(|i| 0.1 + 0.02 * (i % 11) as f64).collect();
        let t = 3 * wider;
        let got = pass(n, t, wider, q, 0.3, &omega);
        let exact = naive(n, t, wider, q, 0.3, &omega);
        assert!(worst(&got[..FAR_LAGS], &exact[..FAR_LAGS]) < 1e-6);
        // widened before any lag is dropped: the same bits as the wider window throughout
        let form = |w: usize| Events::new(n, w, q, 0);
        assert!(!form(w).is_dense() && !form(wider).is_dense());
        let grown = widened_pass(form(w), (n, t, w, q, 0.3), w - 1, wider);
        assert_eq!(grown, pass_in(form(wider), n, t, wider, q, 0.3, &omega));
    }

    #[test]
    fn events_widened_before_any_lag_is_dropped_are_the_wider_windows_and_after_lose_the_older_steps() {
        let eta = 0.3;
        for (n, q, w, wider) in [(24, 1.0, 60, 150), (11, 0.3, 16, 40)] {
            let omega: Vec<f64> = (0..n).map(|i| 0.1 + 0.02 * (i % 11) as f64).collect();
            let dense = Events::new(n, w, q, 0).is_dense();
            assert_eq!(dense, Events::new(n, wider, q, 0).is_dense());
            let form = |w: usize| Events::new(n, w, q, 0);
            let t = 3 * wider;
            // at t = W − 1 nothing is dropped yet: the same bits as the wider window throughout
            let grown = widened_pass(form(w), (n, t, w, q, eta), w - 1, wider);
            let fresh = pass_in(form(wider), n, t, wider, q, eta, &omega);
            assert_eq!(grown, fresh, "dense: {dense}");
            // later the steps before at + 1 − W are lost: the pass as if they had no events
            let (at, tt) = (w + 7, wider + 2);
            let late = widened_pass(form(w), (n, tt, w, q, eta), at, wider);
            let cut = at + 1 - w;
            let span = wider.min(tt + 1);
            let mut want = vec![0.0; span];
            for (i, &wt) in omega.iter().enumerate() {
                let mut b = vec![0.0; span];
                b[0] = 1.0;
                for m in 1..span {
                    let k = tt - m;
                    let hk = if k < cut { 0.0 } else { curvature(i, k, q) };
                    let s: f64 = (0..m).map(|mp| kernel(m - mp) * b[mp]).sum();
                    b[m] = -eta * hk * s;
                }
                want.iter_mut().zip(&b).for_each(|(a, bm)| *a += wt * bm);
            }
            let err = worst(&late, &want);
            assert!(err < 1e-4, "dense: {dense}: {err:e}");
            assert!(
                late[tt - cut + 1..].iter().all(|x| *x == 0.0),
                "no lag beyond the steps held"
            );
        }
    }
}
