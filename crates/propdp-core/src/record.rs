//! Result records: one JSON object per sweep point (JSON lines), written by runs and read by
//! plots, validation and resume — the one format between the crates, with typed fields.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::guarantee::Privacy;
use crate::metrics::Metrics;
use crate::problem::{AlgorithmKind, Design, ModelKind, Point};

/// Convergence report of a solver.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SolverReport {
    /// Whether the solver met its tolerance (records are only written when it did).
    pub converged: bool,
    /// Iterations (fixed-point solvers), steps (DMFT) or the largest Newton step count (simulation).
    pub iterations: usize,
    /// Final residual (fixed point), largest RQMC standard error (DMFT) or largest ‖∇F‖/√d (simulation).
    pub residual: f64,
    /// How DP-GD/DP-SGD dynamics were predicted (absent for the static solvers and simulations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<DynamicsMethod>,
    /// The method's own approximation error, relative, beside the RQMC
    /// standard error (absent when the method has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approx_error: Option<f64>,
    /// The long-horizon solver's response window W: the lags of R_g it
    /// keeps (absent for the other methods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<usize>,
    /// The atoms of a spectrum the long-horizon solver carried: fewer than
    /// the spectrum's when it solved the spectrum's quadrature instead
    /// (docs/theory.md §3.4, "Compression"; the effect is in
    /// `approx_error`). Absent for isotropic features and the other methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atoms: Option<usize>,
    /// The long-horizon solver's RQMC paths and the precision they reached
    /// (absent for the other methods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rqmc: Option<Rqmc>,
}

/// The long-horizon solver's RQMC budget and the precision it reached
/// (`solver.precision`, docs/theory.md §3.3, "Precision").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rqmc {
    /// Paths per replicate.
    pub points: usize,
    /// Independent replicates (their spread is the standard error).
    pub replicates: usize,
    /// The relative standard error asked for (absent: the paths were fixed
    /// by `solver.dmft_points`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// The relative standard error reached at the last step: the largest
    /// over est_err2, pred_err2, norm2, the training loss and the test
    /// error, each estimated from the replicates' spread over the last tenth
    /// of the horizon (docs/theory.md §3.3, "Precision").
    pub precision: f64,
}

/// The method that predicted a DP-GD/DP-SGD trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicsMethod {
    /// The state evolution with its full memory, by RQMC (docs/theory.md §3).
    Dmft,
    /// Unclipped least squares, exactly, as a spectral integral (§3.2).
    Spectral,
    /// The long-horizon state evolution (§3.3): linear in T, with an estimated truncation error.
    LongHorizon,
}

impl DynamicsMethod {
    /// The name records use.
    ///
    /// ```
    /// use propdp_core::record::DynamicsMethod;
    /// assert_eq!(serde_json::to_string(&DynamicsMethod::Spectral).unwrap(), "\"spectral\"");
    /// assert_eq!(DynamicsMethod::Spectral.name(), "spectral");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DynamicsMethod::Dmft => "dmft",
            DynamicsMethod::Spectral => "spectral",
            DynamicsMethod::LongHorizon => "long_horizon",
        }
    }
}

/// Where a result came from and with what code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// SHA-256 of the config text (the text itself is in the run's `manifest.json`).
    pub config_sha256: String,
    /// Version of the propdp crates.
    pub crate_version: String,
    /// Git commit of the build.
    pub git_commit: String,
    /// SHA-256 of the `problem.covariance` file the run read (docs/theory.md §2.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covariance_sha256: Option<String>,
    /// SHA-256 of the `[simulation] data` file whose rows were the features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_sha256: Option<String>,
}

/// Whether a record is a prediction or a Monte Carlo estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The d → ∞ prediction of the theory.
    Theory,
    /// The mean over repetitions of the simulated algorithm at finite d.
    Simulation,
}

impl Source {
    /// `"theory"` or `"simulation"`.
    pub fn name(self) -> &'static str {
        match self {
            Source::Theory => "theory",
            Source::Simulation => "simulation",
        }
    }
}

