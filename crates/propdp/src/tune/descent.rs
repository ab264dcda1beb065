//! DP-GD and DP-SGD search over (q, T, η, λ). For each sample rate q and
//! number of steps T the noise is calibrated to the budget — DP-GD (q = 1)
//! by the μ-GDP of T Gaussian steps (σ = √T·Δ/μ, μ from (ε, δ) or
//! ρ = μ²/2), DP-SGD by the PLD accountant of the Poisson-subsampled Gaussian
//! (or its zCDP, which has no amplification) — η is a fraction of the mean
//! step's stability limit 2/L_q, L_q = q(L − λ) + λ, and the DMFT predicts
//! the metric at step T.
//!
//! 1. Grid q × T × η/(2/L_q) × λ ∈ {0} ∪ 6 log-spaced values, at a coarse
//!    RQMC budget (2 scrambles × 4096 points). The scrambles are fixed, so
//!    the prediction is a smooth deterministic function of the
//!    hyperparameters and the grid ranks candidates consistently.
//! 2. Brent searches (argmin) in log λ, then in log η, around the best grid
//!    point (same budget); η may go down to a tenth of the smallest fraction.
//! 3. The refined optimum and the next two grid candidates are re-solved at
//!    the config's `[solver]` RQMC budget; the best mean wins and its RQMC
//!    standard error is reported.
//!
//! DP-SGD's clipping norm is not searched: the per-example gradient is
//! bounded by the loss's Lipschitz constant L, which is the sensitivity used
//! (clipping at C < L would lower the noise by C/L and bias the gradient).

use std::cell::RefCell;
use std::collections::HashMap;

use propdp_core::accountant::{Mechanism, MechanismKind};
use propdp_core::config::SolverOptions;
use propdp_core::problem::Budget;
use propdp_core::{Algorithm, AlgorithmKind, LossVariant, Point};
use propdp_theory::solve::TheorySolver;

use super::Optimum;

/// RQMC budget of the grid stage.
const COARSE_POINTS: usize = 4096;
const COARSE_SCRAMBLES: usize = 2;
/// Non-zero λ values on the grid.
const LAMBDA_GRID: usize = 6;

/// Calibrated noises, shared by every search of a tune run: the noise
/// depends only on the budget and the mechanism (q, T, sensitivity), not on
/// δ or λ, and a DP-SGD calibration costs 0.05–2 s.
#[derive(Debug, Default)]
pub struct Calibrations(RefCell<HashMap<String, Option<f64>>>);

impl Calibrations {
    /// The noise meeting `budget` for `kind` with `point`'s model.
    fn noise(&self, budget: &Budget, point: &Point, kind: MechanismKind) -> Option<f64> {
        let model = point.model();
        let key = format!("{budget:?} {:?}", Mechanism::new(&model, kind, budget.neighbouring));
        if let Some(&v) = self.0.borrow().get(&key) {
            return v;
        }
        let v = budget.calibrate(&model, kind);
        self.0.borrow_mut().insert(key, v);
        v
    }
}

/// What a search varies: the algorithm and its candidate values.
#[derive(Debug, Clone, Copy)]
pub struct Candidates<'a> {
    /// DP-GD or DP-SGD.
    pub kind: AlgorithmKind,
    /// Sample rates q (DP-GD: only q = 1).
    pub sample_rates: &'a [f64],
    /// Numbers of steps T.
    pub steps: &'a [usize],
    /// η as fractions of 2/L_q.
    pub fractions: &'a [f64],
}

/// The (q, T, η, λ) search of DP-GD or DP-SGD at one problem point and budget.
pub struct DescentSearch<'a> {
    coarse: TheorySolver,
    fine: &'a TheorySolver,
    base: Point,
    budget: Budget,
    metric: &'a str,
    candidates: Candidates<'a>,
    calibrations: &'a Calibrations,
}

/// A grid candidate: (value, q, T, η fraction, λ).
type Candidate = (f64, f64, usize, f64, f64);

impl<'a> DescentSearch<'a> {
    /// A search at `base` for `budget`, minimising `metric` over the
    /// `candidates` (`opts` sets the final RQMC budget, `fine` solves at it).
    pub fn new(
        opts: SolverOptions,
        fine: &'a TheorySolver,
        base: Point,
        budget: Budget,
        metric: &'a str,
        candidates: Candidates<'a>,
        calibrations: &'a Calibrations,
    ) -> Self {
        let coarse = TheorySolver::new(SolverOptions {
            dmft_points: Some(opts.dmft_points.map_or(COARSE_POINTS, |p| COARSE_POINTS.min(p))),
            dmft_scrambles: COARSE_SCRAMBLES,
            ..opts
        });
        DescentSearch {
            coarse,
            fine,
            base,
            budget,
            metric,
            candidates,
            calibrations,
        }
    }

