//! Long-horizon state evolution of DP-GD and DP-SGD (docs/theory.md §3.3):
//! the DMFT of [`crate::dmft`] with work linear in T and memory independent
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
//! lags ≥ W are dropped, and W is widened (the solve restarted, with the
//! window the estimate's decay asks for) until the estimated effect of the
//! dropped tail on the metrics is below [`TRUNCATION_TOL`]. C_g's rows are the
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
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.
//! - Rasmussen, Williams (2006), *Gaussian Processes for Machine Learning*, §2.2
//!   (Gaussian conditioning).

use std::collections::VecDeque;

use nalgebra::{DMatrix, DVector};
use propdp_core::config::LONG_HORIZON_POINTS;
use propdp_core::config::simulation::machine_memory;
use propdp_core::covariance::{Atom, Covariance};
use propdp_core::loss::Loss;
use propdp_core::metrics::{self, Metrics};
use rayon::prelude::*;

use crate::dmft::{DmftError, DmftParams, DmftPath, STEIN_MIN_S2, aggregate, rqmc_uniform4, step_metrics};
use crate::dyadic::{Advance, Dyadic, Partition, Track};
use crate::fixed_points::train_loss::{self, LossMoments, LossSums};
use crate::least_squares::{self, LeastSquaresParams};
use crate::modes::spectral_metrics;
use crate::numerics::gaussian::quantile;
use crate::reverse_mode::{self, Events};

mod combine;
mod field;
mod folded;
mod state;

use combine::{combine, dot};

use state::{Slot, StateCovariance};

/// Exact lags of R_g's rows in the memories; older lags act on block sums.
pub const NEAR: usize = 10;
/// Values of ũ (and ĝ) the generator conditions on individually.
pub const GEN_WINDOW: usize = 10;
/// Blocks of the memories' far field (α = ¼: R_g varies little within a block).
const MEMORY_RULE: Dyadic = Dyadic { alpha: 0.25, beta: 0.5 };
/// Blocks of the generator's features.
const GEN_RULE: Dyadic = Dyadic { alpha: 0.5, beta: 0.5 };
/// Largest estimated effect on a metric of R_g's dropped lags that a solve accepts.
pub const TRUNCATION_TOL: f64 = 1e-3;

/// Steps the dense reverse pass reuses its far lags for ([`far_adjoints`]).
const FAR_STRIDE: usize = 8;

/// R_g(t, t − m), m < W, into `acc` by the events' reverse pass
/// (reverse_mode.rs), with the dense pass's far lags (m ≥ 32) run every
/// [`FAR_STRIDE`] steps from t = 2W on and reused in between: by then the
/// window no longer holds the first steps' transient and the dynamics have
/// relaxed as far as R_θ has decayed over W (the truncation criterion), so
/// the far lags are stationary but for their paths' spread. Each run
/// measures what reusing the previous run's lags changed — their
/// Σ_B |Σ_{m ∈ B} ΔR_g(t, t − m)| over dyadic lag blocks, times
/// 2η·Σ_l |R_θ(t, t − l)| (the truncation estimate's form: a memory error
/// acting through the relaxation) — and returns it for `approx_error`; it
/// includes the paths' spread between the two runs, so it over-states the
/// reuse's own effect (docs/theory.md §3.3).
#[allow(clippy::too_many_arguments)]
fn far_adjoints(
    events: &mut Events,
    t: usize,
    w: usize,
    vv: &[f64],
    eta: f64,
    h: &[f64],
    acc: &mut [f64],
    scale: f64,
) -> f64 {
    let reuse = t >= 2 * w && !(t - 2 * w).is_multiple_of(FAR_STRIDE);
    match events.adjoints(t, w, vv, eta, h, acc, reuse) {
        // a run one step after the last reused nothing
        Some((change, age)) if age > 1 => {
            let relaxation: f64 = vv.iter().map(|x| x.abs()).sum();
            2.0 * eta * scale * change * relaxation
        }
        _ => 0.0,
    }
}

/// A long-horizon prediction: the per-step path and its approximation error.
#[derive(Debug, Clone, PartialEq)]
pub struct LongHorizonPath {
    /// Means and standard errors over replicates, t = 0..=T.
    pub path: DmftPath,
    /// Largest estimated effect of the truncated response memory on a metric.
    pub approx_error: f64,
    /// The response window W the solve settled on.
    pub window: usize,
}

/// Most atoms the solver carries (one coordinate-side mode each: their
/// deterministic work grows linearly in them); larger spectra are
/// compressed to [`COMPRESSED_NODES`], or to this many, nodes.
pub const MAX_MODES: usize = 32;
/// Seconds of one core per path and step of an isotropic long-horizon solve
/// at sample rates q (between the nodes: linear in ln q; beyond them: the
/// end value). Measured at T = 3000, 4 × 2048 paths, δ = 0.5, λ = 0.05,
/// clipped Huber (η = 0.1) and logistic (η = 0.2), the larger of the two
/// (docs/performance.md, "Cost model"): the cost peaks at q ≈ 0.1–0.3,
/// where the dense reverse pass runs over long windows (W ≈ 400–900).
pub const PATH_STEP_SECONDS: [(f64, f64); 6] = [
    (0.002, 3.4e-7),
    (0.01, 3.9e-7),
    (0.03, 4.2e-7),
    (0.1, 1.0e-6),
    (0.3, 1.6e-6),
    (1.0, 7.0e-7),
];
/// Further seconds per path and step for each atom of a spectrum (the
/// atoms' deterministic side: virtual paths, block lanes, state covariance;
/// measured 1.8e-8 to 4.9e-8 with 20 atoms).
pub const ATOM_PATH_STEP_SECONDS: f64 = 3e-8;

/// Estimated seconds on one core of a long-horizon solve over `paths` RQMC
/// paths in all (points × scrambles), `steps` steps at sample rate `q`, with
/// a spectrum of `atoms` atoms (1: isotropic): paths × T × (c(q) + 3e-8·K),
/// c(q) from [`PATH_STEP_SECONDS`], K the atoms solved (compressed beyond
/// [`MAX_MODES`]) — this machine's kind, within a factor of 2 over the
/// measured grid (q from 0.002 to 1, isotropic and 20 atoms, T = 3000 and
/// 10⁴).
pub fn cost_seconds(paths: f64, steps: usize, q: f64, atoms: usize) -> f64 {
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
        ATOM_PATH_STEP_SECONDS * atoms.min(MAX_MODES) as f64
    } else {
        0.0
    };
    (per_path_step + spectrum) * paths * steps as f64
}

