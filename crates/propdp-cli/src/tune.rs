//! `propdp tune`: for each algorithm, problem point and privacy budget, the
//! ridge λ minimising the predicted metric once the noise is calibrated to
//! the budget — hyperparameters chosen from theory, with no privacy spent on
//! tuning. λ is searched on a 25-point log grid, then refined by golden-section
//! search in log λ around the best grid point.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use propdp_core::accountant::{Mechanism, MechanismKind, Neighbouring};
use propdp_core::config::{AlgorithmKind, PlotSpec, TuneConfig};
use propdp_core::record::{Record, SolverReport};
use propdp_core::{Algorithm, Point};
use propdp_theory::solve::{State, TheorySolver};

use crate::output::{provenance, sha256_hex};

/// One optimum.
#[derive(Debug, Clone, serde::Serialize)]
struct Best {
    algorithm: String,
    params: BTreeMap<String, f64>,
    epsilon: f64,
    delta_priv: f64,
    lambda: f64,
    noise: f64,
    metric: String,
    value: f64,
    /// The optimum sits at the edge of [lambda_min, lambda_max].
    at_boundary: bool,
}

/// Per (δ, ε) as bits: each algorithm's optimum, if the budget is reachable.
type Row = Vec<(String, Option<Best>)>;

struct Search<'a> {
    solver: &'a TheorySolver,
    base: Point,
    kind: AlgorithmKind,
    epsilon: f64,
    delta_priv: f64,
    neighbouring: Neighbouring,
    metric: &'a str,
    /// The last solution, to warm-start the next λ.
    warm: std::cell::Cell<Option<State>>,
}

impl Search<'_> {
    /// (noise, metric) at λ, or None when the budget is out of reach at λ or
    /// the theory has no solution there.
    fn eval(&self, lambda: f64) -> Option<(f64, f64)> {
        let mkind = match self.kind {
            AlgorithmKind::Objective => MechanismKind::Objective { lambda },
            _ => MechanismKind::Output { lambda },
        };
        let mech = Mechanism::new(&self.base.model, mkind, self.neighbouring);
        if let MechanismKind::Objective { .. } = mkind {
            let factor = if self.neighbouring == Neighbouring::ReplaceOne {
                2.0
            } else {
                1.0
            };
            if self.epsilon <= factor * (mech.smoothness / lambda).ln_1p() {
                return None;
            }
        }
        let noise = mech.calibrate(self.epsilon, self.delta_priv)?;
        let algorithm = match self.kind {
            AlgorithmKind::Objective => Algorithm::Objective { lambda, sigma: noise },
            _ => Algorithm::Output { lambda, tau: noise },
        };
        let point = Point { algorithm, ..self.base };
        let light = matches!(
            self.metric,
            "est_err2" | "est_err" | "overlap" | "norm2" | "bias_factor"
        );
        let metrics = if light {
            let (m, state) = self.solver.solve_light(&point, self.warm.get()).ok()?;
            self.warm.set(Some(state));
            m
        } else {
            self.solver.solve(&point, None).ok()?.metrics
        };
        metrics.get(self.metric).map(|&v| (noise, v))
    }

    fn optimise(&self, lo: f64, hi: f64) -> Option<(f64, f64, f64, bool)> {
        let k = 25;
        let grid: Vec<f64> = (0..k)
            .map(|i| lo.ln() + (hi.ln() - lo.ln()) * i as f64 / (k - 1) as f64)
            .collect();
        let vals: Vec<Option<(f64, f64)>> = grid.iter().map(|&g| self.eval(g.exp())).collect();
        let (i, _) = vals
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v.1)))
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let f = |g: f64| self.eval(g.exp()).map_or(f64::INFINITY, |v| v.1);
        let (mut a, mut b) = (grid[i.saturating_sub(1)], grid[(i + 1).min(k - 1)]);
        let r = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..40 {
            let (x1, x2) = (b - r * (b - a), a + r * (b - a));
            if f(x1) < f(x2) { b = x2 } else { a = x1 }
        }
        let g = 0.5 * (a + b);
        let (g, (noise, value)) = match self.eval(g.exp()) {
            Some(v) if v.1 <= vals[i].unwrap().1 => (g, v),
            _ => (grid[i], vals[i].unwrap()),
        };
        Some((g.exp(), noise, value, i == 0 || i == k - 1))
    }
}

