//! The response window W of a long-horizon replicate (docs/theory.md §3.3,
//! "Error control", and its "Session 39" paragraph): the estimated effect of
//! R_g's dropped lags on the metrics, kept below [`TRUNCATION_TOL`] by
//! widening a replicate's window in place or, past the tolerance, by a
//! restart at a wider window; and the memory a solve at a window takes.
//!
//! With R_θ's lanes held for the lags 1..=span, the dropped mass of R_g's row
//! is continued geometrically from the last two quarters of the lags held
//! (from the row itself, or at first order
//! |R_g(t,k)| ≈ η·a·q²·sup ℓ''²·|R_θ(t,k)| when smaller), and
//!
//!   E_t = 2η·(dropped mass)·Σ_l |R_θ(t, t−l)|·√C_θ(t,t).
//!
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Griewank, Walther (2008), *Evaluating Derivatives*, 2nd ed., ch. 3
//!   (the reverse mode whose window this is).

use super::generator::GEN_WINDOW;
use super::step::{History, NEAR};
use super::stop::Stop;
use crate::dynamics::dyadic::{Track, relane};
use crate::dynamics::path::DmftParams;
use crate::dynamics::reverse_mode::{self, Events};

/// Largest estimated effect on a metric of R_g's dropped lags that a solve accepts.
pub const TRUNCATION_TOL: f64 = 1e-3;

/// How far below [`TRUNCATION_TOL`] a restart's window aims, leaving room for
/// the estimate's spread between replicates and steps (±10% on the 20-level
/// Huber q = 0.3 point, flat over t = 1000..10⁴ at W = 762). It was 4 with a
/// quarter of W added, while the generator's drifting replicate (docs/theory.md
/// §3.3) made the estimate grow late and forced late restarts; with the Gram
/// rows that point settles at W = 550 instead of 762 (the metrics move by
/// < 0.1 standard errors; 72–81 s instead of 91–102 s).
pub(super) const WINDOW_HEADROOM: f64 = 2.0;

/// How far below [`TRUNCATION_TOL`] the truncation estimate may rise before
/// a replicate widens its window in place ([`widen`]): at TRUNCATION_TOL /
/// GROW_AT. At 1.25 the estimate still jumped past the tolerance between two
/// steps (restarts at Huber and logistic q = 0.1); at 2 one restart was left
/// over the 16 points of the precision study (session 39).
pub(super) const GROW_AT: f64 = 2.0;

/// How far below [`TRUNCATION_TOL`] a window widened in place aims: further
/// than a restart's [`WINDOW_HEADROOM`], so that the estimate's spread does
/// not bring it back over TRUNCATION_TOL / [`GROW_AT`] at once.
pub(super) const GROW_HEADROOM: f64 = 2.5;

/// A replicate's response window: W, and the first step whose response it
/// still holds (0, or after widening in place at step t: t + 1 − W of the
/// old W — the older sources' responses were overwritten).
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) w: usize,
    first_live: usize,
}

impl Window {
    pub(super) fn new(w: usize) -> Self {
        Window { w, first_live: 0 }
    }

    /// The lags 1..=seen of R_θ(t, ·) held at step t.
    fn seen(&self, t: usize) -> usize {
        self.w.min(t - self.first_live)
    }

    /// Whether some lag of R_g(t, ·) is dropped at step t.
    fn truncates(&self, t: usize) -> bool {
        self.first_live > 0 || t >= self.w
    }
}

