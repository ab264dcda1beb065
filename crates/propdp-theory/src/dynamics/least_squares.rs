//! Unclipped least-squares DP-GD and Poisson-subsampled DP-SGD, exactly:
//! the error trajectory as an integral over the spectrum of XᵀX, with no
//! Monte Carlo (docs/theory.md §3.2).
//!
//! With ℓ = (y − r)²/2 the step θ_{t+1} = (1 − ηλ)θ_t − ηXᵀD_S(Xθ_t − y) + ησξ_t
//! (D_S the diagonal of Bernoulli(q) selections) is linear in θ. Its mean
//! given (X, θ*, e) follows the expected step, and per eigenvalue x of XᵀX
//! the mean path is g_t(x)·(xθ̃* + √x ẽ) with
//!
//!   g_{t+1} = ρg_t + ηq,  ρ(x) = 1 − ηλ − ηqx,  p_t = x·g_t;
//!
//! the zero-mean rest has variance v_t(x) per eigen-direction,
//!
//!   v_{t+1} = ρ²v_t + η²σ² + η²q(1 − q)·w̄_t·x,   w̄_t = ‖Xθ_t − y‖²/n = 2·train_loss_t,
//!
//! where replacing Σᵢ wᵢu²ᵢₖ (the selections' noise, wᵢ the i-th squared
//! residual) by w̄ is exact as d → ∞ (the diagonals of functions of XXᵀ
//! concentrate uniformly in i) and O(1/d) at finite d. Then
//!
//!   overlap = s²∫p dμ,  norm2 = ∫[s²p² + sd²x g² + v] dμ,
//!   est_err2 = ∫[s²(p − 1)² + sd²x g² + v] dμ,
//!   train_loss = (δ/2)∫[(p − 1)²(s²x + sd²) + x v] dμ + sd²(1 − δ)/2.
//!
//! With correlated privacy noise σw, w = C⁻¹z for a banded Toeplitz
//! strategy C (docs/theory.md §3.7), the privacy part of v is no longer
//! white: it is v^σ_t(x) = η²σ² Σ_{n<t} f_n(x)², f_n = ρf_{n−1} + h_n, with
//! h the first column of C⁻¹ — the quadratic form η²σ² Σ_{s,s'<t}
//! ρ^{t−1−s}K_{ss'}ρ^{t−1−s'} of K = C⁻¹C⁻ᵀ — added to the rest of v (the
//! selections' noise, uncorrelated with it), which keeps its recursion
//! without the η²σ² term ([`solve_correlated`]; cyclic groups, G > 1, are
//! not served here).
//!
//! At step t every integrand is a polynomial of degree ≤ 2t + 1 in x, so
//! the quadrature of [`MarchenkoPastur::rule`] with K = T + 1 nodes gives the
//! whole trajectory to rounding; fewer nodes are used when K and 2K agree to
//! [`TOLERANCE`], and that difference is reported as the approximation error.
//! Cost O(T·K), memory O(K).
//!
//! With a feature covariance ([`solve_with_covariance`]) the recursion is
//! the same (X = ZΣ^{1/2}/√d is left-orthogonally invariant, so the closure
//! holds) and only the measures change: μ becomes the generalised
//! Marchenko–Pastur law, the teacher's terms use μ* (weights e_k), and
//!
//!   pred_err2 = B_t + sd²∫x g² dμ_Σ + ∫v dμ_Σ,
//!   B_t/s² = ⟨eω⟩ − 2∫p dμ_{eω} + ∫p²R dμ_Σ + ∫∫p(x₁)p(x₂) dν_ac,
//!
//! the two-point measure ν of `covariance_spectrum.rs` (docs/theory.md §3.2). Its quadrature
//! is not exact: K nodes per interval of the support are doubled from 32
//! until K and 2K agree to [`COVARIANCE_TOLERANCE`] (at most 512; refused
//! beyond [`COVARIANCE_MAX_ERROR`]), and the last change is the reported
//! approximation error. Once every node's state is at its fixed point to
//! rounding, the remaining steps repeat it.
//!
//! # References
//! - C. Paquette, K. Lee, F. Pedregosa, E. Paquette, "SGD in the large:
//!   average-case analysis, asymptotics, and stepsize criticality", COLT 2021.
//! - C. Paquette, E. Paquette, B. Adlam, J. Pennington, "Homogenization of
//!   SGD in high-dimensions: exact dynamics and generalization properties",
//!   arXiv:2205.07069 (2022).
//! - A. Atanasov, B. Bordelon, J. A. Zavatone-Veth, C. Paquette,
//!   C. Pehlevan, "Two-point deterministic equivalence for stochastic
//!   gradient dynamics in linear models", arXiv:2502.05074 (2025).

