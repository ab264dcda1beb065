//! Theory against simulation, point by point and metric by metric, by the
//! acceptance rule of docs/theory.md §5 ([`propdp_core::validation`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Context, Result};
use propdp_core::Config;
use propdp_core::record::{Record, Source};
use propdp_core::validation::{Verdict, finite_size_allowance, verdict};

use crate::progress::Progress;
use crate::run::{Existing, RunDir, RunSummary, Sources, run};

/// One comparison of a predicted and a simulated metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Sweep index of the point.
    pub index: usize,
    /// The swept parameters of the point, as "k=v …".
    pub params: String,
    /// Dimension of the simulation.
    pub d: usize,
    /// The metric.
    pub metric: String,
    /// The prediction.
    pub theory: f64,
    /// RQMC standard error of a DMFT prediction (0 for the fixed-point solvers).
    pub theory_stderr: f64,
    /// Simulated mean.
    pub mean: f64,
    /// Its standard error.
    pub stderr: f64,
    /// Whether the features have a covariance (or are a data set's rows):
    /// the rule's finite-size constants differ.
    pub covariance: bool,
    /// The rule's verdict (pass: |z| ≤ 3; finite-d: within the measured
    /// finite-size allowance; FAIL).
    pub verdict: Verdict,
}

impl Comparison {
    /// z with the simulation's and the prediction's standard errors combined.
    pub fn z(&self) -> f64 {
        propdp_core::validation::z(self.theory, self.mean, self.stderr.hypot(self.theory_stderr))
    }

    /// The finite-size allowance of the rule at this d.
    pub fn allowance(&self) -> f64 {
        finite_size_allowance(&self.metric, self.theory, self.d, self.covariance)
    }
}

/// The outcome of `validate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// The run that computed what was missing.
    pub run: RunSummary,
    /// Every comparison, by point, d and metric.
    pub rows: Vec<Comparison>,
}

impl Validation {
    /// Comparisons that fail the rule.
    pub fn failed(&self) -> usize {
        self.count(Verdict::Fail)
    }

    /// Comparisons with the verdict `v`.
    pub fn count(&self, v: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }
}

/// Compute what is missing in `dir` (resuming a run there), then compare
/// every simulated metric with its prediction; writes `dir/validation.csv`.
pub fn validate(cfg: &Config, label: &str, dir: &Path, progress: &dyn Progress) -> crate::Result<Validation> {
    if cfg.raw.simulation.is_none() {
        return Err(crate::error::Error::from(propdp_core::ConfigError::Missing {
            field: "simulation".into(),
            why: format!("{label} has no [simulation] table: nothing to validate against"),
        }));
    }
    let existing = if RunDir::results_path(dir).exists() {
        Existing::Resume
    } else {
        Existing::Refuse
    };
    let summary = run(cfg, label, dir, existing, Sources::default(), progress)?;
    let records = Record::read_file(&summary.results())?;
    let rows = compare(cfg, &records);
    if rows.is_empty() {
        return Err(crate::error::Error::compute(format!(
            "no theory/simulation pairs to compare in {}",
            dir.display()
        )));
    }
    write_csv(&dir.join("validation.csv"), &rows)?;
    Ok(Validation { run: summary, rows })
}

/// Every (simulation, theory) pair of metrics of the same point.
pub fn compare(cfg: &Config, records: &[Record]) -> Vec<Comparison> {
    let swept = cfg.sweep.swept_axes();
    let covariance = cfg.covariance.is_some() || cfg.data.is_some();
    let theory: BTreeMap<usize, &Record> = records
        .iter()
        .filter(|r| r.source == Source::Theory)
        .map(|r| (r.index, r))
        .collect();
    let mut rows = Vec::new();
    for sim in records.iter().filter(|r| r.source == Source::Simulation) {
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
            rows.push(Comparison {
                index: sim.index,
                params: params.clone(),
                d: s.d,
                metric: metric.clone(),
                theory: tv,
                theory_stderr: tse,
                mean,
                stderr: se,
                covariance,
                verdict: verdict(metric, tv, mean, se.hypot(tse), s.d, covariance),
            });
        }
    }
    rows.sort_by(|a, b| (a.index, a.d, &a.metric).cmp(&(b.index, b.d, &b.metric)));
    rows
}

/// The comparisons as a table, one line each.
pub fn table(rows: &[Comparison]) -> String {
    let mut s = format!(
        "{:>5} {:<32} {:>6} {:<18} {:>12} {:>24} {:>7}  result\n",
        "point", "params", "d", "metric", "theory", "sim ± stderr", "z"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:>5} {:<32} {:>6} {:<18} {:>12.5} {:>24} {:>7.2}  {}",
            r.index,
            r.params,
            r.d,
            r.metric,
            r.theory,
            format!("{:.5} ± {:.5}", r.mean, r.stderr),
            r.z(),
            match r.verdict {
                Verdict::FiniteD => format!("finite-d (gap ≤ 3·stderr + {:.2e})", r.allowance()),
                v => v.label().to_string(),
            }
        );
    }
    s
}

fn write_csv(path: &Path, rows: &[Comparison]) -> Result<()> {
    let mut s = String::from(
        "index,params,d,metric,theory,theory_stderr,sim_mean,sim_stderr,z,finite_size_allowance,verdict\n",
    );
    for r in rows {
        let _ = writeln!(
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
            r.z(),
            r.allowance(),
            r.verdict.label()
        );
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// With several d: per metric and d, the mean over points of the relative
/// gap |theory − sim|/max(|theory|, 0.1) and, in brackets, of the relative
/// standard error — a gap at the level of its standard error is Monte Carlo
/// noise; a finite-size bias shows as a gap well above it that shrinks with
/// d. `None` with a single d.
pub fn finite_size_table(rows: &[Comparison]) -> Option<String> {
    let mut by: BTreeMap<(&str, usize), (f64, f64, usize)> = BTreeMap::new();
    for r in rows {
        let scale = r.theory.abs().max(0.1);
        let e = by.entry((r.metric.as_str(), r.d)).or_default();
        e.0 += (r.theory - r.mean).abs() / scale;
        e.1 += r.stderr / scale;
        e.2 += 1;
    }
    let ds: BTreeSet<usize> = rows.iter().map(|r| r.d).collect();
    if ds.len() < 2 {
        return None;
    }
    let mut s = String::from(
        "finite-size: mean relative gap |theory − sim|/max(|theory|, 0.1) over points (relative stderr)\n",
    );
    s += &format!("{:<18}", "metric");
    for d in &ds {
        s += &format!(" {:>17}", format!("d={d}"));
    }
    s.push('\n');
    let metrics: BTreeSet<&str> = rows.iter().map(|r| r.metric.as_str()).collect();
    for m in metrics {
        s += &format!("{m:<18}");
        for &d in &ds {
            let (gap, se, n) = by[&(m, d)];
            s += &format!(" {:>17}", format!("{:.4} ({:.4})", gap / n as f64, se / n as f64));
        }
        s.push('\n');
    }
    Some(s)
}