/// One result line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Prediction or simulation.
    pub source: Source,
    /// The model.
    pub model: ModelKind,
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// Position of the point in the sweep.
    pub index: usize,
    /// Every parameter of the point by config name (`delta`, `lambda`, `sigma`/`tau`, …).
    pub params: BTreeMap<String, f64>,
    /// Theory: the prediction. Simulation: the mean over repetitions.
    pub metrics: Metrics,
    /// Theory: the fixed-point solver. Simulation: Newton's largest step count
    /// and largest final ‖∇F‖/√d over repetitions.
    pub solver: SolverReport,
    /// What produced the record.
    pub provenance: Provenance,
    /// DP-GD: every metric at every step t = 0..=T, or at the steps
    /// `per_step_at` lists (theory: prediction; simulation: mean over
    /// repetitions). `metrics` holds the last step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step: Option<BTreeMap<String, Vec<f64>>>,
    /// The steps the per-step arrays hold, increasing and ending at T
    /// (absent: every step 0..=T). A simulation beyond
    /// 1000 steps evaluates its metrics on a grid of steps only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step_at: Option<Vec<usize>>,
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
    /// The non-private reference (the ridge estimator, λ tuned, no noise) that `propdp tune`
    /// draws beside the private algorithms; never in a results file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub non_private_reference: bool,
}

impl Record {
    /// A record of `point` at sweep position `index` with no metrics yet
    /// (and `converged: false` until a solver fills it in).
    pub fn new(source: Source, point: &Point, index: usize, provenance: &Provenance) -> Record {
        Record {
            source,
            model: point.model().kind(),
            algorithm: point.algorithm().kind(),
            index,
            params: point.params(),
            metrics: Metrics::new(),
            solver: SolverReport {
                converged: false,
                iterations: 0,
                residual: f64::NAN,
                ..Default::default()
            },
            provenance: provenance.clone(),
            per_step: None,
            per_step_at: None,
            per_step_stderr: None,
            privacy: Privacy::of(point),
            simulation: None,
            non_private_reference: false,
        }
    }

    /// The first number of the record that is not finite, by its path
    /// (`metrics.est_err2`, `privacy.mu`, …); `None` when all are finite.
    /// JSON has no infinity or NaN: a record with one is never written.
    ///
    /// ```
    /// # use propdp_core::{record::*, Point, Model, Algorithm};
    /// let p = Point::new(0.5, 1.0, Model::Logistic, Algorithm::Objective { lambda: 1.0, sigma: 1.0 }).unwrap();
    /// let prov = Provenance { config_sha256: String::new(), crate_version: String::new(), git_commit: String::new(), covariance_sha256: None, data_sha256: None };
    /// let mut r = Record::new(Source::Theory, &p, 0, &prov);
    /// assert_eq!(r.non_finite().as_deref(), Some("solver.residual"), "no solver has filled it in");
    /// r.solver = SolverReport { converged: true, iterations: 3, residual: 1e-12, ..Default::default() };
    /// r.metrics.insert("est_err2".into(), 0.5);
    /// assert_eq!(r.non_finite(), None);
    /// r.metrics.insert("norm2".into(), f64::INFINITY);
    /// assert_eq!(r.non_finite().as_deref(), Some("metrics.norm2"));
    /// ```
    pub fn non_finite(&self) -> Option<String> {
        let scalars = |name: &str, m: &BTreeMap<String, f64>| {
            m.iter()
                .find(|(_, v)| !v.is_finite())
                .map(|(k, _)| format!("{name}.{k}"))
        };
        let vectors = |name: &str, m: &BTreeMap<String, Vec<f64>>| {
            m.iter()
                .find(|(_, v)| v.iter().any(|x| !x.is_finite()))
                .map(|(k, _)| format!("{name}.{k}"))
        };
        let privacy = self.privacy.as_ref().and_then(|p| {
            [("mu", p.mu), ("rho", p.rho), ("epsilon", p.epsilon), ("delta", p.delta)]
                .into_iter()
                .find(|(_, v)| v.is_some_and(|x| !x.is_finite()))
                .map(|(k, _)| format!("privacy.{k}"))
        });
        scalars("params", &self.params)
            .or_else(|| scalars("metrics", &self.metrics))
            .or_else(|| (!self.solver.residual.is_finite()).then(|| "solver.residual".to_string()))
            .or_else(|| self.per_step.as_ref().and_then(|m| vectors("per_step", m)))
            .or_else(|| {
                self.per_step_stderr
                    .as_ref()
                    .and_then(|m| vectors("per_step_stderr", m))
            })
            .or(privacy)
            .or_else(|| {
                self.simulation
                    .as_ref()
                    .and_then(|s| scalars("stderr", &s.stderr).or_else(|| vectors("per_rep", &s.per_rep)))
            })
    }

    /// The identity of the record within its run ([`RecordKey`]).
    pub fn key(&self) -> RecordKey {
        let sim = self.simulation.as_ref();
        RecordKey {
            source: self.source,
            index: self.index,
            d: sim.map(|s| s.d),
            first_rep: sim.and_then(|s| s.block.as_ref()).map(|b| b.first),
        }
    }