use std::collections::BTreeMap;

use propdp_core::covariance::Covariance;
use propdp_core::metrics;
use propdp_core::problem::Strategy;
use propdp_core::spectrum::MarchenkoPastur;
use thiserror::Error;

use super::path::DmftPath;
use crate::fixed_points::covariance_spectrum::{Rule, Spectrum};
use crate::numerics::dots;

/// The relative agreement of K and 2K nodes at which fewer than T + 1 nodes
/// are accepted.
pub const TOLERANCE: f64 = 1e-12;

/// The nodes a solve starts from (or T + 1, when fewer).
const FIRST_NODES: usize = 64;

/// With a covariance: the relative agreement of K and 2K nodes per interval
/// of the support at which K is accepted.
pub const COVARIANCE_TOLERANCE: f64 = 1e-8;

/// With a covariance: the nodes per interval a solve starts from, and the most.
const COVARIANCE_FIRST_NODES: usize = 32;
const COVARIANCE_MAX_NODES: usize = 512;

/// With a covariance: the relative change of every node's state in one step
/// below which the recursion is at its fixed point (to rounding) and the
/// rest of the path repeats the last step.
const STATIONARY: f64 = 1e-15;

/// With a covariance: the most nodes of the two-point grid (all intervals).
const COVARIANCE_MAX_PAIR_NODES: usize = 256;

/// With a covariance: the largest K-vs-2K change accepted at the most nodes.
pub const COVARIANCE_MAX_ERROR: f64 = 1e-4;

/// One unclipped least-squares DP-GD / DP-SGD point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeastSquaresParams {
    /// δ = d/n.
    pub delta: f64,
    /// Prior energy s².
    pub s2: f64,
    /// Label noise sd (y = ν + e, e ~ N(0, sd²)).
    pub noise_sd: f64,
    /// Ridge λ.
    pub lambda: f64,
    /// Gradient noise σ.
    pub sigma: f64,
    /// Step size η.
    pub eta: f64,
    /// Poisson sample rate q (1: full batch).
    pub sample_rate: f64,
    /// Number of steps T.
    pub steps: usize,
}

/// The parameters as a user set them (config keys), for error messages.
impl std::fmt::Display for LeastSquaresParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "delta = {}, s2 = {}, noise.sd = {}, lambda = {}, sigma = {}, eta = {}, sample_rate = {}, steps = {}",
            self.delta, self.s2, self.noise_sd, self.lambda, self.sigma, self.eta, self.sample_rate, self.steps
        )
    }
}

/// Failures of the exact least-squares solution.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LeastSquaresError {
    /// The second moments diverge (ηL_q ≥ 2 or the sampling-noise gain
    /// G ≥ 1): the point has no finite trajectory to predict.
    #[error(
        "least squares: second moments diverge (sampling-noise gain G = {gain:.4}, η·L_q/2 = {ratio:.4}; \
         both must be < 1) at {params}"
    )]
    Diverges {
        /// G.
        gain: f64,
        /// ηL_q/2.
        ratio: f64,
        /// The parameters.
        params: LeastSquaresParams,
    },
    /// With a covariance, the quadrature of the spectral measures did not
    /// settle: K and 2K nodes per interval of the support still differ.
    #[error(
        "least squares with a covariance: the quadrature over the spectrum of XᵀX did not converge \
         ({nodes} nodes per interval of {intervals} change the path by {approx_error:.2e} relative; \
         the support's intervals {support:?} are too close or too many: bin problem.covariance) at {params}"
    )]
    Quadrature {
        /// Nodes per interval at the last refinement.
        nodes: usize,
        /// Intervals of the support.
        intervals: usize,
        /// The support.
        support: Vec<(f64, f64)>,
        /// The last K-vs-2K change.
        approx_error: f64,
        /// The parameters.
        params: LeastSquaresParams,
    },
}

