//! DP-GD and DP-SGD search over (q, T, η, C, λ). For each sample rate q,
//! number of steps T (given, or epochs/q) and clipping norm C the noise is
//! calibrated to the budget — DP-GD (q = 1) by the μ-GDP of T Gaussian steps
//! (σ = √T·Δ/μ, μ from (ε, δ) or ρ = μ²/2), DP-SGD by the PLD accountant of
//! the Poisson-subsampled Gaussian (or its zCDP, which has no amplification)
//! with sensitivity min(C, L) — η is a fraction of a typical batch's step
//! limit 2/L_B(q) ([`Point::batch_smoothness`]: 2/L at q = 1, about 2/(β + λ)
//! at small q, where the mean step's limit 2/L_q, L_q = q(L − λ) + λ, is
//! 1/q times larger and its fractions miss the optimum: docs/dpsgd.md), and
//! the DMFT predicts the metric at step T (the long-horizon state evolution
//! beyond 100 steps).
//!
//! 1. Grid q × T × η/(2/L_B(q)) × C × λ ∈ {0} ∪ 6 log-spaced values, at a coarse
//!    RQMC budget (2 scrambles × 4096 points; × 1024 beyond 100 steps, where
//!    the long-horizon solver's cost is linear in paths × T). The scrambles are fixed, so
//!    the prediction is a smooth deterministic function of the
//!    hyperparameters and the grid ranks candidates consistently. A grid of
//!    more than 300 candidates (`tune.search = "auto"`; "grid" or "staged"
//!    to choose) is searched in two stages: every (q, T, C) and η at λ = 0
//!    and the grid's middle λ, then the rest of the η × λ grid of the three
//!    best (q, T, C) — a third to a tenth of the solves at long horizons.
//! 2. Brent searches (argmin) in log λ, then in log η, around the best grid
//!    point (same budget); η may go down to a tenth of the smallest fraction
//!    and up to 0.99 of the mean step's limit 2/L_q.
//! 3. The refined optimum, the next two grid candidates and (DP-SGD) the
//!    grid's best at each other sample rate, refined by the same Brent
//!    searches, are re-solved at the config's
//!    `[solver]` RQMC budget; the best mean wins and its RQMC standard error
//!    is reported, with the best at each q and the others within the error
//!    bars (runners-up).
//!
//! Without `tune.clip` candidates DP-SGD is not clipped: the per-example
//! gradient is bounded by the loss's Lipschitz constant L, which is the
//! sensitivity used; clipping at C < L lowers the noise by C/L and biases
//! the gradient, which the DMFT of the clipped recursion predicts.

use std::cell::RefCell;
use std::collections::HashMap;

use propdp_core::accountant::MechanismKind;
use propdp_core::config::tune::{Horizons, STAGED_FROM, SearchKind};
use propdp_core::config::{LONG_HORIZON_FROM, SolverOptions};
use propdp_core::covariance::Covariance;
use propdp_core::problem::{Budget, mean_step_smoothness_at};
use propdp_core::{Algorithm, LossVariant, Point};
use propdp_theory::solve::TheorySolver;

use super::brent::minimise;
use super::types::Optimum;
use crate::run::dmft_cost;

/// RQMC budget of the grid stage.
const COARSE_POINTS: usize = 4096;
/// Points per scramble of the grid stage beyond LONG_HORIZON_FROM steps (the
/// long-horizon solver's cost is linear in paths × T).
const COARSE_LONG_POINTS: usize = 1024;
pub(super) const COARSE_SCRAMBLES: usize = 2;
/// Non-zero λ values on the grid.
const LAMBDA_GRID: usize = 6;
/// Accuracy of the Brent searches in log λ and log η (1%: the finalists'
/// RQMC error is larger than what a finer η or λ would gain).
const BRENT_TOL: f64 = 0.01;
/// (q, T, C) whose whole η × λ grid a staged search solves.
const STAGE_TWO: usize = 3;

/// Calibrated noises, shared by every search of a tune run: the noise
/// depends only on the budget and the mechanism (q, T, sensitivity), not on
/// δ or λ, and a DP-SGD calibration costs 0.05–2 s.
#[derive(Debug, Default)]
pub struct Calibrations(RefCell<HashMap<String, Option<f64>>>);

