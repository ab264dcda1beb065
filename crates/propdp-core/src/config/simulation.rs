//! The `[simulation]` table: Monte Carlo of the real estimators.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::problem::{Design, Prior};

/// `[simulation]` table.
///
/// ```toml
/// [simulation]
/// d = 400                 # or a list, e.g. [250, 500, 1000, 2000], for finite-size studies
/// reps = 20
/// design = "gaussian"     # "gaussian" | "rademacher" | "gaussian_projected"
/// prior = { law = "gaussian" }   # | { law = "two_point" } | { law = "sparse", p = 0.1 }
/// seed = 1
/// grad_tol = 1e-9         # Newton stops at ‖∇F‖₂/√d ≤ grad_tol
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationConfig {
    /// Numbers of features (one simulation per value).
    #[serde(deserialize_with = "one_or_many")]
    pub d: Vec<usize>,
    /// Repetitions per point (≥ 2).
    pub reps: usize,
    /// Law of the rows.
    #[serde(default = "default_design")]
    pub design: Design,
    /// Law of θ*'s coordinates.
    #[serde(default)]
    pub prior: Prior,
    /// Seed every random stream derives from.
    #[serde(default)]
    pub seed: u64,
    /// Newton stops at ‖∇F‖₂/√d ≤ grad_tol.
    #[serde(default = "default_grad_tol")]
    pub grad_tol: f64,
}

fn default_design() -> Design {
    Design::Gaussian
}

fn default_grad_tol() -> f64 {
    1e-9
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<usize>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(usize),
        Many(Vec<usize>),
    }
    match OneOrMany::deserialize(d)
        .map_err(|_| serde::de::Error::custom("expected a positive integer or a list of them"))?
    {
        OneOrMany::One(x) => Ok(vec![x]),
        OneOrMany::Many(v) => Ok(v),
    }
}

impl SimulationConfig {
    /// Range checks, naming the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.d.is_empty() {
            return Err(ConfigError::range("simulation.d", "[]", "a non-empty list"));
        }
        for &d in &self.d {
            check_simulation(d, self.reps, self.prior, self.grad_tol)?;
        }
        Ok(())
    }
}

/// Checks shared by the config and the simulation API.
pub fn check_simulation(d: usize, reps: usize, prior: Prior, grad_tol: f64) -> Result<(), ConfigError> {
    if !(1..=100_000).contains(&d) {
        return Err(ConfigError::range("simulation.d", d, "1 ≤ d ≤ 100000"));
    }
    if reps < 2 {
        return Err(ConfigError::range(
            "simulation.reps",
            reps,
            "reps ≥ 2 (a standard error needs two)",
        ));
    }
    if let Prior::Sparse { p } = prior
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(ConfigError::range("simulation.prior.p", p, "0 < p ≤ 1"));
    }
    if grad_tol.is_nan() || grad_tol <= 0.0 {
        return Err(ConfigError::range("simulation.grad_tol", grad_tol, "> 0"));
    }
    Ok(())
}
