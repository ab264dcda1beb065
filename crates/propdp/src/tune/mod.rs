//! `propdp tune`: for each algorithm, problem point and privacy budget, the
//! hyperparameters minimising the predicted metric once the noise is
//! calibrated to the budget — chosen from theory, with no privacy spent on
//! tuning. λ for objective and output perturbation ([`ridge`]); (T, η, λ) for
//! DP-GD and (q, T, η, λ) for DP-SGD through their DMFT ([`descent`]).

mod best;
pub mod descent;
mod report;
pub mod ridge;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use propdp_core::config::{PlotSpec, TuneConfig};
use propdp_core::problem::Budget;
use propdp_core::record::{Provenance, Record};
use propdp_core::{AlgorithmKind, Point};
use propdp_theory::solve::TheorySolver;

use best::simulate;
pub use best::{Best, NonPrivate, SimCheck};

use crate::progress::Progress;
use crate::provenance::Manifest;
use crate::rundir::Existing;
use crate::shard::Shard;

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
/// parabolic interpolation with golden-section safeguard) to an accuracy of
/// about 3e-5 in x (the searches run in log λ and log η). `f` may return +∞
/// where the budget cannot be met.
fn minimise<F: Fn(f64) -> f64>(f: F, a: f64, b: f64) -> f64 {
    let solver = argmin::solver::brent::BrentOpt::new(a, b).set_tolerance(f64::EPSILON.sqrt(), 1e-5);
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

/// The optimums of an earlier run to keep: none unless resuming; refuses to
/// replace an existing tune.jsonl unless told to, and to resume one written
/// for another config.
fn open_output(file: &Path, prov: &Provenance, existing: Existing) -> Result<BTreeMap<CellKey, Best>> {
    if !file.exists() {
        return Ok(BTreeMap::new());
    }
    match existing {
        Existing::Refuse => anyhow::bail!(
            "{} already exists: pass --resume to finish that search or --overwrite to start over",
            file.display()
        ),
        Existing::Overwrite => {
            std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
            return Ok(BTreeMap::new());
        }
        Existing::Resume => {}
    }
    let old: Vec<Best> = crate::rundir::read_lines(file)?;
    if let Some(b) = old.iter().find(|b| b.provenance.config_sha256 != prov.config_sha256) {
        anyhow::bail!(
            "cannot resume: {} was produced by a different config (sha256 {} ≠ {}); use --overwrite or another --out",
            file.display(),
            b.provenance.config_sha256,
            prov.config_sha256
        );
    }
    Ok(old.into_iter().map(|b| (b.key(), b)).collect())
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
        report::table(
            &self.cells,
            &self.references,
            &self.metric,
            self.param,
            self.algorithms.len(),
        )
    }

    /// The optimums file.
    pub fn file(&self) -> PathBuf {
        self.dir.join("tune.jsonl")
    }
}

/// A parsed `[tune]` config and its cells, in search order (problem point,
/// then budget, then algorithm).
struct Plan {
    cfg: TuneConfig,
    points: Vec<Point>,
    budgets: Vec<Budget>,
    steps: Vec<usize>,
    fractions: Vec<f64>,
    sample_rates: Vec<f64>,
    /// (problem point, budget, algorithm) of every cell.
    cells: Vec<(usize, usize, AlgorithmKind)>,
}

