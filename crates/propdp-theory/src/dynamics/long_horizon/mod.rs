//! Long-horizon state evolution of DP-GD and DP-SGD (docs/theory.md §3.3):
//! the DMFT of the full-memory solver (`full_memory.rs`) with work linear in T and memory independent
//! of T, for every loss, clipped or not, at any sample rate q ∈ (0, 1].
//!
//! Every sample path carries its own copy of the coordinate process as its
//! field, and the Onsager memory obeys the same recursion (identity (R1):
//! O_t = Σ_{s<t} R_θ(t,s)x_s satisfies O_{t+1} = (1−ηλ)O_t − η Σ_{k≤t} R_g(t,k)O_k + x_t):
//!
//!   w_t = A_tν + θ̃_t,   θ̃_{t+1} = (1−ηλ)θ̃_t − η[ũ_t + Σ_k R_g(t,k)θ̃_k] + ησξ̃_t,
//!   r_t = w_t − ηO_t,   O_{t+1} = (1−ηλ)O_t − η Σ_k R_g(t,k)O_k + ĝ_t,
//!
//! with ũ ~ GP(0, C_g) and ξ̃ white, so (ν, w) has exactly the law of the
//! full-memory solver's Gaussian fields and no T×T covariance or Cholesky
//! factor is formed. The memories Σ_k R_g(t,k)X_k keep NEAR exact lags and
//! act with R_g's block sums on the block sums of a dyadic
//! partition of the older past (its blocks grow with their age). ũ_t is drawn
//! by exact Gaussian conditioning, under the estimated C_g, on its last
//! GEN_WINDOW values and its block sums. R_g(t,·) comes from the reverse-mode
//! pass over each path's own events (steps with ĥ ≠ 0) in the last W steps,
//! with R_θ(j,k) from virtual paths (the recursion driven by unit impulses);
//! lags ≥ W are dropped, with the estimated effect of the dropped tail on the
//! metrics kept below [`TRUNCATION_TOL`]: a replicate whose estimate passes
//! half of it widens its window in place (from step W − 1, before anything
//! is dropped, at no loss; later losing the responses of the steps older than
//! the old window, which count as dropped), and the solve restarts wider
//! (with the window the estimate's decay asks for) only when it passes
//! TRUNCATION_TOL itself. C_g's rows are the
//! Gram matrix of the selected gradients ĝ (positive semi-definite by
//! construction); the selection is Rao–Blackwellised in the Stein drift. The metrics come from
//! the covariance of the generated linear state (θ̃ and ũ windows and blocks),
//! propagated exactly: norm2 = s²A_t² + Var(θ̃_t); the training loss is the
//! path mean corrected by a control variate (`train_loss.rs`, §3.3:
//! the loss at the field w_t, whose mean is exact). Expectations use padded RQMC as the full-memory solver does
//! (plain Monte Carlo biased the metrics at O(1/N) through the kernels'
//! feedback, docs/theory.md §3.3); the prediction is the mean over
//! independent replicates with their spread as standard error.
//!
//! Correlated noise and cyclic groups (docs/theory.md §3.7,
//! `participation.rs`): ξ̃ becomes each path's own w̃ = C⁻¹z̃ by the banded
//! recurrence, held in the state covariance as entries of their own (the
//! last b − 1), and each path is selected only at the steps of its group.
//!
//! An intercept (docs/theory.md §3.5, [`solve_intercept`]) adds the
//! deterministic field β_t to every path's r_t (and its baseline's):
//! β_{t+1} = (1 − ηλ_b)β_t − η·a·q·E\[c_t\], labels of ν + b*.
//!
//! Two clusters (docs/theory.md §3.6, [`solve_two_cluster`], `two_cluster.rs`):
//! the modes of Σ_w = κ²Σ, each path's label independent of ν (y = +1 below
//! p, ỹ = y − (2p − 1)) and its field shifted by ỹ·m_t + β_t, the pathwise
//! drift D_t = Σ_k R_g(t,k)·m_k/ρ_w + a·q·E\[c_t ỹ\] (no Stein quotient, no
//! baselines), ℓ' clipped at C/κ, the training loss's control variate
//! ℓ(y, w_t + ỹ·m_t + β_t).
//!
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.
//! - Rasmussen, Williams (2006), *Gaussian Processes for Machine Learning*, §2.2
//!   (Gaussian conditioning).

use propdp_core::covariance::{Atom, Covariance};
use propdp_core::input::machine_memory;
use propdp_core::metrics::{self, Metrics};
use propdp_core::problem::TwoCluster;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::dynamics::path::{
    DmftError, DmftParams, DmftPath, Intercept, MAX_RELATIVE_SPREAD, STEIN_MIN_S2, aggregate, check_intercept_loss,
    two_cluster_params,
};
use crate::fixed_points::train_loss::{self, LossMoments};
use step::{Run, curvature_bound};
use stop::{Stop, Watch};
use window::memory_estimate;

