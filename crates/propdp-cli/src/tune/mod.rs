//! `propdp tune`: for each algorithm, problem point and privacy budget, the
//! hyperparameters minimising the predicted metric once the noise is
//! calibrated to the budget — chosen from theory, with no privacy spent on
//! tuning. λ for objective and output perturbation ([`ridge`]); (T, η, λ) for
//! DP-GD through its DMFT ([`dpgd`]).

mod dpgd;
mod ridge;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use propdp_core::accountant::Neighbouring;
use propdp_core::config::{AlgorithmKind, PlotSpec, TuneConfig};
use propdp_core::problem::{Budget, Target};
use propdp_core::record::{Provenance, Record, SolverReport};
use propdp_core::{Algorithm, Point};
use propdp_theory::solve::TheorySolver;

use crate::output::{provenance, sha256_hex};

/// The result of one search: the tuned, calibrated point and its predicted metric.
pub struct Optimum {
    pub point: Point,
    pub value: f64,
    /// RQMC standard error of a DMFT prediction.
    pub stderr: Option<f64>,
    /// The optimum sits at the edge of the searched range.
    pub at_boundary: bool,
}

/// One optimum, as written to tune.jsonl (one line each).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Best {
    algorithm: String,
    params: BTreeMap<String, f64>,
    /// The budget: `notion` "approx" with `epsilon`, `delta_priv`, or "zcdp" with `rho`.
    #[serde(flatten)]
    budget: Target,
    neighbouring: Neighbouring,
    lambda: f64,
    /// σ (objective, DP-GD) or τ (output), calibrated to the budget.
    noise: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    eta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<usize>,
    metric: String,
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stderr: Option<f64>,
    /// The optimum sits at the edge of the searched range (λ; for DP-GD also
    /// the largest T, or η at a tenth of the smallest fraction).
    at_boundary: bool,
    /// With a `[simulation]` table: the simulated metric at the optimum.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    simulation: Option<SimCheck>,
    provenance: Provenance,
}

impl Best {
    fn new(opt: &Optimum, budget: Budget, metric: &str, provenance: &Provenance) -> Best {
        let (algorithm, lambda, noise, eta, steps) = match opt.point.algorithm {
            Algorithm::Objective { lambda, sigma } => ("objective", lambda, sigma, None, None),
            Algorithm::Output { lambda, tau } => ("output", lambda, tau, None, None),
            Algorithm::Dpgd {
                lambda,
                sigma,
                eta,
                steps,
                ..
            } => ("dpgd", lambda, sigma, Some(eta), Some(steps)),
        };
        Best {
            algorithm: algorithm.into(),
            params: opt
                .point
                .params()
                .into_iter()
                .filter(|(k, _)| !["lambda", "sigma", "tau", "eta", "steps"].contains(&k.as_str()))
                .collect(),
            budget: budget.target,
            neighbouring: budget.neighbouring,
            lambda,
            noise,
            eta,
            steps,
            metric: metric.into(),
            value: opt.value,
            stderr: opt.stderr,
            at_boundary: opt.at_boundary,
            simulation: None,
            provenance: provenance.clone(),
        }
    }

    /// The cell this optimum belongs to.
    fn key(&self) -> CellKey {
        (
            facet(&self.params),
            self.params["delta"].to_bits(),
            self.budget.level().to_bits(),
            self.algorithm.clone(),
        )
    }

