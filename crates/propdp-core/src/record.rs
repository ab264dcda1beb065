//! Result records: one JSON object per sweep point (JSON lines).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::metrics::Metrics;

/// Convergence report of a solver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SolverReport {
    pub converged: bool,
    pub iterations: usize,
    pub residual: f64,
}

/// Where a result came from and with what code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// SHA-256 of the config text (the text itself is in the run's `manifest.json`).
    pub config_sha256: String,
    pub crate_version: String,
    pub git_commit: String,
}

/// One result line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `"theory"` or `"simulation"`.
    pub source: String,
    pub model: String,
    pub algorithm: String,
    /// Position of the point in the sweep.
    pub index: usize,
    /// Every parameter of the point by config name (`delta`, `lambda`, `sigma`/`tau`, …).
    pub params: BTreeMap<String, f64>,
    /// Theory: the prediction. Simulation: the mean over repetitions.
    pub metrics: Metrics,
    /// Theory: the fixed-point solver. Simulation: Newton's largest step count
    /// and largest final ‖∇F‖/√d over repetitions.
    pub solver: SolverReport,
    pub provenance: Provenance,
    /// DP-GD: every metric at every step t = 0..=T (theory: prediction;
    /// simulation: mean over repetitions). `metrics` holds the last step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step: Option<BTreeMap<String, Vec<f64>>>,
    /// DP-GD: standard error of every per-step value (theory: RQMC spread
    /// over independent scrambles; simulation: over repetitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step_stderr: Option<BTreeMap<String, Vec<f64>>>,
    /// The privacy guarantee of the point, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privacy: Option<Privacy>,
    /// Simulation only: size, repetitions, seed, standard errors and the
    /// per-repetition values of every metric.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<SimRecord>,
}

/// The simulation part of a [`Record`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimRecord {
    pub n: usize,
    pub d: usize,
    pub reps: usize,
    pub seed: u64,
    pub design: crate::problem::Design,
    pub stderr: Metrics,
    pub per_rep: BTreeMap<String, Vec<f64>>,
}

/// A privacy guarantee (SPEC.md §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Privacy {
    /// "mu-GDP", "(epsilon, delta)-DP" or "rho-zCDP".
    pub notion: String,
    /// "replace-one" or "add/remove-one".
    pub neighbouring: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
}

impl Privacy {
    /// The guarantee of a point: the budget its noise was calibrated to, or
    /// for DP-GD with σ > 0 its μ-GDP: per-step replace-one sensitivity
    /// Δ = 2LR (R = 1, L = M for Huber, 1 for logistic), μ = √T·Δ/σ
    /// (Gaussian composition, exact). `None` otherwise.
    pub fn of(point: &crate::Point) -> Option<Privacy> {
        use crate::accountant::Neighbouring;
        if let Some(b) = point.budget {
            let neighbouring = match b.neighbouring {
                Neighbouring::ReplaceOne => "replace-one".into(),
                Neighbouring::AddRemoveOne => "add/remove-one".into(),
            };
            let none = Privacy {
                notion: String::new(),
                neighbouring,
                mu: None,
                rho: None,
                epsilon: None,
                delta: None,
            };
            return Some(match b.target {
                crate::problem::Target::Approx { epsilon, delta_priv } => Privacy {
                    notion: "(epsilon, delta)-DP".into(),
                    epsilon: Some(epsilon),
                    delta: Some(delta_priv),
                    ..none
                },
                crate::problem::Target::Zcdp { rho } => Privacy {
                    notion: "rho-zCDP".into(),
                    rho: Some(rho),
                    ..none
                },
            });
        }
        let crate::Algorithm::Dpgd { sigma, steps, .. } = point.algorithm else {
            return None;
        };
        let (lipschitz, _) = crate::accountant::loss_constants(&point.model);
        (sigma > 0.0).then(|| Privacy {
            notion: "mu-GDP".into(),
            neighbouring: "replace-one".into(),
            mu: Some(crate::accountant::mu_dpgd(
                lipschitz,
                1.0,
                steps,
                sigma,
                Neighbouring::ReplaceOne,
            )),
            rho: None,
            epsilon: None,
            delta: None,
        })
    }
}