pub use compression::{COMPRESSION_TOL, MAX_MODES, NEGLIGIBLE_COMPRESSION};
use compression::{Carried, carried};

mod combine;
mod compression;
mod field;
mod folded;
mod generator;
mod participation;
pub mod precision;
mod replicate;
mod state;
mod step;
mod stop;
mod two_cluster;
mod window;

pub use generator::GEN_WINDOW;
pub use step::NEAR;
pub use window::TRUNCATION_TOL;

/// A long-horizon prediction: the per-step path and its approximation error.
#[derive(Debug, Clone, PartialEq)]
pub struct LongHorizonPath {
    /// Means and standard errors over replicates, t = 0..=T.
    pub path: DmftPath,
    /// Largest estimated effect of the truncated response memory on a metric.
    pub approx_error: f64,
    /// The response window W the solve settled on.
    pub window: usize,
    /// The atoms the solve carried: 1 isotropic, fewer than the spectrum's
    /// when it was compressed (its effect in `approx_error`).
    pub modes: usize,
    /// RQMC paths per replicate.
    pub points: usize,
    /// Independent replicates (scrambles).
    pub replicates: usize,
    /// The relative standard error asked for ([`solve_to_precision`]; `None`: fixed paths).
    pub target: Option<f64>,
}

/// Seconds of one core per path and step of an isotropic long-horizon solve
/// at sample rates q (between the nodes: linear in ln q; beyond them: the
/// end value), as propdp's `dmft_cost` reads them (times its horizon
/// correction, 0.78 at T = 10⁴). Refitted in session 35 to the 14 points of
/// `scripts/studies/long_horizon_precision.py` (2048-path pilot, 4
/// replicates, δ = 0.5, clipped and unclipped Huber, logistic and least
/// squares; T = 2000–10⁴; docs/performance.md, "Long horizons at a stated
/// precision"): the cost peaks at q ≈ 0.3, where the dense reverse pass
/// runs over long windows.
pub const PATH_STEP_SECONDS: [(f64, f64); 6] = [
    (0.002, 1.4e-7),
    (0.01, 1.45e-7),
    (0.03, 2.0e-7),
    (0.1, 2.3e-7),
    (0.3, 6.5e-7),
    (1.0, 2.5e-7),
];

/// Further seconds per replicate and step for each atom of a spectrum (the
/// atoms' deterministic side: virtual paths, block lanes, state covariance,
/// whose size is set by the response window, not by the paths): measured
/// 0.8e-8 to 1.1e-8 per path with 10 and 20 atoms at q = 0.01 and 0.1 on
/// 2048-path replicates (session 35), 2e-5 per replicate.
pub const ATOM_REPLICATE_STEP_SECONDS: f64 = 2e-5;

/// What a spectrum adds to a solve, in atoms' worth of
/// [`ATOM_REPLICATE_STEP_SECONDS`], whatever its size: the field solver's
/// own path work (the field's conditioning and Onsager terms) and the few
/// nodes of its quadrature it carries (`compression.rs`; 4–6 on the power
/// laws of 10 and 20 atoms). Refitted in session 41 to the five spectrum
/// points of `scripts/studies/long_horizon_precision.py`: the estimate
/// (with propdp's horizon correction, on 2 cores) is within −33% to +16%
/// of their wall time.
pub const SPECTRUM_ATOMS: usize = 16;

/// Estimated seconds on one core of a long-horizon solve of `replicates`
/// replicates of `points` RQMC paths, `steps` steps at sample rate `q`,
/// with a spectrum of `atoms` atoms (1: isotropic):
/// T·(points·replicates·c(q) + replicates·c_a·K), c(q) from
/// [`PATH_STEP_SECONDS`], c_a = [`ATOM_REPLICATE_STEP_SECONDS`], K =
/// [`SPECTRUM_ATOMS`] for any spectrum (0 isotropic).
pub fn cost_seconds(points: usize, replicates: usize, steps: usize, q: f64, atoms: usize) -> f64 {
    let nodes = &PATH_STEP_SECONDS;
    let per_path_step = match nodes.iter().position(|&(x, _)| q <= x) {
        Some(0) => nodes[0].1,
        Some(i) => {
            let ((q0, c0), (q1, c1)) = (nodes[i - 1], nodes[i]);
            let f = (q / q0).ln() / (q1 / q0).ln();
            c0 + f * (c1 - c0)
        }
        None => nodes[nodes.len() - 1].1,
    };
    let spectrum = if atoms > 1 {
        ATOM_REPLICATE_STEP_SECONDS * SPECTRUM_ATOMS as f64
    } else {
        0.0
    };
    (per_path_step * points as f64 + spectrum) * (replicates * steps) as f64
}

