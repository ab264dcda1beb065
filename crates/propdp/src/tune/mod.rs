//! `propdp tune`: for each algorithm, problem point and privacy budget, the
//! hyperparameters minimising the predicted metric once the noise is
//! calibrated to the budget — chosen from theory, with no privacy spent on
//! tuning. λ for objective and output perturbation ([`ridge`]); (T, η, λ) for
//! DP-GD and (q, T, η, λ) for DP-SGD through their DMFT ([`descent`]).

mod best;
mod cost;
pub mod descent;
mod figures;
mod merge;
mod report;
pub mod ridge;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use propdp_core::config::TuneConfig;
use propdp_core::config::tune::Horizons;
use propdp_core::problem::Budget;
use propdp_core::record::{Provenance, Record};
use propdp_core::{AlgorithmKind, Point};
use propdp_theory::solve::TheorySolver;

use best::simulate;
pub use best::{Best, NonPrivate, SimCheck, TrainingRun};
pub use merge::merge;

use crate::progress::Progress;
use crate::run::Manifest;
use crate::run::Shard;
use crate::run::{Existing, RunDir, TUNE};

/// The result of one search: the tuned, calibrated point and its predicted metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Optimum {
    /// The tuned point, its noise calibrated to the budget.
    pub point: Point,
    /// The predicted metric there.
    pub value: f64,
    /// RQMC standard error of a DMFT prediction.
    pub stderr: Option<f64>,
    /// The optimum sits at the edge of the searched range.
    pub at_boundary: bool,
    /// Other searched configurations re-solved at the full budget whose
    /// prediction is within the error bars (2 combined standard errors).
    pub runners_up: Vec<Optimum>,
    /// DP-SGD with several sample rates: the best configuration found at
    /// each q, re-solved at the full budget (the error against the batch
    /// rate at equal privacy).
    pub per_sample_rate: Vec<Optimum>,
    /// With several `tune.epochs`: the best configuration within each
    /// epochs budget E (T = E/q), re-solved at the full budget.
    pub per_epochs: Vec<Optimum>,
}

impl Optimum {
    /// An optimum with no runners-up or per-rate or per-epochs bests.
    pub fn new(point: Point, value: f64, stderr: Option<f64>, at_boundary: bool) -> Self {
        Optimum {
            point,
            value,
            stderr,
            at_boundary,
            runners_up: Vec::new(),
            per_sample_rate: Vec::new(),
            per_epochs: Vec::new(),
        }
    }
}

/// A value standing for +∞ (the budget is out of reach, or the theory has
/// no solution) in the 1-D searches: far above any metric, yet finite, so
/// Brent's parabolic steps stay finite and fall back to golden-section steps.
const UNREACHABLE: f64 = 1e100;

/// `f` as an argmin cost function of one variable.
struct Cost<F>(F);

impl<F: Fn(f64) -> f64> argmin::core::CostFunction for Cost<F> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, x: &f64) -> Result<f64, argmin::core::Error> {
        Ok((self.0)(*x).min(UNREACHABLE))
    }
}

/// A minimiser of `f` on [a, b] by Brent's method (argmin's `BrentOpt`,
/// parabolic interpolation with golden-section safeguard) to an absolute
/// accuracy of about `tol` in x (the searches run in log λ and log η). `f`
/// may return +∞ where the budget cannot be met.
fn minimise<F: Fn(f64) -> f64>(f: F, a: f64, b: f64, tol: f64) -> f64 {
    let solver = argmin::solver::brent::BrentOpt::new(a, b).set_tolerance(f64::EPSILON.sqrt(), tol);
    match argmin::core::Executor::new(Cost(f), solver)
        .configure(|state| state.max_iters(200))
        .run()
    {
        Ok(res) => res.state.best_param.unwrap_or(0.5 * (a + b)),
        Err(_) => 0.5 * (a + b),
    }
}

/// (facet, δ, budget level, algorithm) of a cell.
type CellKey = (String, u64, u64, AlgorithmKind);

