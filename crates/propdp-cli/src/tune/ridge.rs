//! λ search for objective and output perturbation: for a budget (ε, δ) the
//! noise is calibrated at each λ, the point solved (state-only metrics with
//! warm starts when the metric allows), λ searched on a 25-point log grid and
//! refined by golden-section search in log λ around the best grid point.

use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring};
use propdp_core::config::AlgorithmKind;
use propdp_core::{Algorithm, Point};
use propdp_theory::solve::{State, TheorySolver};

use super::Optimum;

pub struct RidgeSearch<'a> {
    pub solver: &'a TheorySolver,
    pub base: Point,
    pub kind: AlgorithmKind,
    pub epsilon: f64,
    pub delta_priv: f64,
    pub neighbouring: Neighbouring,
    pub metric: &'a str,
    /// The last solution, to warm-start the next λ.
    warm: std::cell::Cell<Option<State>>,
}

impl<'a> RidgeSearch<'a> {
    pub fn new(
        solver: &'a TheorySolver,
        base: Point,
        kind: AlgorithmKind,
        (epsilon, delta_priv, neighbouring): (f64, f64, Neighbouring),
        metric: &'a str,
    ) -> Self {
        RidgeSearch {
            solver,
            base,
            kind,
            epsilon,
            delta_priv,
            neighbouring,
            metric,
            warm: std::cell::Cell::new(None),
        }
    }

    /// The calibrated point at λ, or None when no noise meets the budget there.
    pub fn point(&self, lambda: f64) -> Option<Point> {
        let mkind = match self.kind {
            AlgorithmKind::Objective => MechanismKind::Objective { lambda },
            _ => MechanismKind::Output { lambda },
        };
        let mech = Mechanism::new(&self.base.model, mkind, self.neighbouring);
        if let MechanismKind::Objective { .. } = mkind {
            let factor = if self.neighbouring == Neighbouring::ReplaceOne {
                2.0
            } else {
                1.0
            };
            if self.epsilon <= factor * (mech.smoothness / lambda).ln_1p() {
                return None;
            }
        }
        let noise = mech.calibrate(self.epsilon, self.delta_priv)?;
        let algorithm = match self.kind {
            AlgorithmKind::Objective => Algorithm::Objective { lambda, sigma: noise },
            _ => Algorithm::Output { lambda, tau: noise },
        };
        Some(Point { algorithm, ..self.base })
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
        let g = super::golden_section(f, grid[i.saturating_sub(1)], grid[(i + 1).min(k - 1)]);
        let (g, value) = match self.eval(g.exp()) {
            Some(v) if v <= best => (g, v),
            _ => (grid[i], best),
        };
        Some(Optimum {
            point: self.point(g.exp())?,
            value,
            stderr: None,
            at_boundary: i == 0 || i == k - 1,
        })
    }
}