/// The exact trajectory and how it was computed.
#[derive(Debug, Clone, PartialEq)]
pub struct LeastSquaresPath {
    /// Every metric at t = 0..=T (standard errors zero: no sampling).
    pub path: DmftPath,
    /// Quadrature nodes used.
    pub nodes: usize,
    /// Largest relative change of any value from K/2 to K nodes (0 when
    /// K = T + 1, where the quadrature is exact).
    pub approx_error: f64,
}

impl LeastSquaresPath {
    /// The path of every metric from `nodes` quadrature nodes, with zero
    /// standard errors (no sampling).
    fn exact(mean: BTreeMap<String, Vec<f64>>, nodes: usize, approx_error: f64) -> Self {
        let stderr = mean
            .iter()
            .map(|(name, v)| (name.clone(), vec![0.0; v.len()]))
            .collect();
        LeastSquaresPath {
            path: DmftPath { mean, stderr },
            nodes,
            approx_error,
        }
    }
}

/// Solve `p` (see the module docs).
///
/// ```
/// use propdp_theory::dynamics::least_squares::{solve, LeastSquaresParams};
/// let p = LeastSquaresParams { delta: 0.5, s2: 1.0, noise_sd: 0.5, lambda: 0.1, sigma: 0.5,
///     eta: 0.3, sample_rate: 0.2, steps: 1 };
/// let r = solve(&p).unwrap();
/// // one step by hand: θ₁ = ηqXᵀy + ησξ, so overlap = ηq·s²·E[x] = 0.3·0.2/δ
/// assert!((r.path.mean["overlap"][1] - 0.12).abs() < 1e-14);
/// assert_eq!(r.approx_error, 0.0);
/// ```
pub fn solve(p: &LeastSquaresParams) -> Result<LeastSquaresPath, LeastSquaresError> {
    solve_isotropic(p, &Privacy::white(p))
}

/// Solve `p` with the privacy noise correlated by `strategy` (see the
/// module docs), isotropic or with features of covariance `cov`; the
/// identity strategy is [`solve_with_covariance`], to the bit.
pub fn solve_correlated(
    p: &LeastSquaresParams,
    cov: Option<&Covariance>,
    strategy: &Strategy,
) -> Result<LeastSquaresPath, LeastSquaresError> {
    let privacy = match strategy.is_identity() {
        true => Privacy::white(p),
        false => Privacy {
            white: 0.0,
            scale: p.eta * p.eta * p.sigma * p.sigma,
            impulse: strategy.impulse_response(p.steps),
        },
    };
    match cov {
        None => solve_isotropic(p, &privacy),
        Some(cov) => solve_spectrum(p, cov, &privacy, COVARIANCE_TOLERANCE),
    }
}

/// How the privacy noise enters v: `white` per step (η²σ², independent
/// noise), or the correlated part η²σ²Σ_{n<t}f_n² of C⁻¹'s first column
/// `impulse` (empty for white noise).
struct Privacy {
    white: f64,
    scale: f64,
    impulse: Vec<f64>,
}

impl Privacy {
    fn white(p: &LeastSquaresParams) -> Self {
        Privacy {
            white: p.eta * p.eta * p.sigma * p.sigma,
            scale: 0.0,
            impulse: Vec::new(),
        }
    }

    /// One step of the correlated part at every node: f ← ρf + h_t, v^σ += η²σ²f².
    fn step(&self, t: usize, rho: &[f64], f: &mut [f64], v_sigma: &mut [f64]) {
        let Some(&h) = self.impulse.get(t) else {
            return;
        };
        for ((f, v), r) in f.iter_mut().zip(v_sigma.iter_mut()).zip(rho) {
            *f = r * *f + h;
            *v += self.scale * *f * *f;
        }
    }
}