impl Calibrations {
    /// The noise meeting `budget` for `kind` with `point`'s model.
    fn noise(&self, budget: &Budget, point: &Point, kind: MechanismKind) -> Option<f64> {
        let model = point.model();
        let key = format!("{budget:?} {:?}", model.mechanism(kind, budget.neighbouring));
        if let Some(&v) = self.0.borrow().get(&key) {
            return v;
        }
        let v = budget.calibrate(&model, kind);
        self.0.borrow_mut().insert(key, v);
        v
    }
}

/// The algorithms tune searches by descent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// DP full-batch gradient descent.
    Dpgd,
    /// Mini-batch DP-SGD.
    Dpsgd,
}

/// What a search varies: the algorithm and its candidate values.
#[derive(Debug, Clone, Copy)]
pub struct Candidates<'a> {
    /// DP-GD or DP-SGD.
    pub kind: Kind,
    /// Sample rates q (DP-GD: only q = 1).
    pub sample_rates: &'a [f64],
    /// Numbers of steps T, or epochs.
    pub horizons: &'a Horizons,
    /// η as fractions of the batch step limit 2/L_B(q).
    pub fractions: &'a [f64],
    /// Clipping norms (None: not clipped; DP-GD: only None).
    pub clips: &'a [Option<f64>],
    /// The whole grid, or in stages.
    pub search: SearchKind,
    /// The feature covariance (None: isotropic): the step limits and the solves use it.
    pub covariance: Option<&'a Covariance>,
}

impl Candidates<'_> {
    /// Whether a grid of `n` candidates is searched in stages.
    fn staged(&self, n: usize) -> bool {
        match self.search {
            SearchKind::Auto => n > STAGED_FROM,
            SearchKind::Grid => false,
            SearchKind::Staged => true,
        }
    }

    /// The first stage: every (q, T, C) and η at λ = 0 and the grid's middle λ.
    fn stage_one(&self, lambdas: &[f64]) -> Vec<Knobs> {
        let mid = lambdas[lambdas.len() / 2];
        self.grid(lambdas)
            .into_iter()
            .filter(|k| k.lambda == 0.0 || k.lambda == mid)
            .collect()
    }

    /// The second stage: the rest of the η × λ grid of the (q, T, C) of `leaders`.
    fn stage_two(&self, lambdas: &[f64], leaders: &[Knobs]) -> Vec<Knobs> {
        let first = self.stage_one(lambdas);
        self.grid(lambdas)
            .into_iter()
            .filter(|k| leaders.iter().any(|l| l.same_run(k)) && !first.contains(k))
            .collect()
    }

    /// Every grid candidate: q × T(q) × η fraction × C × λ.
    fn grid(&self, lambdas: &[f64]) -> Vec<Knobs> {
        let mut grid = Vec::new();
        for &q in self.sample_rates {
            for steps in self.horizons.at(q) {
                for &fraction in self.fractions {
                    for &clip in self.clips {
                        for &lambda in lambdas {
                            grid.push(Knobs {
                                q,
                                steps,
                                fraction,
                                clip,
                                lambda,
                            });
                        }
                    }
                }
            }
        }
        grid
    }

    /// Estimated seconds on one core of a search at `base` with final
    /// solver options `opts` and λ in [lo, hi], by the shards' cost model of
    /// a solve (`shard::dmft_cost`) and the solves a search makes, as
    /// counted in measured searches (docs/performance.md, "Cost estimates"):
    /// the grid at the coarse budget — when staged, its first stage and the
    /// second at a typical run; the refinement of each q's best (12 coarse
    /// solves and one at the full budget) at that q's typical run; with
    /// several `tune.epochs`, the same for the best within each smaller
    /// epochs budget at its typical run; and two more finalists at the full
    /// budget. Which runs (q, T, C) lead is not known before the search, so
    /// a typical run costs the mean over the runs it may be: counted in the
    /// searches, the leaders and refined optimums fell at short and long
    /// horizons alike (charging each q's dearest T over-estimated a search
    /// 2.7×; DP-GD's best T is often 1 or 2 of up to 64).
    pub fn cost(&self, opts: SolverOptions, lo: f64, hi: f64, base: &Point) -> f64 {
        let lambdas = lambda_grid(lo, hi);
        let grid = self.grid(&lambdas);
        let coarse = |k: &Knobs| self.solve_cost(&coarse_options(opts, k.steps), k, base);
        let fine = |k: &Knobs| self.solve_cost(&opts, k, base);
        // the mean cost of the runs (q, T, C) that `keep` admits: each run once
        let typical = |f: &dyn Fn(&Knobs) -> f64, keep: &dyn Fn(&Knobs) -> bool| {
            let mut runs: Vec<&Knobs> = Vec::new();
            for k in grid.iter().filter(|k| keep(k)) {
                if !runs.iter().any(|r| r.same_run(k)) {
                    runs.push(k);
                }
            }
            runs.iter().map(|k| f(k)).sum::<f64>() / runs.len().max(1) as f64
        };
        let any = |_: &Knobs| true;
        let ranked: f64 = if self.staged(grid.len()) {
            let per_run = self.fractions.len() * (lambdas.len() - 2);
            self.stage_one(&lambdas).iter().map(coarse).sum::<f64>()
                + (STAGE_TWO * per_run) as f64 * typical(&coarse, &any)
        } else {
            grid.iter().map(coarse).sum()
        };
        let refine =
            |keep: &dyn Fn(&Knobs) -> bool| REFINE_SOLVES as f64 * typical(&coarse, keep) + typical(&fine, keep);
        let rates: f64 = self.sample_rates.iter().map(|&q| refine(&|k| k.q == q)).sum();
        let per_epochs: f64 = match self.horizons {
            Horizons::Epochs(e) if e.len() > 1 => {
                let mut e = e.clone();
                e.sort_by(f64::total_cmp);
                e[..e.len() - 1]
                    .iter()
                    .map(|&e| refine(&|k| ((e / k.q).round() as usize).max(1) == k.steps))
                    .sum()
            }
            _ => 0.0,
        };
        ranked + rates + per_epochs + 2.0 * typical(&fine, &any)
    }
}

