//! DP-GD search over (T, η, λ). For each T the noise is calibrated to the
//! budget (μ-GDP of T Gaussian steps: σ = √T·Δ/μ, μ from (ε, δ) or ρ = μ²/2), η is a fraction of
//! the stability limit 2/L(λ), and the DMFT predicts the metric at step T.
//!
//! 1. Grid T × η/(2/L) × λ ∈ {0} ∪ 6 log-spaced values, at a coarse RQMC budget
//!    (2 scrambles × 4096 points). The scrambles are fixed, so the prediction is
//!    a smooth deterministic function of the hyperparameters and the grid
//!    ranks candidates consistently.
//! 2. Brent searches (argmin) in log λ, then in log η, around the best grid
//!    point (same budget); η may go down to a tenth of the smallest fraction.
//! 3. The refined optimum and the next two grid candidates are re-solved at
//!    the config's `[solver]` RQMC budget; the best mean wins and its RQMC
//!    standard error is reported.

use propdp_core::accountant::MechanismKind;
use propdp_core::config::SolverOptions;
use propdp_core::problem::Budget;
use propdp_core::{Algorithm, LossVariant, Point};
use propdp_theory::solve::TheorySolver;

use super::Optimum;

/// RQMC budget of the grid stage.
const COARSE_POINTS: usize = 4096;
const COARSE_SCRAMBLES: usize = 2;
/// Non-zero λ values on the grid.
const LAMBDA_GRID: usize = 6;

/// The (T, η, λ) search of DP-GD at one problem point and budget.
pub struct DpgdSearch<'a> {
    coarse: TheorySolver,
    fine: &'a TheorySolver,
    base: Point,
    budget: Budget,
    metric: &'a str,
    steps: &'a [usize],
    fractions: &'a [f64],
}

/// A grid candidate: (value, T, η fraction, λ).
type Candidate = (f64, usize, f64, f64);

impl<'a> DpgdSearch<'a> {
    /// A search at `base` for `budget`, minimising `metric` over the
    /// candidate `steps` and η `fractions` of 2/L (`opts` sets the final
    /// RQMC budget, `fine` solves at it).
    pub fn new(
        opts: SolverOptions,
        fine: &'a TheorySolver,
        base: Point,
        budget: Budget,
        metric: &'a str,
        steps: &'a [usize],
        fractions: &'a [f64],
    ) -> Self {
        let coarse = TheorySolver::new(SolverOptions {
            dmft_points: COARSE_POINTS.min(opts.dmft_points),
            dmft_scrambles: COARSE_SCRAMBLES,
            ..opts
        });
        DpgdSearch {
            coarse,
            fine,
            base,
            budget,
            metric,
            steps,
            fractions,
        }
    }

    /// The calibrated DP-GD point (standard loss), or None when no noise
    /// meets the budget.
    pub fn point(&self, steps: usize, fraction: f64, lambda: f64) -> Option<Point> {
        let sigma = self
            .budget
            .calibrate(&self.base.model(), MechanismKind::Dpgd { steps })?;
        let algorithm = |eta| Algorithm::Dpgd {
            lambda,
            sigma,
            eta,
            steps,
            loss_variant: LossVariant::Standard,
        };
        let at_lambda = self
            .base
            .with_algorithm(Algorithm::Objective { lambda, sigma: 0.0 })
            .ok()?;
        self.base
            .with_algorithm(algorithm(fraction * 2.0 / at_lambda.smoothness()))
            .ok()
    }

    /// (mean, RQMC stderr) of the metric at the last step.
    fn eval(&self, solver: &TheorySolver, p: &Point) -> Option<(f64, f64)> {
        let sol = solver.solve(p, None).ok()?;
        let value = *sol.metrics.get(self.metric)?;
        let se = sol.per_step.as_ref()?.stderr.get(self.metric)?.last().copied()?;
        value.is_finite().then_some((value, se))
    }

    fn coarse_value(&self, steps: usize, fraction: f64, lambda: f64) -> Option<f64> {
        self.eval(&self.coarse, &self.point(steps, fraction, lambda)?)
            .map(|v| v.0)
    }

    /// The best (T, η, λ) with λ ∈ {0} ∪ [lo, hi].
    pub fn optimise(&self, lo: f64, hi: f64) -> Option<Optimum> {
        let lambdas: Vec<f64> = std::iter::once(0.0)
            .chain((0..LAMBDA_GRID).map(|i| (lo.ln() + (hi / lo).ln() * i as f64 / (LAMBDA_GRID - 1) as f64).exp()))
            .collect();
        let mut grid: Vec<Candidate> = Vec::new();
        for &t in self.steps {
            for &f in self.fractions {
                for &l in &lambdas {
                    if let Some(v) = self.coarse_value(t, f, l) {
                        grid.push((v, t, f, l));
                    }
                }
            }
        }
        grid.sort_by(|a, b| a.0.total_cmp(&b.0));
        let &(mut best, t, mut f, mut l) = grid.first()?;
        // refine λ, then η, by Brent's method in log scale between the grid
        // neighbours (λ down to lambda_min/10; η down to a tenth of the
        // smallest fraction, up to 0.99 of the stability limit)
        if l > 0.0 {
            let i = lambdas.iter().position(|&x| x == l).expect("grid λ");
            let a = lambdas[i - 1].max(lo / 10.0).ln();
            let b = lambdas.get(i + 1).copied().unwrap_or(hi).ln();
            let g = super::minimise(|g| self.coarse_value(t, f, g.exp()).unwrap_or(f64::INFINITY), a, b);
            if let Some(v) = self.coarse_value(t, f, g.exp()).filter(|&v| v <= best) {
                (best, l) = (v, g.exp());
            }
        }
        let mut fr = self.fractions.to_vec();
        fr.sort_by(f64::total_cmp);
        let min_f = fr[0] / 10.0;
        let i = fr.iter().position(|&x| x == f).expect("grid η");
        let a = if i == 0 { min_f } else { fr[i - 1] }.ln();
        let b = fr.get(i + 1).copied().unwrap_or(0.99).ln();
        let g = super::minimise(|g| self.coarse_value(t, g.exp(), l).unwrap_or(f64::INFINITY), a, b);
        if self.coarse_value(t, g.exp(), l).is_some_and(|v| v <= best) {
            f = g.exp();
        }
        let finalists = std::iter::once((t, f, l)).chain(grid.iter().skip(1).take(2).map(|c| (c.1, c.2, c.3)));
        let max_t = self.steps.iter().copied().max().unwrap_or(1);
        finalists
            .filter_map(|(t, f, l)| {
                let p = self.point(t, f, l)?;
                let (value, se) = self.eval(self.fine, &p)?;
                Some(Optimum {
                    point: p,
                    value,
                    stderr: Some(se),
                    at_boundary: t == max_t || f <= min_f * (1.0 + 1e-3) || l >= hi * (1.0 - 1e-9),
                })
            })
            .min_by(|a, b| a.value.total_cmp(&b.value))
    }
}
