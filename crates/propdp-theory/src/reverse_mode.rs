//! The responses R_g(t, t − m) = a·E[ĥ_t·∂r_t/∂w_{t−m}], m < W, of the
//! long-horizon state evolution by reverse mode over each path's recent
//! history: with b_t = 1 and, going back, b_k = −η·ĥ_k·Σ_{k<j≤t} R_θ(j,k)·b_j,
//! R_g(t,k) = a·E[ω_t b_k] where ω_t is the terminal weight (ĥ_t, or its
//! Rao–Blackwellised q·ℓ''_t·1{|ℓ'_t| < C}). Only steps with ĥ_k ≠ 0 (the
//! path's events: selected and unclipped) carry a non-zero adjoint, so at
//! small q each path's pass costs (its events in the window)², a handful,
//! with R_θ between its own events kept beside them (copied from the current
//! row R_θ(t,·) when an event is recorded: the pass reads only the path's own
//! memory and that row, never the W×W triangle); at q near 1 every step is an
//! event and the pass runs densely over the window, LANES paths at a time
//! with their adjoints side by side (the inner loop vectorises over the
//! lanes).
//!
//! # References
//! - Griewank, Walther (2008), *Evaluating Derivatives*, 2nd ed., ch. 3
//!   (the reverse mode).

/// Paths of one dense pass.
const LANES: usize = 8;

/// Expected events per window from which the dense pass is used.
const DENSE_EVENTS: f64 = 16.0;

/// Each path's recent events.
pub(crate) enum Events {
    /// ĥ of every path at the last W steps, h[(k mod W)·N + i], and the
    /// response triangle R_θ(k + l, k) at rth[(k mod W)·W + l − 1], l = 1..=W.
    Dense { h: Vec<f64>, rth: Vec<f64> },
    /// A ring of each path's last `cap` events (step, ĥ), and for every
    /// pair of them R_θ(later, earlier) at pair[(i·cap + earlier)·cap + later]
    /// (an earlier event's responses side by side, as the pass reads them).
    Sparse {
        cap: usize,
        step: Vec<usize>,
        h: Vec<f64>,
        pair: Vec<f64>,
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

/// Bytes the events of `n` paths take at window `w` and sample rate `q`.
pub(crate) fn bytes(n: usize, w: usize, q: f64) -> f64 {
    let (n, wf) = (n as f64, w as f64);
    8.0 * if q * wf >= DENSE_EVENTS {
        wf * n + wf * wf
    } else {
        let cap = capacity(w, q) as f64;
        n * cap * (cap + 2.0) + 2.0 * n
    }
}

impl Events {
    /// Storage for `n` paths, window `w`, sample rate `q` (dense from
    /// DENSE_EVENTS expected events per window).
    pub(crate) fn new(n: usize, w: usize, q: f64) -> Self {
        let mean = q * w as f64;
        if mean >= DENSE_EVENTS {
            Events::Dense {
                h: vec![0.0; w * n],
                rth: vec![0.0; w * w],
            }
        } else {
            let cap = capacity(w, q);
            Events::Sparse {
                cap,
                step: vec![0; n * cap],
                h: vec![0.0; n * cap],
                pair: vec![0.0; n * cap * cap],
                len: vec![0; n],
                next: vec![0; n],
            }
        }
    }

    /// Keep the row R_θ(t, ·) (`now[s mod W]` = R_θ(t, s)) for the dense pass.
    pub(crate) fn store_row(&mut self, t: usize, w: usize, now: &[f64]) {
        if let Events::Dense { rth, .. } = self {
            for l in 1..=w.min(t) {
                let s = t - l;
                rth[(s % w) * w + l - 1] = now[s % w];
            }
        }
    }

    /// Record ĥ_t of every path (zero: no event); `now[s mod W]` = R_θ(t, s).
    pub(crate) fn record(&mut self, t: usize, w: usize, hs: &[f64], now: &[f64]) {
        match self {
            Events::Dense { h, .. } => {
                let n = hs.len();
                h[(t % w) * n..(t % w + 1) * n].copy_from_slice(hs);
            }
            Events::Sparse {
                cap,
                step,
                h,
                pair,
                len,
                next,
            } => {
                let cap = *cap;
                for (i, &x) in hs.iter().enumerate().filter(|(_, x)| **x != 0.0) {
                    let slot = next[i];
                    // R_θ(t, k) for the path's events k still in the window
                    for e in 0..len[i].min(cap - 1) {
                        let old = (slot + cap - 1 - e) % cap;
                        let k = step[i * cap + old];
                        if k + w <= t {
                            break;
                        }
                        pair[(i * cap + old) * cap + slot] = now[k % w];
                    }
                    step[i * cap + slot] = t;
                    h[i * cap + slot] = x;
                    next[i] = (slot + 1) % cap;
                    len[i] = (len[i] + 1).min(cap);
                }
            }
        }
    }

    /// Σ_paths ω_t·b_{t−m}, m < min(W, t + 1), into `acc` (zeroed here);
    /// `now[s mod W]` = R_θ(t, s).
    #[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
    pub(crate) fn adjoints(&self, t: usize, w: usize, now: &[f64], eta: f64, omega: &[f64], acc: &mut [f64]) {
        let n = omega.len();
        let span = w.min(t + 1);
        acc[..span].fill(0.0);
        match self {
            Events::Dense { h, rth } => {
                let mut adj = vec![[0.0; LANES]; span];
                for i0 in (0..n).step_by(LANES) {
                    let lanes = LANES.min(n - i0);
                    let mut wt = [0.0; LANES];
                    wt[..lanes].copy_from_slice(&omega[i0..i0 + lanes]);
                    if wt.iter().all(|x| *x == 0.0) {
                        continue;
                    }
                    acc[0] += wt.iter().sum::<f64>();
                    adj[0] = [1.0; LANES];
                    for m in 1..span {
                        let k = t - m;
                        let row = &rth[(k % w) * w..(k % w) * w + m];
                        let mut sum = [0.0; LANES];
                        for (mp, bj) in adj[..m].iter().enumerate() {
                            let r = row[m - mp - 1];
                            for l in 0..LANES {
                                sum[l] += r * bj[l];
                            }
                        }
                        let hk = &h[(k % w) * n + i0..(k % w) * n + i0 + lanes];
                        let mut total = 0.0;
                        for l in 0..LANES {
                            adj[m][l] = if l < lanes { -eta * hk[l] * sum[l] } else { 0.0 };
                            total += wt[l] * adj[m][l];
                        }
                        acc[m] += total;
                    }
                }
            }
            Events::Sparse {
                cap,
                step,
                h,
                pair,
                len,
                next,
            } => {
                let cap = *cap;
                // the later events' (slot, adjoint); the terminal's weight enters through R_θ(t, k)
                let mut later: Vec<(usize, f64)> = Vec::with_capacity(cap);
                for (i, &wt) in omega.iter().enumerate().filter(|(_, x)| **x != 0.0) {
                    acc[0] += wt;
                    later.clear();
                    for e in 0..len[i] {
                        let slot = (next[i] + cap - 1 - e) % cap;
                        let k = step[i * cap + slot];
                        if k + w <= t {
                            break;
                        }
                        let row = &pair[(i * cap + slot) * cap..(i * cap + slot + 1) * cap];
                        let s: f64 = now[k % w] + later.iter().map(|&(j, bj)| row[j] * bj).sum::<f64>();
                        let bk = -eta * h[i * cap + slot] * s;
                        acc[t - k] += wt * bk;
                        later.push((slot, bk));
                    }
                }
            }
        }
    }
}