pub fn command(path: &Path, out: Option<PathBuf>) -> Result<ExitCode> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (cfg, points) = TuneConfig::from_toml_str(&text).with_context(|| format!("in config {}", path.display()))?;
    let t = &cfg.tune;
    let eps = t.epsilon.values("tune.epsilon")?;
    let neighbouring = t.neighbouring.unwrap_or(Neighbouring::ReplaceOne);
    let solver = TheorySolver::new(cfg.solver);
    let dir = crate::run::run_dir(path, out);
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("tune.jsonl");
    let mut w = std::fs::File::create(&file).with_context(|| format!("creating {}", file.display()))?;
    let prov = provenance(&sha256_hex(&text));
    let bar = ProgressBar::new((points.len() * t.algorithms.len() * eps.len()) as u64);
    bar.set_style(ProgressStyle::with_template("{spinner} tune [{bar:40}] {pos}/{len}").expect("template"));
    let mut table: BTreeMap<(u64, u64), Row> = BTreeMap::new();
    let mut frontier: Vec<Record> = Vec::new();
    for base in &points {
        for &e in &eps {
            for &kind in &t.algorithms {
                let name = if kind == AlgorithmKind::Objective {
                    "objective"
                } else {
                    "output"
                };
                let s = Search {
                    solver: &solver,
                    base: *base,
                    kind,
                    epsilon: e,
                    delta_priv: t.delta_priv,
                    neighbouring,
                    metric: &t.metric,
                    warm: std::cell::Cell::new(None),
                };
                let best = s
                    .optimise(t.lambda_min, t.lambda_max)
                    .map(|(lambda, noise, value, at_boundary)| Best {
                        algorithm: name.into(),
                        params: base
                            .params()
                            .into_iter()
                            .filter(|(k, _)| k != "lambda" && k != "sigma")
                            .collect(),
                        epsilon: e,
                        delta_priv: t.delta_priv,
                        lambda,
                        noise,
                        metric: t.metric.clone(),
                        value,
                        at_boundary,
                    });
                if let Some(b) = &best {
                    frontier.push(Record {
                        source: "theory".into(),
                        model: base.model.name().into(),
                        algorithm: b.algorithm.clone(),
                        index: frontier.len(),
                        params: b
                            .params
                            .iter()
                            .map(|(k, v)| (k.clone(), *v))
                            .chain([("epsilon".to_string(), e)])
                            .collect(),
                        metrics: [(b.metric.clone(), b.value)].into_iter().collect(),
                        solver: SolverReport {
                            converged: true,
                            iterations: 0,
                            residual: 0.0,
                        },
                        provenance: prov.clone(),
                        per_step: None,
                        per_step_stderr: None,
                        privacy: None,
                        simulation: None,
                    });
                    let mut v = serde_json::to_value(b)?;
                    v["provenance"] = serde_json::to_value(&prov)?;
                    writeln!(w, "{v}")?;
                }
                table
                    .entry((base.delta.to_bits(), e.to_bits()))
                    .or_default()
                    .push((name.into(), best));
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    println!(
        "{:>7} {:>7}  {:<40} winner",
        "δ",
        "ε",
        format!("best {} (λ) per algorithm", t.metric)
    );
    for ((d, e), row) in &table {
        let cells: Vec<String> = row
            .iter()
            .map(|(n, b)| match b {
                Some(b) => format!(
                    "{n} {:.4} (λ={:.3}{})",
                    b.value,
                    b.lambda,
                    if b.at_boundary { "*" } else { "" }
                ),
                None => format!("{n} unreachable"),
            })
            .collect();
        let winner = row
            .iter()
            .filter_map(|(n, b)| b.as_ref().map(|b| (n, b.value)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("none".to_string(), |w| w.0.clone());
        println!(
            "{:>7.3} {:>7.3}  {:<40} {winner}",
            f64::from_bits(*d),
            f64::from_bits(*e),
            cells.join("  ")
        );
    }
    println!(
        "(* optimum at the edge of [lambda_min, lambda_max]) → {}",
        file.display()
    );
    if eps.len() > 1 && !frontier.is_empty() {
        let spec = PlotSpec {
            x: Some("epsilon".into()),
            metrics: Some(vec![t.metric.clone()]),
            series: Some("algorithm".into()),
            x_log: Some(true),
            y_log: false,
            title: Some(format!("Best {}, λ tuned", t.metric)),
        };
        let files = propdp_plot::plot_records(&frontier, &spec, &dir.join("figures"))?;
        println!("frontier figures (one per δ): {}", dir.join("figures").display());
        debug_assert!(!files.is_empty());
    }
    Ok(ExitCode::SUCCESS)
}