    /// The calibrated point (standard loss), or None when no noise meets
    /// the budget.
    pub fn point(&self, q: f64, steps: usize, fraction: f64, lambda: f64) -> Option<Point> {
        let dpgd = self.candidates.kind == AlgorithmKind::Dpgd;
        let mechanism = if dpgd {
            MechanismKind::Dpgd { steps }
        } else {
            MechanismKind::Dpsgd {
                steps,
                sample_rate: q,
                clip: None,
            }
        };
        let sigma = self.calibrations.noise(&self.budget, &self.base, mechanism)?;
        let at_lambda = self
            .base
            .with_algorithm(Algorithm::Objective { lambda, sigma: 0.0 })
            .ok()?;
        let l_q = q * (at_lambda.smoothness() - lambda) + lambda;
        let eta = fraction * 2.0 / l_q;
        let loss_variant = LossVariant::Standard;
        let algorithm = if dpgd {
            Algorithm::Dpgd {
                lambda,
                sigma,
                eta,
                steps,
                loss_variant,
            }
        } else {
            Algorithm::Dpsgd {
                lambda,
                sigma,
                eta,
                steps,
                loss_variant,
                sample_rate: q,
                clip: None,
            }
        };
        self.base.with_algorithm(algorithm).ok()
    }

    /// (mean, RQMC stderr) of the metric at the last step.
    fn eval(&self, solver: &TheorySolver, p: &Point) -> Option<(f64, f64)> {
        let sol = solver.solve(p, None).ok()?;
        let value = *sol.metrics.get(self.metric)?;
        let se = sol.per_step.as_ref()?.stderr.get(self.metric)?.last().copied()?;
        value.is_finite().then_some((value, se))
    }

    fn coarse_value(&self, q: f64, steps: usize, fraction: f64, lambda: f64) -> Option<f64> {
        self.eval(&self.coarse, &self.point(q, steps, fraction, lambda)?)
            .map(|v| v.0)
    }

    /// The best (q, T, η, λ) with λ ∈ {0} ∪ [lo, hi].
    pub fn optimise(&self, lo: f64, hi: f64) -> Option<Optimum> {
        let lambdas: Vec<f64> = std::iter::once(0.0)
            .chain((0..LAMBDA_GRID).map(|i| (lo.ln() + (hi / lo).ln() * i as f64 / (LAMBDA_GRID - 1) as f64).exp()))
            .collect();
        let c = self.candidates;
        let mut grid: Vec<Candidate> = Vec::new();
        for &q in c.sample_rates {
            for &t in c.steps {
                for &f in c.fractions {
                    for &l in &lambdas {
                        if let Some(v) = self.coarse_value(q, t, f, l) {
                            grid.push((v, q, t, f, l));
                        }
                    }
                }
            }
        }
        grid.sort_by(|a, b| a.0.total_cmp(&b.0));
        let &(mut best, q, t, mut f, mut l) = grid.first()?;
        // refine λ, then η, by Brent's method in log scale between the grid
        // neighbours (λ down to lambda_min/10; η down to a tenth of the
        // smallest fraction, up to 0.99 of the stability limit)
        if l > 0.0 {
            let i = lambdas.iter().position(|&x| x == l).expect("grid λ");
            let a = lambdas[i - 1].max(lo / 10.0).ln();
            let b = lambdas.get(i + 1).copied().unwrap_or(hi).ln();
            let g = super::minimise(|g| self.coarse_value(q, t, f, g.exp()).unwrap_or(f64::INFINITY), a, b);
            if let Some(v) = self.coarse_value(q, t, f, g.exp()).filter(|&v| v <= best) {
                (best, l) = (v, g.exp());
            }
        }
        let mut fr = c.fractions.to_vec();
        fr.sort_by(f64::total_cmp);
        let min_f = fr[0] / 10.0;
        let i = fr.iter().position(|&x| x == f).expect("grid η");
        let a = if i == 0 { min_f } else { fr[i - 1] }.ln();
        let b = fr.get(i + 1).copied().unwrap_or(0.99).ln();
        let g = super::minimise(|g| self.coarse_value(q, t, g.exp(), l).unwrap_or(f64::INFINITY), a, b);
        if self.coarse_value(q, t, g.exp(), l).is_some_and(|v| v <= best) {
            f = g.exp();
        }
        let finalists = std::iter::once((q, t, f, l)).chain(grid.iter().skip(1).take(2).map(|c| (c.1, c.2, c.3, c.4)));
        let max_t = c.steps.iter().copied().max().unwrap_or(1);
        let min_q = c.sample_rates.iter().copied().fold(1.0, f64::min);
        let sgd = c.kind == AlgorithmKind::Dpsgd && c.sample_rates.len() > 1;
        finalists
            .filter_map(|(q, t, f, l)| {
                let p = self.point(q, t, f, l)?;
                let (value, se) = self.eval(self.fine, &p)?;
                Some(Optimum {
                    point: p,
                    value,
                    stderr: Some(se),
                    at_boundary: t == max_t
                        || f <= min_f * (1.0 + 1e-3)
                        || l >= hi * (1.0 - 1e-9)
                        || (sgd && q == min_q),
                })
            })
            .min_by(|a, b| a.value.total_cmp(&b.value))
    }
}