    /// Whether a record read back from a file (an earlier run, a shard) is
    /// one this run could have written in place of `expected`: the same
    /// point, model, algorithm, parameters, privacy and config (SHA-256);
    /// a converged solver; every number finite; every metric the theory
    /// offers present and within its range ([`crate::metrics::out_of_range`]);
    /// for a prediction, est_err2 = s² − 2·overlap + norm2; per-step curves
    /// of T + 1 values (or one per step `per_step_at` lists, increasing up to
    /// T); for a simulation the same n, d, repetitions, seed,
    /// generator, design and block, and per-repetition values of every metric.
    /// `expected` is [`Record::new`] of the point, with the
    /// [`SimRecord`] a simulation would carry (its statistics are not compared).
    /// The error names the field.
    ///
    /// ```
    /// # use propdp_core::{record::*, Point, Model, Algorithm};
    /// let p = Point::new(0.5, 1.0, Model::Logistic, Algorithm::Objective { lambda: 1.0, sigma: 1.0 }).unwrap();
    /// let prov = Provenance { config_sha256: "a".into(), crate_version: String::new(), git_commit: String::new(), covariance_sha256: None, data_sha256: None };
    /// let expected = Record::new(Source::Theory, &p, 0, &prov);
    /// let mut r = expected.clone();
    /// r.solver = SolverReport { converged: true, iterations: 3, residual: 1e-12, ..Default::default() };
    /// for m in propdp_core::metrics::offered(r.model, r.algorithm) { r.metrics.insert(m.to_string(), 0.25); }
    /// r.metrics.insert("est_err".into(), 0.5);
    /// r.metrics.insert("est_err2".into(), 0.25); // = s² − 2·0.25 + 0.25 … with s² = 1: 0.75
    /// assert!(r.conforms(&expected).unwrap_err().contains("est_err2"));
    /// r.metrics.insert("est_err2".into(), 0.75);
    /// r.metrics.insert("est_err".into(), 0.75f64.sqrt());
    /// assert_eq!(r.conforms(&expected), Ok(()));
    /// r.metrics.insert("norm2".into(), -5.0);
    /// assert!(r.conforms(&expected).unwrap_err().contains("metrics.norm2"));
    /// ```
    pub fn conforms(&self, expected: &Record) -> Result<(), String> {
        let differs =
            |field: &str, got: String, want: String| Err(format!("{field} is {got}, but this run's {field} is {want}"));
        if (self.source, self.index) != (expected.source, expected.index) {
            return differs(
                "source/index",
                format!("{}/{}", self.source.name(), self.index),
                format!("{}/{}", expected.source.name(), expected.index),
            );
        }
        if self.model != expected.model {
            return differs("model", format!("{:?}", self.model), format!("{:?}", expected.model));
        }
        if self.algorithm != expected.algorithm {
            return differs("algorithm", self.algorithm.to_string(), expected.algorithm.to_string());
        }
        if self.params != expected.params {
            return differs("params", format!("{:?}", self.params), format!("{:?}", expected.params));
        }
        if self.privacy != expected.privacy {
            return differs(
                "privacy",
                format!("{:?}", self.privacy),
                format!("{:?}", expected.privacy),
            );
        }
        if self.provenance.config_sha256 != expected.provenance.config_sha256 {
            return differs(
                "provenance.config_sha256",
                self.provenance.config_sha256.clone(),
                expected.provenance.config_sha256.clone(),
            );
        }
        if self.non_private_reference {
            return Err("non_private_reference is true: a tune reference, not a run's record".into());
        }
        if !self.solver.converged {
            return Err("solver.converged is false: propdp writes converged records only".into());
        }
        if let Some(path) = self.non_finite() {
            return Err(format!("{path} is not a finite number"));
        }
        let own_labels = self.simulation.as_ref().is_some_and(|s| s.labels.is_some());
        // a two-cluster point's parameters hold its class balance
        let data = if expected.params.contains_key("balance") {
            crate::DataModel::TwoCluster
        } else {
            crate::DataModel::Teacher
        };
        for name in crate::metrics::offered_for(self.model, self.algorithm, data) {
            if own_labels && crate::metrics::NEED_TEACHER.contains(name) {
                if self.metrics.contains_key(*name) {
                    return Err(format!(
                        "metrics.{name} is given, but a fit of the data's own labels has no θ*"
                    ));
                }
            } else if !self.metrics.contains_key(*name) {
                return Err(format!("metrics.{name} is missing"));
            }
        }
        for (name, &v) in &self.metrics {
            if let Some(range) = crate::metrics::out_of_range(name, v) {
                return Err(format!("metrics.{name} = {v:?} is outside its range {range}"));
            }
        }
        if self.source == Source::Theory
            && let (Some(&e), Some(&o), Some(&n), Some(&s2)) = (
                self.metrics.get(crate::metrics::EST_ERR2),
                self.metrics.get(crate::metrics::OVERLAP),
                self.metrics.get(crate::metrics::NORM2),
                self.params.get("s2"),
            )
            && (e - (s2 - 2.0 * o + n)).abs() > 1e-8 * (s2 + n + e.abs())
        {
            return Err(format!(
                "metrics.est_err2 = {e:?} breaks est_err2 = s² − 2·overlap + norm2 = {:?}",
                s2 - 2.0 * o + n
            ));
        }
        let steps = self.params.get("steps").map(|&t| t as usize);
        let len = match (&self.per_step_at, steps) {
            (Some(_), None) => return Err("per_step_at is given for an algorithm without steps".into()),
            (Some(at), Some(t)) => {
                if at.windows(2).any(|w| w[0] >= w[1]) || at.last() != Some(&t) {
                    return Err(format!("per_step_at is not increasing up to T = {t}"));
                }
                Some((at.len(), "the length of per_step_at"))
            }
            (None, t) => t.map(|t| (t + 1, "T + 1")),
        };
        for (field, curves) in [("per_step", &self.per_step), ("per_step_stderr", &self.per_step_stderr)] {
            match (curves, len) {
                (Some(_), None) => return Err(format!("{field} is given for an algorithm without steps")),
                (Some(c), Some((len, what))) => {
                    if let Some((name, v)) = c.iter().find(|(_, v)| v.len() != len) {
                        return Err(format!("{field}.{name} has {} values, not {what} = {len}", v.len()));
                    }
                }
                (None, _) => {}
            }
        }
        match (&self.simulation, &expected.simulation) {
            (None, None) => Ok(()),
            (Some(s), Some(want)) => s.conforms(want, &self.metrics),
            (Some(_), None) => Err("simulation fields are given in a theory record".into()),
            (None, Some(_)) => Err("simulation fields (n, d, reps, …) are missing".into()),
        }
    }