impl Candidates<'_> {
    /// Estimated seconds of one core of the solve of `k` at `base` with
    /// solver options `opts` ([`crate::run::shard::dmft_cost`]).
    fn solve_cost(&self, opts: &SolverOptions, k: &Knobs, base: &Point) -> f64 {
        let atoms = self.covariance.map_or(1, |c| c.atoms().len());
        // unclipped least squares: the exact spectral solution (solver.dmft = "auto")
        let spectral = matches!(base.model(), propdp_core::Model::LeastSquares { .. }) && k.clip.is_none();
        dmft_cost(opts, k.steps, k.q, atoms, spectral)
    }
}

/// Coarse solves of a refinement (the Brent searches in λ, then η, of one
/// candidate), as counted in measured searches: 8 to 19.
const REFINE_SOLVES: usize = 12;

/// The λ grid: 0 and LAMBDA_GRID log-spaced values in [lo, hi].
fn lambda_grid(lo: f64, hi: f64) -> Vec<f64> {
    std::iter::once(0.0)
        .chain((0..LAMBDA_GRID).map(|i| (lo.ln() + (hi / lo).ln() * i as f64 / (LAMBDA_GRID - 1) as f64).exp()))
        .collect()
}

/// The grid stage's solver options at `steps` steps: the coarse RQMC budget.
fn coarse_options(opts: SolverOptions, steps: usize) -> SolverOptions {
    let most = if steps > LONG_HORIZON_FROM {
        COARSE_LONG_POINTS
    } else {
        COARSE_POINTS
    };
    SolverOptions {
        dmft_points: Some(opts.dmft_points.map_or(most, |p| most.min(p))),
        dmft_scrambles: COARSE_SCRAMBLES,
        // fixed paths take no precision target
        precision: None,
        ..opts
    }
}

/// Hyperparameters of one DP-GD/DP-SGD candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Knobs {
    q: f64,
    steps: usize,
    fraction: f64,
    clip: Option<f64>,
    lambda: f64,
}

impl Knobs {
    /// The same (q, T, C): the same calibrated noise.
    fn same_run(&self, other: &Knobs) -> bool {
        (self.q, self.steps, self.clip) == (other.q, other.steps, other.clip)
    }
}

