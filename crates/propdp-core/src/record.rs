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
    pub metrics: Metrics,
    pub solver: SolverReport,
    pub provenance: Provenance,
}