    /// Whether the record describes a non-private estimator: the tune
    /// reference, or a noise (σ or τ) of 0 without a budget.
    pub fn is_non_private(&self) -> bool {
        self.non_private_reference
            || self
                .params
                .get(self.algorithm.noise_param())
                .is_some_and(|&v| crate::problem::is_non_private(self.algorithm.noise_param(), v))
    }

    /// Every record of a results file (JSON lines); a malformed line is an
    /// error naming the file and the line.
    pub fn read_file(path: &Path) -> Result<Vec<Record>, ReadError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ReadError::Io {
            path: p.clone(),
            message: e.to_string(),
        })?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, line)| {
                serde_json::from_str(line).map_err(|e| ReadError::Malformed {
                    path: p.clone(),
                    line: i + 1,
                    message: e.to_string(),
                })
            })
            .collect()
    }
}

/// Failure to read a results file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("reading {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's reason.
        message: String,
    },
    /// A line is not a record.
    #[error("{path}:{line}: not a result record: {message}")]
    Malformed {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The parser's reason.
        message: String,
    },
}

/// The simulation part of a [`Record`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimRecord {
    /// Samples per repetition, round(d/δ).
    pub n: usize,
    /// Features.
    pub d: usize,
    /// Repetitions.
    pub reps: usize,
    /// The config seed the streams derive from.
    pub seed: u64,
    /// The random generator and how its streams derive from the seed
    /// (empty in records written before it was recorded).
    #[serde(default)]
    pub generator: String,
    /// The law of the rows (drawn rows only).
    pub design: Design,
    /// Real rows: the `[simulation] data` file they came from (then
    /// `design` does not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Real rows fitted on their own labels: the labels' column (then the
    /// metrics that need a ground truth θ*, [`crate::metrics::NEED_TEACHER`],
    /// are not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
    /// Standard error of every metric's mean.
    pub stderr: Metrics,
    /// Every metric of every repetition.
    pub per_rep: BTreeMap<String, Vec<f64>>,
    /// Sharded runs only: the record covers one block of the point's
    /// repetitions, not all of them; `propdp merge` combines the blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<RepBlock>,
    /// How the test metrics were computed (absent in records written
    /// before it was recorded: held-out rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_metrics: Option<TestMetrics>,
}

/// How a simulation computed its test metrics (test_mse, test_class_err,
/// test_logloss).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestMetrics {
    /// Exactly, from the population of a Gaussian design: functions of
    /// (θ̂ᵀΣθ̂, θ̂ᵀΣθ*, θ*ᵀΣθ*)/d and the label law (docs/theory.md §1).
    Population,
    /// Estimated on 2n held-out rows drawn (or split off the data) per
    /// repetition.
    HeldOut,
}