fn solve_isotropic(p: &LeastSquaresParams, privacy: &Privacy) -> Result<LeastSquaresPath, LeastSquaresError> {
    let mp = MarchenkoPastur::new(p.delta).expect("a validated δ");
    let gain = mp.sgd_noise_gain(p.lambda, p.eta, p.sample_rate);
    let ratio = p.eta * (p.sample_rate * mp.edges().1 + p.lambda) / 2.0;
    if !(gain < 1.0 && ratio < 1.0) {
        return Err(LeastSquaresError::Diverges {
            gain,
            ratio,
            params: *p,
        });
    }
    let exact = p.steps + 1;
    let mut k = FIRST_NODES.min(exact);
    let mut path = trajectory(p, &mp, k, privacy);
    let mut approx_error = 0.0;
    while k < exact {
        let finer = (2 * k).min(exact);
        let next = trajectory(p, &mp, finer, privacy);
        approx_error = if finer == exact {
            0.0
        } else {
            largest_change(&path, &next)
        };
        let done = finer == exact || approx_error <= TOLERANCE;
        (path, k) = (next, finer);
        if done {
            break;
        }
    }
    Ok(LeastSquaresPath::exact(path, k, approx_error))
}

/// Solve `p` for features of covariance `cov` (docs/theory.md §3.2, "With
/// a feature covariance"): `None` is [`solve`]; a spectrum integrates the
/// same per-eigenvalue recursion against the measures of
/// `covariance_spectrum.rs` (docs/theory.md §3.2) and adds `pred_err2`, with
/// `nodes` per interval of the support and the K-vs-2K change as
/// `approx_error`.
pub fn solve_with_covariance(
    p: &LeastSquaresParams,
    cov: Option<&Covariance>,
) -> Result<LeastSquaresPath, LeastSquaresError> {
    let Some(cov) = cov else {
        return solve(p);
    };
    solve_spectrum(p, cov, &Privacy::white(p), COVARIANCE_TOLERANCE)
}

/// [`solve_with_covariance`] with a spectrum, its quadrature accepted once
/// K and 2K nodes per interval agree to `tolerance` (relative) instead of
/// [`COVARIANCE_TOLERANCE`]: for a caller that needs the path to a known
/// coarser precision (its error is in the path's `approx_error`).
pub fn solve_with_covariance_within(
    p: &LeastSquaresParams,
    cov: &Covariance,
    tolerance: f64,
) -> Result<LeastSquaresPath, LeastSquaresError> {
    solve_spectrum(p, cov, &Privacy::white(p), tolerance)
}

fn solve_spectrum(
    p: &LeastSquaresParams,
    cov: &Covariance,
    privacy: &Privacy,
    tolerance: f64,
) -> Result<LeastSquaresPath, LeastSquaresError> {
    let spec = Spectrum::new(cov, p.delta);
    let gain = spec.noise_gain(p.lambda, p.eta, p.sample_rate);
    let ratio = p.eta * (p.sample_rate * spec.right_edge() + p.lambda) / 2.0;
    if !(gain < 1.0 && ratio < 1.0) {
        return Err(LeastSquaresError::Diverges {
            gain,
            ratio,
            params: *p,
        });
    }
    // the two-point grid costs O(K²) to build and O(K·rank) a step: capped lower
    let pairs = |k: usize| k.min(COVARIANCE_MAX_PAIR_NODES / spec.intervals().len()).max(8);
    let mut k = COVARIANCE_FIRST_NODES;
    let mut path = covariance_trajectory(p, &spec.rule(k, pairs(k)), privacy);
    let approx_error = loop {
        let next = covariance_trajectory(p, &spec.rule(2 * k, pairs(2 * k)), privacy);
        let change = largest_change(&path, &next);
        (path, k) = (next, 2 * k);
        if change <= tolerance || k >= COVARIANCE_MAX_NODES {
            break change;
        }
    };
    if approx_error.is_nan() || approx_error > COVARIANCE_MAX_ERROR {
        return Err(LeastSquaresError::Quadrature {
            nodes: k,
            intervals: spec.intervals().len(),
            support: spec.intervals().to_vec(),
            approx_error,
            params: *p,
        });
    }
    Ok(LeastSquaresPath::exact(path, k, approx_error))
}