/// One core's estimated seconds ([`cost_seconds`]) above which the default
/// paths per replicate are halved ([`default_points`]).
pub const BUDGET_SECONDS: f64 = 120.0;

/// Paths per replicate when `solver.dmft_points` is not given:
/// [`LONG_HORIZON_POINTS`], or half as many where that would cost more than
/// [`BUDGET_SECONDS`] of one core (about a minute on two cores) — the long
/// horizons with spectra, or at q ≈ 0.1–0.3 (T = 10⁴ with 20 atoms:
/// 49–73 s on two cores at 2048 paths for q from 0.002 to 1). The standard
/// error grows with it and is reported; docs/theory.md §3.4 compares it with
/// a simulation's.
pub fn default_points(steps: usize, q: f64, atoms: usize, scrambles: usize) -> usize {
    let full = LONG_HORIZON_POINTS;
    if cost_seconds((full * scrambles) as f64, steps, q, atoms) > BUDGET_SECONDS {
        full / 2
    } else {
        full
    }
}

/// Nodes a larger spectrum is compressed to first.
pub const COMPRESSED_NODES: usize = 16;
/// Largest measured effect on a metric of compressing the spectrum that a solve accepts.
pub const COMPRESSION_TOL: f64 = 2e-3;

/// A spectrum of more than [`MAX_MODES`] atoms compressed
/// ([`Covariance::compress`]) to [`COMPRESSED_NODES`], or to [`MAX_MODES`]
/// when that is not within [`COMPRESSION_TOL`], with the compression's
/// measured effect: the largest change of a metric at any step of the
/// linearised dynamics — exact least squares with the loss's largest
/// curvature h (step ηh, ridge λ/h, noise σ/h: the same (1 − ηλ) decay and
/// ησ noise) — on the full against the compressed spectrum.
fn compress(p: &DmftParams, cov: &Covariance) -> Result<(Option<Covariance>, f64), DmftError> {
    let h = curvature_bound(p.loss);
    let ls = LeastSquaresParams {
        delta: p.delta,
        s2: p.s2,
        noise_sd: p.noise_sd,
        lambda: p.lambda / h,
        sigma: p.sigma / h,
        eta: p.eta * h,
        sample_rate: p.sample_rate,
        steps: p.steps,
    };
    let refuse = |what: String| DmftError::Invalid {
        what,
        params: Box::new(*p),
    };
    let path = |c: Option<&Covariance>| {
        least_squares::solve_with_covariance(&ls, c).map_err(|e| {
            refuse(format!(
                "the spectrum's {} atoms are above the long-horizon solver's {MAX_MODES}, and the effect of \
                 compressing them could not be measured on the linearised dynamics ({e}): bin the spectrum into \
                 at most {MAX_MODES} levels",
                cov.atoms().len()
            ))
        })
    };
    let full = path(Some(cov))?;
    let mut error = f64::INFINITY;
    for nodes in [COMPRESSED_NODES, MAX_MODES] {
        let small = cov.compress(nodes);
        let approx = path(small.as_ref())?;
        error = full
            .path
            .mean
            .iter()
            .filter_map(|(name, a)| approx.path.mean.get(name).map(|b| (a, b)))
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0, f64::max);
        if error <= COMPRESSION_TOL {
            return Ok((small, error));
        }
    }
    Err(refuse(format!(
        "the spectrum's {} atoms are above the long-horizon solver's {MAX_MODES}, and compressing them to \
         {MAX_MODES} nodes changes the linearised dynamics' metrics by {error:.2e}, above {COMPRESSION_TOL:e}: \
         bin the spectrum into at most {MAX_MODES} levels yourself (merging directions of similar eigenvalue)",
        cov.atoms().len()
    )))
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
/// one coordinate-side mode per atom and one field per path (`field.rs`);
/// a spectrum of more than [`MAX_MODES`] atoms is compressed, with the
/// compression's measured effect in `approx_error` (`compress`). `None`:
/// isotropic features.
pub fn solve_spectrum(
    p: &DmftParams,
    cov: Option<&Covariance>,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<LongHorizonPath, DmftError> {
    let invalid = |what: String| DmftError::Invalid {
        what,
        params: Box::new(*p),
    };
    let (compressed, compression_error) = match cov {
        Some(c) if c.atoms().len() > MAX_MODES => compress(p, c)?,
        _ => (cov.cloned(), 0.0),
    };
    let cov = compressed.as_ref();
    let atoms = cov.map(Covariance::atoms);
    let rho = p.s2 * cov.map_or(1.0, Covariance::teacher_field);
    if p.points == 0 {
        return Err(invalid("points = 0".into()));
    }
    if p.scrambles < 2 {
        return Err(invalid("scrambles < 2 (a standard error needs two)".into()));
    }
    if rho < STEIN_MIN_S2 * (1.0 + p.noise_sd * p.noise_sd) {
        return Err(invalid(format!(
            "s2 = {:e} (teacher field ρ = {rho:e}) below {STEIN_MIN_S2:e}·(1 + sd²): the long-horizon solver needs \
             the Stein drift; use dmft = \"exact\"",
            p.s2
        )));
    }
    let limit = 2.0
        / propdp_core::problem::mean_step_smoothness_at(curvature_bound(p.loss), p.delta, p.lambda, p.sample_rate, cov);
    if p.eta >= limit {
        // the response kernels alternate in sign there, which the block memory does not resolve
        // (docs/theory.md §3.3: 24% off at δ = 1, q = 0.05, η = 3.8 ≥ 2.86, with no truncation at all)
        return Err(invalid(format!(
            "eta = {:?} ≥ 2/L_q = {limit:.4}, the mean step's stability limit: the long-horizon state evolution \
             is not vouched for beyond it; use the full-memory DMFT (dmft = \"exact\")",
            p.eta
        )));
    }
    let mut window = (p.steps + 1).min(16.max((2.0 / p.sample_rate).ceil() as usize));
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
        let runs: Vec<Result<Run, Stop>> = (0..p.scrambles as u32)
            .into_par_iter()
            .map(|k| {
                let seed = p.seed.wrapping_mul(0x9E37_79B9).wrapping_add(k);
                match atoms {
                    Some(a) if a.len() > 1 => field::replicate(p, atoms, seed, window, cancelled),
                    _ => replicate(p, atoms, seed, window, cancelled),
                }
            })
            .collect();
        let wanted = runs
            .iter()
            .filter_map(|r| match r {
                Err(Stop::Window(w)) => Some(*w),
                _ => None,
            })
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
                    Stop::Window(_) => unreachable!("handled above"),
                })
            })
            .collect::<Result<_, _>>()?;
        let approx_error = runs.iter().map(|r| r.approx_error).fold(compression_error, f64::max);
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
        unanimous(p, &path)?;
        return Ok(LongHorizonPath {
            path,
            approx_error,
            window,
        });
    }
}

