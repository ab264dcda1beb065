//! `propdp run`, `propdp check` and `propdp validate`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use propdp_core::record::{Privacy, Provenance, Record, SimRecord, SolverReport};
use propdp_core::{Config, Point};
use propdp_sim::{SimSettings, simulate_with_progress};
use propdp_theory::solve::{State, TheorySolver};

use crate::output::{Key, Manifest, RunDir, provenance, sha256_hex};

/// Which sources a run computes.
#[derive(Debug, Clone, Copy)]
pub struct Sources {
    pub theory: bool,
    pub simulation: bool,
}

pub fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))?;
    Config::from_toml_str(&text).with_context(|| format!("in config {}", path.display()))
}

/// The run directory of a config: `out` or results/<config stem>/.
pub fn run_dir(path: &Path, out: Option<PathBuf>) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().to_string());
    out.unwrap_or_else(|| PathBuf::from("results").join(stem))
}

/// Validate and describe a config.
pub fn check(path: &Path) -> Result<ExitCode> {
    let cfg = load(path)?;
    println!("{}: valid, {} points", path.display(), cfg.sweep.points().len());
    for axis in &cfg.sweep.axes {
        let v = &axis.values;
        if v.len() == 1 {
            println!("  {:<18} {}", axis.name, v[0]);
        } else {
            println!(
                "  {:<18} {} values from {} to {}",
                axis.name,
                v.len(),
                v[0],
                v[v.len() - 1]
            );
        }
    }
    if let Some(sim) = &cfg.raw.simulation {
        println!(
            "  simulation         d = {:?}, {} repetitions, {:?} design, seed {}",
            sim.d, sim.reps, sim.design, sim.seed
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn bar(len: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} {what} [{{bar:40}}] {{pos}}/{{len}} ({{eta}} left)"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// Counts of one run.
#[derive(Debug, Default)]
struct Tally {
    written: usize,
    skipped: usize,
    failed: usize,
}

/// Compute every missing record of the config's sweep, appending as they finish.
pub fn run(path: &Path, out: Option<PathBuf>, resume: bool, overwrite: bool, sources: Sources) -> Result<ExitCode> {
    let cfg = load(path)?;
    if sources.simulation && !sources.theory && cfg.raw.simulation.is_none() {
        bail!("--sim-only: {} has no [simulation] table", path.display());
    }
    let dir = run_dir(path, out);
    let sha = sha256_hex(&cfg.text);
    let manifest = Manifest {
        config_path: path.display().to_string(),
        config_sha256: sha.clone(),
        config_text: cfg.text.clone(),
        crate_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: env!("PROPDP_GIT_COMMIT").to_string(),
        points: cfg.sweep.points().len(),
    };
    let (mut run_dir, done) = RunDir::open(&dir, &manifest, resume, overwrite)?;
    let prov = provenance(&sha);
    let mut tally = Tally::default();
    if sources.theory {
        theory_pass(&cfg, &mut run_dir, &done, &prov, &mut tally)?;
    }
    if sources.simulation
        && let Some(sim) = &cfg.raw.simulation
    {
        simulation_pass(&cfg, sim, &mut run_dir, &done, &prov, &mut tally)?;
    }
    println!(
        "{}: {} records written, {} already done, {} failed → {}",
        path.display(),
        tally.written,
        tally.skipped,
        tally.failed,
        run_dir.dir.join("results.jsonl").display()
    );
    let results = run_dir.dir.join("results.jsonl");
    if results.metadata().is_ok_and(|m| m.len() > 0) {
        match crate::plot::plot(&results, None) {
            Ok(files) => println!(
                "figures: {}",
                files
                    .first()
                    .and_then(|f| f.parent())
                    .map_or(String::new(), |p| p.display().to_string())
            ),
            Err(e) => {
                eprintln!("error: drawing figures: {e:#} (results are kept)");
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    if tally.failed > 0 {
        eprintln!(
            "{} points failed (no solution, no convergence, or a failed fit); see {}",
            tally.failed,
            run_dir.dir.join("errors.jsonl").display()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn record(source: &str, point: &Point, index: usize, prov: &Provenance) -> Record {
    Record {
        source: source.into(),
        model: point.model.name().into(),
        algorithm: point.algorithm.name().into(),
        index,
        params: point.params(),
        metrics: Default::default(),
        solver: SolverReport {
            converged: false,
            iterations: 0,
            residual: f64::NAN,
        },
        provenance: prov.clone(),
        per_step: None,
        per_step_stderr: None,
        privacy: Privacy::of(point),
        simulation: None,
    }
}

/// Report a failed point on the terminal and in errors.jsonl (`entry` plus
/// the error message), and count it; the sweep goes on.
fn log_failure(
    bar: &ProgressBar,
    out: &mut RunDir,
    tally: &mut Tally,
    mut entry: serde_json::Value,
    what: &str,
    error: &dyn std::fmt::Display,
) -> Result<()> {
    bar.suspend(|| eprintln!("{what}: {error}"));
    entry["error"] = error.to_string().into();
    out.write_error(&entry)?;
    tally.failed += 1;
    Ok(())
}

fn theory_pass(
    cfg: &Config,
    out: &mut RunDir,
    done: &BTreeSet<Key>,
    prov: &Provenance,
    tally: &mut Tally,
) -> Result<()> {
    let points = cfg.sweep.points();
    let solver = TheorySolver::new(cfg.raw.solver);
    let bar = bar(points.len(), "theory");
    let mut warm: Option<State> = None;
    for (index, point) in points.iter().enumerate() {
        bar.inc(1);
        if done.contains(&("theory".to_string(), index, None)) {
            tally.skipped += 1;
            warm = None;
            continue;
        }
        match solver.solve(point, warm) {
            Ok(sol) => {
                let (per_step, per_step_stderr) = sol.per_step.map(|p| (p.mean, p.stderr)).unzip();
                out.write(&Record {
                    metrics: sol.metrics,
                    solver: sol.report,
                    per_step,
                    per_step_stderr,
                    ..record("theory", point, index, prov)
                })?;
                warm = Some(sol.state);
                tally.written += 1;
            }
            Err(e) => {
                let entry = serde_json::json!({"source": "theory", "index": index, "params": point.params()});
                log_failure(&bar, out, tally, entry, &format!("theory, point {index}"), &e)?;
                warm = None;
            }
        }
    }
    bar.finish_and_clear();
    Ok(())
}

fn simulation_pass(
    cfg: &Config,
    sim: &propdp_core::config::SimulationConfig,
    out: &mut RunDir,
    done: &BTreeSet<Key>,
    prov: &Provenance,
    tally: &mut Tally,
) -> Result<()> {
    let points = cfg.sweep.points();
    let bar = bar(points.len() * sim.d.len() * sim.reps, "simulation repetitions");
    for (index, point) in points.iter().enumerate() {
        for &d in &sim.d {
            if done.contains(&("simulation".to_string(), index, Some(d))) {
                tally.skipped += 1;
                bar.inc(sim.reps as u64);
                continue;
            }
            let settings = SimSettings {
                grad_tol: sim.grad_tol,
                ..SimSettings::new(d, sim.reps, sim.design, sim.prior, sim.seed)
            };
            match simulate_with_progress(point, &settings, index as u64, &|| bar.inc(1)) {
                Ok(s) => {
                    let (per_step, per_step_stderr) = s.per_step.map(|p| (p.mean, p.stderr)).unzip();
                    out.write(&Record {
                        metrics: s.mean,
                        per_step,
                        per_step_stderr,
                        solver: SolverReport {
                            converged: true,
                            iterations: s.max_iterations,
                            residual: s.max_grad_norm,
                        },
                        simulation: Some(SimRecord {
                            n: s.n,
                            d: s.d,
                            reps: s.reps,
                            seed: sim.seed,
                            design: sim.design,
                            stderr: s.stderr,
                            per_rep: s.per_rep,
                        }),
                        ..record("simulation", point, index, prov)
                    })?;
                    tally.written += 1;
                }
                Err(e) => {
                    let entry =
                        serde_json::json!({"source": "simulation", "index": index, "d": d, "params": point.params()});
                    log_failure(
                        &bar,
                        out,
                        tally,
                        entry,
                        &format!("simulation, point {index}, d = {d}"),
                        &e,
                    )?;
                }
            }
        }
    }
    bar.finish_and_clear();
    Ok(())
}