/// The trajectory with a covariance's rule: the isotropic recursion, the
/// teacher's terms against μ*, and `pred_err2` = B_t + sd²∫xg² dμ_Σ + ∫v dμ_Σ
/// with B_t/s² = ⟨eω⟩ − 2∫p dμ_{eω} + ∫p²R dμ_Σ + ∫∫p₁p₂ dν_ac.
#[allow(clippy::needless_range_loop)]
fn covariance_trajectory(p: &LeastSquaresParams, rule: &Rule, privacy: &Privacy) -> BTreeMap<String, Vec<f64>> {
    let (x, n) = (&rule.x, rule.x.len());
    let (eta, q, sd2, s2) = (p.eta, p.sample_rate, p.noise_sd * p.noise_sd, p.s2);
    let rho: Vec<f64> = x.iter().map(|x| 1.0 - eta * p.lambda - eta * q * x).collect();
    let (mut g, mut v_rest, mut pt) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let (mut f, mut v_sigma, mut v) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let names = [
        metrics::EST_ERR2,
        metrics::OVERLAP,
        metrics::NORM2,
        metrics::TRAIN_LOSS,
        metrics::PRED_ERR2,
    ];
    let mut out: Vec<Vec<f64>> = vec![Vec::with_capacity(p.steps + 1); names.len()];
    let mode_rows: Vec<&[f64]> = rule.modes.iter().map(|(_, u)| u.as_slice()).collect();
    let mut projections = vec![0.0; mode_rows.len()];
    for t in 0..=p.steps {
        let (mut overlap, mut p2, mut f2, mut xf2) = (0.0, 0.0, 0.0, 0.0);
        let (mut fluct, mut loss_noise, mut fluct_sigma) = (0.0, 0.0, 0.0);
        let (mut cross, mut diag) = (0.0, 0.0);
        for j in 0..n {
            let pj = x[j] * g[j];
            pt[j] = pj;
            let (f, noise) = ((pj - 1.0).powi(2), sd2 * x[j] * g[j] * g[j]);
            overlap += rule.w_teacher[j] * pj;
            p2 += rule.w_teacher[j] * pj * pj;
            f2 += rule.w_teacher[j] * f;
            xf2 += rule.w_teacher[j] * x[j] * f;
            fluct += rule.w[j] * (noise + v[j]);
            loss_noise += rule.w[j] * (sd2 * f + x[j] * v[j]);
            fluct_sigma += rule.w_sigma[j] * (noise + v[j]);
            cross += rule.w_cross[j] * pj;
            diag += rule.w_diag[j] * pj * pj;
        }
        // ∫∫p₁p₂ dν_ac = Σ_r λ_r (u_r·p)²: the products four modes at a time
        dots(&pt[rule.pair_start..], &mode_rows, &mut projections);
        let off: f64 = rule
            .modes
            .iter()
            .zip(&projections)
            .map(|((l, _), u)| l * u.powi(2))
            .sum();
        let bias = s2 * (rule.cross_mass - 2.0 * cross + diag + off);
        let loss = p.delta / 2.0 * (s2 * xf2 + loss_noise) + sd2 * (1.0 - p.delta) / 2.0;
        for (o, m) in out
            .iter_mut()
            .zip([s2 * f2 + fluct, s2 * overlap, s2 * p2 + fluct, loss, bias + fluct_sigma])
        {
            o.push(m);
        }
        if t == p.steps {
            break;
        }
        let feed = eta * eta * q * (1.0 - q) * 2.0 * loss;
        let mut moved = 0.0f64;
        privacy.step(t, &rho, &mut f, &mut v_sigma);
        for j in 0..n {
            let (v0, g0) = (v[j], g[j]);
            v_rest[j] = rho[j] * rho[j] * v_rest[j] + privacy.white + feed * x[j];
            v[j] = v_rest[j] + v_sigma[j];
            g[j] = rho[j] * g[j] + eta * q;
            moved = moved.max((v[j] - v0).abs() / v[j].abs().max(f64::MIN_POSITIVE));
            moved = moved.max((g[j] - g0).abs() / g[j].abs().max(f64::MIN_POSITIVE));
        }
        if moved <= STATIONARY {
            // at the fixed point of the (contracting) recursion: every later step repeats it
            for o in &mut out {
                let last = *o.last().expect("t ≥ 0");
                o.resize(p.steps + 1, last);
            }
            break;
        }
    }
    names.iter().map(|n| n.to_string()).zip(out).collect()
}