/// One tuned cell: a problem point, a budget and an algorithm.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The problem parameters other than δ (one winner map per facet).
    pub facet: String,
    /// δ.
    pub delta: f64,
    /// The budget level, ε or ρ.
    pub level: f64,
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// The optimum; `None` when no hyperparameters reach the budget.
    pub best: Option<Best>,
}

/// The problem parameters of a point other than δ, as "k=v, …".
fn facet(problem_params: &BTreeMap<String, f64>) -> String {
    problem_params
        .iter()
        .filter(|(k, _)| k.as_str() != "delta")
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a tune search found.
#[derive(Debug)]
pub struct TuneOutcome {
    /// The output directory.
    pub dir: PathBuf,
    /// Every (problem point, budget, algorithm) cell, in search order.
    pub cells: Vec<Cell>,
    /// The non-private reference of each problem point.
    pub references: Vec<NonPrivate>,
    /// The metric minimised.
    pub metric: String,
    /// The budget's parameter: "epsilon" or "rho".
    pub param: &'static str,
    /// The first budget: its notion (and δ_priv) and neighbouring relation,
    /// which every budget of the search shares.
    pub budget: Budget,
    /// The algorithms compared.
    pub algorithms: Vec<AlgorithmKind>,
    /// The figures drawn (frontiers and winner maps).
    pub figures: Vec<PathBuf>,
}

impl TuneOutcome {
    /// The table `propdp tune` prints: per δ and budget, the best metric of
    /// each algorithm with its hyperparameters, the winner, its margin and
    /// the price of privacy.
    pub fn table(&self) -> String {
        report::table(&self.cells, &self.references, &self.metric, &self.budget)
    }

    /// The optimums file.
    pub fn file(&self) -> PathBuf {
        self.dir.join("tune.jsonl")
    }
}

/// A parsed `[tune]` config and its cells, in search order (problem point,
/// then budget, then algorithm).
struct Plan {
    /// The config text.
    text: String,
    cfg: TuneConfig,
    points: Vec<Point>,
    budgets: Vec<Budget>,
    horizons: Horizons,
    fractions: Vec<f64>,
    sample_rates: Vec<f64>,
    clips: Vec<Option<f64>>,
    /// The feature covariance (`problem.covariance`), or isotropic features.
    covariance: Option<propdp_core::covariance::Covariance>,
    /// The rows of `[simulation] data` the optima are simulated on, or drawn rows.
    real: Option<std::sync::Arc<propdp_sim::real::RealData>>,
    /// (problem point, budget, algorithm) of every cell.
    cells: Vec<(usize, usize, AlgorithmKind)>,
}

impl Plan {
    fn new(text: &str, label: &str) -> Result<Plan> {
        // a covariance file is read relative to the config's directory (when the label names the file)
        let path = std::path::Path::new(label);
        let dir = path.is_file().then(|| path.parent()).flatten();
        // s2 and noise from the covariance file's effective model, when the config leaves them out
        let text = &propdp_core::effective_model::complete(text, dir).with_context(|| format!("in config {label}"))?;
        let (cfg, points) = TuneConfig::from_toml_str(text).with_context(|| format!("in config {label}"))?;
        let covariance = cfg.covariance_in(dir).with_context(|| format!("in config {label}"))?;
        let real = match (
            cfg.data_in(dir).with_context(|| format!("in config {label}"))?,
            &cfg.simulation,
        ) {
            (Some(file), Some(sim)) => Some(
                crate::run::load_rows(&file, sim, &points, covariance.as_ref())
                    .with_context(|| format!("in config {label}"))?,
            ),
            _ => None,
        };
        let t = &cfg.tune;
        let budgets = t.budgets()?;
        if budgets.is_empty() {
            anyhow::bail!("tune: no budgets");
        }
        let cells = (0..points.len())
            .flat_map(|p| (0..budgets.len()).flat_map(move |b| t.algorithms.iter().map(move |&k| (p, b, k))))
            .collect();
        Ok(Plan {
            text: text.to_string(),
            horizons: t.horizons()?,
            fractions: t.dpgd_eta_fractions()?,
            sample_rates: t.sample_rates()?,
            clips: t.clips()?,
            covariance,
            real,
            cfg,
            points,
            budgets,
            cells,
        })
    }

    /// The DP-GD or DP-SGD candidates of the search.
    fn candidates(&self, kind: AlgorithmKind) -> descent::Candidates<'_> {
        let dpgd = kind == AlgorithmKind::Dpgd;
        descent::Candidates {
            kind,
            sample_rates: if dpgd { &[1.0] } else { &self.sample_rates },
            horizons: &self.horizons,
            fractions: &self.fractions,
            clips: if dpgd { &[None] } else { &self.clips },
            search: self.cfg.tune.search,
            covariance: self.covariance.as_ref(),
        }
    }

    /// The cell of every key.
    fn cell_of(&self) -> BTreeMap<CellKey, usize> {
        (0..self.cells.len()).map(|c| (self.key(c), c)).collect()
    }

    /// Whether an optimum read back (resume, merge) is one this search could
    /// have written: a cell of the plan (of `mine`, when given) and
    /// [`Best::conforms`] to it. Its cell, or the field at fault.
    fn check(
        &self,
        b: &Best,
        cell_of: &BTreeMap<CellKey, usize>,
        mine: Option<&BTreeSet<usize>>,
        provenance: &Provenance,
    ) -> Result<usize, String> {
        let Some(&c) = cell_of.get(&b.key()) else {
            return Err("not a cell of this config (δ, budget, problem parameters or algorithm differ)".into());
        };
        if mine.is_some_and(|m| !m.contains(&c)) {
            return Err(format!("cell {c} belongs to another shard"));
        }
        let (p, budget, _) = self.cells[c];
        b.conforms(&self.points[p], self.budgets[budget], &self.cfg.tune.metric, provenance)?;
        Ok(c)
    }

    /// The cells of shard `shard` (every cell without one).
    fn mine(&self, shard: Option<Shard>) -> Option<BTreeSet<usize>> {
        shard.map(|s| {
            let owner = crate::run::assign(&self.costs(), s.count);
            (0..self.cells.len()).filter(|&c| owner[c] == s.index).collect()
        })
    }

    /// The key of cell `c`.
    fn key(&self, c: usize) -> CellKey {
        let (p, b, kind) = self.cells[c];
        let base = &self.points[p];
        (
            facet(&base.problem_params()),
            base.delta().to_bits(),
            self.budgets[b].target.level().to_bits(),
            kind,
        )
    }
}

