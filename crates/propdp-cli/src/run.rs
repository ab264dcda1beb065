//! `propdp run` and `propdp check`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use propdp_core::Config;
use propdp_core::record::Record;
use propdp_theory::solve::{State, TheorySolver};

use crate::output::{Manifest, RunDir, provenance, sha256_hex};

fn load(path: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))?;
    Config::from_toml_str(&text).with_context(|| format!("in config {}", path.display()))
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
    Ok(ExitCode::SUCCESS)
}

/// Solve every point of the sweep, appending records as they finish.
pub fn run(path: &Path, out: Option<PathBuf>, resume: bool, overwrite: bool) -> Result<ExitCode> {
    let cfg = load(path)?;
    let stem = path
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().to_string());
    let dir = out.unwrap_or_else(|| PathBuf::from("results").join(stem));
    let sha = sha256_hex(&cfg.text);
    let points = cfg.sweep.points();
    let manifest = Manifest {
        config_path: path.display().to_string(),
        config_sha256: sha.clone(),
        config_text: cfg.text.clone(),
        crate_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: env!("PROPDP_GIT_COMMIT").to_string(),
        points: points.len(),
    };
    let (mut run_dir, done) = RunDir::open(&dir, &manifest, resume, overwrite)?;
    let solver = TheorySolver::new(cfg.raw.solver);
    let prov = provenance(&sha);
    let bar = ProgressBar::new(points.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} theory [{bar:40}] {pos}/{len} points ({eta} left) {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.inc(done.len() as u64);
    let (mut written, mut failed) = (0usize, 0usize);
    let mut warm: Option<State> = None;
    for (index, point) in points.iter().enumerate() {
        if done.contains(&index) {
            warm = None;
            continue;
        }
        match solver.solve(point, warm) {
            Ok(sol) => {
                run_dir.write(&Record {
                    source: "theory".into(),
                    model: point.model.name().into(),
                    algorithm: point.algorithm.name().into(),
                    index,
                    params: point.params(),
                    metrics: sol.metrics,
                    solver: sol.report,
                    provenance: prov.clone(),
                })?;
                warm = Some(sol.state);
                written += 1;
            }
            Err(e) => {
                bar.suspend(|| eprintln!("point {index}: {e}"));
                run_dir.write_error(&serde_json::json!({
                    "index": index, "params": point.params(), "error": e.to_string(),
                }))?;
                warm = None;
                failed += 1;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "{}: {written} points solved, {} already done, {failed} failed → {}",
        path.display(),
        done.len(),
        run_dir.dir.join("results.jsonl").display()
    );
    if failed > 0 {
        eprintln!(
            "{failed} points did not converge or have no solution; see {}",
            run_dir.dir.join("errors.jsonl").display()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