impl SimRecord {
    /// [`Record::conforms`] for the simulation part: the settings equal
    /// `want`'s, and standard errors (≥ 0) and per-repetition values (one
    /// per repetition) of exactly the record's `metrics`.
    fn conforms(&self, want: &SimRecord, metrics: &Metrics) -> Result<(), String> {
        let settings = |s: &SimRecord| {
            format!(
                "n = {}, d = {}, reps = {}, seed = {}, generator = {:?}, design = {:?}, data = {:?}, labels = {:?}, \
                 block first = {:?}, test metrics = {:?}",
                s.n,
                s.d,
                s.reps,
                s.seed,
                s.generator,
                s.design,
                s.data,
                s.labels,
                s.block.as_ref().map(|b| b.first),
                s.test_metrics
            )
        };
        if settings(self) != settings(want) {
            return Err(format!(
                "the simulation settings ({}) are not this run's ({})",
                settings(self),
                settings(want)
            ));
        }
        if !self.stderr.keys().eq(metrics.keys()) || !self.per_rep.keys().eq(metrics.keys()) {
            return Err("stderr and per_rep do not name the record's metrics".into());
        }
        if let Some((name, _)) = self.stderr.iter().find(|(_, v)| **v < 0.0) {
            return Err(format!("stderr.{name} is negative"));
        }
        if let Some((name, v)) = self.per_rep.iter().find(|(_, v)| v.len() != self.reps) {
            return Err(format!(
                "per_rep.{name} has {} values for {} repetitions",
                v.len(),
                self.reps
            ));
        }
        for (name, values) in &self.per_rep {
            let (mean, se) = crate::metrics::mean_stderr(values);
            let scale = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let off = |a: f64, b: f64| (a - b).abs().is_nan() || (a - b).abs() > 1e-12 * scale;
            if off(metrics[name], mean) || off(self.stderr[name], se) {
                return Err(format!(
                    "metrics.{name} = {:?} ± {:?} are not the mean and standard error {mean:?} ± {se:?} of per_rep.{name}",
                    metrics[name], self.stderr[name]
                ));
            }
        }
        Ok(())
    }
}

/// Identity of a record (or of a failure) within a run: source, sweep
/// index, (simulation) d and (a shard's block of repetitions) its first
/// repetition. A run writes each key once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordKey {
    /// Prediction or simulation.
    pub source: Source,
    /// Position of the point in the sweep.
    pub index: usize,
    /// Simulation: the number of features.
    pub d: Option<usize>,
    /// A block of repetitions: its first repetition.
    pub first_rep: Option<usize>,
}

impl std::fmt::Display for RecordKey {
    /// "the simulation record of point 3, d = 400, repetitions from 10".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} record of point {}", self.source.name(), self.index)?;
        if let Some(d) = self.d {
            write!(f, ", d = {d}")?;
        }
        if let Some(r) = self.first_rep {
            write!(f, ", repetitions from {r}")?;
        }
        Ok(())
    }
}

/// A point (or block of repetitions) that failed: one line of `errors.jsonl`.
/// Fields in alphabetical order, as the line is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// A block of repetitions: its first repetition (`{"first": r}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockStart>,
    /// Simulation: the number of features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d: Option<usize>,
    /// Why it failed.
    pub error: String,
    /// Position of the point in the sweep.
    pub index: usize,
    /// Every parameter of the point by config name.
    pub params: BTreeMap<String, f64>,
    /// A block of repetitions: how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<usize>,
    /// Prediction or simulation.
    pub source: Source,
}

/// The first repetition of a failed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockStart {
    /// The first repetition.
    pub first: usize,
}

impl Failure {
    /// The identity of the failed unit within its run ([`RecordKey`]).
    pub fn key(&self) -> RecordKey {
        RecordKey {
            source: self.source,
            index: self.index,
            d: self.d,
            first_rep: self.block.map(|b| b.first),
        }
    }
}

/// A block of a point's repetitions computed by one shard of a sharded run
/// (`propdp run --shard K/N` splits a simulated point whose cost exceeds a
/// shard's fair share). The record's statistics are over the block's
/// `reps` repetitions `first..first + reps` only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepBlock {
    /// The first repetition of the block.
    pub first: usize,
    /// DP-GD/DP-SGD: every metric at every step t = 0..=T of every
    /// repetition of the block (name → `[repetition][step]`), which merging
    /// needs to recompute the per-step statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_step_per_rep: Option<BTreeMap<String, Vec<Vec<f64>>>>,
}
