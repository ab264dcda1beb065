//! `propdp validate`: theory against simulation, point by point and metric by
//! metric, by SPEC.md §5's rule (`propdp_core::validation`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use propdp_core::record::Record;
use propdp_core::validation::{agrees, allowed_gap};

use crate::output::read_records;
use crate::run::{Sources, load, run, run_dir};

/// One comparison.
struct Row {
    index: usize,
    params: String,
    d: usize,
    metric: String,
    theory: f64,
    mean: f64,
    stderr: f64,
    /// RQMC standard error of a DMFT prediction (0 for the fixed-point solvers).
    theory_stderr: f64,
    pass: bool,
}

/// Compute what is missing, then compare. Non-zero exit on any failure.
pub fn validate(path: &Path, out: Option<PathBuf>) -> Result<ExitCode> {
    let cfg = load(path)?;
    if cfg.raw.simulation.is_none() {
        bail!(
            "{} has no [simulation] table: nothing to validate against",
            path.display()
        );
    }
    let dir = run_dir(path, out);
    let resume = dir.join("results.jsonl").exists();
    let sources = Sources {
        theory: true,
        simulation: true,
    };
    let computed = run(path, Some(dir.clone()), resume, false, sources)?;
    let records = read_records(&dir.join("results.jsonl"))?;
    let swept = cfg.sweep.swept_axes();
    let theory: BTreeMap<usize, &Record> = records
        .iter()
        .filter(|r| r.source == "theory")
        .map(|r| (r.index, r))
        .collect();
    let mut rows = Vec::new();
    for sim in records.iter().filter(|r| r.source == "simulation") {
        let (Some(t), Some(s)) = (theory.get(&sim.index), &sim.simulation) else {
            continue;
        };
        let params = swept
            .iter()
            .map(|k| format!("{k}={:.4}", sim.params[*k]))
            .collect::<Vec<_>>()
            .join(" ");
        for (metric, &tv) in &t.metrics {
            let (Some(&mean), Some(&se)) = (sim.metrics.get(metric), s.stderr.get(metric)) else {
                continue;
            };
            let tse = t
                .per_step_stderr
                .as_ref()
                .and_then(|m| m.get(metric))
                .and_then(|v| v.last())
                .copied()
                .unwrap_or(0.0);
            rows.push(Row {
                index: sim.index,
                params: params.clone(),
                d: s.d,
                metric: metric.clone(),
                theory: tv,
                mean,
                stderr: se,
                theory_stderr: tse,
                pass: agrees(tv, mean, se.hypot(tse), s.d),
            });
        }
    }
    rows.sort_by(|a, b| (a.index, a.d, &a.metric).cmp(&(b.index, b.d, &b.metric)));
    print_table(&rows);
    write_csv(&dir.join("validation.csv"), &rows)?;
    finite_size_table(&rows);
    let failed = rows.iter().filter(|r| !r.pass).count();
    println!(
        "{} of {} comparisons pass (|theory − sim| ≤ 3·stderr + 0.5·max(|theory|, 0.1)/√d)",
        rows.len() - failed,
        rows.len()
    );
    if rows.is_empty() {
        bail!("no theory/simulation pairs to compare in {}", dir.display());
    }
    Ok(if failed > 0 || computed != ExitCode::SUCCESS {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// z with the simulation's and the prediction's standard errors combined.
fn z(r: &Row) -> f64 {
    (r.mean - r.theory) / r.stderr.hypot(r.theory_stderr)
}

fn print_table(rows: &[Row]) {
    println!(
        "{:>5} {:<32} {:>6} {:<18} {:>12} {:>24} {:>7}  result",
        "point", "params", "d", "metric", "theory", "sim ± stderr", "z"
    );
    for r in rows {
        println!(
            "{:>5} {:<32} {:>6} {:<18} {:>12.5} {:>24} {:>7.2}  {}",
            r.index,
            r.params,
            r.d,
            r.metric,
            r.theory,
            format!("{:.5} ± {:.5}", r.mean, r.stderr),
            z(r),
            if r.pass { "pass" } else { "FAIL" }
        );
    }
}

fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    let mut s = String::from("index,params,d,metric,theory,theory_stderr,sim_mean,sim_stderr,z,allowed_gap,pass\n");
    for r in rows {
        writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.index,
            r.params,
            r.d,
            r.metric,
            r.theory,
            r.theory_stderr,
            r.mean,
            r.stderr,
            z(r),
            allowed_gap(r.theory, r.stderr.hypot(r.theory_stderr), r.d),
            r.pass
        )?;
    }
    std::fs::write(path, s)?;
    Ok(())
}

/// With several d: per metric and d, the mean over points of the relative
/// gap |theory − sim|/max(|theory|, 0.1) and, in brackets, of the relative
/// standard error — a gap at the level of its standard error is Monte Carlo
/// noise; a finite-size bias shows as a gap well above it that shrinks with d.
fn finite_size_table(rows: &[Row]) {
    let mut by: BTreeMap<(&str, usize), (f64, f64, usize)> = BTreeMap::new();
    for r in rows {
        let scale = r.theory.abs().max(0.1);
        let e = by.entry((r.metric.as_str(), r.d)).or_default();
        e.0 += (r.theory - r.mean).abs() / scale;
        e.1 += r.stderr / scale;
        e.2 += 1;
    }
    let ds: std::collections::BTreeSet<usize> = rows.iter().map(|r| r.d).collect();
    if ds.len() < 2 {
        return;
    }
    println!("\nfinite-size: mean relative gap |theory − sim|/max(|theory|, 0.1) over points (relative stderr)");
    print!("{:<18}", "metric");
    for d in &ds {
        print!(" {:>17}", format!("d={d}"));
    }
    println!();
    let metrics: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    for m in metrics {
        print!("{m:<18}");
        for &d in &ds {
            let (gap, se, n) = by[&(m, d)];
            print!(" {:>17}", format!("{:.4} ({:.4})", gap / n as f64, se / n as f64));
        }
        println!();
    }
}