/// The (q, T, η, λ) search of DP-GD or DP-SGD at one problem point and budget.
pub struct DescentSearch<'a> {
    /// The grid stage's solvers: up to LONG_HORIZON_FROM steps, and beyond.
    coarse: [TheorySolver; 2],
    fine: &'a TheorySolver,
    base: Point,
    budget: Budget,
    metric: &'a str,
    candidates: Candidates<'a>,
    calibrations: &'a Calibrations,
    /// Candidate runs solved so far, and the callback told each time.
    /// The config's solver options (the full budget).
    opts: SolverOptions,
    /// Candidate runs solved so far, and their estimated seconds of one
    /// core ([`Candidates::solve_cost`]).
    solved: std::cell::Cell<(usize, f64)>,
    on_solved: Option<&'a dyn Fn(usize, f64)>,
}

impl<'a> DescentSearch<'a> {
    /// The same search, calling `on_solved(n, seconds)` after its n-th
    /// candidate run (the grid's, then the refinement's and the finalists')
    /// with the estimated seconds of one core of the n solved
    /// ([`Candidates::cost`]'s model), e.g. to show its progress.
    pub fn with_progress(self, on_solved: &'a dyn Fn(usize, f64)) -> Self {
        DescentSearch {
            on_solved: Some(on_solved),
            ..self
        }
    }