impl Plan {
    fn new(text: &str, label: &str) -> Result<Plan> {
        let (cfg, points) = TuneConfig::from_toml_str(text).with_context(|| format!("in config {label}"))?;
        let t = &cfg.tune;
        let budgets = t.budgets()?;
        if budgets.is_empty() {
            anyhow::bail!("tune: no budgets");
        }
        let cells = (0..points.len())
            .flat_map(|p| (0..budgets.len()).flat_map(move |b| t.algorithms.iter().map(move |&k| (p, b, k))))
            .collect();
        Ok(Plan {
            steps: t.dpgd_steps()?,
            fractions: t.dpgd_eta_fractions()?,
            sample_rates: t.sample_rates()?,
            cfg,
            points,
            budgets,
            cells,
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

    /// Estimated cost of every cell's search (seconds on one core; only
    /// ratios matter): a few dozen static solves for λ alone; for DP-GD and
    /// DP-SGD a DMFT of cost ∝ paths·T² per candidate (q, T, η) at the coarse
    /// budget; plus the simulated check of the optimum.
    fn costs(&self) -> Vec<f64> {
        let dmft: f64 = self
            .steps
            .iter()
            .map(|&t| crate::shard::dmft_cost(&self.cfg.solver, t))
            .sum::<f64>()
            * self.fractions.len() as f64;
        let t_max = self.steps.iter().copied().max().unwrap_or(1);
        self.cells
            .iter()
            .map(|&(p, _, kind)| {
                let descent = matches!(kind, AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd);
                let search = match kind {
                    AlgorithmKind::Dpgd => dmft,
                    AlgorithmKind::Dpsgd => dmft * self.sample_rates.len() as f64,
                    _ => 5e-3,
                };
                let check = self.cfg.simulation.as_ref().map_or(0.0, |sim| {
                    let steps = descent.then_some(t_max);
                    crate::shard::simulation_cost(sim.reps, sim.d[0], self.points[p].delta(), steps)
                });
                search + check
            })
            .collect()
    }
}

/// Which cells a tune run searches.
enum Scope {
    /// Every cell.
    All,
    /// Shard K/N: only its cells (by [`crate::shard::assign`] over the cells' costs).
    Shard(Shard),
    /// None: assemble the merged optimums of a sharded search.
    Assemble,
}

/// The file a tune shard writes when all of its cells are searched (a cell
/// whose budget no hyperparameters reach writes no optimum, so a missing
/// line alone does not tell an interrupted shard).
const COMPLETE: &str = "complete.json";

/// Tune every cell of a `[tune]` config (TOML `text`, named `label`) into
/// `dir`: `tune.jsonl` (one optimum per line, written as found),
/// `manifest.json`, `non_private.json` and the figures.
pub fn tune(text: &str, label: &str, dir: &Path, existing: Existing, progress: &dyn Progress) -> Result<TuneOutcome> {
    search(text, label, dir, existing, Scope::All, progress)
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
) -> Result<TuneOutcome> {
    search(text, label, dir, existing, Scope::Shard(shard), progress)
}

fn search(
    text: &str,
    label: &str,
    dir: &Path,
    existing: Existing,
    scope: Scope,
    progress: &dyn Progress,
) -> Result<TuneOutcome> {
    let plan = Plan::new(text, label)?;
    let (cfg, points, budgets) = (&plan.cfg, &plan.points, &plan.budgets);
    let t = &cfg.tune;
    let first = budgets[0];
    let (param, neighbouring) = (first.target.param(), first.neighbouring);
    let calibrations = descent::Calibrations::default();
    let solver = TheorySolver::new(cfg.solver);
    if let Some(base) = points.first() {
        for &kind in &t.algorithms {
            check_metric(base, kind, &t.metric)?;
        }
    }
    let shard = match scope {
        Scope::Shard(s) => Some(s),
        _ => None,
    };
    let mine: Option<BTreeSet<usize>> = shard.map(|s| {
        let owner = crate::shard::assign(&plan.costs(), s.count);
        (0..plan.cells.len()).filter(|&c| owner[c] == s.index).collect()
    });
    let _lock = crate::rundir::DirLock::acquire(dir)?;
    let file = dir.join("tune.jsonl");
    // the config text beside its results, as for `propdp run`
    let manifest = Manifest {
        shard,
        ..Manifest::new(label, text, plan.cells.len())
    };
    let prov = manifest.provenance();
    let manifest_path = dir.join("manifest.json");
    if existing == Existing::Resume {
        check_same_shard(&manifest_path, shard)?;
    }
    let done = open_output(&file, &prov, existing)?;
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest)? + "\n")
        .with_context(|| format!("writing {}", manifest_path.display()))?;
    let complete = dir.join(COMPLETE);
    if complete.exists() {
        std::fs::remove_file(&complete).with_context(|| format!("removing {}", complete.display()))?;
    }
    let mut w = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .with_context(|| format!("opening {}", file.display()))?;
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
    let mut cells: Vec<Cell> = Vec::new();
    let mut frontier: Vec<Record> = Vec::new();
    let levels: Vec<f64> = budgets.iter().map(|b| b.target.level()).collect();
    let mut references: Vec<NonPrivate> = Vec::new();
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
                    let opt = match kind {
                        AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd => {
                            let candidates = descent::Candidates {
                                kind,
                                sample_rates: if kind == AlgorithmKind::Dpgd {
                                    &[1.0]
                                } else {
                                    &plan.sample_rates
                                },
                                steps: &plan.steps,
                                fractions: &plan.fractions,
                            };
                            descent::DescentSearch::new(
                                cfg.solver,
                                &solver,
                                *base,
                                budget,
                                &t.metric,
                                candidates,
                                &calibrations,
                            )
                            .optimise(t.lambda_min, t.lambda_max)
                        }
                        _ => ridge::RidgeSearch::new(&solver, *base, kind, Some(budget), &t.metric)
                            .optimise(t.lambda_min, t.lambda_max),
                    };
                    match opt {
                        Some(o) => {
                            let mut b = Best::new(&o, budget, &t.metric, &prov);
                            if let Some(sim) = &cfg.simulation {
                                match simulate(&o, sim, &t.metric, c as u64) {
                                    Ok(check) => b.simulation = Some(check),
                                    Err(err) => progress.message(&format!(
                                        "simulation of {kind} at δ = {}, {param} = {}: {err}",
                                        base.delta(),
                                        budget.target.level()
                                    )),
                                }
                            }
                            writeln!(w, "{}", serde_json::to_string(&b)?)?;
                            w.sync_data()?;
                            Some(b)
                        }
                        None => None,
                    }
                }
            };
            if let Some(b) = &best {
                frontier.extend(b.records(base.model().kind(), c, design));
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
    let reference_file = dir.join("non_private.json");
    std::fs::write(&reference_file, serde_json::to_string_pretty(&references)? + "\n")
        .with_context(|| format!("writing {}", reference_file.display()))?;
    let figures_dir = dir.join("figures");
    let mut figures = Vec::new();
    if shard.is_some() {
        // a shard's cells are a scattered subset: its figures come with the merge
        std::fs::write(
            &complete,
            serde_json::json!({ "cells": cells.len() }).to_string() + "\n",
        )
        .with_context(|| format!("writing {}", complete.display()))?;
    } else {
        if budgets.len() > 1 && !frontier.is_empty() {
            // a log y axis when the best errors span more than a decade (small δ, large ε)
            let values = frontier.iter().filter_map(|r| r.metrics.get(&t.metric).copied());
            let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
            let spec = PlotSpec {
                x: Some(param.into()),
                metrics: Some(vec![t.metric.clone()]),
                series: Some("algorithm".into()),
                x_log: Some(true),
                y_log: lo > 0.0 && hi > 10.0 * lo,
                title: Some(format!("Best {}, hyperparameters tuned", t.metric)),
            };
            figures.extend(propdp_plot::plot_records(&frontier, &spec, &figures_dir)?);
        }
        figures.extend(report::draw_winner_maps(
            &cells,
            &t.algorithms,
            &t.metric,
            (param, first.target, neighbouring),
            &figures_dir,
        )?);
    }
    Ok(TuneOutcome {
        dir: dir.to_path_buf(),
        cells,
        references,
        metric: t.metric.clone(),
        param,
        algorithms: t.algorithms.clone(),
        figures,
    })
}

