//! The fast path of DP-SGD's accounting behind [`crate::Mechanism`]: the
//! fixed-grid PLD's δ(ε) and ε (where it fits in memory), the RDP
//! accountant's ε under either relation, and the noise multiplier meeting
//! (ε, δ) by root finding on them.

use crate::events::{Segment, check_delta};
use crate::gaussian::{brent_ulp, gdp_to_eps, log_delta_gaussian, mu_dpgd, smallest_noise, softplus};
use crate::neighbouring::{Neighbouring, relation_factor};
use crate::{pld, rdp};

/// Grid width of the PLD accountant behind [`crate::MechanismKind::Dpsgd`]: ε within
/// about 1e-4 relative of the continuous curve at T = 10⁴ (`tests/dpsgd_accountant.rs`),
/// always above it (pessimistic rounding).
pub const DPSGD_GRID: f64 = 1e-3;

/// Tail mass the PLD leaves out per step (counted into δ), at most.
pub const DPSGD_TAIL: f64 = 1e-15;

/// log δ(ε) of T steps of DP-SGD at noise multiplier z = σ/C and rate q
/// (docs/theory.md §4.1): at q = 1 the Gaussian mechanism, exact, with
/// μ = √T·Δ/σ (Δ = C add/remove, 2C replace: DP-GD's curve); below, the PLD
/// accountant on the relation's pair ([`pld::composed`]: add/remove-one's
/// worse direction, or replace-one's pair (1 − q)N(0, z²) + qN(∓1, z²)).
/// 0 (δ = 1) without noise or with an unbounded gradient (z = 0).
pub(crate) fn dpsgd_log_delta(eps: f64, z: f64, q: f64, steps: usize, n: Neighbouring) -> f64 {
    if !(z > 0.0 && z.is_finite()) {
        return if z == f64::INFINITY { f64::NEG_INFINITY } else { 0.0 };
    }
    if q >= 1.0 {
        return log_delta_gaussian(eps, mu_dpgd(1.0, 1.0, steps, z, n));
    }
    let m = pld::SubsampledGaussian { z, q };
    if !pld_fits(m, steps, n) {
        return 0.0; // no PLD guarantee claimed (δ = 1); the RDP bound stands
    }
    let max_len = 4 * PLD_MAX_POINTS as usize;
    match pld::composed(m, steps as u64, DPSGD_GRID, DPSGD_TAIL, max_len, n) {
        Some(plds) => plds.iter().map(|p| p.delta(eps)).fold(0.0, f64::max).min(1.0).ln(),
        None => 0.0, // too large to compose: no PLD guarantee claimed (δ = 1)
    }
}

/// Most grid points the DP-SGD PLD may span (one step, or the composition's
/// reach): 2^20; beyond, the RDP bound stands alone (q = 0.5, z = 2,
/// T = 10⁴ spans 7·10⁶ and its FFTs needed over 3.6 GB).
const PLD_MAX_POINTS: f64 = 1_048_576.0;

/// Most steps the DP-SGD PLD composes (beyond, the composition's support
/// outgrows memory: T = 10⁷ at q = 0.001, z = 0.5 needed over 3 GB); the RDP
/// bound stands alone there.
const PLD_MAX_STEPS: usize = 1_000_000;

/// Whether the PLD of T steps at (z, q) fits in [`PLD_MAX_POINTS`]: one
/// step's support reaches about the loss at x = 1 + 8.5z, (1 + 17z)/(2z²)
/// (tiny z: huge; twice that under replace-one), the composition's bulk
/// spans about 20 standard deviations, 20·√T·sd(one step's loss), and
/// add/remove-one's T·|log(1 − q)| (huge T).
fn pld_fits(m: pld::SubsampledGaussian, steps: usize, n: Neighbouring) -> bool {
    if steps > PLD_MAX_STEPS {
        return false;
    }
    let top = relation_factor(n) * (1.0 + 17.0 * m.z) / (2.0 * m.z * m.z);
    if top.is_nan() || top / DPSGD_GRID > PLD_MAX_POINTS {
        return false;
    }
    let direction = pld::Direction::of(n)[0];
    let one = m.pld(direction, DPSGD_GRID, DPSGD_TAIL);
    let loss = |i: usize| (one.offset + i as i64) as f64 * one.grid;
    let mean: f64 = one.pmf.iter().enumerate().map(|(i, p)| p * loss(i)).sum();
    let var: f64 = one
        .pmf
        .iter()
        .enumerate()
        .map(|(i, p)| p * (loss(i) - mean).powi(2))
        .sum();
    // the remove direction's loss is ≥ log(1 − q) per step, and its partial
    // compositions keep everything up to T·|log(1 − q)| above the ceiling
    let reach = match n {
        Neighbouring::AddRemoveOne => steps as f64 * -(1.0 - m.q).ln(),
        Neighbouring::ReplaceOne => 0.0,
    };
    20.0 * (steps as f64 * var).sqrt() / DPSGD_GRID <= PLD_MAX_POINTS && reach / DPSGD_GRID <= PLD_MAX_POINTS
}

