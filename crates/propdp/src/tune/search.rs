//! The search of a `[tune]` config ([`tune`], [`tune_shard`]): for each
//! problem point its non-private reference, then each of its cells (budget
//! and algorithm) searched by its algorithm's [`Method`]; each optimum
//! written to `tune.jsonl` as found (and simulated when the config asks),
//! then the references, and the figures or a shard's record of its end.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::Result;
use propdp_core::AlgorithmKind;
use propdp_core::config::tune::TuneStrategy;
use propdp_core::record::{Provenance, Record};
use propdp_theory::solve::TheorySolver;

use super::best::{Best, NonPrivate, TrainingRun, simulate};
use super::plan::{Method, Plan, check_metric};
use super::report::{Cell, TuneOutcome};
use super::ridge::{Perturbation, RidgeSearch};
use super::types::CellKey;
use super::{descent, figures};
use crate::progress::Progress;
use crate::run::{Existing, Manifest, RunDir, Shard, TUNE, provenance_of};

/// Which cells a tune run searches.
pub(super) enum Scope {
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
pub(super) const COMPLETE: &str = "complete.json";

/// What a finished shard records in [`COMPLETE`].
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Complete {
    /// Cells searched.
    pub(super) cells: usize,
    /// The cells (by position in the search order) with no optimum.
    #[serde(default)]
    pub(super) unreachable: Vec<usize>,
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
    search(&plan, &mut out, done, Scope::All, progress)
}

/// [`tune`] restricted to shard K/N of the cells (balanced by estimated
/// cost; a partition depending only on the config and N): writes the shard's
/// optimums and, when done, `complete.json`; no figures. `--resume`
/// continues only the same shard; [`merge`](crate::tune::merge()) combines
/// the shards.
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
    search(&plan, &mut out, done, Scope::Shard(shard), progress)
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

/// Search the cells of `plan` in `scope` into `out`, keeping the optimums
/// of `done` (resumed, or merged from shards) as found.
pub(super) fn search(
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
    let prov = provenance_of(&plan.text);
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
        let reference = RidgeSearch::new(&solver, *base, Perturbation::Objective, None, &t.metric)
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
    let opt = match Method::of(kind) {
        Method::Descent(iterative) => {
            let search = descent::DescentSearch::new(
                cfg.solver,
                solver,
                *base,
                budget,
                &t.metric,
                plan.candidates(iterative),
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
        Method::Ridge(perturbation) => {
            RidgeSearch::new(solver, *base, perturbation, Some(budget), &t.metric).optimise(t.lambda_min, t.lambda_max)
        }
    }?;
    let mut best = Best::new(&opt, budget, &t.metric, prov);
    let n = cfg
        .simulation
        .as_ref()
        .and_then(|s| s.d.first())
        .map(|&d| propdp_sim::run::samples(d, base.delta()));
    best.training = TrainingRun::of(&opt, &budget, n);
    if kind == AlgorithmKind::Dpsgd && t.strategies.iter().any(|s| *s != TuneStrategy::Identity) {
        progress.detail(&format!("{cell}: its optimum with correlated noise"));
        let coarse = crate::mechanism::coarse_solver(cfg.solver, plan.covariance.clone());
        let searches = crate::mechanism::Searches {
            optimized: t.strategies.contains(&TuneStrategy::Optimized),
            blt: t.strategies.contains(&TuneStrategy::Blt),
        };
        // the best correlated run at the optimum, then its step size searched again
        let run = crate::mechanism::compare(opt.point, budget, &t.metric, solver, &coarse, searches, &crate::Silent)
            .and_then(|runs| {
                let best = runs
                    .into_iter()
                    .skip(1)
                    .min_by(|a, b| a.predicted.total_cmp(&b.predicted));
                best.map(|b| crate::mechanism::search_step(opt.point, budget, &t.metric, solver, &b, &crate::Silent))
                    .transpose()
            });
        match run {
            Ok(run) => best.correlated_noise = run,
            Err(err) => progress.message(&format!("{cell}: correlated noise at its optimum: {err}")),
        }
    }
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
