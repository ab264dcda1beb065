//! TOML config schema and its validation (linfa's validated-parameters
//! pattern: raw structs as written, one `check` that returns a typed error
//! naming the field). One module per table: [`problem`], [`algorithm`],
//! [`simulation`], [`solver`], [`plot`], and [`tune`] for `propdp tune`.
//!
//! ```toml
//! [problem]
//! model = "huber"                  # "huber" | "logistic" | "least_squares" (dpgd/dpsgd)
//! delta = { from = 0.1, to = 3.0, steps = 30, scale = "log" }
//! s2 = 1.0                         # prior energy E(Θ²)
//! huber_m = 1.0                    # huber only
//! noise = { law = "gaussian", sd = 0.5 }   # huber and least_squares
//!
//! [algorithm]
//! kind = "objective"               # "objective" | "output" | "dpgd" | "dpsgd"
//! lambda = 1.0
//! sigma = [0.0, 0.5, 2.0]          # "tau" for output perturbation
//!
//! [solver]                          # optional
//! tol = 1e-10
//! max_iter = 500
//! quad_nodes = 96
//! ```

pub mod algorithm;
pub mod plot;
pub mod problem;
pub mod simulation;
pub mod solver;
mod table;
pub mod text;
pub mod tune;

use serde::{Deserialize, Serialize};

pub use algorithm::{NoiseSource, RawAlgorithm, RawBudget};
pub use plot::PlotSpec;
pub use problem::{RawNoise, RawProblem};
pub use simulation::{SimulationConfig, check_simulation};
pub use solver::{
    DEFAULT_PRECISION, DMFT_POINTS, DmftMethod, DmftOptions, FixedPointOptions, LONG_HORIZON_FROM, LogisticOptions,
    OSCILLATING_EXACT_MAX, SolverOptions,
};
pub use tune::{TuneConfig, TuneSpec};

use crate::error::ConfigError;

/// Config as written in TOML. Unknown keys are rejected by the parser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Optional human name of the run.
    pub name: Option<String>,
    /// Optional free text.
    pub description: Option<String>,
    /// The statistical problem.
    #[serde(deserialize_with = "problem::deserialize")]
    pub problem: RawProblem,
    /// The DP algorithm.
    #[serde(deserialize_with = "algorithm::deserialize")]
    pub algorithm: RawAlgorithm,
    /// Numerical settings of the theory.
    #[serde(default)]
    pub solver: SolverOptions,
    /// Optional Monte Carlo of the actual estimators at the same points.
    pub simulation: Option<SimulationConfig>,
    /// Optional figure layout; sensible defaults when absent.
    #[serde(default)]
    pub plot: PlotSpec,
}

impl RawConfig {
    /// Checks of the tables, each naming the field (the points' values are
    /// checked when the sweep is expanded).
    pub fn check(&self) -> Result<(), ConfigError> {
        self.solver.check()?;
        self.plot.check()?;
        if let Some(sim) = &self.simulation {
            sim.check()?;
        }
        self.algorithm.noise_source()?;
        Ok(())
    }
}

/// The keys of the `[problem]` and `[algorithm]` tables, every kind's, each
/// table's tag first — for callers that take them as flat keyword arguments
/// and must route each to its table (the Python package).
///
/// ```
/// let keys = propdp_core::config::flat_keys();
/// assert_eq!(keys[0].0, "problem");
/// assert!(keys[0].1.contains(&"huber_m") && keys[1].1.contains(&"delta_priv"));
/// ```
pub fn flat_keys() -> [(&'static str, Vec<&'static str>); 2] {
    [("problem", problem::keys()), ("algorithm", algorithm::keys())]
}

#[cfg(test)]
mod tests;