/// Largest relative standard error of norm2 over the replicates that a
/// long-horizon solve writes. Healthy solves stay below 5% (their RQMC
/// spread: about 0.1% at q ≥ 0.1, up to 5% at q = 0.01 with 8 × 1024
/// paths); the generator's instability of Rao–Blackwellised C_g rows
/// (fixed in session 26, docs/theory.md §3.3: one replicate's C_θ(t,t)
/// drifted from 2.4 to 5–270 while the others stayed) reached 20–79%.
pub const MAX_RELATIVE_SPREAD: f64 = 0.2;

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

/// Bytes a solve holds at once with `modes` atoms at response window `w`: per replicate running
/// in parallel, the per-path histories (up to 64 blocks each: one atom's θ̃, O, the baseline's
/// O⁰ and ũ, or with a spectrum the field G, ĝ and ĝ⁰ (`field.rs`); ĝ over the generator's
/// blocks), per atom its virtual paths, block lanes and state covariance, and the events.
fn memory_estimate(p: &DmftParams, modes: usize, w: usize) -> f64 {
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
    parallel * (8.0 * (histories + per_atom) + reverse_mode::bytes(p.points, w, p.sample_rate))
}

/// One replicate's metrics and truncation estimate.
struct Run {
    metrics: Vec<Metrics>,
    /// Per step: the moments of the training loss's control variate.
    loss: Vec<LossMoments>,
    approx_error: f64,
}

/// Why a replicate stopped.
enum Stop {
    /// The response window is too short for the accuracy: the window the
    /// estimate's decay suggests.
    Window(usize),
    Failed(DmftError),
}

impl From<DmftError> for Stop {
    fn from(e: DmftError) -> Self {
        Stop::Failed(e)
    }
}

/// y += a·x.
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Σ_{l ≤ NEAR} near[l]·X_{t−l} + Σ_B far[B]·X_B of a track, into `out`.
fn memory(track: &Track, part: &Partition, t: usize, near: &[f64], far: &[f64], out: &mut [f64]) {
    let terms: Vec<(f64, &[f64])> = near
        .iter()
        .enumerate()
        .map(|(l, &c)| (c, track.value(part, t - l)))
        .chain(far.iter().enumerate().map(|(b, &c)| (c, track.sum(b))))
        .collect();
    combine(out, &terms);
}

/// x ← (1−ηλ)x − η·mem + drive, one recursion (R1) step.
fn recursion(x: &mut [f64], decay: f64, eta: f64, mem: &[f64], drive: Option<&[f64]>) {
    match drive {
        Some(d) => {
            for ((xi, m), di) in x.iter_mut().zip(mem).zip(d) {
                *xi = decay * *xi - eta * m + di;
            }
        }
        None => {
            for (xi, m) in x.iter_mut().zip(mem) {
                *xi = decay * *xi - eta * m;
            }
        }
    }
}