/// ε at δ of T steps of DP-SGD (as [`dpsgd_log_delta`]; the fast bound of [`fixed_grid_epsilon`]), read off the
/// composed PLDs of the relation's pair.
pub(crate) fn fast_epsilon(z: f64, q: f64, steps: usize, delta: f64, n: Neighbouring) -> Option<f64> {
    if !(z > 0.0 && z.is_finite()) {
        return (z == f64::INFINITY).then_some(0.0);
    }
    if q >= 1.0 {
        return gdp_to_eps(mu_dpgd(1.0, 1.0, steps, z, n), delta);
    }
    let m = pld::SubsampledGaussian { z, q };
    if !pld_fits(m, steps, n) {
        return None;
    }
    // the same PLDs as `dpsgd_log_delta` (same tail), so that a noise
    // calibrated there reads back to at most its target here
    let plds = pld::composed(m, steps as u64, DPSGD_GRID, DPSGD_TAIL, 4 * PLD_MAX_POINTS as usize, n)?;
    plds.iter()
        .map(|p| p.epsilon(delta))
        .try_fold(0.0f64, |worst, e| e.map(|e| worst.max(e)))
}

/// The smallest noise multiplier z meeting (ε, δ) for T steps of DP-SGD at
/// rate q, to about 1e-9 relative, on the safe side (δ(ε) ≤ target is
/// checked at the z returned).
///
/// Bracket: the full batch's z (q = 1, exact Gaussian) meets the target at
/// every q — one step's pair at rate q is a mixture of the full pair and of
/// (P, P), and by joint convexity its hockey-stick divergence is at most the
/// full pair's, at every ε — so it bounds z from above; halving finds the
/// lower end. Root: Brent in log z on log δ_PLD(ε; z) − log δ. Where the
/// PLD cannot confirm the full batch's z (a δ below the FFT's floor, or a
/// PLD that does not fit) the smaller of that z and the RDP-calibrated z is
/// returned, both valid.
pub(crate) fn calibrate_dpsgd(eps: f64, delta: f64, q: f64, steps: usize, n: Neighbouring) -> Option<f64> {
    if !(eps > 0.0 && eps.is_finite()) || check_delta(delta).is_err() {
        return None;
    }
    let full = smallest_noise(|z| log_delta_gaussian(eps, mu_dpgd(1.0, 1.0, steps, z, n)), delta)?;
    if q >= 1.0 {
        return Some(full);
    }
    let log_target = delta.ln();
    let g = |z: f64| dpsgd_log_delta(eps, z, q, steps, n) - log_target;
    let mut hi = full;
    if g(hi) > 0.0 {
        return Some(calibrate_dpsgd_rdp(eps, delta, q, steps, n).map_or(full, |z| z.min(full)));
    }
    let mut lo = hi / 2.0;
    while g(lo) <= 0.0 {
        hi = lo;
        lo /= 2.0;
        if lo < 1e-12 {
            return None;
        }
    }
    // g is monotone only up to the grid's rounding, so the root is checked
    // and nudged up until the PLD confirms it
    let root = brent_ulp(|x| g(x.exp()), lo.ln(), hi.ln()).map_or(hi, f64::exp);
    let mut step = 1e-9 * root;
    let mut z = root;
    while g(z) > 0.0 {
        z += step;
        step *= 4.0;
        if z >= hi {
            return Some(hi);
        }
    }
    Some(z)
}

