//! `propdp tune`: for each algorithm, problem point and privacy budget, the
//! hyperparameters minimising the predicted metric once the noise is
//! calibrated to the budget — chosen from theory, with no privacy spent on
//! tuning. λ for objective and output perturbation ([`ridge`]); (T, η, λ) for
//! DP-GD through its DMFT ([`dpgd`]).

mod best;
mod dpgd;
mod report;
mod ridge;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use propdp_core::config::{AlgorithmKind, PlotSpec, TuneConfig};
use propdp_core::record::{Provenance, Record};
use propdp_core::{Algorithm, Point};
use propdp_theory::solve::TheorySolver;

use crate::output::{provenance, sha256_hex};
use best::{Best, simulate};

/// The result of one search: the tuned, calibrated point and its predicted metric.
pub struct Optimum {
    pub point: Point,
    pub value: f64,
    /// RQMC standard error of a DMFT prediction.
    pub stderr: Option<f64>,
    /// The optimum sits at the edge of the searched range.
    pub at_boundary: bool,
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
    // the config text beside its results, as for `propdp run`
    let manifest = crate::output::Manifest {
        config_path: path.display().to_string(),
        config_sha256: prov.config_sha256.clone(),
        config_text: text.clone(),
        crate_version: prov.crate_version.clone(),
        git_commit: prov.git_commit.clone(),
        points: points.len() * t.algorithms.len() * budgets.len(),
    };
    let manifest_path = dir.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest)? + "\n")
        .with_context(|| format!("writing {}", manifest_path.display()))?;
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
    let levels: Vec<f64> = budgets.iter().map(|b| b.target.level()).collect();
    let mut references: Vec<best::NonPrivate> = Vec::new();
    for base in &points {
        let reference = ridge::RidgeSearch::new(&solver, *base, AlgorithmKind::Objective, None, &t.metric)
            .optimise(t.lambda_min, t.lambda_max)
            .map(|o| best::NonPrivate {
                params: best::problem_params(&o.point),
                lambda: o.point.algorithm.lambda(),
                metric: t.metric.clone(),
                value: o.value,
                provenance: prov.clone(),
            });
        if let Some(r) = reference {
            frontier.extend(r.records(base.model.name(), param, &levels));
            references.push(r);
        }
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
                            _ => ridge::RidgeSearch::new(&solver, *base, kind, Some(budget), &t.metric)
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
    let reference_file = dir.join("non_private.json");
    std::fs::write(&reference_file, serde_json::to_string_pretty(&references)? + "\n")
        .with_context(|| format!("writing {}", reference_file.display()))?;
    report::print_table(&cells, &references, &t.metric, param, t.algorithms.len());
    println!("→ {}", file.display());
    let figures = dir.join("figures");
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
        propdp_plot::plot_records(&frontier, &spec, &figures)?;
        println!("frontier figures (one per δ): {}", figures.display());
    }
    let names: Vec<&str> = t.algorithms.iter().map(|&k| algorithm_name(k)).collect();
    report::draw_winner_maps(&cells, &names, &t.metric, (param, first.target, neighbouring), &figures)?;
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
