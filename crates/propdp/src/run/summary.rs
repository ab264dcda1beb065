//! The numbers a run computed, as `propdp run` prints them: one row per
//! point with its swept parameters and its main metrics — the prediction
//! and the simulated mean ± standard error side by side — and the first
//! failures of `errors.jsonl`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use propdp_core::record::{Failure, Record, Source};

/// The metrics a row shows, in order of preference (at most [`SHOWN`]).
const MAIN: [&str; 8] = [
    "est_err2",
    "pred_err2",
    "test_class_err",
    "test_mse",
    "train_loss",
    "overlap",
    "norm2",
    "train_resid_trunc",
];
/// Metrics per row.
const SHOWN: usize = 3;

/// The table of the records in `results` (a results.jsonl), at most
/// `max_points` rows, and the first `max_failures` lines of the
/// `errors.jsonl` beside it; empty when there is nothing to show.
pub fn table(results: &Path, max_points: usize, max_failures: usize) -> crate::Result<String> {
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let records: Vec<Record> = read(results)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut out = String::new();
    if !records.is_empty() {
        out += &points(&records, max_points);
    }
    let failures: Vec<Failure> = read(&results.with_file_name("errors.jsonl"))
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for f in failures.iter().take(max_failures) {
        let source = if f.source == Source::Theory {
            "theory"
        } else {
            "simulation"
        };
        let _ = writeln!(out, "failed: {source}, point {}: {}", f.index, f.error);
    }
    if failures.len() > max_failures {
        let _ = writeln!(
            out,
            "… and {} more failures in errors.jsonl",
            failures.len() - max_failures
        );
    }
    Ok(out)
}

fn points(records: &[Record], max_points: usize) -> String {
    // the parameters that vary over the records: the sweep's axes
    let mut values: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
    for r in records {
        for (k, v) in &r.params {
            values.entry(k).or_default().insert(v.to_bits());
        }
    }
    let swept: Vec<&str> = values.iter().filter(|(_, v)| v.len() > 1).map(|(k, _)| *k).collect();
    // pred_err2 is est_err2 without a covariance: shown only where it says more
    let same = |r: &Record| r.metrics.get("pred_err2") == r.metrics.get("est_err2");
    let present =
        |m: &str| records.iter().any(|r| r.metrics.contains_key(m)) && (m != "pred_err2" || !records.iter().all(same));
    let metrics: Vec<&str> = MAIN.iter().copied().filter(|m| present(m)).take(SHOWN).collect();
    let mut by_point: BTreeMap<usize, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_point.entry(r.index).or_default().push(r);
    }
    // each swept parameter a column as wide as its name or its widest value
    let shown = |r: &Record, k: &str| {
        r.params
            .get(k)
            .map_or("—".to_string(), |&v| propdp_plot::figure::rounded(v, 6))
    };
    let widths: Vec<usize> = swept
        .iter()
        .map(|k| {
            records
                .iter()
                .map(|r| shown(r, k).chars().count())
                .chain(std::iter::once(k.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let header: Vec<String> = swept.iter().zip(&widths).map(|(k, w)| format!("{k:>w$}")).collect();
    // an ε or ρ column is read under its relation: name it
    let guarantees: BTreeSet<String> = records
        .iter()
        .filter_map(|r| r.privacy.as_ref())
        .map(|p| format!("{}, {} neighbours", p.notion, p.neighbouring))
        .collect();
    let mut out = match guarantees.is_empty() {
        true => String::new(),
        false => format!(
            "guarantees: {}\n",
            guarantees.into_iter().collect::<Vec<_>>().join("; ")
        ),
    };
    let _ = write!(out, "{:>5}  {}", "point", header.join(" "));
    for m in &metrics {
        let _ = write!(out, "  {:>30}", format!("{m}: theory | sim ± se"));
    }
    out += "\n";
    for rs in by_point.values().take(max_points) {
        let params = swept
            .iter()
            .zip(&widths)
            .map(|(k, w)| format!("{:>w$}", shown(rs[0], k)))
            .collect::<Vec<_>>()
            .join(" ");
        let _ = write!(out, "{:>5}  {params}", rs[0].index);
        for m in &metrics {
            let theory = rs
                .iter()
                .find(|r| r.source == Source::Theory)
                .and_then(|r| r.metrics.get(*m))
                .map_or("—".to_string(), |v| format!("{v:.5}"));
            let sim = rs
                .iter()
                .filter(|r| r.source == Source::Simulation)
                .filter_map(|r| Some((r.metrics.get(*m)?, r.simulation.as_ref()?.stderr.get(*m)?)))
                .map(|(v, se)| format!("{v:.5} ± {se:.5}"))
                .collect::<Vec<_>>()
                .join(", ");
            let cell = if sim.is_empty() {
                theory
            } else {
                format!("{theory} | {sim}")
            };
            let _ = write!(out, "  {cell:>30}");
        }
        out += "\n";
    }
    if by_point.len() > max_points {
        let _ = writeln!(
            out,
            "… and {} more points in results.jsonl",
            by_point.len() - max_points
        );
    }
    out
}