/// Solve on `p.scrambles` independent replicates of `p.points` paths each.
pub fn solve(p: &DmftParams) -> Result<LongHorizonPath, DmftError> {
    solve_cancellable(p, &|| false)
}

/// [`solve`], stopping with [`DmftError::Cancelled`] when `cancelled` returns true
/// (checked every step).
pub fn solve_cancellable(p: &DmftParams, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<LongHorizonPath, DmftError> {
    solve_spectrum(p, None, cancelled)
}

/// [`solve_cancellable`] with a feature covariance (docs/theory.md §3.4):
/// one coordinate-side mode per node of the spectrum's quadrature it
/// carries (`compression.rs`: the fewest whose measured effect is
/// negligible, in `approx_error`) and one field per path (`field.rs`).
/// `None`: isotropic features.
pub fn solve_spectrum(
    p: &DmftParams,
    cov: Option<&Covariance>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<LongHorizonPath, DmftError> {
    solve_with(p, cov, Labels::default(), None, cancelled)
}

/// [`solve_spectrum`] with an intercept (docs/theory.md §3.5): labels of
/// ν + b* (logistic labels drawn with ν from its tilted law, `folded.rs`),
/// the deterministic field β_{t+1} = (1 − ηλ_b)β_t − η·a·E\[ĝ_t\] shifting every
/// path's and baseline's field, the shifted test metrics and
/// `fitted_intercept`. The standard logistic, Huber and squared losses.
pub fn solve_intercept(
    p: &DmftParams,
    cov: Option<&Covariance>,
    icp: &Intercept,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<LongHorizonPath, DmftError> {
    check_intercept_loss(p)?;
    solve_with(
        p,
        cov,
        Labels {
            icp: Some(icp),
            mix: None,
        },
        None,
        cancelled,
    )
}

/// The two-cluster data model (docs/theory.md §3.6, `two_cluster.rs`):
/// centred rows x = (y − (2p − 1))·μ + g, g ~ N(0, κ²Σ/d), μ = κ²Σθ*/d,
/// labels P(y = +1) = p independent of g; the standard logistic loss,
/// isotropic features or a covariance `cov`, a learned intercept if `icp`
/// says so (the teacher has none). The modes are Σ_w = κ²Σ's, every path's
/// field r_t + (y − (2p − 1))·m_t + β_t, the drift pathwise; rows have
/// ‖x‖ → κ, so DP-SGD's clip C clips ℓ' at C/κ. Writes test_class_err,
/// train_loss, norm2, overlap (θᵀθ*/d) and, with an intercept,
/// fitted_intercept.
pub fn solve_two_cluster(
    p: &DmftParams,
    cov: Option<&Covariance>,
    mix: &TwoCluster,
    icp: Option<&Intercept>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<LongHorizonPath, DmftError> {
    solve_labelled(
        p,
        &carried(p, cov)?,
        Labels { icp, mix: Some(mix) },
        None,
        0..p.scrambles as u32,
        cancelled,
    )?
    .finish()
}

/// [`solve_spectrum`], with an intercept [`solve_intercept`], with two
/// clusters [`solve_two_cluster`], on the RQMC paths that reach relative
/// standard error `target` ([`precision`]): a pilot of `p.scrambles`
/// replicates of [`precision::PILOT_POINTS`] paths; when it is not within
/// the target but within [`precision::POOLED_REACH`] of it, further batches
/// of as many replicates at the pilot's paths and window, pooled with it,
/// until the pooled replicates reach the target or number
/// [`precision::MAX_POOLED`]× the pilot's; further off, a solve on the
/// paths it asks for ([`precision::points_for`]), from the pilot's response
/// window. `p.points` is not used.
pub fn solve_to_precision(
    p: &DmftParams,
    cov: Option<&Covariance>,
    icp: Option<&Intercept>,
    mix: Option<&TwoCluster>,
    target: f64,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<LongHorizonPath, DmftError> {
    if icp.is_some() && mix.is_none() {
        check_intercept_loss(p)?;
    }
    let labels = Labels { icp, mix };
    let at = |points: usize| DmftParams { points, ..*p };
    let batch = p.scrambles as u32;
    let cov = &carried(p, cov)?;
    let mut pooled = solve_labelled(&at(precision::PILOT_POINTS), cov, labels, None, 0..batch, cancelled)?;
    let mut run = pooled.clone().finish()?;
    let achieved = precision::relative_stderr(&run.path);
    if achieved > target && achieved <= precision::POOLED_REACH * target {
        let mut next = batch;
        while precision::relative_stderr(&run.path) > target && next < precision::MAX_POOLED as u32 * batch {
            let more = solve_labelled(
                &at(precision::PILOT_POINTS),
                cov,
                labels,
                Some(pooled.window),
                next..next + batch,
                cancelled,
            )?;
            pooled.pool(more);
            next += batch;
            run = pooled.clone().finish()?;
        }
    } else if achieved > target {
        let points = precision::points_for(run.points, achieved, target);
        run = solve_labelled(&at(points), cov, labels, Some(run.window), 0..batch, cancelled)?.finish()?;
    }
    Ok(LongHorizonPath {
        target: Some(target),
        ..run
    })
}

/// [`solve_with`] after the two-cluster model's check and parameters: the
/// replicates `replicates`, not yet combined.
fn solve_labelled(
    p: &DmftParams,
    cov: &Carried,
    labels: Labels,
    start: Option<usize>,
    replicates: Range<u32>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Replicates, DmftError> {
    let Some(mix) = labels.mix else {
        return run_replicates(p, cov, labels, start, replicates, cancelled);
    };
    if p.s2.is_nan() || p.s2 <= 0.0 {
        return Err(DmftError::Invalid {
            what: format!(
                "s2 = {:e}: two clusters at long horizons need a class mean (s2 > 0; μ = 0 is balanced noise)",
                p.s2
            ),
            params: Box::new(*p),
        });
    }
    let p = two_cluster_params(p, mix, labels.icp)?;
    run_replicates(&p, cov, labels, start, replicates, cancelled)
}

/// What sets a solve's labels and shifts its fields: an intercept (§3.5)
/// and two clusters (§3.6).
#[derive(Clone, Copy, Default)]
struct Labels<'a> {
    icp: Option<&'a Intercept>,
    mix: Option<&'a TwoCluster>,
}

/// The solve, its response window starting at least at `start`.
fn solve_with(
    p: &DmftParams,
    cov: Option<&Covariance>,
    labels: Labels,
    start: Option<usize>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<LongHorizonPath, DmftError> {
    run_replicates(p, &carried(p, cov)?, labels, start, 0..p.scrambles as u32, cancelled)?.finish()
}

/// Replicates of a solve, before their metrics are combined: a solve's
/// own, or several batches of the same paths pooled ([`solve_to_precision`]).
#[derive(Clone)]
struct Replicates {
    params: DmftParams,
    /// The atoms solved (after any compression; 1: isotropic).
    modes: usize,
    runs: Vec<Run>,
    /// The widest response window a batch settled on.
    window: usize,
    /// The largest truncation estimate of a replicate, or the compression's effect.
    approx_error: f64,
}

impl Replicates {
    /// `other`'s replicates beside these.
    fn pool(&mut self, other: Replicates) {
        self.runs.extend(other.runs);
        self.window = self.window.max(other.window);
        self.approx_error = self.approx_error.max(other.approx_error);
    }

    /// Means and standard errors over the replicates, the training loss
    /// cross-fitted between them (`train_loss::cross_fitted`).
    fn finish(self) -> Result<LongHorizonPath, DmftError> {
        let Replicates {
            params: p,
            modes,
            runs,
            window,
            approx_error,
        } = self;
        let replicates = runs.len();
        let (metrics, moments): (Vec<Vec<Metrics>>, Vec<Vec<LossMoments>>) =
            runs.into_iter().map(|r| (r.metrics, r.loss)).unzip();
        let losses = train_loss::cross_fitted(&moments);
        let metrics = metrics
            .into_iter()
            .zip(losses)
            .map(|(mut m, loss)| {
                m.iter_mut()
                    .zip(loss)
                    .for_each(|(mt, l)| _ = mt.insert(metrics::TRAIN_LOSS.into(), l));
                m
            })
            .collect();
        let path = aggregate(metrics, p.steps);
        unanimous(&p, &path)?;
        Ok(LongHorizonPath {
            path,
            approx_error,
            window,
            modes,
            points: p.points,
            replicates,
            target: None,
        })
    }
}

/// The replicates `replicates` (their scrambles) of the solve, their
/// response window starting at least at `start`.
fn run_replicates(
    p: &DmftParams,
    carried: &Carried,
    labels: Labels,
    start: Option<usize>,
    replicates: Range<u32>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Replicates, DmftError> {
    let Labels { icp, mix } = labels;
    let invalid = |what: String| DmftError::Invalid {
        what,
        params: Box::new(*p),
    };
    let (cov, compression_error) = (carried.cov.as_ref(), carried.error);
    // two clusters: the modes of the within-class covariance κ²Σ (docs/theory.md §3.6)
    let within = mix.map(|m| two_cluster::within_atoms(m, cov.map(Covariance::atoms)));
    let atoms = within.as_deref().or(cov.map(Covariance::atoms));
    let kappa2 = mix.map_or(1.0, |m| m.within);
    let rho = p.s2 * cov.map_or(1.0, Covariance::teacher_field) * kappa2;
    if p.points == 0 {
        return Err(invalid("points = 0".into()));
    }
    if p.scrambles < 2 {
        return Err(invalid("scrambles < 2 (a standard error needs two)".into()));
    }
    if mix.is_none() && rho < STEIN_MIN_S2 * (1.0 + p.noise_sd * p.noise_sd) {
        return Err(invalid(format!(
            "s2 = {:e} (teacher field ρ = {rho:e}) below {STEIN_MIN_S2:e}·(1 + sd²): the long-horizon solver needs \
             the Stein drift; use dmft = \"exact\"",
            p.s2
        )));
    }
    // the within-class covariance κ²Σ scales XᵀX's spectrum by κ²
    let curvature = curvature_bound(p.loss) * kappa2;
    // with G groups a step's batch comes from n/G rows: the mean step of a group at δ·G (§3.7)
    let group_delta = p.delta * p.groups as f64;
    let limit =
        2.0 / propdp_core::problem::mean_step_smoothness_at(curvature, group_delta, p.lambda, p.sample_rate, cov);
    if p.eta >= limit {
        // the response kernels alternate in sign there, which the block memory does not resolve
        // (docs/theory.md §3.3: 24% off at δ = 1, q = 0.05, η = 3.8 ≥ 2.86, with no truncation at all)
        return Err(invalid(format!(
            "eta = {:?} ≥ 2/L_q = {limit:.4}, the mean step's stability limit: the long-horizon state evolution \
             is not vouched for beyond it; use the full-memory DMFT (dmft = \"exact\")",
            p.eta
        )));
    }
    // with G groups R_g is periodic in the lag (a path's events are G steps apart): at least 8
    // periods, so that the truncation estimate's quarters hold whole periods (§3.7)
    let first = 16.max((2.0 / p.mean_rate()).ceil() as usize).max(8 * p.groups);
    let mut window = (p.steps + 1).min(first.max(start.unwrap_or(0)));
    loop {
        let (need, total) = (
            memory_estimate(p, atoms.map_or(1, <[Atom]>::len), window),
            machine_memory(),
        );
        if need > 0.8 * total {
            return Err(invalid(format!(
                "memory estimate {:.1} GB (response window W = {window}, {} paths per replicate) above 80% of this \
                 machine's {:.1} GB: lower solver.dmft_points",
                need / 1e9,
                p.points,
                total / 1e9
            )));
        }
        let first_stop = AtomicUsize::new(usize::MAX);
        let watch = Watch {
            cancelled,
            first_stop: &first_stop,
        };
        let runs: Vec<Result<Run, Stop>> = replicates
            .clone()
            .into_par_iter()
            .map(|k| {
                let seed = p.seed.wrapping_mul(0x9E37_79B9).wrapping_add(k);
                let run = match atoms {
                    Some(a) if a.len() > 1 => field::replicate(p, atoms, icp, mix, seed, window, &watch),
                    _ => replicate::replicate(p, atoms, icp, mix, seed, window, &watch),
                };
                if let Err(Stop::Window { step, .. }) = &run {
                    first_stop.fetch_min(*step, Ordering::Relaxed);
                }
                run
            })
            .collect();
        // the window asked for at the earliest step any replicate stopped (Watch: the same at
        // every thread count and timing)
        let stops = || {
            runs.iter().filter_map(|r| match r {
                Err(Stop::Window { window, step }) => Some((*step, *window)),
                _ => None,
            })
        };
        let earliest = stops().map(|(step, _)| step).min();
        let wanted = stops()
            .filter(|&(step, _)| Some(step) == earliest)
            .map(|(_, w)| w)
            .max();
        if let Some(wanted) = wanted {
            assert!(window <= p.steps, "a window over the whole horizon truncates nothing");
            // a window over the whole horizon is exact; the memory estimate above refuses what does not fit
            window = wanted.min(p.steps + 1);
            continue;
        }
        let runs: Vec<Run> = runs
            .into_iter()
            .map(|r| {
                r.map_err(|e| match e {
                    Stop::Failed(e) => e,
                    Stop::Window { .. } | Stop::Halted => unreachable!("handled above"),
                })
            })
            .collect::<Result<_, _>>()?;
        let approx_error = runs.iter().map(|r| r.approx_error).fold(compression_error, f64::max);
        // the widest a replicate ended with (each may have widened in place: `window::widen`)
        let window = runs.iter().map(|r| r.window).fold(window, usize::max);
        return Ok(Replicates {
            params: *p,
            modes: atoms.map_or(1, <[Atom]>::len),
            runs,
            window,
            approx_error,
        });
    }
}

/// [`DmftError::Unstable`] at the first step where the replicates' norm2
/// disagrees beyond [`MAX_RELATIVE_SPREAD`].
fn unanimous(p: &DmftParams, path: &DmftPath) -> Result<(), DmftError> {
    let (mean, stderr) = (&path.mean[metrics::NORM2], &path.stderr[metrics::NORM2]);
    match (1..mean.len()).find(|&t| stderr[t] > MAX_RELATIVE_SPREAD * mean[t].abs()) {
        Some(step) => Err(DmftError::Unstable {
            step,
            norm2: mean[step],
            stderr: stderr[step],
            params: Box::new(*p),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use generator::Generator;
    use propdp_core::loss::Loss;
    use replicate::replicate;
    use step::ISOTROPIC;

    /// A watch that never stops a replicate.
    static NEVER: AtomicUsize = AtomicUsize::new(usize::MAX);
    const RUN_ON: Watch<'static> = Watch {
        cancelled: &|| false,
        first_stop: &NEVER,
    };

    fn params(points: usize, sample_rate: f64) -> DmftParams {
        DmftParams {
            delta: 1.0,
            s2: 1.0,
            lambda: 0.01,
            sigma: 1.0,
            eta: 0.5,
            steps: 20_000,
            sample_rate,
            clip: 1.0,
            loss: Loss::Huber { m: 1.0 },
            noise_sd: 0.5,
            points,
            scrambles: 4,
            seed: 1,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        }
    }

    /// Replicates past the earliest step at which one stopped for its window
    /// halt (`Watch`), so which stop and what window the restart takes must
    /// not depend on the threads: the same solve on 1 and 3 threads, its
    /// window grown from its first guess of 20 (in place or by restarts), is
    /// identical.
    #[test]
    fn restarts_and_their_windows_do_not_depend_on_the_threads() {
        let p = DmftParams {
            steps: 3000,
            ..params(256, 0.1)
        };
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| solve(&p)).expect("solves")
        };
        let (one, three) = (on(1), on(3));
        assert!(one.window > 20, "the window never grew: {}", one.window);
        assert_eq!(one.window, three.window);
        assert_eq!(one.path.mean, three.path.mean);
        assert_eq!(one.path.stderr, three.path.stderr);
    }

    /// A window widened in place at t = W − 1 loses nothing (`window::widen`):
    /// a replicate that starts at 40 and widens ends with the same bits as one
    /// started at the window it ended with — isotropic and with a spectrum
    /// (`field.rs`).
    #[test]
    fn a_replicate_widened_before_dropping_a_lag_is_the_replicate_at_the_wider_window() {
        // q·W < 16 at every window: the sparse events, which reuse no far lags (a dense pass
        // reuses them from t = 2W on, which a narrower window reaches earlier)
        let p = DmftParams {
            steps: 1500,
            lambda: 0.2,
            ..params(256, 0.05)
        };
        let atoms = [
            Atom {
                eigenvalue: 0.5,
                weight: 0.5,
                teacher: 1.0,
            },
            Atom {
                eigenvalue: 1.5,
                weight: 0.5,
                teacher: 1.0,
            },
        ];
        for spectrum in [None, Some(&atoms[..])] {
            let run = |window: usize| match spectrum {
                Some(a) => field::replicate(&p, Some(a), None, None, 7, window, &RUN_ON),
                None => replicate(&p, None, None, None, 7, window, &RUN_ON),
            };
            let stop = |e: Stop| match e {
                Stop::Window { window, step } => panic!("a restart at step {step} for W = {window}"),
                _ => panic!("stopped"),
            };
            let grown = run(40).unwrap_or_else(stop);
            assert!(grown.window > 40 && grown.window < 320, "W = {}", grown.window);
            let fresh = run(grown.window).unwrap_or_else(stop);
            assert_eq!(grown.window, fresh.window);
            assert_eq!(
                grown.metrics,
                fresh.metrics,
                "atoms: {}",
                spectrum.map_or(1, <[Atom]>::len)
            );
        }
    }

    #[test]
    fn the_memory_estimate_counts_the_dense_history_and_the_sparse_pairs() {
        // dense at q = 1: ĥ over the window for every path, 8·W·N bytes per replicate
        let dense = memory_estimate(&params(65_536, 1.0), 1, 8192);
        assert!(dense > 8.0 * (8192 * 65_536) as f64, "{dense:e}");
        // sparse at q = 0.002, W = 4000: 8 events expected, the pair table cap² per path
        let sparse = memory_estimate(&params(4096, 0.002), 1, 4000);
        assert!(sparse < 1e9 && sparse > 8.0 * 4096.0 * 30.0 * 30.0, "{sparse:e}");
    }

    #[test]
    fn the_cost_model_is_linear_in_paths_and_steps_and_reads_its_nodes() {
        // linear in the paths and the steps, the measured nodes in q, SPECTRUM_ATOMS atoms' worth
        // of ATOM_REPLICATE_STEP_SECONDS per replicate for any spectrum, whatever the paths
        let node = |q: f64| PATH_STEP_SECONDS.iter().find(|n| n.0 == q).map(|n| n.1).unwrap();
        let one = cost_seconds(1000, 1, 100, 0.1, 1);
        assert!((one - 1e5 * node(0.1)).abs() < 1e-12);
        assert!((cost_seconds(1000, 2, 300, 0.1, 1) - 6.0 * one).abs() < 1e-12);
        let atom = 100.0 * ATOM_REPLICATE_STEP_SECONDS;
        let spectrum = SPECTRUM_ATOMS as f64 * atom;
        assert!((cost_seconds(1000, 1, 100, 0.1, 20) - one - spectrum).abs() < 1e-12);
        assert!((cost_seconds(2000, 1, 100, 0.1, 20) - 2.0 * one - spectrum).abs() < 1e-12);
        assert!((cost_seconds(1000, 1, 100, 0.1, 4000) - one - spectrum).abs() < 1e-12);
        // between the nodes linear in ln q, beyond them the end values
        let mid = cost_seconds(1, 1, 1, (0.1f64 * 0.3).sqrt(), 1);
        assert!((mid - (node(0.1) + node(0.3)) / 2.0).abs() < 1e-15);
        assert_eq!(cost_seconds(1, 1, 1, 1e-4, 1), node(0.002));
    }

    /// The one-field-per-path solver (`field.rs`) on isotropic features
    /// against the per-path solver of §3.3, 8 replicates each at the whole
    /// horizon's window: the Onsager term's block means and the field drawn
    /// by conditioning on its window and block sums are its only further
    /// approximations, and they must not show at the replicates' precision.
    #[test]
    fn one_field_per_path_agrees_with_the_per_path_solver_on_isotropic_features() {
        let p = DmftParams {
            delta: 0.5,
            lambda: 0.05,
            sigma: 0.3,
            eta: 0.5,
            steps: 600,
            sample_rate: 0.05,
            clip: 1.0,
            ..params(1024, 0.05)
        };
        let runs = |field: bool| -> DmftPath {
            let metrics = (0..8)
                .map(|k| {
                    let r = if field {
                        field::replicate(&p, Some(&ISOTROPIC), None, None, 100 + k, p.steps + 1, &RUN_ON)
                    } else {
                        replicate(&p, None, None, None, 200 + k, p.steps + 1, &RUN_ON)
                    };
                    match r {
                        Ok(r) => r.metrics,
                        Err(_) => panic!("replicate {k} failed"),
                    }
                })
                .collect();
            aggregate(metrics, p.steps)
        };
        let (a, b) = (runs(true), runs(false));
        let mut zs = Vec::new();
        for name in [metrics::EST_ERR2, metrics::OVERLAP, metrics::NORM2] {
            for t in (30..=p.steps).step_by(30) {
                let se = (a.stderr[name][t].powi(2) + b.stderr[name][t].powi(2)).sqrt();
                zs.push((a.mean[name][t] - b.mean[name][t]) / se);
            }
        }
        let rms = (zs.iter().map(|z| z * z).sum::<f64>() / zs.len() as f64).sqrt();
        let max = zs.iter().fold(0.0f64, |m, z| m.max(z.abs()));
        assert!(rms <= 2.0 && max <= 4.0, "rms z {rms:.2}, max |z| {max:.2}");
    }

    /// The replicates' agreement: a path whose norm2 spreads beyond
    /// MAX_RELATIVE_SPREAD at some step is refused at the first such step.
    #[test]
    fn a_solve_whose_replicates_disagree_is_refused_at_the_first_such_step() {
        let healthy: Vec<Vec<Metrics>> = (0..4)
            .map(|r| {
                (0..=5)
                    .map(|t| {
                        let drift = if r == 3 && t >= 3 { 2.0 * (t - 2) as f64 } else { 0.0 };
                        Metrics::from([(metrics::NORM2.to_string(), 1.0 + 0.001 * r as f64 + drift)])
                    })
                    .collect()
            })
            .collect();
        let p = params(1024, 0.3);
        match unanimous(&p, &aggregate(healthy.clone(), 5)) {
            Err(DmftError::Unstable { step, .. }) => assert_eq!(step, 3),
            other => panic!("{other:?}"),
        }
        let calm: Vec<Vec<Metrics>> = healthy.into_iter().map(|r| r[..3].to_vec()).collect();
        assert!(unanimous(&p, &aggregate(calm, 2)).is_ok());
    }

    /// The generator's conditioning is least squares over the paths: with
    /// C_g the Gram matrix of the selected gradients (block sums merged
    /// through the dyadic partition included), ũ_t's innovation variance is
    /// a·mean_i (ĝ_t,i − Σ_j β_j F_j,i)², the residual of regressing ĝ_t on
    /// its features F — non-negative by construction. (The Rao–Blackwellised
    /// rows a·q·E[c_t ĝ_s] that it replaced are not a Gram matrix and fail
    /// this.)
    #[test]
    fn the_generators_conditioning_is_the_paths_least_squares() {
        let (n, a, q) = (64, 2.0, 0.3);
        let mut generator = Generator::new(n);
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut last = vec![0.0; n];
        for t in 0..300 {
            // correlated in time, selected with probability q
            let g: Vec<f64> = (0..n)
                .map(|i| {
                    let c = 0.8 * last[i] + uniform() - 0.5;
                    last[i] = c;
                    if uniform() < q { c } else { 0.0 }
                })
                .collect();
            let cond = generator.conditional(&g, a, t);
            let mut residual = g.clone();
            for (j, &bj) in cond.beta.iter().enumerate() {
                let feature = if j < cond.blocks {
                    generator.g.sum(j)
                } else {
                    generator.g.value(&generator.part, t - cond.nw + (j - cond.blocks))
                };
                residual.iter_mut().zip(feature).for_each(|(r, f)| *r -= bj * f);
            }
            let least_squares = a * residual.iter().map(|r| r * r).sum::<f64>() / n as f64;
            let scale = a * g.iter().map(|x| x * x).sum::<f64>() / n as f64;
            assert!(
                (cond.sd2 - least_squares).abs() <= 1e-8 * scale.max(1e-12),
                "t = {t}: innovation {:e}, least squares {least_squares:e}",
                cond.sd2
            );
            _ = generator.advance(cond, &g);
        }
    }

    /// The training loss's control variate (crate::fixed_points::train_loss): over 16
    /// replicates of clipped DP-SGD, the cross-fitted estimate's spread is
    /// below the plain path mean's — Huber: 0.49 of it when written;
    /// logistic: 0.68 (0.17 before the labels were folded into ν, which cut
    /// the plain spread 3.4×) — and the two agree within their errors.
    #[test]
    fn the_control_variate_lowers_the_training_losss_spread() {
        for (loss, noise_sd, most) in [(Loss::Huber { m: 1.0 }, 0.5, 0.7), (Loss::Logistic, 0.0, 1.0)] {
            let p = DmftParams {
                delta: 0.5,
                lambda: 0.005,
                sigma: 0.1,
                eta: 2.0,
                steps: 300,
                sample_rate: 0.01,
                clip: 0.5,
                loss,
                noise_sd,
                points: 1024,
                scrambles: 16,
                ..params(1024, 0.01)
            };
            control_variate_against_plain_mean(&p, most);
        }
    }

    fn control_variate_against_plain_mean(p: &DmftParams, most: f64) {
        let runs: Vec<Run> = (0..p.scrambles as u32)
            .map(|k| match replicate(p, None, None, None, 11 + k, 301, &RUN_ON) {
                Ok(r) => r,
                Err(_) => panic!("replicate {k} failed"),
            })
            .collect();
        let t = p.steps;
        let plain: Vec<f64> = runs.iter().map(|r| r.metrics[t][metrics::TRAIN_LOSS]).collect();
        let moments: Vec<Vec<LossMoments>> = runs.iter().map(|r| r.loss.clone()).collect();
        let cv: Vec<f64> = train_loss::cross_fitted(&moments).iter().map(|l| l[t]).collect();
        let spread = |x: &[f64]| {
            let m = x.iter().sum::<f64>() / x.len() as f64;
            (
                m,
                (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt(),
            )
        };
        let ((mp, sp), (mc, sc)) = (spread(&plain), spread(&cv));
        assert!(
            sc < most * sp,
            "{:?}: spread: control variate {sc:.2e}, plain {sp:.2e}",
            p.loss
        );
        let se = (sp * sp + sc * sc).sqrt() / (p.scrambles as f64).sqrt();
        assert!(
            (mp - mc).abs() < 4.0 * se,
            "means: plain {mp} vs control variate {mc} (se {se:.1e})"
        );
    }
}
