//! The dense reverse pass (the module above, `reverse_mode`): its lag
//! terms — single lags near k and near the terminal, blocks of lags between
//! acting on the adjoints' prefix sums — and the pass over LANES paths at a
//! time.
//!
//! # References
//! - Griewank, Walther (2008), *Evaluating Derivatives*, 2nd ed., ch. 3
//!   (the reverse mode).

use super::pass::Pass;

/// Paths of one dense pass. Its steps m are a serial recursion (b_{t−m}
/// needs b_{t−m+1}), so its time is the recursion's latency: sixteen paths
/// side by side (four AVX2 registers per accumulator) give the adds of
/// independent lanes to fill it — a T = 10⁴, q = 1 Huber solve took 5.32 s
/// at 8 lanes and 4.98 s at 16 (session 42, alternating binaries).
pub(super) const LANES: usize = 16;

/// Lags j − k the dense pass keeps exactly.
pub(super) const NEAR_LAGS: usize = 8;

/// Steps t − j before the terminal the dense pass keeps exactly.
pub(super) const NEAR_TERMINAL: usize = 8;

/// Relative length of the dense pass's lag blocks: [l, l + max(1, ⌊α·l⌋)).
pub(super) const LAG_ALPHA: f64 = 0.25;

/// The dense pass's terms: for m = 1..span (k = t − m), Σ_{k<j≤t} R_θ(j,k)b_j
/// ≈ Σ c·b[x] over the single lags near k and near the terminal
/// (`singles[single_at[m]..single_at[m + 1]]`, c = R_θ(j,k), x = t − j) plus
/// Σ c·(pre[x1] − pre[x0]) over the blocks of lags between them
/// (`blocks[block_at[m]..block_at[m + 1]]`, c the block's mean of
/// R_θ(k + l, k)), with pre[x] = Σ_{m' < x} b_{t−m'}. Which lags and blocks
/// a step m has depends on m alone: the layout (`lags`, `bounds`) is laid
/// out once, for the largest span asked for, and a build rewrites only the
/// coefficients c of the steps m < span at step t (session 44: the layout's
/// float arithmetic per block was a serial chain in every build).
#[derive(Default)]
pub(crate) struct LagTerms {
    single_at: Vec<usize>,
    singles: Vec<(f64, u32)>,
    /// Each single's lag l (its c is R_θ(k + l, k)).
    lags: Vec<u32>,
    block_at: Vec<usize>,
    blocks: Vec<(f64, u32, u32)>,
    /// Each block's lags [lo, hi).
    bounds: Vec<(u32, u32)>,
    /// Steps m < span the last build wrote.
    span: usize,
}

impl LagTerms {
    /// The terms of lags m = 1..span at step t.
    pub(super) fn build(&mut self, t: usize, span: usize, w: usize, rth: &[f64], cum: &[f64]) {
        self.lay_out(span);
        self.span = span;
        for m in 1..span {
            let row = (t - m) % w * w;
            let (s0, s1) = (self.single_at[m], self.single_at[m + 1]);
            for (single, &l) in self.singles[s0..s1].iter_mut().zip(&self.lags[s0..s1]) {
                single.0 = rth[row + l as usize - 1];
            }
            let (b0, b1) = (self.block_at[m], self.block_at[m + 1]);
            for (block, &(lo, hi)) in self.blocks[b0..b1].iter_mut().zip(&self.bounds[b0..b1]) {
                let (lo, hi) = (lo as usize, hi as usize);
                block.0 = (cum[row + hi - 2] - cum[row + lo - 2]) / (hi - lo) as f64;
            }
        }
    }

    /// The layout of the steps m < span (from those laid out already on).
    fn lay_out(&mut self, span: usize) {
        if self.single_at.is_empty() {
            self.single_at.extend([0, 0]);
            self.block_at.extend([0, 0]);
        }
        for m in self.single_at.len() - 1..span {
            // lag l is step j = k + l, position m − l of the pass
            let mut single = |l: usize| {
                self.singles.push((0.0, (m - l) as u32));
                self.lags.push(l as u32);
            };
            let middle_end = m.saturating_sub(NEAR_TERMINAL); // lags ≤ middle_end are not near the terminal
            (1..=m.min(NEAR_LAGS)).for_each(&mut single);
            ((NEAR_LAGS + 1).max(middle_end + 1)..=m).for_each(&mut single);
            let mut lo = NEAR_LAGS + 1;
            while lo <= middle_end {
                // |block| ≤ α·(its distance to k) and ≤ α·(its distance to the terminal)
                let to_k = LAG_ALPHA * lo as f64;
                let to_terminal = LAG_ALPHA * (m + 1 - lo) as f64 / (1.0 + LAG_ALPHA);
                let hi = (lo + (to_k.min(to_terminal) as usize).max(1)).min(middle_end + 1);
                self.blocks.push((0.0, (m + 1 - hi) as u32, (m + 1 - lo) as u32));
                self.bounds.push((lo as u32, hi as u32));
                lo = hi;
            }
            self.single_at.push(self.singles.len());
            self.block_at.push(self.blocks.len());
        }
    }

