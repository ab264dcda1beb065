//! λ search for objective and output perturbation: for a budget the noise is
//! calibrated at each λ (no budget: the non-private ridge estimator, σ = 0), the point solved (state-only metrics with
//! warm starts when the metric allows), λ searched on a 25-point log grid and
//! refined by Brent's method (argmin) in log λ around the best grid point.

use propdp_core::problem::Budget;
use propdp_core::{Algorithm, Point};
use propdp_theory::solve::{State, TheorySolver};

use super::brent::minimise;
use super::types::Optimum;

/// The algorithms whose only hyperparameter tune searches is λ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Perturbation {
    /// Objective perturbation.
    Objective,
    /// Output perturbation.
    Output,
}

impl Perturbation {
    /// The algorithm at λ with unit noise.
    fn unit(self, lambda: f64) -> Algorithm {
        match self {
            Perturbation::Objective => Algorithm::Objective { lambda, sigma: 1.0 },
            Perturbation::Output => Algorithm::Output { lambda, tau: 1.0 },
        }
    }
}

/// The λ search of objective or output perturbation at one problem point.
pub struct RidgeSearch<'a> {
    solver: &'a TheorySolver,
    base: Point,
    kind: Perturbation,
    /// None: the non-private estimator (the reference privacy is measured against).
    budget: Option<Budget>,
    metric: &'a str,
    /// The last solution, to warm-start the next λ.
    warm: std::cell::Cell<Option<State>>,
}

impl<'a> RidgeSearch<'a> {
    /// A search for `kind` at `base`'s problem, minimising `metric`.
    pub fn new(
        solver: &'a TheorySolver,
        base: Point,
        kind: Perturbation,
        budget: Option<Budget>,
        metric: &'a str,
    ) -> Self {
        RidgeSearch {
            solver,
            base,
            kind,
            budget,
            metric,
            warm: std::cell::Cell::new(None),
        }
    }

    /// The calibrated point at λ, or None when no noise meets the budget
    /// there. Objective perturbation whose floor exceeds half the budget is
    /// at λ + Δ, the extra ridge that halves the floor (the budget's
    /// `extra_ridge = auto`): its λ is the effective one, and every λ below
    /// the one whose floor is half the budget gives the same point.
    pub fn point(&self, lambda: f64) -> Option<Point> {
        let unit = |lambda| self.kind.unit(lambda);
        let model = self.base.model();
        let Some(b) = self.budget else {
            return self.base.with_algorithm(unit(lambda).with_noise(0.0)).ok();
        };
        let at = unit(lambda + b.ridge_to_add(&model, unit(lambda).mechanism()));
        let noise = b.calibrate(&model, at.mechanism())?;
        self.base.with_algorithm(at.with_noise(noise)).ok()
    }

    /// The metric at λ, or None when the budget is out of reach at λ or the
    /// theory has no solution there.
    fn eval(&self, lambda: f64) -> Option<f64> {
        let point = self.point(lambda)?;
        let light = matches!(
            self.metric,
            "est_err2" | "est_err" | "overlap" | "norm2" | "bias_factor"
        );
        let metrics = if light {
            let (m, state) = self.solver.solve_light(&point, self.warm.get()).ok()?;
            self.warm.set(Some(state));
            m
        } else {
            self.solver.solve(&point, None).ok()?.metrics
        };
        metrics.get(self.metric).copied()
    }

    /// The best λ in [lo, hi].
    pub fn optimise(&self, lo: f64, hi: f64) -> Option<Optimum> {
        let k = 25;
        let grid: Vec<f64> = (0..k)
            .map(|i| lo.ln() + (hi.ln() - lo.ln()) * i as f64 / (k - 1) as f64)
            .collect();
        let vals: Vec<Option<f64>> = grid.iter().map(|&g| self.eval(g.exp())).collect();
        let (i, best) = vals
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let f = |g: f64| self.eval(g.exp()).unwrap_or(f64::INFINITY);
        let g = minimise(f, grid[i.saturating_sub(1)], grid[(i + 1).min(k - 1)], 1e-5);
        let (g, value) = match self.eval(g.exp()) {
            Some(v) if v <= best => (g, v),
            _ => (grid[i], best),
        };
        Some(Optimum::new(self.point(g.exp())?, value, None, i == 0 || i == k - 1))
    }
}