/// Which cells a tune run searches.
enum Scope {
    /// Every cell.
    All,
    /// Shard K/N: only its cells (by [`crate::run::shard::assign`] over the cells' costs).
    Shard(Shard),
    /// None: assemble the merged optimums of a sharded search.
    Assemble,
}

/// The file a tune shard writes when all of its cells are searched: how
/// many, and which reached no optimum (a cell whose budget no
/// hyperparameters reach writes no line, so the list tells an unreachable
/// cell from a missing line).
const COMPLETE: &str = "complete.json";

/// What a finished shard records in [`COMPLETE`].
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Complete {
    /// Cells searched.
    cells: usize,
    /// The cells (by position in the search order) with no optimum.
    #[serde(default)]
    unreachable: Vec<usize>,
}

/// Tune every cell of a `[tune]` config (TOML `text`, named `label`) into
/// `dir`: `tune.jsonl` (one optimum per line, written as found),
/// `manifest.json`, `non_private.json` and the figures.
pub fn tune(
    text: &str,
    label: &str,
    dir: &Path,
    existing: Existing,
    progress: &dyn Progress,
) -> crate::Result<TuneOutcome> {
    let plan = Plan::new(text, label)?;
    plan.check_cost(None)?;
    let (mut out, done) = open(&plan, text, label, dir, existing, None)?;
    Ok(search(&plan, &mut out, done, Scope::All, progress)?)
}

/// Whether `text` is a tune config: TOML with a top-level `[tune]` table.
pub fn is_tune_config(text: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("tune"))
}