    /// Lags + 1 the terms cover.
    fn span(&self) -> usize {
        self.span
    }
}

/// The dense pass's adjoints of a group of LANES paths, kept between steps:
/// b[x] = b_{t−x} and pre[x] = Σ_{m' < x} b_{t−m'} per lane (pre[0] = 0 is
/// never written; every other entry is written before it is read).
#[derive(Default)]
pub(crate) struct Adjoints {
    b: Vec<[f64; LANES]>,
    pre: Vec<[f64; LANES]>,
}

/// One dense pass: the [`LagTerms`] applied to every path's adjoints.
pub(super) struct DensePass<'a> {
    pub(super) t: usize,
    pub(super) w: usize,
    pub(super) eta: f64,
    pub(super) h: &'a [f64],
    pub(super) terms: &'a LagTerms,
    /// Lags from which only the first `far_paths` paths run the pass.
    pub(super) far_from: usize,
    pub(super) far_paths: usize,
    pub(super) adjoints: &'a mut Adjoints,
}

impl Pass for DensePass<'_> {
    #[inline(always)]
    #[allow(clippy::needless_range_loop, clippy::inline_always)]
    fn run(&mut self, _now: &[f64], omega: &[f64], acc: &mut [f64]) {
        let (t, w, eta, h, terms) = (self.t, self.w, self.eta, self.h, self.terms);
        let (n, span) = (omega.len(), terms.span());
        let near_span = span.min(self.far_from);
        let Adjoints { b, pre } = &mut *self.adjoints;
        b.resize(span.max(b.len()), [0.0; LANES]);
        pre.resize((span + 1).max(pre.len()), [0.0; LANES]);
        for i0 in (0..n).step_by(LANES) {
            let lanes = LANES.min(n - i0);
            let mut wt = [0.0; LANES];
            wt[..lanes].copy_from_slice(&omega[i0..i0 + lanes]);
            if wt.iter().all(|x| *x == 0.0) {
                continue;
            }
            acc[0] += wt.iter().sum::<f64>();
            b[0] = [1.0; LANES];
            pre[1] = [1.0; LANES];
            let last = if i0 < self.far_paths { span } else { near_span };
            for m in 1..last {
                let k = t - m;
                // two accumulators: two independent chains of additions
                let (mut sum, mut odd) = ([0.0; LANES], [0.0; LANES]);
                let singles = terms.singles[terms.single_at[m]..terms.single_at[m + 1]].chunks_exact(2);
                if let [(c, x)] = *singles.remainder() {
                    let bx = &b[x as usize];
                    for l in 0..LANES {
                        odd[l] = c * bx[l];
                    }
                }
                for pair in singles {
                    let [(c, x), (d, y)] = [pair[0], pair[1]];
                    let (bx, by) = (&b[x as usize], &b[y as usize]);
                    for l in 0..LANES {
                        sum[l] += c * bx[l];
                        odd[l] += d * by[l];
                    }
                }
                let blocks = terms.blocks[terms.block_at[m]..terms.block_at[m + 1]].chunks_exact(2);
                if let [(c, x0, x1)] = *blocks.remainder() {
                    let (hi, lo) = (&pre[x1 as usize], &pre[x0 as usize]);
                    for l in 0..LANES {
                        sum[l] += c * (hi[l] - lo[l]);
                    }
                }
                for pair in blocks {
                    let [(c, x0, x1), (d, y0, y1)] = [pair[0], pair[1]];
                    let (hi, lo) = (&pre[x1 as usize], &pre[x0 as usize]);
                    let (hj, lj) = (&pre[y1 as usize], &pre[y0 as usize]);
                    for l in 0..LANES {
                        sum[l] += c * (hi[l] - lo[l]);
                        odd[l] += d * (hj[l] - lj[l]);
                    }
                }
                for l in 0..LANES {
                    sum[l] += odd[l];
                }
                // every lane (ĥ and ω are zero past the last path)
                let at = (i0 / LANES * w + k % w) * LANES;
                let hk = &h[at..at + LANES];
                let (mut next, mut bm) = (pre[m], [0.0; LANES]);
                for l in 0..LANES {
                    bm[l] = -eta * hk[l] * sum[l];
                    next[l] += bm[l];
                }
                let total: f64 = (0..LANES).map(|l| wt[l] * bm[l]).sum();
                b[m] = bm;
                pre[m + 1] = next;
                acc[m] += total;
            }
        }
        if self.far_paths < n && near_span < span {
            let scale = n as f64 / self.far_paths as f64;
            acc[near_span..span].iter_mut().for_each(|x| *x *= scale);
        }
    }
}