/// The RDP-calibrated noise multiplier for (ε, δ) (replace-one as
/// (ε/2, δ/(1 + e^{ε/2})) add/remove), to 1e-3 relative on the safe side,
/// by bisection in log z over [1e-4, 1e8].
fn calibrate_dpsgd_rdp(eps: f64, delta: f64, q: f64, steps: usize, n: Neighbouring) -> Option<f64> {
    let (e_ar, log_d_ar) = match n {
        Neighbouring::AddRemoveOne => (eps, delta.ln()),
        Neighbouring::ReplaceOne => (eps / 2.0, delta.ln() - softplus(eps / 2.0)),
    };
    // NaN (the RDP sum overflowing at tiny q and z) counts as above
    let above = |z: f64| {
        rdp::Curve::cached(z, q)
            .epsilon_at_log_delta(steps as u64, log_d_ar)
            .partial_cmp(&e_ar)
            != Some(std::cmp::Ordering::Less)
    };
    let (mut lo, mut hi) = (1e-4f64, 1e8f64);
    if above(hi) {
        return None;
    }
    while hi / lo > 1.001 {
        let mid = (lo * hi).sqrt();
        if above(mid) { lo = mid } else { hi = mid }
    }
    Some(hi)
}

/// The RDP accountant's ε at δ for T steps of DP-SGD at noise multiplier z
/// and rate q ([`rdp::Curve`], integer and fractional orders): looser than the PLD, a
/// cross-check. Replace-one: at q = 1 the 2C shift (z/2); below, group
/// privacy of size 2, the smallest e with ε_RDP(δ/(1 + e^e)) ≤ e, as 2e —
/// a valid upper bound, looser than the replace-one pair's PLD, and used
/// only as an upper end.
pub(crate) fn rdp_epsilon(z: f64, q: f64, steps: u64, delta: f64, n: Neighbouring) -> f64 {
    match n {
        Neighbouring::AddRemoveOne => rdp::Curve::cached(z, q).epsilon(steps, delta),
        Neighbouring::ReplaceOne if q >= 1.0 => rdp::Curve::cached(z / 2.0, q).epsilon(steps, delta),
        Neighbouring::ReplaceOne => {
            let curve = rdp::Curve::cached(z, q);
            // δ/(1 + e^e) in logs: it leaves f64 beyond e ≈ 709
            let holds = |e: f64| curve.epsilon_at_log_delta(steps, delta.ln() - softplus(e)) <= e;
            let mut hi = curve.epsilon(steps, delta * 1e-6).max(1e-9);
            while !holds(hi) {
                hi *= 2.0;
                if hi.is_nan() || hi >= 1e6 {
                    return f64::INFINITY;
                }
            }
            let mut lo = 0.0;
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if holds(mid) { hi = mid } else { lo = mid }
            }
            2.0 * hi
        }
    }
}

/// A fast upper bound on the ε at `delta` of one DP-SGD run (T steps of
/// the Poisson-sampled Gaussian of noise σ = `noise` and sensitivity
/// Δ = `sensitivity`, `run` its segment) under `n`: the smallest of the
/// fixed-grid PLD (Δ = 10⁻³; about 0.5% above the certified bracket of
/// [`crate::epsilon`]), the RDP accountant's and the full batch's exact ε
/// ([`crate::bracket::Method::FixedGrid`]). `None` where no finite ε is
/// reached.
pub(crate) fn fixed_grid_epsilon(
    run: &Segment,
    noise: f64,
    sensitivity: f64,
    delta: f64,
    n: Neighbouring,
) -> Option<f64> {
    let (z, q, steps) = (run.noise_multiplier, run.sample_rate, run.steps as usize);
    // both accountants give upper bounds: the PLD's is the tighter, except
    // where it would not fit, where the RDP's stands; and subsampling never
    // costs privacy: the full batch's exact Gaussian ε bounds every q
    // (where the subsampled accountants run out of range, e.g. at δ = 1e-300 or T = 10⁹)
    let pld = fast_epsilon(z, q, steps, delta, n);
    let rdp = Some(rdp_epsilon(z, q, run.steps, delta, n)).filter(|e| e.is_finite());
    let full = gdp_to_eps(mu_dpgd(sensitivity, 1.0, steps, noise, n), delta);
    [pld, rdp, full].into_iter().flatten().reduce(f64::min)
}