/// What a tune config asks for, checked before any work: its cells and
/// the estimated time of the search ([`estimate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TuneEstimate {
    /// Problem points (one per combination of the `[problem]` parameters).
    pub points: usize,
    /// Privacy budgets.
    pub budgets: usize,
    /// The algorithms compared.
    pub algorithms: Vec<AlgorithmKind>,
    /// Cells searched (of the shard, when given).
    pub cells: usize,
    /// Estimated wall seconds on this machine (the solves of every cell's
    /// search, one cell after another, and the simulated checks).
    pub wall_seconds: f64,
    /// The cores the search will use.
    pub cores: usize,
}

impl TuneEstimate {
    /// One line: the cells and the estimated wall time on this machine.
    pub fn text(&self) -> String {
        let names: Vec<&str> = self.algorithms.iter().map(|a| a.name()).collect();
        let time = crate::progress::duration(self.wall_seconds);
        format!(
            "estimate: {} cells ({} problem points × {} budgets × {}), about {time} on {} cores",
            self.cells,
            self.points,
            self.budgets,
            names.join(", "),
            self.cores
        )
    }
}

/// Check a tune config as [`tune`] does before searching — its fields, the
/// covariance and data files (relative to `label`'s directory when it names
/// the file), the metric against every algorithm, `tune.max_hours` — and
/// estimate the search (of shard `shard`, when given).
pub fn estimate(text: &str, label: &str, shard: Option<Shard>) -> crate::Result<TuneEstimate> {
    let plan = Plan::new(text, label)?;
    if let Some(base) = plan.points.first() {
        for &kind in &plan.cfg.tune.algorithms {
            check_metric(base, kind, &plan.cfg.tune.metric)?;
        }
    }
    plan.check_cost(shard)?;
    let cells = plan.mine(shard).map_or(plan.cells.len(), |m| m.len());
    Ok(TuneEstimate {
        points: plan.points.len(),
        budgets: plan.budgets.len(),
        algorithms: plan.cfg.tune.algorithms.clone(),
        cells,
        wall_seconds: plan.wall_seconds(shard),
        cores: cost::cores(),
    })
}

/// [`tune`] restricted to shard K/N of the cells (balanced by estimated
/// cost; a partition depending only on the config and N): writes the shard's
/// optimums and, when done, `complete.json`; no figures. `--resume`
/// continues only the same shard; [`merge`] combines the shards.
pub fn tune_shard(
    text: &str,
    label: &str,
    dir: &Path,
    existing: Existing,
    shard: Shard,
    progress: &dyn Progress,
) -> crate::Result<TuneOutcome> {
    let plan = Plan::new(text, label)?;
    plan.check_cost(Some(shard))?;
    let (mut out, done) = open(&plan, text, label, dir, existing, Some(shard))?;
    Ok(search(&plan, &mut out, done, Scope::Shard(shard), progress)?)
}

/// Open `dir` for a search of `plan` (of `shard`): the optimums of an
/// earlier search kept when resuming, each checked ([`Plan::check`]).
fn open(
    plan: &Plan,
    text: &str,
    label: &str,
    dir: &Path,
    existing: Existing,
    shard: Option<Shard>,
) -> Result<(RunDir, BTreeMap<CellKey, Best>)> {
    let manifest = Manifest {
        shard,
        ..Manifest::new(label, text, plan.cells.len())
    };
    let (prov, cell_of, mine) = (manifest.provenance(), plan.cell_of(), plan.mine(shard));
    let check = |b: &Best| plan.check(b, &cell_of, mine.as_ref(), &prov).map(|_| ());
    let (out, earlier) = RunDir::open(dir, TUNE, &manifest, existing, &check)?;
    Ok((out, earlier.records.into_iter().map(|b| (b.key(), b)).collect()))
}

