//! One tuned optimum as written to tune.jsonl, and its simulated check.

use std::collections::BTreeMap;

use anyhow::Result;
use propdp_core::Algorithm;
use propdp_core::accountant::Neighbouring;
use propdp_core::problem::{Budget, Target};
use propdp_core::record::{Provenance, Record, SolverReport};

use super::{CellKey, Optimum, facet};

/// One optimum, as written to tune.jsonl (one line each).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Best {
    pub(super) algorithm: String,
    pub(super) params: BTreeMap<String, f64>,
    /// The budget: `notion` "approx" with `epsilon`, `delta_priv`, or "zcdp" with `rho`.
    #[serde(flatten)]
    pub(super) budget: Target,
    pub(super) neighbouring: Neighbouring,
    pub(super) lambda: f64,
    /// σ (objective, DP-GD) or τ (output), calibrated to the budget.
    pub(super) noise: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) eta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) steps: Option<usize>,
    pub(super) metric: String,
    pub(super) value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stderr: Option<f64>,
    /// The optimum sits at the edge of the searched range (λ; for DP-GD also
    /// the largest T, or η at a tenth of the smallest fraction).
    pub(super) at_boundary: bool,
    /// With a `[simulation]` table: the simulated metric at the optimum.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(super) simulation: Option<SimCheck>,
    pub(super) provenance: Provenance,
}

impl Best {
    pub(super) fn new(opt: &Optimum, budget: Budget, metric: &str, provenance: &Provenance) -> Best {
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
            params: problem_params(&opt.point),
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
    pub(super) fn key(&self) -> CellKey {
        (
            facet(&self.params),
            self.params["delta"].to_bits(),
            self.budget.level().to_bits(),
            self.algorithm.clone(),
        )
    }

    /// Frontier-figure records: the prediction and, if simulated, the simulation.
    pub(super) fn records(&self, model: &str, index: usize, design: propdp_core::Design) -> Vec<Record> {
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

    pub(super) fn describe(&self) -> String {
        let star = if self.at_boundary { "*" } else { "" };
        let lambda = sig3(self.lambda);
        match (self.eta, self.steps) {
            (Some(eta), Some(t)) => format!("{:.4} (λ={lambda}, η={}, T={t}{star})", self.value, sig3(eta)),
            _ => format!("{:.4} (λ={lambda}{star})", self.value),
        }
    }
}

/// A hyperparameter with three significant digits.
pub(super) fn sig3(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if !(0.01..1e4).contains(&x.abs()) {
        format!("{x:.2e}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

/// The simulated check of an optimum, as written to tune.jsonl.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct SimCheck {
    pub(super) d: usize,
    pub(super) n: usize,
    pub(super) reps: usize,
    pub(super) seed: u64,
    pub(super) mean: f64,
    pub(super) stderr: f64,
    /// Whether |theory − simulation| passes the SPEC.md §5 rule.
    pub(super) agrees: bool,
}

/// Simulate a tuned point and compare with its prediction.
pub(super) fn simulate(
    opt: &Optimum,
    sim: &propdp_core::config::SimulationConfig,
    metric: &str,
    index: u64,
) -> Result<SimCheck> {
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

/// The problem parameters of a point (without the algorithm's).
pub(super) fn problem_params(point: &propdp_core::Point) -> BTreeMap<String, f64> {
    point
        .params()
        .into_iter()
        .filter(|(k, _)| !["lambda", "sigma", "tau", "eta", "steps"].contains(&k.as_str()))
        .collect()
}

/// The non-private reference of a problem point: the ridge estimator with λ
/// tuned and no noise — what privacy costs is measured against it.
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct NonPrivate {
    pub(super) params: BTreeMap<String, f64>,
    pub(super) lambda: f64,
    pub(super) metric: String,
    pub(super) value: f64,
    pub(super) provenance: Provenance,
}

impl NonPrivate {
    /// Flat frontier curve: the reference at every budget level.
    pub(super) fn records(&self, model: &str, param: &str, levels: &[f64]) -> Vec<Record> {
        levels
            .iter()
            .map(|&level| Record {
                source: "theory".into(),
                model: model.into(),
                algorithm: propdp_plot::figure::NON_PRIVATE.into(),
                index: 0,
                params: self
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), *v))
                    .chain([(param.to_string(), level)])
                    .collect(),
                metrics: [(self.metric.clone(), self.value)].into_iter().collect(),
                solver: SolverReport {
                    converged: true,
                    iterations: 0,
                    residual: 0.0,
                },
                provenance: self.provenance.clone(),
                per_step: None,
                per_step_stderr: None,
                privacy: None,
                simulation: None,
            })
            .collect()
    }
}
