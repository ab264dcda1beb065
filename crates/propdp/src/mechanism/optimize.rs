//! The banded strategy that minimises propdp's predicted metric: at a fixed
//! participation (G groups, b ≤ G bands) and a fixed σ — the guarantee does
//! not depend on the coefficients, only on G, p and T — the metric at step
//! T is a function of the coefficients, minimised by Nelder–Mead (argmin's
//! `NelderMead`, derivative-free: the state evolution's metric has no cheap
//! gradient in the coefficients) from the prefix-sum-optimal ones s, on a
//! coarse RQMC budget with fixed scrambles (a smooth, deterministic
//! function of the coefficients), within a budget of solves. Up to
//! [`FULL_BANDS`] bands the search is over the b − 1 ratios c_k/c₀; beyond,
//! over a warp of s with three parameters, c₀ = s₀ and
//! c_k = s_k·exp(a₀ + a₁u + a₂u²), u = k/(b − 1) (a level and a tilt of
//! the tail against the diagonal) — so the search never ends above s.
//!
//! A buffered linear Toeplitz strategy (in the fixed order, where its σ
//! follows its sensitivity: calibrated at every point) is searched over its
//! m buffers' logit θᵢ and ωᵢ, from the BLT of [`BLT_BUFFERS`] buffers
//! nearest (least squares in c_k/c₀) to the prefix-sum-optimal banded
//! strategy of G bands ([`blt_start`]).
//!
//! # References
//! - Nelder, Mead (1965), *A simplex method for function minimization*.
//! - Choquette-Choo, McMahan, Rush, Thakurta (2023), *(Amplified) banded
//!   matrix factorization*, arXiv 2306.08153 (the prefix-sum objective).

use argmin::core::{CostFunction, Executor, State};
use argmin::solver::neldermead::NelderMead;
use propdp_core::problem::Strategy;
use propdp_theory::solve::TheorySolver;

use super::candidate::{Participation, Problem};

/// Bands up to which every ratio c_k/c₀ is searched.
pub const FULL_BANDS: usize = 5;

/// Buffers of the BLT searched.
pub const BLT_BUFFERS: usize = 2;

/// The noise of a strategy in the search.
#[derive(Debug, Clone, Copy)]
pub enum Noise {
    /// σ, whatever the coefficients (amplified, at most G bands).
    Fixed(f64),
    /// σ calibrated to the budget for each strategy (the fixed order).
    Calibrated,
}

/// The coordinates of the search.
#[derive(Debug, Clone)]
enum Coordinates {
    /// The ratios c_k/c₀, k ≥ 1.
    Ratios,
    /// (a₀, a₁, a₂) warping the start's coefficients.
    Warp(Vec<f64>),
    /// A BLT of this many buffers: logit θᵢ, then ωᵢ.
    Blt(usize),
}

impl Coordinates {
    /// The strategy at `x` (None: not a valid strategy).
    fn strategy(&self, x: &[f64]) -> Option<Strategy> {
        if let Coordinates::Blt(m) = *self {
            let decay: Vec<f64> = x[..m].iter().map(|l| 1.0 / (1.0 + (-l).exp())).collect();
            return Strategy::blt(&decay, &x[m..]).ok();
        }
        let c: Vec<f64> = match self {
            Coordinates::Ratios => std::iter::once(1.0).chain(x.iter().copied()).collect(),
            Coordinates::Warp(s) => {
                let last = (s.len() - 1) as f64;
                s.iter()
                    .enumerate()
                    .map(|(k, &v)| match k {
                        0 => v,
                        _ => {
                            let u = k as f64 / last;
                            v * (x[0] + x[1] * u + x[2] * u * u).exp()
                        }
                    })
                    .collect()
            }
            Coordinates::Blt(_) => unreachable!("returned above"),
        };
        Strategy::banded(&c).ok()
    }
}

/// A metric far above any prediction, standing for a strategy whose
/// prediction failed (NaN-free for the simplex).
const FAILED: f64 = 1e100;

/// The metric of the strategy at a point of the coordinates.
struct Metric<'p, 'a> {
    coordinates: Coordinates,
    problem: &'p Problem<'a>,
    solver: &'p TheorySolver,
    part: Participation,
    noise: Noise,
    solves: std::cell::Cell<usize>,
    on_solve: &'p dyn Fn(),
}

impl CostFunction for Metric<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, x: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        self.solves.set(self.solves.get() + 1);
        (self.on_solve)();
        let sigma = |s: Strategy| match self.noise {
            Noise::Fixed(sigma) => Some(sigma),
            Noise::Calibrated => self.problem.sigma(self.part, s).ok().flatten(),
        };
        let value = self
            .coordinates
            .strategy(x)
            .and_then(|s| self.problem.predict(self.solver, self.part, s, sigma(s)?).ok())
            .map_or(FAILED, |(v, _)| if v.is_finite() { v } else { FAILED });
        Ok(value)
    }
}

