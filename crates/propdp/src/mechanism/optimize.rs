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
//! # References
//! - Nelder, Mead (1965), *A simplex method for function minimization*.
//! - Choquette-Choo, McMahan, Rush, Thakurta (2023), *(Amplified) banded
//!   matrix factorization*, arXiv 2306.08153 (the prefix-sum objective).

use argmin::core::{CostFunction, Executor, State};
use argmin::solver::neldermead::NelderMead;
use propdp_core::problem::Strategy;
use propdp_theory::solve::TheorySolver;

use super::candidate::Problem;

/// Bands up to which every ratio c_k/c₀ is searched.
pub const FULL_BANDS: usize = 5;

/// The coordinates of the search.
#[derive(Debug, Clone)]
enum Coordinates {
    /// The ratios c_k/c₀, k ≥ 1.
    Ratios,
    /// (a₀, a₁, a₂) warping the start's coefficients.
    Warp(Vec<f64>),
}

impl Coordinates {
    /// The strategy at `x` (None: not a valid strategy).
    fn strategy(&self, x: &[f64]) -> Option<Strategy> {
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
    groups: usize,
    sigma: f64,
    solves: std::cell::Cell<usize>,
    on_solve: &'p dyn Fn(),
}

impl CostFunction for Metric<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, x: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        self.solves.set(self.solves.get() + 1);
        (self.on_solve)();
        let value = self
            .coordinates
            .strategy(x)
            .and_then(|s| self.problem.predict(self.solver, self.groups, s, self.sigma).ok())
            .map_or(FAILED, |(v, _)| if v.is_finite() { v } else { FAILED });
        Ok(value)
    }
}

/// The strategy of `start.bands()` bands minimising the metric at
/// `groups` groups and noise `sigma`, by at most `solves` coarse solves
/// (`on_solve` after each), and the solves used.
pub fn optimise(
    problem: &Problem,
    coarse: &TheorySolver,
    groups: usize,
    sigma: f64,
    start: Strategy,
    solves: usize,
    on_solve: &dyn Fn(),
) -> crate::Result<(Strategy, usize)> {
    let Some(c) = start.coefficients().filter(|c| c.len() >= 2) else {
        return Ok((start, 0));
    };
    let (coordinates, x0) = if c.len() <= FULL_BANDS {
        (
            Coordinates::Ratios,
            c[1..].iter().map(|v| v / c[0]).collect::<Vec<f64>>(),
        )
    } else {
        (Coordinates::Warp(c.to_vec()), vec![0.0; 3])
    };
    // the simplex: the start and a step along each axis (a fifth of a ratio, at least 0.05)
    let mut simplex = vec![x0.clone()];
    for i in 0..x0.len() {
        let mut v = x0.clone();
        v[i] += (0.2 * v[i].abs()).max(0.05);
        simplex.push(v);
    }
    let metric = Metric {
        coordinates: coordinates.clone(),
        problem,
        solver: coarse,
        groups,
        sigma,
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