    /// About how many candidate runs the grid stage solves: the whole grid,
    /// or when staged the first stage and the grid of its leading runs (the
    /// refinement adds a few dozen more).
    pub fn grid_runs(&self, lo: f64, hi: f64) -> usize {
        let lambdas = lambda_grid(lo, hi);
        let c = self.candidates;
        let grid = c.grid(&lambdas);
        if !c.staged(grid.len()) {
            return grid.len();
        }
        let mut runs: Vec<Knobs> = Vec::new();
        for k in &grid {
            if !runs.iter().any(|r| r.same_run(k)) {
                runs.push(*k);
            }
        }
        c.stage_one(&lambdas).len() + STAGE_TWO.min(runs.len()) * grid.len().div_ceil(runs.len().max(1))
    }

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
        DescentSearch {
            coarse: [
                TheorySolver::new(coarse_options(opts, 1)).with_covariance(candidates.covariance.cloned()),
                TheorySolver::new(coarse_options(opts, LONG_HORIZON_FROM + 1))
                    .with_covariance(candidates.covariance.cloned()),
            ],
            fine,
            base,
            budget,
            metric,
            candidates,
            calibrations,
            opts,
            solved: std::cell::Cell::new((0, 0.0)),
            on_solved: None,
        }
    }

    /// The calibrated point (standard loss), or None when no noise meets
    /// the budget.
    fn point(&self, k: Knobs) -> Option<Point> {
        let at_lambda = self.at_lambda(k.lambda)?;
        let eta = k.fraction * 2.0 / self.batch_smoothness(&at_lambda, k.q);
        let loss_variant = LossVariant::Standard;
        let unit = match self.candidates.kind {
            Kind::Dpgd => Algorithm::Dpgd {
                lambda: k.lambda,
                sigma: 1.0,
                eta,
                steps: k.steps,
                loss_variant,
            },
            Kind::Dpsgd => Algorithm::Dpsgd {
                lambda: k.lambda,
                sigma: 1.0,
                eta,
                steps: k.steps,
                loss_variant,
                sample_rate: k.q,
                clip: k.clip,
                groups: 1,
                strategy: propdp_core::problem::Strategy::IDENTITY,
            },
        };
        let sigma = self.calibrations.noise(&self.budget, &self.base, unit.mechanism())?;
        let algorithm = unit.with_noise(sigma);
        self.base.with_algorithm(algorithm).ok()
    }

    /// The base point with ridge λ and no noise, for its smoothness: a
    /// short DP-GD, which every model admits (least squares refuses
    /// objective perturbation).
    fn at_lambda(&self, lambda: f64) -> Option<Point> {
        let probe = Algorithm::Dpgd {
            lambda,
            sigma: 0.0,
            eta: 1e-9,
            steps: 1,
            loss_variant: LossVariant::Standard,
        };
        self.base.with_algorithm(probe).ok()
    }

    /// The mean step's limit 2/L_q over the batch step's 2/L_B(q) (1 at q = 1).
    fn limit_ratio(&self, k: Knobs) -> f64 {
        self.at_lambda(k.lambda).map_or(1.0, |p| {
            let mean = mean_step_smoothness_at(
                p.model().curvature(),
                p.delta(),
                k.lambda,
                k.q,
                self.candidates.covariance,
            );
            self.batch_smoothness(&p, k.q) / mean
        })
    }

    /// L_B(q) = β·λ₊(X_BᵀX_B) + λ of a typical batch ([`Point::batch_smoothness`]);
    /// with a covariance λ₊ is the generalised Marchenko–Pastur edge at aspect δ/q.
    fn batch_smoothness(&self, p: &Point, q: f64) -> f64 {
        let lambda = p.algorithm().lambda();
        mean_step_smoothness_at(
            p.model().curvature(),
            p.delta() / q,
            lambda,
            1.0,
            self.candidates.covariance,
        )
    }

    /// (mean, RQMC stderr) of the metric at the last step.
    fn eval(&self, solver: &TheorySolver, p: &Point) -> Option<(f64, f64)> {
        let sol = solver.solve(p, None).ok()?;
        let value = *sol.metrics.get(self.metric)?;
        let se = sol.per_step.as_ref()?.stderr.get(self.metric)?.last().copied()?;
        value.is_finite().then_some((value, se))
    }

    fn coarse_value(&self, k: Knobs) -> Option<f64> {
        let solver = &self.coarse[usize::from(k.steps > LONG_HORIZON_FROM)];
        let value = self.eval(solver, &self.point(k)?).map(|v| v.0);
        self.count(&coarse_options(self.opts, k.steps), k);
        value
    }

    /// Count a solve of `k` with options `opts`, and tell the callback.
    fn count(&self, opts: &SolverOptions, k: Knobs) {
        let (n, spent) = self.solved.get();
        let now = (n + 1, spent + self.candidates.solve_cost(opts, &k, &self.base));
        self.solved.set(now);
        if let Some(f) = self.on_solved {
            f(now.0, now.1);
        }
    }

    /// Refine grid candidate `k` (coarse value `best`) in λ, then η, by
    /// Brent's method in log scale between its grid neighbours (λ down to
    /// lambda_min/10; η down to a tenth of the smallest fraction, up to 0.99
    /// of the mean step's limit 2/L_q), keeping q, T and C.
    fn refine(&self, mut best: f64, mut k: Knobs, lambdas: &[f64], fractions: &[f64], lo: f64, hi: f64) -> Knobs {
        if k.lambda > 0.0 {
            let i = lambdas.iter().position(|&x| x == k.lambda).expect("grid λ");
            let a = lambdas[i - 1].max(lo / 10.0).ln();
            let b = lambdas.get(i + 1).copied().unwrap_or(hi).ln();
            let at = |g: f64| Knobs { lambda: g.exp(), ..k };
            let g = minimise(|g| self.coarse_value(at(g)).unwrap_or(f64::INFINITY), a, b, BRENT_TOL);
            if let Some(v) = self.coarse_value(at(g)).filter(|&v| v <= best) {
                (best, k) = (v, at(g));
            }
        }
        let i = fractions.iter().position(|&x| x == k.fraction).expect("grid η");
        let a = if i == 0 { fractions[0] / 10.0 } else { fractions[i - 1] }.ln();
        let b = fractions
            .get(i + 1)
            .copied()
            .unwrap_or_else(|| 0.99 * self.limit_ratio(k))
            .ln();
        let at = |g: f64| Knobs { fraction: g.exp(), ..k };
        let g = minimise(|g| self.coarse_value(at(g)).unwrap_or(f64::INFINITY), a, b, BRENT_TOL);
        if self.coarse_value(at(g)).is_some_and(|v| v <= best) {
            k = at(g);
        }
        k
    }

    /// The best (q, T, η, C, λ) with λ ∈ {0} ∪ [lo, hi].
    pub fn optimise(&self, lo: f64, hi: f64) -> Option<Optimum> {
        let lambdas = lambda_grid(lo, hi);
        let c = self.candidates;
        let value = |k: Knobs| Some((self.coarse_value(k)?, k));
        let all = c.grid(&lambdas);
        let mut grid: Vec<(f64, Knobs)> = if c.staged(all.len()) {
            let mut first: Vec<(f64, Knobs)> = c.stage_one(&lambdas).into_iter().filter_map(value).collect();
            first.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut leaders: Vec<Knobs> = Vec::new();
            for (_, k) in &first {
                if leaders.len() < STAGE_TWO && !leaders.iter().any(|l| l.same_run(k)) {
                    leaders.push(*k);
                }
            }
            first.extend(c.stage_two(&lambdas, &leaders).into_iter().filter_map(value));
            first
        } else {
            all.into_iter().filter_map(value).collect()
        };
        grid.sort_by(|a, b| a.0.total_cmp(&b.0));
        let &(best, k) = grid.first()?;
        let mut fr = c.fractions.to_vec();
        fr.sort_by(f64::total_cmp);
        let min_f = fr[0] / 10.0;
        let k = self.refine(best, k, &lambdas, &fr, lo, hi);
        let min_q = c.sample_rates.iter().copied().fold(1.0, f64::min);
        let sgd = c.kind == Kind::Dpsgd && c.sample_rates.len() > 1;
        let min_clip = c.clips.iter().flatten().copied().fold(f64::INFINITY, f64::min);
        let max_clip = c.clips.iter().flatten().copied().fold(0.0, f64::max);
        // a candidate re-solved at the full budget
        let solve = |k: Knobs| -> Option<(Knobs, Optimum)> {
            let p = self.point(k)?;
            let solved = self.eval(self.fine, &p);
            self.count(&self.opts, k);
            let (value, se) = solved?;
            let longest = c.horizons.at(k.q).last().copied().unwrap_or(1);
            let at_boundary = k.steps == longest
                || k.fraction <= min_f * (1.0 + 1e-3)
                || k.lambda >= hi * (1.0 - 1e-9)
                || (sgd && k.q == min_q)
                || (c.clips.len() > 1 && (k.clip == Some(min_clip) || k.clip == Some(max_clip)));
            Some((k, Optimum::new(p, value, Some(se), at_boundary)))
        };
        // re-solved at the full budget: the refined optimum, the next two grid
        // candidates and, with several sample rates, the grid's best at each
        // other q, refined in the same way
        let mut solved: Vec<Knobs> = std::iter::once(k)
            .chain(grid.iter().skip(1).take(2).map(|c| c.1))
            .collect();
        if sgd {
            for &q in c.sample_rates.iter().filter(|&&q| q != k.q) {
                if let Some(&(v, g)) = grid.iter().find(|g| g.1.q == q) {
                    solved.push(self.refine(v, g, &lambdas, &fr, lo, hi));
                }
            }
        }
        let mut solved: Vec<(Knobs, Optimum)> = solved.into_iter().filter_map(solve).collect();
        solved.sort_by(|a, b| a.1.value.total_cmp(&b.1.value));
        // per epochs budget E (tune.epochs, T = E/q): the best re-solved within it, or the
        // grid's best there, refined and re-solved (then a candidate for the best too) — the
        // privacy–compute–utility table
        let mut per_epochs: Vec<Optimum> = Vec::new();
        if let Horizons::Epochs(budgets) = &c.horizons
            && budgets.len() > 1
        {
            for &e in budgets {
                let within = |g: &Knobs| ((e / g.q).round() as usize).max(1) == g.steps;
                if let Some(s) = solved.iter().find(|s| within(&s.0)) {
                    per_epochs.push(s.1.clone());
                } else if let Some(&(v, g)) = grid.iter().find(|g| within(&g.1))
                    && let Some(s) = solve(self.refine(v, g, &lambdas, &fr, lo, hi))
                {
                    per_epochs.push(s.1.clone());
                    solved.push(s);
                }
            }
            solved.sort_by(|a, b| a.1.value.total_cmp(&b.1.value));
        }
        // per sample rate: the best re-solved at that q
        let per_rate: Vec<Optimum> = if sgd {
            c.sample_rates
                .iter()
                .filter_map(|&q| solved.iter().find(|s| s.0.q == q).map(|s| s.1.clone()))
                .collect()
        } else {
            Vec::new()
        };
        // the best re-solved wins; the others within the error bars are runners-up
        let mut solved = solved.into_iter().map(|s| s.1);
        let mut best = solved.next()?;
        let se = best.stderr.unwrap_or(0.0);
        best.runners_up = solved
            .filter(|o| o.value - best.value <= 2.0 * se.hypot(o.stderr.unwrap_or(0.0)))
            .collect();
        best.per_sample_rate = per_rate;
        best.per_epochs = per_epochs;
        Some(best)
    }
}