/// The strategy of `start`'s form (its bands, or a BLT of its buffers)
/// minimising the metric at participation `part` and `noise`, by at most
/// `solves` coarse solves (`on_solve` after each), and the solves used.
pub fn optimise(
    problem: &Problem,
    coarse: &TheorySolver,
    part: Participation,
    noise: Noise,
    start: Strategy,
    solves: usize,
    on_solve: &dyn Fn(),
) -> crate::Result<(Strategy, usize)> {
    let (coordinates, x0) = if let Some((decay, scale)) = start.blt_parameters() {
        let logit = decay.iter().map(|t| (t / (1.0 - t)).ln());
        (
            Coordinates::Blt(decay.len()),
            logit.chain(scale.iter().copied()).collect(),
        )
    } else {
        let Some(c) = start.coefficients().filter(|c| c.len() >= 2) else {
            return Ok((start, 0));
        };
        ratios_or_warp(c)
    };
    // the simplex: the start and a step along each axis (a fifth of a ratio, at least 0.05;
    // half a unit of a logit)
    let mut simplex = vec![x0.clone()];
    for i in 0..x0.len() {
        let mut v = x0.clone();
        v[i] += match coordinates {
            Coordinates::Blt(m) if i < m => 0.5,
            _ => (0.2 * v[i].abs()).max(0.05),
        };
        simplex.push(v);
    }
    let metric = Metric {
        coordinates: coordinates.clone(),
        problem,
        solver: coarse,
        part,
        noise,
        solves: std::cell::Cell::new(0),
        on_solve,
    };
    // each iteration costs one to n + 2 solves; the executor stops at the iteration cap
    let iterations = (solves / 2).max(1) as u64;
    let solver = NelderMead::new(simplex)
        .with_sd_tolerance(1e-5)
        .map_err(|e| crate::Error::compute(format!("Nelder–Mead: {e}")))?;
    let result = Executor::new(metric, solver)
        .configure(|s| s.max_iters(iterations))
        .run()
        .map_err(|e| crate::Error::compute(format!("the search of the strategy's coefficients: {e}")))?;
    let used = result.problem.problem.as_ref().map_or(0, |m| m.solves.get());
    let best = result
        .state
        .get_best_param()
        .and_then(|x| coordinates.strategy(x))
        .unwrap_or(start);
    Ok((best, used))
}

/// The coordinates of a banded search from coefficients `c` (b ≥ 2) and
/// the start's point in them.
fn ratios_or_warp(c: &[f64]) -> (Coordinates, Vec<f64>) {
    if c.len() <= FULL_BANDS {
        (
            Coordinates::Ratios,
            c[1..].iter().map(|v| v / c[0]).collect::<Vec<f64>>(),
        )
    } else {
        (Coordinates::Warp(c.to_vec()), vec![0.0; 3])
    }
}

/// The start of the BLT search for `groups` groups over `steps` steps: the
/// BLT of two buffers (one when b < 5) whose ratios c_k/c₀,
/// k ≥ 1, are nearest in least squares to those of the prefix-sum-optimal
/// banded strategy of b = G bands (clamped to 4 … 64: amplified BandMF's
/// strategy at G groups), the decays θᵢ on the grid 1 − 2^{−j/2},
/// j = 1 … 24 (0.29 … 0.9998), the scales ωᵢ by linear least squares.
pub fn blt_start(groups: usize, steps: usize) -> crate::Result<Strategy> {
    use nalgebra::{DMatrix, DVector};
    let bands = groups.clamp(4, propdp_core::problem::MAX_BANDS).min(steps);
    let banded = Strategy::prefix_sum_optimal(bands, steps)?;
    let c = banded.coefficients().expect("a banded strategy");
    let target = DVector::from_iterator(c.len() - 1, c[1..].iter().map(|v| v / c[0]));
    let grid: Vec<f64> = (1..=24).map(|j| 1.0 - 2f64.powf(-0.5 * j as f64)).collect();
    let buffers = if c.len() < 5 { 1 } else { BLT_BUFFERS };
    let fit = |decay: &[f64]| -> Option<(f64, Vec<f64>)> {
        // columns θᵢ^{k−1}, k = 1 … b − 1
        let a = DMatrix::from_fn(target.len(), decay.len(), |k, i| decay[i].powi(k as i32));
        let scale = a.clone().svd(true, true).solve(&target, 1e-12).ok()?;
        let residual = (&a * &scale - &target).norm_squared();
        Some((residual, scale.iter().copied().collect()))
    };
    let mut best: Option<(f64, Vec<f64>, Vec<f64>)> = None;
    let mut consider = |decay: Vec<f64>| {
        if let Some((r, scale)) = fit(&decay)
            && scale.iter().all(|w| w.is_finite())
            && best.as_ref().is_none_or(|b| r < b.0)
        {
            best = Some((r, decay, scale));
        }
    };
    for (i, &t1) in grid.iter().enumerate() {
        match buffers {
            1 => consider(vec![t1]),
            _ => grid[i + 1..].iter().for_each(|&t2| consider(vec![t1, t2])),
        }
    }
    let (_, decay, scale) = best.ok_or_else(|| crate::Error::compute("no BLT fits the banded strategy"))?;
    Ok(Strategy::blt(&decay, &scale)?)
}