/// The truncation estimate at step t: its value where lags are dropped (0
/// before), and the window to widen to in place when it is above
/// TRUNCATION_TOL / [`GROW_AT`] over a whole window (from t = W − 1 on, the
/// last step at which nothing has been dropped yet); or, above
/// [`TRUNCATION_TOL`] where lags are dropped, a stop for a restart at the
/// window that meets TRUNCATION_TOL / [`WINDOW_HEADROOM`]. While a widened
/// window fills (its oldest lags lost) the estimate is over the lags held.
#[allow(clippy::too_many_arguments)]
pub(super) fn truncation(
    vv: &[f64],
    rg: &[f64],
    win: &Window,
    t: usize,
    p: &DmftParams,
    h_max: f64,
    c_tt: f64,
) -> Result<(f64, Option<usize>), Stop> {
    let seen = win.seen(t);
    let whole = seen + 1 >= win.w;
    if !(win.truncates(t) || whole) || seen < 4 {
        return Ok((0.0, None));
    }
    let rate = (p.mean_rate(), p.groups);
    let (e, decay_rate) = truncation_estimate(vv, rg, win.w, seen, t, p.eta, 1.0 / p.delta, rate, h_max);
    let e = e * c_tt.sqrt();
    let truncates = win.truncates(t);
    if truncates && e > TRUNCATION_TOL {
        return Err(Stop::Window {
            window: wider(e, decay_rate, seen, (WINDOW_HEADROOM, 8), p.steps).max(win.w + win.w / 8),
            step: t,
        });
    }
    let grow = (whole && e > TRUNCATION_TOL / GROW_AT && win.w <= p.steps)
        .then(|| wider(e, decay_rate, win.w, (GROW_HEADROOM, 16), p.steps));
    Ok((if truncates { e } else { 0.0 }, grow))
}

/// Widen a replicate's response window in place from W to `wanted` at step t
/// (after its events are recorded, before its virtual paths step): the
/// events' rings and every atom's virtual paths (lane s mod W) move to lanes
/// s mod W' for the sources still held (t − W < s ≤ t), the older ones are
/// lost (`Window::first_live`), and the buffers of W entries grow. At
/// t = W − 1 nothing is lost: the replicate goes on as it would have at W'
/// from the start, but for the dense pass's far-lag reuse, which the
/// narrower window began earlier (from t = W: `step::far_adjoints`). When
/// the events' form would change at W' (`Events::widen`) or W' would not fit
/// in memory, it keeps W.
#[allow(clippy::too_many_arguments)]
pub(super) fn widen<'a>(
    p: &DmftParams,
    atoms: usize,
    events: &mut Events,
    virtual_paths: impl Iterator<Item = (&'a mut Track<History>, &'a mut Vec<f64>)>,
    buffers: [&mut Vec<f64>; 3],
    win: &mut Window,
    wanted: usize,
    t: usize,
) {
    let w = win.w;
    let fits = memory_estimate(p, atoms, wanted) <= 0.8 * propdp_core::input::machine_memory();
    if !fits || !events.widen(p.points, w, wanted, t, (p.mean_rate(), p.steps)) {
        return;
    }
    let lanes = |s: usize| (s % w, s % wanted);
    let held: Vec<(usize, usize)> = ((t + 1).saturating_sub(w)..=t).map(lanes).collect();
    for (track, values) in virtual_paths {
        track.relane(wanted, &held);
        relane(values, wanted, &held);
    }
    let [vv, acc, vmem] = buffers;
    relane(vv, wanted, &held);
    acc.resize(wanted, 0.0);
    vmem.resize(wanted, 0.0);
    *win = Window {
        w: wanted,
        first_live: win.first_live.max((t + 1).saturating_sub(w)),
    };
}

/// The window meeting [`TRUNCATION_TOL`] / `headroom` for an estimate `e`
/// at window `w` falling like exp(−γ·W) (γ = `decay_rate`), at least W/8
/// more; no decay seen (γ = 0: no ridge, R_θ does not forget): the whole
/// horizon.
fn wider(e: f64, decay_rate: f64, w: usize, (headroom, least): (f64, usize), steps: usize) -> usize {
    let more = (headroom * e / TRUNCATION_TOL).ln() / decay_rate;
    if decay_rate > 0.0 && more < steps as f64 {
        w + (w / least).max(more.ceil() as usize)
    } else {
        steps + 1
    }
}