/// β = Σ_FF⁻¹Σ_Ft of the Gaussian conditioning, by Cholesky with a relative
/// ridge of 1e-12; when the estimated Σ_FF is not positive definite (its
/// entries come from different kernel rows, so it need not be a Gram matrix),
/// by the pseudo-inverse over its eigenvalues above 1e-10 of the largest.
fn conditional_weights(sff: DMatrix<f64>, sft: &DVector<f64>) -> DVector<f64> {
    let dim = sff.nrows();
    let ridge = 1e-12 * sff.trace().max(1e-300) / dim as f64;
    if let Some(chol) = (sff.clone() + DMatrix::identity(dim, dim) * ridge).cholesky() {
        return chol.solve(sft);
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

/// sup ℓ'' of a loss (bounds |ĥ| in the truncation estimate).
fn curvature_bound(loss: Loss) -> f64 {
    match loss {
        Loss::Logistic | Loss::ConditionalLogistic => 0.25,
        Loss::Huber { .. } | Loss::ConditionalHuber { .. } | Loss::Squared => 1.0,
    }
}

/// The target covariance of the generator's features (Cov(U_B, U_B'),
/// Cov(ũ_j, U_B) and the C_g band of the windowed values), kept through the merges.
struct GeneratorCovariance {
    blocks: Vec<Vec<f64>>,
    window: VecDeque<(Vec<f64>, Vec<f64>)>,
}

impl GeneratorCovariance {
    /// C_g(j, j') of two windowed values (j, j' positions in the window).
    fn band(&self, j: usize, jp: usize) -> f64 {
        let (hi, lo) = if j >= jp { (j, jp) } else { (jp, j) };
        self.window[hi].1[hi - lo]
    }

    /// The merge of the oldest windowed value into the blocks.
    fn merge(&mut self, m: &[Vec<f64>]) {
        let (cbw_e, cgb_e) = self.window.pop_front().expect("a full window");
        let k = self.blocks.len();
        let ext = |i: usize, j: usize| match (i < k, j < k) {
            (true, true) => self.blocks[i][j],
            (true, false) => cbw_e[i],
            (false, true) => cbw_e[j],
            (false, false) => cgb_e[0],
        };
        let kn = m.len();
        let mut next = vec![vec![0.0; kn]; kn];
        for (a, ra) in m.iter().enumerate() {
            for (b, rb) in m.iter().enumerate().skip(a) {
                let mut v = 0.0;
                for (i, &x) in ra.iter().enumerate().filter(|(_, x)| **x != 0.0) {
                    for (j, &y) in rb.iter().enumerate().filter(|(_, y)| **y != 0.0) {
                        v += x * y * ext(i, j);
                    }
                }
                next[a][b] = v;
                next[b][a] = v;
            }
        }
        self.blocks = next;
        // the remaining windowed values j: Cov(ũ_j, ·) over the new blocks, C_g(j, e) at lag j − e
        for (lag, (cbw, cgb)) in self.window.iter_mut().enumerate().map(|(i, x)| (i + 1, x)) {
            let ext: Vec<f64> = cbw.iter().copied().chain([cgb[lag]]).collect();
            *cbw = m.iter().map(|r| r.iter().zip(&ext).map(|(x, y)| x * y).sum()).collect();
        }
    }
}

/// One atom of the spectrum on the coordinate side (docs/theory.md §3.4):
/// its constants, its amplitudes and the exact covariance of its linear
/// state. Without a covariance there is one with ω = w = e = 1.
struct Coordinate {
    /// ω_k.
    omega: f64,
    /// √ω_k.
    sqrt_omega: f64,
    /// w_kω_k: the mode's share of the field's covariance and response.
    share: f64,
    /// √(w_kω_k).
    sqrt_share: f64,
    /// w_k.
    weight: f64,
    /// s²e_k, the variance of its teacher coordinate Θᵏ.
    teacher: f64,
    /// w_kω_ks²e_k/ρ: its share of the field's amplitude m_t/ρ.
    amp_share: f64,
    /// Aᵏ_s for every step so far.
    amp: Vec<f64>,
    state: StateCovariance,
}

impl Coordinate {
    fn new(atom: &Atom, s2: f64, rho: f64) -> Self {
        let (share, teacher) = (atom.weight * atom.eigenvalue, s2 * atom.teacher);
        Coordinate {
            omega: atom.eigenvalue,
            sqrt_omega: atom.eigenvalue.sqrt(),
            share,
            sqrt_share: share.sqrt(),
            weight: atom.weight,
            teacher,
            amp_share: share * teacher / rho,
            amp: vec![0.0],
            state: StateCovariance::new(),
        }
    }

    /// Aᵏ_{t+1} = (1 − ηλ)Aᵏ_t − ηω_k[Σ_j R_g(t,j)Aᵏ_j + M_g(t)], M_g(t) = D_t − Σ_j R_g(t,j)m_j/ρ,
    /// and θ̃ᵏ_{t+1}'s entry in the state's covariance, its terms at the positions `at`
    /// ([`theta_positions`]).
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        t: usize,
        k: &Kernel,
        amp_w: &[f64],
        drift: f64,
        decay: f64,
        eta: f64,
        sigma: f64,
        at: &[usize],
    ) {
        let om = self.omega;
        let lag: f64 =
            k.rg.iter()
                .enumerate()
                .map(|(l, r)| r * (self.amp[t - l] - amp_w[t - l]))
                .sum();
        let next = decay * self.amp[t] - eta * om * (drift + lag);
        self.amp.push(next);
        // θ̃_t: decay and the lag-0 memory; ũ_t; the older lags; the blocks (as `theta_positions`)
        let mut terms: Vec<(usize, f64)> = Vec::with_capacity(at.len());
        let near0 = k.near.first().map_or(0.0, |&c| -eta * om * c);
        terms.push((at[0], decay + near0));
        terms.push((at[1], -eta * self.sqrt_omega));
        for (l, &cl) in k.near.iter().enumerate().skip(1) {
            terms.push((at[1 + l], -eta * om * cl));
        }
        for (b, &cb) in k.far.iter().enumerate() {
            terms.push((at[k.near.len().max(1) + 1 + b], -eta * om * cb));
        }
        self.state.extend(Slot::Theta(t + 1), &terms, (eta * sigma).powi(2));
    }
}

/// The positions, in every atom's state (after ũ_t's entry), of θ̃ᵏ_{t+1}'s
/// terms in [`Coordinate::step`]'s order: θ̃_t, ũ_t, θ̃_{t−l} for the kernel's
/// lags 1 ≤ l ≤ NEAR, then the memory partition's blocks.
fn theta_positions(state: &StateCovariance, t: usize, k: &Kernel, mem: &Partition) -> Vec<usize> {
    let mut at = vec![state.position(&Slot::Theta(t)), state.position(&Slot::U(t))];
    at.extend((1..k.near.len()).map(|l| state.position(&Slot::Theta(t - l))));
    at.extend(mem.blocks().iter().map(|&b| state.position(&Slot::ThetaBlock(b))));
    at
}

/// One atom of the spectrum on the coordinate side of a per-path replicate:
/// its [`Coordinate`] and every path's copy of its linear state.
struct Mode {
    coord: Coordinate,
    /// Θᵏ − b_kν of every path, b_k = √(w_kω_k)s²e_k/ρ: the part of its teacher
    /// coordinate independent of ν.
    theta_perp: Vec<f64>,
    theta: Track,
    onsager: Track,
    onsager0: Track,
    virt: Track,
    utrack: Track,
    th: Vec<f64>,
    on: Vec<f64>,
    on0: Vec<f64>,
    vv: Vec<f64>,
    u: Vec<f64>,
}

/// R_g(t, t − m) for m < W and the memories' kernel: its exact lags ≤ NEAR
/// and its block means over the memory partition's older blocks.
struct Kernel {
    rg: Vec<f64>,
    near: Vec<f64>,
    far: Vec<f64>,
}

impl Kernel {
    fn new(rg: Vec<f64>, mem: &Partition, t: usize) -> Self {
        let near: Vec<f64> = rg.iter().take(NEAR + 1).copied().collect();
        let far: Vec<f64> = mem
            .blocks()
            .iter()
            .map(|&(b0, b1)| {
                let s: f64 = (b0.max((t + 1).saturating_sub(rg.len()))..b1).map(|k| rg[t - k]).sum();
                s / (b1 - b0) as f64
            })
            .collect();
        Kernel { rg, near, far }
    }
}

/// Every path's teacher field ν, Stein weight z₀ = ν/√ρ, label and baseline
/// (the label's value the Stein drift's control variate needs: the noise
/// for a regression, +1 for logistic), and E z₀. `gaussian` is ν drawn
/// from N(0, ρ); a logistic label is folded into it (`folded.rs`): ν' = yν
/// from group 0's second uniform, label +1, E z₀ = E ν'/√ρ.
struct Teacher {
    nu: Vec<f64>,
    z0: Vec<f64>,
    label: Vec<f64>,
    baseline: Vec<f64>,
    z0_mean: f64,
}

fn teacher(p: &DmftParams, rho: f64, first: &[[f64; 4]], gaussian: Vec<f64>) -> Teacher {
    let n = gaussian.len();
    let (nu, label, baseline, z0_mean) = match p.loss {
        Loss::Huber { .. } | Loss::Squared => {
            let e: Vec<f64> = first.iter().map(|x| p.noise_sd * quantile(x[1])).collect();
            let label = (0..n).map(|i| gaussian[i] + e[i]).collect();
            (gaussian, label, e, 0.0)
        }
        Loss::Logistic => {
            let folded = folded::Folded::new(rho);
            let nu = first.iter().map(|x| folded.quantile(x[1])).collect();
            (nu, vec![1.0; n], vec![1.0; n], folded.mean() / rho.sqrt())
        }
        Loss::ConditionalHuber { .. } | Loss::ConditionalLogistic => (gaussian.clone(), gaussian, vec![0.0; n], 0.0),
    };
    Teacher {
        z0: nu.iter().map(|v| v / rho.sqrt()).collect(),
        nu,
        label,
        baseline,
        z0_mean,
    }
}

/// The generator family: ĝ's block history and the target covariance of ũ's
/// features (every mode's ũᵏ is an independent GP(0, C_g)).
struct Generator {
    part: Partition,
    g: Track,
    target: GeneratorCovariance,
}

/// ũ_t's law given its features (U_B, ũ_{t−nw..t−1}) under the target
/// covariance — the same for every mode — and C_g(t, ·)'s row.
struct Conditional {
    /// ũ_t's terms over the state's entries.
    terms: Vec<(Slot, f64)>,
    /// The innovation's variance.
    sd2: f64,
    beta: DVector<f64>,
    /// Blocks and windowed values conditioned on.
    blocks: usize,
    nw: usize,
    /// C_g(t, B) over the generator's blocks, and C_g(t, t − l), l = 0..=nw.
    row_blocks: Vec<f64>,
    cgb: Vec<f64>,
}

impl Generator {
    fn new(n: usize) -> Self {
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
    fn conditional(&self, g: &[f64], a: f64, t: usize) -> Conditional {
        let blocks_u = self.part.blocks().len();
        let nw = t.min(GEN_WINDOW);
        let dot = |x: &[f64]| a * dot(g, x) / g.len() as f64;
        let row_blocks: Vec<f64> = (0..blocks_u).map(|b| dot(self.g.sum(b))).collect();
        let cgb: Vec<f64> = (0..=nw)
            .map(|l| {
                if l == 0 {
                    dot(g)
                } else {
                    dot(self.g.value(&self.part, t - l))
                }
            })
            .collect();
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
    fn advance(&mut self, cond: Conditional, g: &[f64]) -> Advance {
        self.target.window.push_back((cond.row_blocks, {
            let mut v = cond.cgb;
            v.resize(GEN_WINDOW + 1, 0.0);
            v
        }));
        let step = self.part.advance();
        if let Some(mat) = step.matrix(cond.blocks) {
            self.target.merge(&mat);
        }
        self.g.push(&self.part, &step, g);
        step
    }
}

/// The drift (Stein, Rao–Blackwellised): D_t = (a·q/√ρ)·E[z₀(c_t − βc⁰_t) + βE z₀·c⁰_t],
/// β = κ²/(ρ + κ²), c⁰ the baseline's slope (E z₀ ≠ 0 only for folded logistic labels).
fn stein_drift(p: &DmftParams, rho: f64, teacher: &Teacher, c: &[f64], c0: &[f64], a: f64, q: f64) -> f64 {
    let (n, kappa2) = (c.len(), 1.0 + p.noise_sd * p.noise_sd);
    let beta_s = kappa2 / (rho + kappa2);
    let z0 = &teacher.z0;
    let x: f64 = (0..n).map(|i| z0[i] * (c[i] - beta_s * c0[i])).sum();
    // E[z₀c⁰] = E z₀·E c⁰: the baseline does not depend on ν
    let centre = beta_s * teacher.z0_mean * c0.iter().sum::<f64>();
    a * q * (x + centre) / n as f64 / rho.sqrt()
}

/// How far below [`TRUNCATION_TOL`] a widened window aims, leaving room for
/// the estimate's spread between replicates and steps (±10% on the 20-level
/// Huber q = 0.3 point, flat over t = 1000..10⁴ at W = 762). It was 4 with a
/// quarter of W added, while the generator's drifting replicate (docs/theory.md
/// §3.3) made the estimate grow late and forced late restarts; with the Gram
/// rows that point settles at W = 550 instead of 762 (the metrics move by
/// < 0.1 standard errors; 72–81 s instead of 91–102 s).
const WINDOW_HEADROOM: f64 = 2.0;

/// The truncation estimate at step t once lags ≥ W exist (0 before): its
/// value, or the window that meets [`TRUNCATION_TOL`] / [`WINDOW_HEADROOM`]
/// — the estimate falls like exp(−γ·W): that window, at least W/8 more; no
/// decay seen (γ = 0: no ridge, R_θ does not forget): the whole horizon.
#[allow(clippy::too_many_arguments)]
fn truncation(vv: &[f64], rg: &[f64], w: usize, t: usize, p: &DmftParams, h_max: f64, c_tt: f64) -> Result<f64, Stop> {
    if t < w {
        return Ok(0.0);
    }
    let (e, decay_rate) = truncation_estimate(vv, rg, w, t, p.eta, 1.0 / p.delta, p.sample_rate, h_max);
    let e = e * c_tt.sqrt();
    if e > TRUNCATION_TOL {
        let more = (WINDOW_HEADROOM * e / TRUNCATION_TOL).ln() / decay_rate;
        let suggested = if decay_rate > 0.0 && more < p.steps as f64 {
            w + (w / 8).max(more.ceil() as usize)
        } else {
            p.steps + 1
        };
        return Err(Stop::Window(suggested));
    }
    Ok(e)
}

/// Step t's metrics (the plain path mean of the loss; `solve` replaces it by
/// the control-variate estimate), the loss's control-variate moments and
/// C_θ(t,t), the field's variance,
/// from the exact moments of the linear state: per mode Var θ̃ᵏ_t, then the mixtures.
fn step_record<'a>(
    p: &DmftParams,
    t: usize,
    spectral: bool,
    rho: f64,
    amp: f64,
    coords: impl Iterator<Item = &'a Coordinate>,
    loss: &LossSums,
) -> Result<(Metrics, LossMoments, f64), DmftError> {
    let (mut c_tt, mut m_t, mut q0, mut m0, mut v_own, mut v_spread) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for m in coords {
        let (ak, vk) = (m.amp[t], m.state.var(Slot::Theta(t)));
        c_tt += m.share * (m.teacher * ak * ak + vk);
        m_t += m.share * m.teacher * ak;
        q0 += m.weight * (m.teacher * ak * ak + vk);
        m0 += m.weight * m.teacher * ak;
        v_own += m.share * vk;
        v_spread += m.share * m.teacher * (ak - amp) * (ak - amp);
    }
    let mt = if spectral {
        spectral_metrics(p, t, rho, m_t, c_tt, m0, q0, loss.mean_loss())?
    } else {
        step_metrics(p, t, m_t, c_tt, loss.mean_loss())?
    };
    let v_centred = v_own + v_spread;
    Ok((
        mt,
        loss.moments(train_loss::surrogate_mean(p.loss, rho, p.noise_sd, amp, v_centred)),
        c_tt,
    ))
}

/// Every path's values of one step ([`sample_step`]).
struct StepBuffers {
    r: Vec<f64>,
    /// c = clip_C(ℓ').
    c: Vec<f64>,
    /// ℓ''·1{|ℓ'| < C}.
    hh: Vec<f64>,
    /// The selected c and ĥ (0 off the batch).
    g: Vec<f64>,
    h: Vec<f64>,
    /// The baseline's clipped slope c⁰ at its own Onsager term.
    c0: Vec<f64>,
}

impl StepBuffers {
    fn new(n: usize) -> Self {
        StepBuffers {
            r: vec![0.0; n],
            c: vec![0.0; n],
            hh: vec![0.0; n],
            g: vec![0.0; n],
            h: vec![0.0; n],
            c0: vec![0.0; n],
        }
    }
}

/// Step t on every path (§3.3): r_t = A_tν + G_t − η·(Onsager term), the
/// loss and its control variate's surrogate, c, ĥ, the selections and the
/// baselines' slopes, into `b`.
#[allow(clippy::too_many_arguments)]
fn sample_step(
    p: &DmftParams,
    amp: f64,
    (nu, label, baseline): (&[f64], &[f64], &[f64]),
    thc: &[f64],
    on_w: &[f64],
    on0_w: &[f64],
    selection: &[bool],
    b: &mut StepBuffers,
) -> LossSums {
    let eta = p.eta;
    let clip = |d1: f64| if d1.abs() < p.clip { d1 } else { p.clip.copysign(d1) };
    let mut loss = LossSums::default();
    for i in 0..nu.len() {
        b.r[i] = amp * nu[i] + thc[i] - eta * on_w[i];
        let (l, d1, d2) = p.loss.eval(label[i], b.r[i]);
        loss.add(l, train_loss::surrogate(p.loss, label[i], amp, nu[i], thc[i]));
        b.c[i] = clip(d1);
        b.hh[i] = if d1.abs() < p.clip { d2 } else { 0.0 };
        (b.g[i], b.h[i]) = if selection[i] { (b.c[i], b.hh[i]) } else { (0.0, 0.0) };
        b.c0[i] = clip(p.loss.slope(baseline[i], thc[i] - eta * on0_w[i]));
    }
    loss
}

/// ρ = s²Σwωe: the variance of the teacher field ν (s² without a covariance).
fn teacher_field(s2: f64, spectrum: &[Atom]) -> f64 {
    s2 * spectrum
        .iter()
        .map(|m| m.weight * m.eigenvalue * m.teacher)
        .sum::<f64>()
}

/// The one atom of isotropic features.
const ISOTROPIC: [Atom; 1] = [Atom {
    eigenvalue: 1.0,
    weight: 1.0,
    teacher: 1.0,
}];

// The kernels are indexed as in docs/theory.md §3 (R_θ(t,s), C_g(t,s), …).
#[allow(clippy::needless_range_loop, clippy::too_many_lines)]
fn replicate(
    p: &DmftParams,
    atoms: Option<&[Atom]>,
    seed: u32,
    window: usize,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Run, Stop> {
    let (tt, n, a, eta, q) = (p.steps, p.points, 1.0 / p.delta, p.eta, p.sample_rate);
    let nf = n as f64;
    let decay = 1.0 - eta * p.lambda;
    let spectrum = atoms.unwrap_or(&ISOTROPIC);
    let k_modes = spectrum.len();
    let rho = teacher_field(p.s2, spectrum);
    // RQMC dimensions in groups of four: group 0 (mode 0's teacher, the label), group t + 1
    // (mode 0's ũ_t innovation, its ξ̃_t, S_t) for every step; modes k ≥ 1: group T + k
    // (their teacher) and group T + K + t(K − 1) + k − 1 (their ũ_t innovation, ξ̃_t)
    let draws = |group: usize| -> Vec<[f64; 4]> { (0..n).map(|i| rqmc_uniform4(i, group, seed)).collect() };
    let mode_group = |k: usize, t: usize| tt + k_modes + t * (k_modes - 1) + k - 1;
    let first = draws(0);
    let teacher_normals: Vec<Vec<f64>> = (0..k_modes)
        .map(|k| {
            let d = if k == 0 { first.clone() } else { draws(tt + k) };
            d.iter().map(|x| quantile(x[0])).collect()
        })
        .collect();
    let mut gaussian = vec![0.0; n];
    for (m, zk) in spectrum.iter().zip(&teacher_normals) {
        let (sd, root) = ((p.s2 * m.teacher).sqrt(), (m.weight * m.eigenvalue).sqrt());
        for i in 0..n {
            gaussian[i] += root * sd * zk[i];
        }
    }
    let teacher = teacher(p, rho, &first, gaussian.clone());
    let (nu, label, baseline) = (&teacher.nu, &teacher.label, &teacher.baseline);
    let w = window;
    // the memory family: per mode θ̃, O, the baseline's O⁰ and the virtual paths V (lane s % W: Rᵏ(·, s))
    let mut mem = Partition::new(NEAR + 1, MEMORY_RULE);
    let mut modes: Vec<Mode> = spectrum
        .iter()
        .zip(&teacher_normals)
        .map(|(m, zk)| {
            let coord = Coordinate::new(m, p.s2, rho);
            let b = coord.sqrt_share * coord.teacher / rho;
            Mode {
                theta_perp: (0..n).map(|i| coord.teacher.sqrt() * zk[i] - b * gaussian[i]).collect(),
                coord,
                theta: Track::new(n, NEAR + 1),
                onsager: Track::new(n, NEAR + 1),
                onsager0: Track::new(n, NEAR + 1),
                virt: Track::new(w, NEAR + 1),
                utrack: Track::new(n, GEN_WINDOW),
                th: vec![0.0; n],
                on: vec![0.0; n],
                on0: vec![0.0; n],
                vv: vec![0.0; w],
                u: vec![0.0; n],
            }
        })
        .collect();
    {
        let step = mem.advance();
        for m in &mut modes {
            m.theta.push(&mem, &step, &m.th);
            m.onsager.push(&mem, &step, &m.on);
            m.onsager0.push(&mem, &step, &vec![0.0; n]);
            m.virt.push(&mem, &step, &m.vv);
        }
    }
    let mut generator = Generator::new(n);
    // each path's recent events (steps with ĥ ≠ 0) for the reverse mode: a ring of capacity E
    let mut events = Events::new(n, w, q);
    let h_max = curvature_bound(p.loss);
    // m_s/ρ of every step so far: the field's amplitude on ν
    let mut amp_w = vec![0.0];
    let mut out = Vec::with_capacity(tt + 1);
    let mut moments = Vec::with_capacity(tt + 1);
    let mut approx_error: f64 = 0.0;
    let mut sv = StepBuffers::new(n);
    let (mut thc, mut on_w, mut on0_w) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut vv = vec![0.0; w];
    let mut scratch = vec![0.0; n];
    let (mut acc_buf, mut vmem) = (vec![0.0; w], vec![0.0; w]);
    for t in 0..=tt {
        if cancelled() {
            return Err(DmftError::Cancelled { step: t, steps: tt }.into());
        }
        let step_draws = if t < tt { draws(t + 1) } else { Vec::new() };
        // 1. the paths: the field's centred part and Onsager terms over the modes, r_t, the
        //    loss, c_t = clip(ℓ'), ℓ''·1{|ℓ'| < C}, the selections
        let amp = amp_w[t];
        thc.fill(0.0);
        on_w.fill(0.0);
        on0_w.fill(0.0);
        for m in &modes {
            let ak = m.coord.amp[t];
            for i in 0..n {
                thc[i] += m.coord.sqrt_share * (ak * m.theta_perp[i] + m.th[i]);
                on_w[i] += m.coord.share * m.on[i];
            }
            axpy(&mut on0_w, m.coord.share, &m.on0);
        }
        let selection: Vec<bool> = if q < 1.0 && t < tt {
            step_draws.iter().map(|x| x[2] < q).collect()
        } else {
            vec![true; n]
        };
        let loss = sample_step(p, amp, (nu, label, baseline), &thc, &on_w, &on0_w, &selection, &mut sv);
        let (mt, mom, c_tt) = step_record(p, t, atoms.is_some(), rho, amp, modes.iter().map(|m| &m.coord), &loss)?;
        out.push(mt);
        moments.push(mom);
        if t == tt {
            break;
        }
        // 2–3. C_g(t, ·) and every mode's ũᵏ_t by Gaussian conditioning on its (U_B,
        //    ũ_{t−nw..t−1}): the same weights for every mode, its own innovation
        let cond = generator.conditional(&sv.g, a, t);
        // the modes' own draws this step: (ũ innovation, ξ̃) per path
        let mode_draws: Vec<Vec<[f64; 4]>> = (1..k_modes).map(|k| draws(mode_group(k, t))).collect();
        let u_terms = modes[0].coord.state.indexed(&cond.terms);
        for (k, m) in modes.iter_mut().enumerate() {
            let d = if k == 0 { &step_draws } else { &mode_draws[k - 1] };
            let mut u: Vec<f64> = d.iter().map(|x| quantile(x[0])).collect();
            if cond.beta.is_empty() {
                u.iter_mut().for_each(|x| *x *= cond.sd2.max(0.0).sqrt());
            } else {
                u.iter_mut().for_each(|x| *x *= cond.sd2.sqrt());
                for (i, &bi) in cond.beta.iter().enumerate() {
                    if i < cond.blocks {
                        axpy(&mut u, bi, m.utrack.sum(i));
                    } else {
                        axpy(
                            &mut u,
                            bi,
                            m.utrack.value(&generator.part, t - cond.nw + (i - cond.blocks)),
                        );
                    }
                }
            }
            m.u = u;
            m.coord.state.extend(Slot::U(t), &u_terms, cond.sd2);
        }
        let step_u = generator.advance(cond, &sv.g);
        for m in &mut modes {
            m.utrack.push(&generator.part, &step_u, &m.u);
        }
        // 4. R_g(t, t − m), m < W: reverse mode from the selected paths (terminal weight ĥ_t;
        //    Rao–Blackwellising it costs every path a pass and did not lower the metrics' spread),
        //    through the field's response R_w = Σ_k w_kω_kRᵏ
        let acc = &mut acc_buf[..w.min(t + 1)];
        approx_error = approx_error.max(far_adjoints(&mut events, t, w, &vv, eta, &sv.h, acc, a / nf));
        events.record(t, w, &sv.h, &vv);
        let kernel = Kernel::new(acc.iter().map(|x| a * x / nf).collect(), &mem, t);
        // 5. the drift
        let drift = stein_drift(p, rho, &teacher, &sv.c, &sv.c0, a, q);
        // 6. the truncation estimate (once lags ≥ W exist)
        approx_error = approx_error.max(truncation(&vv, &kernel.rg, w, t, p, h_max, c_tt)?);
        // 7. the recursions, per mode; the baseline's own selected gradients ĝ⁰_t = S_t·c⁰_t
        //    drive their Onsager memory
        sv.c0
            .iter_mut()
            .zip(&selection)
            .for_each(|(x, &s)| *x = if s { *x } else { 0.0 });
        let (near, far) = (&kernel.near, &kernel.far);
        vv.fill(0.0);
        let at = theta_positions(&modes[0].coord.state, t, &kernel, &mem);
        for (k, m) in modes.iter_mut().enumerate() {
            let (om, eta_om) = (m.coord.omega, eta * m.coord.omega);
            memory(&m.theta, &mem, t, near, far, &mut scratch);
            let d = if k == 0 { &step_draws } else { &mode_draws[k - 1] };
            for i in 0..n {
                let xi = quantile(d[i][1]);
                m.th[i] = decay * m.th[i] - eta * (m.coord.sqrt_omega * m.u[i] + om * scratch[i]) + eta * p.sigma * xi;
            }
            memory(&m.onsager, &mem, t, near, far, &mut scratch);
            recursion(&mut m.on, decay, eta_om, &scratch, Some(&sv.g));
            memory(&m.onsager0, &mem, t, near, far, &mut scratch);
            recursion(&mut m.on0, decay, eta_om, &scratch, Some(&sv.c0));
            m.virt.reset_lane(t % w);
            m.vv[t % w] = 0.0;
            memory(&m.virt, &mem, t, near, far, &mut vmem);
            recursion(&mut m.vv, decay, eta_om, &vmem, None);
            m.vv[t % w] += 1.0;
            axpy(&mut vv, m.coord.share, &m.vv);
            m.coord.step(t, &kernel, &amp_w, drift, decay, eta, p.sigma, &at);
        }
        // then the windows and blocks of step t + 1
        let step = mem.advance();
        let theta_window: Vec<usize> = ((t + 1).saturating_sub(NEAR)..=t + 1).collect();
        let u_window: Vec<usize> = ((t + 1).saturating_sub(GEN_WINDOW)..=t).collect();
        for m in &mut modes {
            m.theta.push(&mem, &step, &m.th);
            m.onsager.push(&mem, &step, &m.on);
            m.onsager0.push(&mem, &step, &m.on0);
            m.virt.push(&mem, &step, &m.vv);
        }
        let layout = modes[0]
            .coord
            .state
            .layout((&theta_window, mem.blocks()), (&u_window, generator.part.blocks()));
        for m in &mut modes {
            m.coord.state.apply(&layout);
        }
        amp_w.push(modes.iter().map(|m| m.coord.amp_share * m.coord.amp[t + 1]).sum());
        events.store_row(t + 1, w, &vv);
    }
    Ok(Run {
        metrics: out,
        loss: moments,
        approx_error,
    })
}

/// Estimated effect on a metric, per unit of the field scale √C_θ(t,t), of
/// dropping R_g(t, k) for k ≤ t − W: the dropped mass of R_g's row, its
/// geometric continuation from the last two quarters of the window (from the
/// row itself, or at first order |R_g(t,k)| ≈ η·a·q²·sup ℓ''²·|R_θ(t,k)| when
/// that is smaller — at small q the row's entries are mostly noise), times
/// 2η and the relaxation time Σ_l |R_θ(t, t−l)|; with R_θ's decay rate per
/// lag at the window's end.
#[allow(clippy::too_many_arguments)]
fn truncation_estimate(
    now: &[f64],
    rg: &[f64],
    w: usize,
    t: usize,
    eta: f64,
    a: f64,
    q: f64,
    h_max: f64,
) -> (f64, f64) {
    let r = |l: usize| now[(t - l) % w].abs();
    let quarter = (w / 4).max(1);
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
        max_r(w - quarter + 1, w + 1),
        max_r(w - 2 * quarter + 1, w - quarter + 1),
    );
    let tail_theta = tail(last, prev, (w - quarter + 1..=w).map(r).sum());
    // R_θ's decay per lag, γ = ln(prev/last)/quarter (0: no decay seen)
    let rate = if last > 0.0 && prev > last {
        (prev / last).ln() / quarter as f64
    } else {
        0.0
    };
    let abs_sum = |lo: usize, hi: usize| rg[lo..hi].iter().map(|x| x.abs()).sum::<f64>();
    let (s_prev, s_last) = (abs_sum(w - 2 * quarter, w - quarter), abs_sum(w - quarter, w));
    let tail_g = tail(s_last, s_prev, s_last).min(eta * a * q * q * h_max * h_max * tail_theta);
    if tail_g == 0.0 {
        return (0.0, rate);
    }
    let relaxation: f64 = (1..=w).map(r).sum::<f64>() + tail_theta;
    (2.0 * eta * tail_g * relaxation, rate)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_default_paths_are_halved_only_where_the_full_budget_would_take_minutes() {
        // the full-batch corner of docs/performance.md: T = 10⁴, q = 1, 20 atoms
        assert_eq!(default_points(10_000, 1.0, 20, 4), LONG_HORIZON_POINTS / 2);
        // the validated configurations keep the full budget: 10 atoms at q = 0.01, T = 3000;
        // isotropic full batch at T = 10⁴
        assert_eq!(default_points(3000, 0.01, 10, 4), LONG_HORIZON_POINTS);
        assert_eq!(default_points(10_000, 1.0, 1, 4), LONG_HORIZON_POINTS);
        // the long windows of q ≈ 0.1–0.3: Huber at q = 0.1 with 10 atoms (W ≈ 800)
        assert_eq!(default_points(10_000, 0.1, 10, 4), LONG_HORIZON_POINTS / 2);
        // linear in the paths and the steps, the measured nodes in q, 3e-8 per atom and path-step
        let one = cost_seconds(1000.0, 100, 0.1, 1);
        assert!((one - 1e5 * 1.0e-6).abs() < 1e-12);
        assert!((cost_seconds(2000.0, 300, 0.1, 1) - 6.0 * one).abs() < 1e-12);
        assert!((cost_seconds(1000.0, 100, 0.1, 20) - one - 1e5 * 20.0 * 3e-8).abs() < 1e-12);
        assert!((cost_seconds(1000.0, 100, 0.1, 40) - one - 1e5 * MAX_MODES as f64 * 3e-8).abs() < 1e-12);
        // between the nodes linear in ln q, beyond them the end values
        let mid = cost_seconds(1.0, 1, (0.1f64 * 0.3).sqrt(), 1);
        assert!((mid - 1.3e-6).abs() < 1e-15);
        assert_eq!(cost_seconds(1.0, 1, 1e-4, 1), 3.4e-7);
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
                        field::replicate(&p, Some(&ISOTROPIC), 100 + k, p.steps + 1, &|| false)
                    } else {
                        replicate(&p, None, 200 + k, p.steps + 1, &|| false)
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
            .map(|k| match replicate(p, None, 11 + k, 301, &|| false) {
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