/// The trajectory with the `k`-node rule.
fn trajectory(p: &LeastSquaresParams, mp: &MarchenkoPastur, k: usize, privacy: &Privacy) -> BTreeMap<String, Vec<f64>> {
    let (x, w) = mp.rule(k);
    let (eta, q, sd2) = (p.eta, p.sample_rate, p.noise_sd * p.noise_sd);
    let rho: Vec<f64> = x.iter().map(|x| 1.0 - eta * p.lambda - eta * q * x).collect();
    let (mut g, mut v_rest) = (vec![0.0; k + 1], vec![0.0; k + 1]);
    let (mut f, mut v_sigma, mut v) = (vec![0.0; k + 1], vec![0.0; k + 1], vec![0.0; k + 1]);
    let names = [metrics::EST_ERR2, metrics::OVERLAP, metrics::NORM2, metrics::TRAIN_LOSS];
    let mut out: Vec<Vec<f64>> = vec![Vec::with_capacity(p.steps + 1); names.len()];
    for t in 0..=p.steps {
        let (mut overlap, mut norm2, mut err2, mut loss) = (0.0, 0.0, 0.0, 0.0);
        for j in 0..=k {
            let pj = x[j] * g[j];
            let fluct = sd2 * x[j] * g[j] * g[j] + v[j];
            overlap += w[j] * pj;
            norm2 += w[j] * (p.s2 * pj * pj + fluct);
            err2 += w[j] * (p.s2 * (pj - 1.0).powi(2) + fluct);
            loss += w[j] * ((pj - 1.0).powi(2) * (p.s2 * x[j] + sd2) + x[j] * v[j]);
        }
        let loss = p.delta / 2.0 * loss + sd2 * (1.0 - p.delta) / 2.0;
        for (o, m) in out.iter_mut().zip([err2, p.s2 * overlap, norm2, loss]) {
            o.push(m);
        }
        if t == p.steps {
            break;
        }
        let feed = eta * eta * q * (1.0 - q) * 2.0 * loss;
        privacy.step(t, &rho, &mut f, &mut v_sigma);
        for j in 0..=k {
            v_rest[j] = rho[j] * rho[j] * v_rest[j] + privacy.white + feed * x[j];
            v[j] = v_rest[j] + v_sigma[j];
            g[j] = rho[j] * g[j] + eta * q;
        }
    }
    names.iter().map(|n| n.to_string()).zip(out).collect()
}