fn search(
    plan: &Plan,
    out: &mut RunDir,
    done: BTreeMap<CellKey, Best>,
    scope: Scope,
    progress: &dyn Progress,
) -> Result<TuneOutcome> {
    let (cfg, points, budgets) = (&plan.cfg, &plan.points, &plan.budgets);
    let t = &cfg.tune;
    let first = budgets[0];
    let param = first.target.param();
    let calibrations = descent::Calibrations::default();
    let solver = TheorySolver::new(cfg.solver).with_covariance(plan.covariance.clone());
    if let Some(base) = points.first() {
        for &kind in &t.algorithms {
            check_metric(base, kind, &t.metric)?;
        }
    }
    let shard = match scope {
        Scope::Shard(s) => Some(s),
        _ => None,
    };
    let mine = plan.mine(shard);
    let prov = crate::run::provenance_of(&plan.text);
    if shard.is_some() {
        out.remove_file(COMPLETE)?;
    }
    let design = cfg
        .simulation
        .as_ref()
        .map_or(propdp_core::Design::Gaussian, |s| s.design);
    let searched = |c: usize| match &scope {
        Scope::All => true,
        Scope::Shard(_) => mine.as_ref().is_some_and(|m| m.contains(&c)),
        Scope::Assemble => false,
    };
    let count = match &mine {
        Some(m) => m.len(),
        None => plan.cells.len(),
    };
    progress.begin("tune", count as u64);
    // the time left: each cell's estimated wall seconds, those found in an earlier run free
    let parts: Vec<(f64, f64)> = plan
        .cost_parts()
        .iter()
        .map(|&(a, b)| (plan.wall(a), plan.wall_check(b)))
        .collect();
    let pending = |c: usize| searched(c) && !done.contains_key(&plan.key(c));
    let total: f64 = (0..plan.cells.len())
        .filter(|&c| pending(c))
        .map(|c| parts[c].0 + parts[c].1)
        .sum();
    let mut finished = 0.0;
    progress.work(0.0, total);
    let mut cells: Vec<Cell> = Vec::new();
    let mut frontier: Vec<Record> = Vec::new();
    let levels: Vec<f64> = budgets.iter().map(|b| b.target.level()).collect();
    let mut references: Vec<NonPrivate> = Vec::new();
    let mut unreachable = Vec::new();
    for (p, base) in points.iter().enumerate() {
        let reference = ridge::RidgeSearch::new(&solver, *base, AlgorithmKind::Objective, None, &t.metric)
            .optimise(t.lambda_min, t.lambda_max)
            .map(|o| NonPrivate {
                params: o.point.problem_params(),
                lambda: o.point.algorithm().lambda(),
                metric: t.metric.clone(),
                value: o.value,
                provenance: prov.clone(),
            });
        if let Some(r) = reference {
            frontier.extend(r.records(base.model().kind(), param, &levels));
            references.push(r);
        }
        for c in (0..plan.cells.len()).filter(|&c| plan.cells[c].0 == p) {
            let (_, b, kind) = plan.cells[c];
            let (budget, key) = (budgets[b], plan.key(c));
            if shard.is_some() && !searched(c) {
                continue;
            }
            if progress.cancelled() {
                return Err(crate::progress::Cancelled.into());
            }
            let best = match done.get(&key) {
                Some(b) => Some(b.clone()),
                None if !searched(c) => None,
                None => {
                    let tell = |within: f64| progress.work(finished + within, total);
                    let b = optimise_cell(plan, &solver, &calibrations, c, &prov, progress, (parts[c], &tell));
                    finished += parts[c].0 + parts[c].1;
                    progress.work(finished, total);
                    if let Some(b) = &b {
                        out.append(b)?;
                    }
                    b
                }
            };
            match &best {
                Some(b) => frontier.extend(b.records(base.model().kind(), c, design)),
                None => unreachable.push(c),
            }
            cells.push(Cell {
                facet: key.0,
                delta: base.delta(),
                level: budget.target.level(),
                algorithm: kind,
                best,
            });
            progress.advance(1);
        }
    }
    progress.end();
    out.write_file("non_private.json", &(serde_json::to_string_pretty(&references)? + "\n"))?;
    let mut figures = Vec::new();
    if shard.is_some() {
        // a shard's cells are a scattered subset: its figures come with the merge
        let complete = Complete {
            cells: cells.len(),
            unreachable,
        };
        out.write_file(COMPLETE, &(serde_json::to_string(&complete)? + "\n"))?;
    } else {
        figures = figures::draw(plan, out, &frontier, &cells)?;
    }
    Ok(TuneOutcome {
        dir: out.dir.clone(),
        cells,
        references,
        metric: t.metric.clone(),
        param,
        budget: first,
        algorithms: t.algorithms.clone(),
        figures,
    })
}

