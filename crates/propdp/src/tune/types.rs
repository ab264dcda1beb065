//! The types every part of a search shares: what one search finds
//! ([`Optimum`]) and the key naming a cell (problem point, budget,
//! algorithm). A leaf: it names nothing else of `tune/`.

use std::collections::BTreeMap;

use propdp_core::{AlgorithmKind, Point};

/// The result of one search: the tuned, calibrated point and its predicted metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Optimum {
    /// The tuned point, its noise calibrated to the budget.
    pub point: Point,
    /// The predicted metric there.
    pub value: f64,
    /// RQMC standard error of a DMFT prediction.
    pub stderr: Option<f64>,
    /// The optimum sits at the edge of the searched range.
    pub at_boundary: bool,
    /// Other searched configurations re-solved at the full budget whose
    /// prediction is within the error bars (2 combined standard errors).
    pub runners_up: Vec<Optimum>,
    /// DP-SGD with several sample rates: the best configuration found at
    /// each q, re-solved at the full budget (the error against the batch
    /// rate at equal privacy).
    pub per_sample_rate: Vec<Optimum>,
    /// With several `tune.epochs`: the best configuration within each
    /// epochs budget E (T = E/q), re-solved at the full budget.
    pub per_epochs: Vec<Optimum>,
}

impl Optimum {
    /// An optimum with no runners-up or per-rate or per-epochs bests.
    pub fn new(point: Point, value: f64, stderr: Option<f64>, at_boundary: bool) -> Self {
        Optimum {
            point,
            value,
            stderr,
            at_boundary,
            runners_up: Vec::new(),
            per_sample_rate: Vec::new(),
            per_epochs: Vec::new(),
        }
    }
}

/// (facet, δ, budget level, algorithm) of a cell.
pub(super) type CellKey = (String, u64, u64, AlgorithmKind);

/// The problem parameters of a point other than δ, as "k=v, …".
pub(super) fn facet(problem_params: &BTreeMap<String, f64>) -> String {
    problem_params
        .iter()
        .filter(|(k, _)| k.as_str() != "delta")
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
