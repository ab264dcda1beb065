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
    /// e.g. "mu-GDP".
    pub notion: String,
    /// "replace-one" or "add/remove-one".
    pub neighbouring: String,
    pub mu: f64,
}

impl Privacy {
    /// DP-GD with T steps of noise σ: per-step replace-one sensitivity
    /// Δ = 2LR (R = 1, L = M for Huber, 1 for logistic), μ = √T·Δ/σ
    /// (Gaussian composition, exact). `None` for other algorithms or σ = 0.
    pub fn of(point: &crate::Point) -> Option<Privacy> {
        let crate::Algorithm::Dpgd { sigma, steps, .. } = point.algorithm else {
            return None;
        };
        let lipschitz = match point.model {
            crate::Model::Huber { huber_m, .. } => huber_m,
            crate::Model::Logistic => 1.0,
        };
        (sigma > 0.0).then(|| Privacy {
            notion: "mu-GDP".into(),
            neighbouring: "replace-one".into(),
            mu: (steps as f64).sqrt() * 2.0 * lipschitz / sigma,
        })
    }
}
