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
    /// Real rows instead of drawn ones: the features of every repetition
    /// are rows of this data set (docs/covariance.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataSpec>,
}

/// `[simulation] data`: a CSV data set whose rows are the features.
///
/// ```toml
/// data = { file = "digits.csv", drop = ["label"], standardize = false }
/// data = { file = "housing.csv", labels = "price" }   # the data's own labels
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSpec {
    /// A CSV with a header row or a `.npy` 2-D float64 array (columns x0,
    /// x1, …), relative to the config's directory.
    pub file: String,
    /// Columns that are not features (e.g. labels).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// Divide every column by its standard deviation after centring.
    #[serde(default)]
    pub standardize: bool,
    /// A column of the data's own labels to fit instead of labels drawn
    /// from a synthetic teacher (not a feature): regression labels (Huber,
    /// least squares) are centred and divided by their standard deviation;
    /// logistic labels must take two values, the larger becoming +1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
}

/// A resolved `[simulation] data` file: its path, content and SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    /// The path read.
    pub path: std::path::PathBuf,
    /// The file's bytes (a CSV text or a `.npy` array).
    pub bytes: Vec<u8>,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// The columns that are not features.
    pub drop: Vec<String>,
    /// Standardise the columns.
    pub standardize: bool,
    /// The column of labels, if the data's own labels are fitted.
    pub labels: Option<String>,
}

impl DataSpec {
    /// Read the file (relative to `dir`, or the current directory), naming
    /// `simulation.data.file` when it cannot be.
    pub fn resolve(&self, dir: Option<&std::path::Path>) -> Result<DataFile, ConfigError> {
        let path = match dir {
            Some(dir) if std::path::Path::new(&self.file).is_relative() => dir.join(&self.file),
            _ => std::path::PathBuf::from(&self.file),
        };
        let bytes = crate::input::read_regular(&path).map_err(|e| {
            ConfigError::range(
                "simulation.data.file",
                format!("{:?}", self.file),
                &format!("a readable CSV or .npy file ({}: {e})", path.display()),
            )
        })?;
        Ok(DataFile {
            sha256: crate::covariance::sha256_hex(&bytes),
            path,
            bytes,
            drop: self.drop.clone(),
            standardize: self.standardize,
            labels: self.labels.clone(),
        })
    }
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
    /// Range checks, naming the field. The seed is at most 2⁶³ − 1: the
    /// integers TOML tables and Python's keyword configs both hold, so a
    /// config means the same from a file and from Python.
    pub fn check(&self) -> Result<(), ConfigError> {
        if i64::try_from(self.seed).is_err() {
            return Err(ConfigError::range("simulation.seed", self.seed, "0 ≤ seed ≤ 2^63 − 1"));
        }
        if self.d.is_empty() {
            return Err(ConfigError::range("simulation.d", "[]", "a non-empty list"));
        }
        for &d in &self.d {
            check_simulation(d, self.reps, self.prior, self.grad_tol)?;
        }
        if self.data.is_some() && self.design != default_design() {
            return Err(ConfigError::range(
                "simulation.design",
                format!("{:?}", self.design),
                "no design with `simulation.data`: the rows are the data's (leave design out)",
            ));
        }
        let mut seen = self.d.clone();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            return Err(ConfigError::range(
                "simulation.d",
                format!("{:?}", self.d),
                &format!("distinct values ({} is listed twice)", w[0]),
            ));
        }
        Ok(())
    }

    /// Refuses a simulation with fewer than 2 samples at the largest δ
    /// (n = round(d/δ) < 2: the data would not have the δ asked for).
    pub fn check_samples(&self, largest_delta: f64) -> Result<(), ConfigError> {
        match self.d.iter().find(|&&d| (d as f64 / largest_delta).round() < 2.0) {
            Some(&d) => Err(ConfigError::range(
                "simulation.d",
                d,
                &format!(
                    "d ≥ 2δ: at δ = {largest_delta:?} d = {d} gives n = round(d/δ) < 2 samples, not the δ asked for"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Refuses, before any work, a simulation whose memory at the smallest δ
    /// (the most samples, n = d/δ) exceeds 80% of this machine's memory,
    /// with the estimate in the message ([`memory_estimate`]).
    pub fn check_memory(&self, smallest_delta: f64) -> Result<(), ConfigError> {
        let total = crate::input::machine_memory();
        for &d in &self.d {
            let need = memory_estimate(d, smallest_delta, self.reps);
            if need > 0.8 * total {
                return Err(ConfigError::range(
                    "simulation.d",
                    d,
                    &format!(
                        "a size that fits in memory: d = {d} at δ = {smallest_delta:?} needs about {} GB \
                         (n = d/δ samples, design, test set and Newton's d×d matrices per parallel repetition), \
                         this machine has {:.1} GB",
                        gigabytes(need),
                        gigabytes(total)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Bytes a simulation holds at once: per repetition running in parallel, the
/// n×d design, the 2n×d test design and the Newton buffers (n×d twice, d×d
/// twice), with n = round(d/δ).
///
/// ```
/// use propdp_core::config::simulation::memory_estimate;
/// // d = 100000 at δ = 2: n = 50000, 40 GB for one design alone
/// assert!(memory_estimate(100_000, 2.0, 1) > 1e11);
/// ```
pub fn memory_estimate(d: usize, delta: f64, reps: usize) -> f64 {
    let (d, n) = (d as f64, (d as f64 / delta).round().max(1.0));
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let parallel = reps.min(threads) as f64;
    parallel * 8.0 * (5.0 * n * d + 2.0 * d * d)
}

/// Most repetitions per point.
pub const MAX_REPS: usize = 100_000;

/// Checks shared by the config and the simulation API.
pub fn check_simulation(d: usize, reps: usize, prior: Prior, grad_tol: f64) -> Result<(), ConfigError> {
    if !(1..=100_000).contains(&d) {
        return Err(ConfigError::range("simulation.d", d, "1 ≤ d ≤ 100000"));
    }
    if !(2..=MAX_REPS).contains(&reps) {
        return Err(ConfigError::range(
            "simulation.reps",
            reps,
            "2 ≤ reps ≤ 100000 (a standard error needs two; every repetition's metrics are kept)",
        ));
    }
    if let Prior::Sparse { p } = prior
        && !(p > 0.0 && p <= 1.0)
    {
        return Err(ConfigError::range("simulation.prior.p", p, "0 < p ≤ 1"));
    }
    if !(grad_tol > 0.0 && grad_tol <= 1e-3) {
        return Err(ConfigError::range(
            "simulation.grad_tol",
            grad_tol,
            "0 < grad_tol ≤ 1e-3 (a looser tolerance stops Newton before it fits)",
        ));
    }
    Ok(())
}

/// Bytes as GB, one decimal (exponent form beyond a million GB).
fn gigabytes(bytes: f64) -> String {
    let gb = bytes / 1e9;
    if gb < 1e6 {
        format!("{gb:.1}")
    } else {
        format!("{gb:.1e}")
    }
}