/// Estimated effect on a metric, per unit of the field scale √C_θ(t,t), of
/// dropping R_g(t, k) for k < t − `span` (lags held: 1..=span ≤ W, R_θ's
/// lane of step s at s mod W): the dropped mass of R_g's row, its
/// geometric continuation from the last two quarters of the lags held (from the
/// row itself, or at first order |R_g(t,k)| ≈ η·a·q²·sup ℓ''²·|R_θ(t,k)| when
/// that is smaller — at small q the row's entries are mostly noise; q the
/// mean rate, over quarters of whole periods G of cyclic groups), times
/// 2η and the relaxation time Σ_l |R_θ(t, t−l)|; with R_θ's decay rate per
/// lag at the window's end.
#[allow(clippy::too_many_arguments)]
pub(super) fn truncation_estimate(
    now: &[f64],
    rg: &[f64],
    w: usize,
    span: usize,
    t: usize,
    eta: f64,
    a: f64,
    (q, period): (f64, usize),
    h_max: f64,
) -> (f64, f64) {
    let r = |l: usize| now[(t - l) % w].abs();
    // with G groups the kernels are periodic in the lag: quarters of whole periods (§3.7)
    let quarter = match period {
        0 | 1 => (span / 4).max(1),
        g => ((span / 4 / g).max(1) * g).min(span / 2).max(1),
    };
    let tail = |last: f64, prev: f64, sum_last: f64| {
        let ratio = last / prev;
        if prev > 0.0 && ratio < 1.0 {
            sum_last * ratio / (1.0 - ratio)
        } else if last == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    };
    let max_r = |lo: usize, hi: usize| (lo..hi).map(r).fold(0.0, f64::max);
    let (last, prev) = (
        max_r(span - quarter + 1, span + 1),
        max_r(span - 2 * quarter + 1, span - quarter + 1),
    );
    let tail_theta = tail(last, prev, (span - quarter + 1..=span).map(r).sum());
    // R_θ's decay per lag, γ = ln(prev/last)/quarter (0: no decay seen)
    let rate = if last > 0.0 && prev > last {
        (prev / last).ln() / quarter as f64
    } else {
        0.0
    };
    let abs_sum = |lo: usize, hi: usize| rg[lo..hi].iter().map(|x| x.abs()).sum::<f64>();
    let (s_prev, s_last) = (
        abs_sum(span - 2 * quarter, span - quarter),
        abs_sum(span - quarter, span),
    );
    // a row silent over its last quarter (at small q the far lags' few prefix paths often have no
    // event there) says nothing of the tail: the first-order bound alone
    let first_order = eta * a * q * q * h_max * h_max * tail_theta;
    let tail_g = if s_last == 0.0 {
        first_order
    } else {
        tail(s_last, s_prev, s_last).min(first_order)
    };
    if tail_g == 0.0 {
        return (0.0, rate);
    }
    let relaxation: f64 = (1..=span).map(r).sum::<f64>() + tail_theta;
    (2.0 * eta * tail_g * relaxation, rate)
}

/// Bytes a solve holds at once with `modes` atoms at response window `w`: per replicate running
/// in parallel, the per-path histories (up to 64 blocks each: one atom's θ̃, O, the baseline's
/// O⁰ and ũ, or with a spectrum the field G, ĝ and ĝ⁰ (`field.rs`); ĝ over the generator's
/// blocks), per atom its virtual paths, block lanes and state covariance, and the events.
pub(super) fn memory_estimate(p: &DmftParams, modes: usize, w: usize) -> f64 {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let parallel = p.scrambles.min(threads) as f64;
    let (n, k) = (p.points as f64, modes as f64);
    let history = (NEAR + 1 + 64) as f64;
    let per_path = if modes == 1 {
        4.0 * n * history + n * (GEN_WINDOW + 64) as f64 + 8.0 * n
    } else {
        4.0 * n * history
    };
    let histories = per_path + n * (GEN_WINDOW + 64) as f64 + 16.0 * n;
    let per_atom = k * ((w + 64) as f64 * history + 2.0 * 200f64.powi(2));
    parallel * (8.0 * (histories + per_atom) + reverse_mode::bytes(p.points, w, p.mean_rate(), p.steps))
}