/// The largest change of any value between two trajectories, relative to
/// the largest magnitude of its metric.
fn largest_change(a: &BTreeMap<String, Vec<f64>>, b: &BTreeMap<String, Vec<f64>>) -> f64 {
    a.iter()
        .map(|(name, va)| {
            let vb = &b[name];
            let scale = vb.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
            va.iter().zip(vb).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(sample_rate: f64, steps: usize) -> LeastSquaresParams {
        LeastSquaresParams {
            delta: 0.5,
            s2: 1.0,
            noise_sd: 0.5,
            lambda: 0.1,
            sigma: 0.5,
            eta: 0.3,
            sample_rate,
            steps,
        }
    }

    #[test]
    fn full_batch_gd_is_the_closed_form_spectral_integral() {
        // q = 1: p_t = x(1 − ρᵗ)/(x + λ), v_t = η²σ²(1 − ρ^{2t})/(1 − ρ²), integrated
        // against the density by a different rule (midpoints in the angle, 20000 nodes)
        for (delta, lambda) in [(0.5, 0.1), (2.0, 0.1), (3.0, 0.0)] {
            let p = LeastSquaresParams {
                delta,
                lambda,
                sample_rate: 1.0,
                steps: 30,
                ..point(1.0, 30)
            };
            let r = solve(&p).unwrap();
            let mp = MarchenkoPastur::new(delta).unwrap();
            let (lo, hi) = mp.edges();
            let m = 20_000;
            let t = p.steps as i32;
            let (mut err2, mut mass) = (0.0, 0.0);
            for i in 0..m {
                let phi = (i as f64 + 0.5) * std::f64::consts::PI / m as f64;
                let x = 0.5 * (lo + hi) + 0.5 * (hi - lo) * phi.cos();
                // dλ = (hi − lo)/2 sin φ dφ; density √((hi−x)(x−lo))/(2πx)
                let dens = ((hi - x) * (x - lo)).max(0.0).sqrt() / (2.0 * std::f64::consts::PI * x);
                let wt = dens * 0.5 * (hi - lo) * phi.sin() * std::f64::consts::PI / m as f64;
                let rho = 1.0 - p.eta * (lambda + x);
                let pt = x * (1.0 - rho.powi(t)) / (x + lambda);
                let g = pt / x;
                let v = p.eta * p.eta * p.sigma * p.sigma * (1.0 - rho.powi(2 * t)) / (1.0 - rho * rho);
                err2 += wt * (p.s2 * (pt - 1.0).powi(2) + 0.25 * x * g * g + v);
                mass += wt;
            }
            // the atom at 0 (δ > 1): p = 0, g = ηt (λ = 0) or (1 − ρ^t)/λ, x g² = 0
            let atom = 1.0 - mass;
            let rho0 = 1.0 - p.eta * lambda;
            let v0 = if lambda > 0.0 {
                p.eta * p.eta * p.sigma * p.sigma * (1.0 - rho0.powi(2 * t)) / (1.0 - rho0 * rho0)
            } else {
                p.eta * p.eta * p.sigma * p.sigma * t as f64
            };
            err2 += atom * (p.s2 + v0);
            let got = r.path.mean["est_err2"][p.steps];
            assert!((got - err2).abs() < 1e-6 * err2, "δ = {delta}: {got} vs {err2}");
        }
    }

    #[test]
    fn the_helper_s_reference_values_at_t_20() {
        // from an independent numpy implementation of the recursion, itself checked
        // against simulation and the DMFT (docs/theory.md §3.2)
        let r = solve(&point(0.2, 20)).unwrap();
        let m = &r.path.mean;
        for (name, want) in [
            ("est_err2", 0.367464297912),
            ("overlap", 0.657118234501),
            ("norm2", 0.681700766914),
            ("train_loss", 0.159563957906),
        ] {
            assert!((m[name][20] - want).abs() < 1e-11, "{name}: {} vs {want}", m[name][20]);
        }
        // t = 1 by hand: 0.8419, 0.12, 0.0819, 0.4894
        for (name, want) in [
            ("est_err2", 0.8419),
            ("overlap", 0.12),
            ("norm2", 0.0819),
            ("train_loss", 0.4894),
        ] {
            assert!((m[name][1] - want).abs() < 1e-12, "{name}: {} vs {want}", m[name][1]);
        }
    }

    #[test]
    fn long_horizons_use_few_nodes_and_agree_with_the_exact_rule() {
        let p = LeastSquaresParams {
            lambda: 0.05,
            sigma: 0.3,
            eta: 2.2947,
            sample_rate: 0.01,
            ..point(0.01, 2000)
        };
        let r = solve(&p).unwrap();
        assert!(
            r.nodes < 2001 && r.approx_error <= TOLERANCE,
            "{} nodes, {}",
            r.nodes,
            r.approx_error
        );
        let mp = MarchenkoPastur::new(p.delta).unwrap();
        let exact = trajectory(&p, &mp, p.steps + 1, &Privacy::white(&p));
        assert!(largest_change(&r.path.mean, &exact) < 1e-11);
    }

    #[test]
    fn a_divergent_step_is_refused_with_its_gain() {
        let p = LeastSquaresParams {
            lambda: 0.05,
            eta: 9.235,
            sample_rate: 0.01,
            ..point(0.01, 10)
        };
        match solve(&p) {
            Err(LeastSquaresError::Diverges { gain, ratio, .. }) => assert!(gain > 2.0 && ratio < 1.0),
            other => panic!("{other:?}"),
        }
    }
}