/// Refuses to resume, in `dir`, a search of another shard (or a whole
/// search as a shard, or the reverse).
fn check_same_shard(manifest_path: &Path, shard: Option<Shard>) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(manifest_path) else {
        return Ok(());
    };
    let old: Manifest = serde_json::from_str(&text).with_context(|| format!("parsing {}", manifest_path.display()))?;
    if old.shard != shard {
        let name = |s: Option<Shard>| s.map_or("the whole search".to_string(), |s| format!("shard {s}"));
        anyhow::bail!(
            "cannot resume: {} holds {}, not {}; use --overwrite or another --out",
            manifest_path.parent().unwrap_or(Path::new(".")).display(),
            name(old.shard),
            name(shard)
        );
    }
    Ok(())
}

/// Merge the directories of a sharded search (`propdp tune --shard K/N`,
/// every K of one config and N, each complete) into `out`: the optimums of
/// every cell in search order (lines copied byte for byte: the single
/// search's tune.jsonl), then the non-private references, table and figures
/// as a single search draws them. Refused, naming the shard, with nothing
/// written: what [`crate::merge::merge`] refuses, an unfinished shard, and
/// an optimum of a cell another shard owns.
pub fn merge(out: &Path, dirs: &[PathBuf], progress: &dyn Progress) -> Result<TuneOutcome> {
    let (manifest, shards) = crate::merge::check_shards(dirs)?;
    let plan = Plan::new(&manifest.config_text, &manifest.config_path)?;
    let count = shards[0].count;
    let owner = crate::shard::assign(&plan.costs(), count);
    let cell_of: BTreeMap<CellKey, usize> = (0..plan.cells.len()).map(|c| (plan.key(c), c)).collect();
    let mut lines: BTreeMap<usize, String> = BTreeMap::new();
    for (dir, shard) in dirs.iter().zip(&shards) {
        if !dir.join(COMPLETE).exists() {
            anyhow::bail!(
                "{} (shard {shard}) has not finished (no {COMPLETE}): finish it with propdp tune --shard {shard} --resume",
                dir.display()
            );
        }
        let file = dir.join("tune.jsonl");
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        for (no, line) in text.lines().enumerate() {
            let best: Best =
                serde_json::from_str(line).with_context(|| format!("{}:{}: not an optimum", file.display(), no + 1))?;
            let Some(&c) = cell_of.get(&best.key()) else {
                anyhow::bail!("{}:{}: not a cell of this config", file.display(), no + 1);
            };
            if owner[c] != shard.index {
                anyhow::bail!(
                    "{}:{} (shard {shard}) holds a cell that shard {}/{count} owns",
                    file.display(),
                    no + 1,
                    owner[c]
                );
            }
            if lines.insert(c, line.to_string()).is_some() {
                anyhow::bail!("{} (shard {shard}) holds cell {c} twice", file.display());
            }
        }
    }
    let file = out.join("tune.jsonl");
    if file.exists() {
        anyhow::bail!("{} already exists: merge writes into a new directory", file.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let merged: String = lines.values().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, merged).with_context(|| format!("writing {}", file.display()))?;
    search(
        &manifest.config_text,
        &manifest.config_path,
        out,
        Existing::Resume,
        Scope::Assemble,
        progress,
    )
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