/// Search cell `c` of `plan` (DP-GD and DP-SGD by descent over their
/// candidates, the others over λ), and check its optimum by simulation
/// when the config asks (a failed simulation is reported, the optimum
/// kept); `None` when no searched configuration reaches the budget.
/// `work`: the cell's estimated (search, check) seconds, and where to tell
/// the estimated seconds of it done (the runs solved of those planned).
fn optimise_cell(
    plan: &Plan,
    solver: &TheorySolver,
    calibrations: &descent::Calibrations,
    c: usize,
    prov: &Provenance,
    progress: &dyn Progress,
    ((search_cost, _), tell): ((f64, f64), &dyn Fn(f64)),
) -> Option<Best> {
    let (cfg, t) = (&plan.cfg, &plan.cfg.tune);
    let (p, b, kind) = plan.cells[c];
    let (base, budget) = (&plan.points[p], plan.budgets[b]);
    // what the cell is doing, beside the bar that counts cells
    let cell = format!(
        "cell {}: {kind} at δ = {}, {} = {}",
        c + 1,
        base.delta(),
        budget.target.param(),
        budget.target.level()
    );
    progress.detail(&format!("{cell}: searching its hyperparameters"));
    let opt = match kind {
        AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd => {
            let search = descent::DescentSearch::new(
                cfg.solver,
                solver,
                *base,
                budget,
                &t.metric,
                plan.candidates(kind),
                calibrations,
            );
            let planned = search.grid_runs(t.lambda_min, t.lambda_max);
            // the search's estimated work done: the cost model's seconds of the runs solved
            let report = |n: usize, spent: f64| {
                progress.detail(&format!(
                    "{cell}: searching its hyperparameters, {n} runs solved (a grid of about {planned}, then a refinement)"
                ));
                tell(plan.wall(spent).min(0.95 * search_cost));
            };
            search.with_progress(&report).optimise(t.lambda_min, t.lambda_max)
        }
        _ => ridge::RidgeSearch::new(solver, *base, kind, Some(budget), &t.metric).optimise(t.lambda_min, t.lambda_max),
    }?;
    let mut best = Best::new(&opt, budget, &t.metric, prov);
    let n = cfg
        .simulation
        .as_ref()
        .and_then(|s| s.d.first())
        .map(|&d| propdp_sim::run::samples(d, base.delta()));
    best.training = best::TrainingRun::of(&opt, &budget, n);
    if let Some(sim) = &cfg.simulation {
        tell(search_cost);
        progress.detail(&format!("{cell}: simulating its optimum"));
        match simulate(
            &opt,
            sim,
            plan.covariance.as_ref(),
            plan.real.clone(),
            &t.metric,
            c as u64,
        ) {
            Ok(check) => best.simulation = Some(check),
            Err(err) => progress.message(&format!(
                "simulation of {kind} at δ = {}, {} = {}: {err}",
                base.delta(),
                budget.target.param(),
                budget.target.level()
            )),
        }
    }
    progress.detail("");
    Some(best)
}

/// Fails, naming `tune.metric` and the metrics on offer, when the theory of
/// `kind` does not predict `metric` for this model.
fn check_metric(base: &Point, kind: AlgorithmKind, metric: &str) -> Result<()> {
    let offered = propdp_core::metrics::offered(base.model().kind(), kind);
    if !offered.contains(&metric) {
        anyhow::bail!(
            "tune.metric = \"{metric}\" is not predicted for {kind} with this model; allowed: {}",
            offered.join(", ")
        );
    }
    Ok(())
}