    /// Frontier-figure records: the prediction and, if simulated, the simulation.
    fn records(&self, model: &str, index: usize, design: propdp_core::Design) -> Vec<Record> {
        let theory = Record {
            source: "theory".into(),
            model: model.into(),
            algorithm: self.algorithm.clone(),
            index,
            params: self
                .params
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .chain([(self.budget.param().to_string(), self.budget.level())])
                .collect(),
            metrics: [(self.metric.clone(), self.value)].into_iter().collect(),
            solver: SolverReport {
                converged: true,
                iterations: 0,
                residual: self.stderr.unwrap_or(0.0),
            },
            provenance: self.provenance.clone(),
            per_step: None,
            per_step_stderr: None,
            privacy: None,
            simulation: None,
        };
        let sim = self.simulation.as_ref().map(|c| Record {
            source: "simulation".into(),
            metrics: [(self.metric.clone(), c.mean)].into_iter().collect(),
            simulation: Some(propdp_core::record::SimRecord {
                n: c.n,
                d: c.d,
                reps: c.reps,
                seed: c.seed,
                design,
                stderr: [(self.metric.clone(), c.stderr)].into_iter().collect(),
                per_rep: BTreeMap::new(),
            }),
            ..theory.clone()
        });
        std::iter::once(theory).chain(sim).collect()
    }

    fn describe(&self) -> String {
        let star = if self.at_boundary { "*" } else { "" };
        let lambda = sig3(self.lambda);
        match (self.eta, self.steps) {
            (Some(eta), Some(t)) => format!("{:.4} (λ={lambda}, η={}, T={t}{star})", self.value, sig3(eta)),
            _ => format!("{:.4} (λ={lambda}{star})", self.value),
        }
    }
}

