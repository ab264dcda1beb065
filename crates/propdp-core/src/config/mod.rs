//! TOML config schema and its validation (linfa's validated-parameters
//! pattern: raw structs as written, one `check` that returns a typed error
//! naming the field). One module per table: [`problem`], [`algorithm`],
//! [`simulation`], [`solver`], [`plot`], and [`tune`] for `propdp tune`.
//!
//! ```toml
//! [problem]
//! model = "huber"                  # "huber" | "logistic"
//! delta = { from = 0.1, to = 3.0, steps = 30, scale = "log" }
//! s2 = 1.0                         # prior energy E(Θ²)
//! huber_m = 1.0                    # huber only
//! noise = { law = "gaussian", sd = 0.5 }   # huber only
//!
//! [algorithm]
//! kind = "objective"               # "objective" | "output" | "dpgd"
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
pub use solver::{DmftOptions, FixedPointOptions, LogisticOptions, SolverOptions};
pub use tune::{TuneConfig, TuneSpec};

use crate::error::ConfigError;
use crate::sweep::Sweep;

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

/// A validated config: the raw text, its parsed form and its sweep.
#[derive(Debug, Clone)]
pub struct Config {
    /// The TOML text, verbatim.
    pub text: String,
    /// The parsed tables.
    pub raw: RawConfig,
    /// Every point, validated.
    pub sweep: Sweep,
}

impl Config {
    /// Parse and validate TOML text. Every sweep point is checked, so a bad
    /// value anywhere in a range is reported before any work starts.
    ///
    /// ```
    /// use propdp_core::Config;
    /// let text = r#"
    /// [problem]
    /// model = "logistic"
    /// delta = [0.5, 2.0]
    /// s2 = 1.0
    /// [algorithm]
    /// kind = "objective"
    /// lambda = 1.0
    /// sigma = -1.0
    /// "#;
    /// let err = Config::from_toml_str(text).unwrap_err().to_string();
    /// assert!(err.contains("algorithm.sigma") && err.contains("-1"));
    /// ```
    pub fn from_toml_str(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| tagged_table_error(text).unwrap_or(ConfigError::Parse(e.to_string())))?;
        Config::from_raw(raw, text.to_string())
    }

    /// Validate parsed tables; `text` is the config as written (recorded and
    /// hashed in provenance). [`Config::from_toml_str`] is this after parsing.
    pub fn from_raw(raw: RawConfig, text: String) -> Result<Config, ConfigError> {
        raw.check()?;
        let sweep = Sweep::from_raw(&raw)?;
        if let Some(sim) = &raw.simulation {
            let deltas = sweep.points().iter().map(|p| p.delta());
            let (smallest, largest) = deltas.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
            sim.check_memory(smallest)?;
            sim.check_samples(largest)?;
        }
        raw.plot
            .check_keys(&sweep, raw.simulation.is_some(), &raw.problem, &raw.algorithm)?;
        Ok(Config { text, raw, sweep })
    }
}

/// The typed error of a `[problem]` or `[algorithm]` table that serde
/// refused: serde turns it into text, losing the field; reading the table
/// again by itself gives it back (so callers such as the Python package can
/// name the field).
fn tagged_table_error(text: &str) -> Option<ConfigError> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let typed = |e: ConfigError| (!matches!(e, ConfigError::Parse(_))).then_some(e);
    if let Some(toml::Value::Table(t)) = table.get("problem")
        && let Err(e) = RawProblem::from_table(t.clone())
    {
        return typed(e);
    }
    if let Some(toml::Value::Table(t)) = table.get("algorithm")
        && let Err(e) = RawAlgorithm::from_table(t.clone())
    {
        return typed(e);
    }
    None
}

#[cfg(test)]
mod tests;