/// A hyperparameter with three significant digits.
fn sig3(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !(0.01..1e4).contains(&x.abs()) {
        format!("{x:.2e}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// Golden-section minimisation of `f` on [a, b] to an interval of 1e-4.
fn golden_section<F: Fn(f64) -> f64>(f: F, mut a: f64, mut b: f64) -> f64 {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut x1, mut x2) = (b - r * (b - a), a + r * (b - a));
    let (mut f1, mut f2) = (f(x1), f(x2));
    while b - a > 1e-4 {
        if f1 < f2 {
            b = x2;
            (x2, f2) = (x1, f1);
            x1 = b - r * (b - a);
            f1 = f(x1);
        } else {
            a = x1;
            (x1, f1) = (x2, f2);
            x2 = a + r * (b - a);
            f2 = f(x2);
        }
    }
    0.5 * (a + b)
}

/// The simulated check of an optimum, as written to tune.jsonl.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct SimCheck {
    d: usize,
    n: usize,
    reps: usize,
    seed: u64,
    mean: f64,
    stderr: f64,
    /// Whether |theory − simulation| passes the SPEC.md §5 rule.
    agrees: bool,
}

/// (facet, δ, budget level, algorithm) of a cell.
type CellKey = (String, u64, u64, String);

/// One tuned cell: a problem point, a budget and an algorithm.
struct Cell {
    /// The problem parameters other than δ (one winner map per facet).
    facet: String,
    delta: f64,
    /// ε or ρ.
    level: f64,
    algorithm: &'static str,
    best: Option<Best>,
}

/// The problem parameters of a point other than δ (the algorithm's are placeholders), as "k=v, …".
fn facet(params: &BTreeMap<String, f64>) -> String {
    params
        .iter()
        .filter(|(k, _)| !["delta", "lambda", "sigma", "tau", "eta", "steps"].contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Simulate a tuned point and compare with its prediction.
fn simulate(opt: &Optimum, sim: &propdp_core::config::SimulationConfig, metric: &str, index: u64) -> Result<SimCheck> {
    let settings = propdp_sim::SimSettings {
        grad_tol: sim.grad_tol,
        ..propdp_sim::SimSettings::new(sim.d[0], sim.reps, sim.design, sim.prior, sim.seed)
    };
    let s = propdp_sim::simulate(&opt.point, &settings, index)?;
    let (mean, se) = (s.mean[metric], s.stderr[metric]);
    let se_total = (se * se + opt.stderr.unwrap_or(0.0).powi(2)).sqrt();
    let check = SimCheck {
        d: s.d,
        n: s.n,
        reps: s.reps,
        seed: sim.seed,
        mean,
        stderr: se,
        agrees: (opt.value - mean).abs() <= propdp_core::validation::allowed_gap(opt.value, se_total, s.d),
    };
    Ok(check)
}

/// The optimums of an earlier run to keep: none unless `resume`; refuses to
/// replace an existing tune.jsonl without `resume` or `overwrite`, and to
/// resume one written for another config.
fn open_output(file: &Path, prov: &Provenance, resume: bool, overwrite: bool) -> Result<BTreeMap<CellKey, Best>> {
    if !file.exists() {
        return Ok(BTreeMap::new());
    }
    if !resume {
        if !overwrite {
            anyhow::bail!(
                "{} already exists: pass --resume to finish that search or --overwrite to start over",
                file.display()
            );
        }
        std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
        return Ok(BTreeMap::new());
    }
    let old: Vec<Best> = crate::output::read_lines(file)?;
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

pub fn command(path: &Path, out: Option<PathBuf>, resume: bool, overwrite: bool) -> Result<ExitCode> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (cfg, points) = TuneConfig::from_toml_str(&text).with_context(|| format!("in config {}", path.display()))?;
    let t = &cfg.tune;
    let budgets = t.budgets()?;
    let Some(first) = budgets.first() else {
        anyhow::bail!("tune: no budgets");
    };
    let (param, neighbouring) = (first.target.param(), first.neighbouring);
    let steps = t.dpgd_steps()?;
    let fractions = t.dpgd_eta_fractions()?;
    let solver = TheorySolver::new(cfg.solver);
    if let Some(base) = points.first() {
        for &kind in &t.algorithms {
            check_metric(&solver, base, kind, &t.metric)?;
        }
    }
    let dir = crate::run::run_dir(path, out);
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("tune.jsonl");
    let prov = provenance(&sha256_hex(&text));
    let done = open_output(&file, &prov, resume, overwrite)?;
    let mut w = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .with_context(|| format!("opening {}", file.display()))?;
    let design = cfg
        .simulation
        .as_ref()
        .map_or(propdp_core::Design::Gaussian, |s| s.design);
    let bar = crate::run::bar(points.len() * t.algorithms.len() * budgets.len(), "tune");
    let mut cells: Vec<Cell> = Vec::new();
    let mut frontier: Vec<Record> = Vec::new();
    for base in &points {
        for &budget in &budgets {
            let level = budget.target.level();
            for &kind in &t.algorithms {
                let algorithm = algorithm_name(kind);
                let key = (
                    facet(&base.params()),
                    base.delta.to_bits(),
                    level.to_bits(),
                    algorithm.to_string(),
                );
                let best = match done.get(&key) {
                    Some(b) => Some(b.clone()),
                    None => {
                        let opt = match kind {
                            AlgorithmKind::Dpgd => {
                                dpgd::DpgdSearch::new(cfg.solver, &solver, *base, budget, &t.metric, &steps, &fractions)
                                    .optimise(t.lambda_min, t.lambda_max)
                            }
                            _ => ridge::RidgeSearch::new(&solver, *base, kind, budget, &t.metric)
                                .optimise(t.lambda_min, t.lambda_max),
                        };
                        match opt {
                            Some(o) => {
                                let mut b = Best::new(&o, budget, &t.metric, &prov);
                                if let Some(sim) = &cfg.simulation {
                                    match bar.suspend(|| simulate(&o, sim, &t.metric, cells.len() as u64)) {
                                        Ok(check) => b.simulation = Some(check),
                                        Err(err) => bar.suspend(|| {
                                            eprintln!(
                                                "simulation of {algorithm} at δ = {}, {param} = {level}: {err}",
                                                base.delta
                                            )
                                        }),
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
                    frontier.extend(b.records(base.model.name(), cells.len(), design));
                }
                cells.push(Cell {
                    facet: key.0,
                    delta: base.delta,
                    level,
                    algorithm,
                    best,
                });
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    print_table(&cells, &t.metric, param, t.algorithms.len());
    println!("→ {}", file.display());
    let figures = dir.join("figures");
    if budgets.len() > 1 && !frontier.is_empty() {
        let spec = PlotSpec {
            x: Some(param.into()),
            metrics: Some(vec![t.metric.clone()]),
            series: Some("algorithm".into()),
            x_log: Some(true),
            y_log: false,
            title: Some(format!("Best {}, hyperparameters tuned", t.metric)),
        };
        propdp_plot::plot_records(&frontier, &spec, &figures)?;
        println!("frontier figures (one per δ): {}", figures.display());
    }
    let names: Vec<&str> = t.algorithms.iter().map(|&k| algorithm_name(k)).collect();
    // all algorithms, then (with three) each pair, e.g. objective vs output
    let mut sets = vec![names.clone()];
    if names.len() > 2 {
        for (i, a) in names.iter().enumerate() {
            sets.extend(names[i + 1..].iter().map(|b| vec![*a, *b]));
        }
    }
    for set in sets.iter().filter(|s| s.len() > 1) {
        let subset: Vec<&Cell> = cells.iter().filter(|c| set.contains(&c.algorithm)).collect();
        let stem = if set.len() == names.len() {
            "winner_map".to_string()
        } else {
            format!("winner_map_{}", set.join("_vs_"))
        };
        let title = if set.len() == names.len() {
            format!("Lowest predicted {}", t.metric)
        } else {
            format!("Lowest predicted {}: {}", t.metric, set.join(" vs "))
        };
        for (k, (facet, map)) in winner_maps(&subset).into_iter().enumerate() {
            let name = if k == 0 { stem.clone() } else { format!("{stem}_{k}") };
            let relation = match neighbouring {
                Neighbouring::ReplaceOne => "replace-one",
                Neighbouring::AddRemoveOne => "add/remove-one",
            };
            let notion = match first.target {
                Target::Approx { delta_priv, .. } => format!("δ_priv = {delta_priv}"),
                Target::Zcdp { .. } => "ρ-zCDP".to_string(),
            };
            let note = [facet.as_str(), &format!("{notion}, {relation}")]
                .iter()
                .filter(|p| !p.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("; ");
            let spec = propdp_plot::winner_map::MapSpec {
                title: &title,
                note: &note,
                algorithms: set,
                palette_order: &names,
                budget: param,
            };
            propdp_plot::winner_map::write(&map, &spec, &figures, &name)?;
        }
    }
    if names.len() > 1 {
        println!("winner maps over (δ, ε): {}/winner_map*.png", figures.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Fails, naming `tune.metric` and the metrics on offer, when the theory of
/// `kind` does not predict `metric` for this model (probed at one point).
fn check_metric(solver: &TheorySolver, base: &Point, kind: AlgorithmKind, metric: &str) -> Result<()> {
    let algorithm = match kind {
        AlgorithmKind::Objective => Algorithm::Objective {
            lambda: 1.0,
            sigma: 1.0,
        },
        AlgorithmKind::Output => Algorithm::Output { lambda: 1.0, tau: 1.0 },
        AlgorithmKind::Dpgd => Algorithm::Dpgd {
            lambda: 1.0,
            sigma: 1.0,
            eta: 0.1
                / Point {
                    algorithm: Algorithm::Objective {
                        lambda: 1.0,
                        sigma: 0.0,
                    },
                    ..*base
                }
                .smoothness(),
            steps: 1,
            loss_variant: propdp_core::LossVariant::Standard,
        },
    };
    let probe = Point { algorithm, ..*base };
    let offered = solver
        .solve(&probe, None)
        .with_context(|| format!("probing the {} theory", algorithm_name(kind)))?
        .metrics;
    if !offered.contains_key(metric) {
        anyhow::bail!(
            "tune.metric = \"{metric}\" is not predicted for {} with this model; allowed: {}",
            algorithm_name(kind),
            offered.keys().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}

fn algorithm_name(kind: AlgorithmKind) -> &'static str {
    match kind {
        AlgorithmKind::Objective => "objective",
        AlgorithmKind::Output => "output",
        AlgorithmKind::Dpgd => "dpgd",
    }
}

/// The winner of each (facet, δ, ε) among the algorithms that reach the budget.
/// The verdict at one (facet, δ, ε).
struct Verdict<'a> {
    /// The lowest predicted metric among the algorithms reaching the budget.
    winner: Option<&'a Cell>,
    /// (runner-up − winner)/winner; ∞ without a runner-up.
    margin: f64,
    /// The gap to the runner-up is within 2 combined RQMC standard errors of
    /// the DMFT predictions: no winner can be declared.
    tie: bool,
}

/// The verdict of each (facet, δ, ε) among the algorithms that reach the budget.
fn winners<'a>(cells: &[&'a Cell]) -> BTreeMap<(String, u64, u64), Verdict<'a>> {
    let mut groups: BTreeMap<(String, u64, u64), Vec<&Cell>> = BTreeMap::new();
    for &c in cells {
        groups
            .entry((c.facet.clone(), c.delta.to_bits(), c.level.to_bits()))
            .or_default()
            .push(c);
    }
    let se = |c: &Cell| c.best.as_ref().and_then(|b| b.stderr).unwrap_or(0.0);
    groups
        .into_iter()
        .map(|(k, group)| {
            let mut reached: Vec<&Cell> = group.into_iter().filter(|c| c.best.is_some()).collect();
            reached.sort_by(|a, b| value(a).total_cmp(&value(b)));
            let (margin, tie) = match reached.as_slice() {
                [w, r, ..] => (
                    (value(r) - value(w)) / value(w).abs(),
                    value(r) - value(w) <= 2.0 * se(w).hypot(se(r)),
                ),
                _ => (f64::INFINITY, false),
            };
            let winner = reached.first().copied();
            (k, Verdict { winner, margin, tie })
        })
        .collect()
}

fn value(c: &Cell) -> f64 {
    c.best.as_ref().map_or(f64::INFINITY, |b| b.value)
}

fn winner_maps(cells: &[&Cell]) -> Vec<(String, Vec<propdp_plot::winner_map::WinnerCell>)> {
    let mut maps: BTreeMap<String, Vec<propdp_plot::winner_map::WinnerCell>> = BTreeMap::new();
    for ((facet, _, _), v) in winners(cells) {
        if let Some(w) = v.winner {
            maps.entry(facet)
                .or_default()
                .push(propdp_plot::winner_map::WinnerCell {
                    delta: w.delta,
                    budget: w.level,
                    winner: w.algorithm.into(),
                    margin: v.margin,
                    tie: v.tie,
                });
        }
    }
    maps.into_iter().collect()
}

fn print_table(cells: &[Cell], metric: &str, param: &str, n_alg: usize) {
    println!(
        "{:>7} {:>7}  best {metric} per algorithm (tuned hyperparameters)  winner (margin)",
        "δ",
        propdp_plot::render::symbol(param)
    );
    let all: Vec<&Cell> = cells.iter().collect();
    let w = winners(&all);
    let mut facet: Option<&str> = None;
    for group in cells.chunks(n_alg) {
        let c0 = &group[0];
        if facet != Some(c0.facet.as_str()) {
            facet = Some(c0.facet.as_str());
            println!("── {} ──", c0.facet);
        }
        let text: Vec<String> = group
            .iter()
            .map(|c| match &c.best {
                Some(b) => format!("{} {}", c.algorithm, b.describe()),
                None => format!("{} unreachable", c.algorithm),
            })
            .collect();
        let v = &w[&(c0.facet.clone(), c0.delta.to_bits(), c0.level.to_bits())];
        let verdict = match v.winner {
            Some(x) if v.tie => format!("tie ({} +{:.3}%, within RQMC error)", x.algorithm, 100.0 * v.margin),
            Some(x) if v.margin.is_finite() => format!("{} (+{:.3}%)", x.algorithm, 100.0 * v.margin),
            Some(x) => x.algorithm.to_string(),
            None => "none".into(),
        };
        println!("{:>7.3} {:>7.3}  {}  {verdict}", c0.delta, c0.level, text.join("  "));
    }
    println!(
        "(* optimum at the edge of the searched range: λ = lambda_min/lambda_max; DP-GD: λ = lambda_max, \
         T = max of tune.steps or η at a tenth of the smallest tune.eta_fraction)"
    );
}
