//! TOML config schema and its validation (linfa's validated-parameters
//! pattern: a raw struct as written, one `check` that returns a typed error
//! naming the field).
//!
//! ```toml
//! [problem]
//! model = "huber"                  # "huber" | "logistic"
//! delta = { from = 0.1, to = 3.0, steps = 30, scale = "log" }
//! s2 = 1.0                         # prior energy E[Θ²]
//! huber_m = 1.0                    # huber only
//! noise = { law = "gaussian", sd = 0.5 }   # huber only
//!
//! [algorithm]
//! kind = "objective"               # "objective" | "output"
//! lambda = 1.0
//! sigma = [0.0, 0.5, 2.0]          # "tau" for output perturbation
//!
//! [solver]                          # optional
//! tol = 1e-10
//! max_iter = 500
//! quad_nodes = 96
//! ```

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::param::ParamSpec;
use crate::problem::{Design, Prior};
use crate::sweep::Sweep;

/// Config as written in TOML. Unknown keys are rejected by the parser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Optional human name of the run.
    pub name: Option<String>,
    /// Optional free text.
    pub description: Option<String>,
    pub problem: RawProblem,
    pub algorithm: RawAlgorithm,
    #[serde(default)]
    pub solver: SolverOptions,
    /// Optional Monte Carlo of the actual estimators at the same points.
    pub simulation: Option<SimulationConfig>,
    /// Optional figure layout; sensible defaults when absent.
    #[serde(default)]
    pub plot: PlotSpec,
}

/// `[plot]` table: what the figures show.
///
/// ```toml
/// [plot]
/// x = "delta"                           # parameter on the x axis
/// metrics = ["est_err2", "train_resid_trunc"]   # one panel each
/// series = "sigma"                      # one curve per value
/// x_log = true                          # default: log when x spans ≥ 20×
/// y_log = false
/// title = "DP Huber regression"
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    pub x: Option<String>,
    pub metrics: Option<Vec<String>>,
    pub series: Option<String>,
    pub x_log: Option<bool>,
    #[serde(default)]
    pub y_log: bool,
    pub title: Option<String>,
}

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
    #[serde(deserialize_with = "one_or_many")]
    pub d: Vec<usize>,
    pub reps: usize,
    #[serde(default = "default_design")]
    pub design: Design,
    #[serde(default)]
    pub prior: Prior,
    #[serde(default)]
    pub seed: u64,
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

/// Model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    Huber,
    Logistic,
}

/// Algorithm family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmKind {
    Objective,
    Output,
    Dpgd,
}

/// Noise law family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseKind {
    Gaussian,
    StudentT,
    Laplace,
    Contaminated,
}

/// `[problem]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProblem {
    pub model: ModelKind,
    pub delta: ParamSpec,
    pub s2: ParamSpec,
    pub huber_m: Option<ParamSpec>,
    pub noise: Option<RawNoise>,
}

/// `problem.noise` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNoise {
    pub law: NoiseKind,
    pub sd: Option<ParamSpec>,
    pub dof: Option<ParamSpec>,
    pub scale: Option<ParamSpec>,
    pub p: Option<ParamSpec>,
    pub outlier_sd: Option<ParamSpec>,
}

/// `[algorithm]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlgorithm {
    pub kind: AlgorithmKind,
    pub lambda: ParamSpec,
    pub sigma: Option<ParamSpec>,
    pub tau: Option<ParamSpec>,
    /// DP-GD step size η.
    pub eta: Option<ParamSpec>,
    /// DP-GD number of steps T.
    pub steps: Option<ParamSpec>,
    /// DP-GD loss: "standard" (default) or "conditional".
    pub loss_variant: Option<crate::problem::LossVariant>,
    /// Privacy budget ε: the noise (σ or τ) is calibrated to (ε, delta_priv).
    pub epsilon: Option<ParamSpec>,
    /// δ of the (ε, δ) budget.
    pub delta_priv: Option<f64>,
    /// zCDP budget ρ (instead of `epsilon`/`delta_priv`): the noise is
    /// calibrated to ρ-zCDP.
    pub rho: Option<ParamSpec>,
    /// Neighbouring relation of the budget (default "replace_one").
    pub neighbouring: Option<crate::accountant::Neighbouring>,
}

/// `[solver]` table: numerical settings of the theory solvers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverOptions {
    /// Convergence tolerance on the fixed-point residual.
    pub tol: f64,
    /// Iteration cap of the outer solver.
    pub max_iter: usize,
    /// Gauss–Hermite nodes over the teacher field ν (logistic).
    pub quad_nodes: usize,
    /// DP-GD theory: RQMC sample points per scramble (≤ 65536).
    pub dmft_points: usize,
    /// DP-GD theory: independent scrambles (≥ 2; their spread is the stderr).
    pub dmft_scrambles: usize,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            tol: 1e-10,
            max_iter: 500,
            quad_nodes: 96,
            dmft_points: 1 << 14,
            dmft_scrambles: 4,
        }
    }
}

impl SolverOptions {
    /// Range checks, naming the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !(self.tol > 0.0 && self.tol <= 1e-4) {
            return Err(ConfigError::range("solver.tol", self.tol, "0 < tol ≤ 1e-4"));
        }
        if self.max_iter == 0 {
            return Err(ConfigError::range("solver.max_iter", 0, "≥ 1"));
        }
        if !(8..=256).contains(&self.quad_nodes) {
            return Err(ConfigError::range(
                "solver.quad_nodes",
                self.quad_nodes,
                "8 ≤ quad_nodes ≤ 256",
            ));
        }
        if !(256..=65_536).contains(&self.dmft_points) {
            return Err(ConfigError::range(
                "solver.dmft_points",
                self.dmft_points,
                "256 ≤ dmft_points ≤ 65536",
            ));
        }
        if !(2..=64).contains(&self.dmft_scrambles) {
            return Err(ConfigError::range(
                "solver.dmft_scrambles",
                self.dmft_scrambles,
                "2 ≤ dmft_scrambles ≤ 64",
            ));
        }
        Ok(())
    }
}

/// A `propdp tune` config: a `[problem]` table as for `run` and a `[tune]`
/// table naming the algorithms and budgets to compare.
///
/// ```toml
/// [tune]
/// algorithms = ["objective", "output", "dpgd"]
/// epsilon = [0.5, 1.0, 2.0, 4.0, 8.0]   # or zCDP budgets: rho = [0.1, 1.0]
/// delta_priv = 1e-6
/// lambda_min = 1e-3            # λ searched on a log scale in [lambda_min, lambda_max]
/// lambda_max = 1e3
/// metric = "est_err2"          # minimised
/// steps = [1, 2, 4, 8, 16, 32] # DP-GD: candidate T
/// eta_fraction = [0.1, 0.25, 0.5, 0.9]  # DP-GD: candidate η, as fractions of 2/L
///
/// [simulation]                 # optional: simulate every optimum at one d
/// d = 200
/// reps = 16
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneConfig {
    pub name: Option<String>,
    pub description: Option<String>,
    pub problem: RawProblem,
    pub tune: TuneSpec,
    #[serde(default)]
    pub solver: SolverOptions,
    /// Optional: simulate every optimum (one d) to check the prediction.
    pub simulation: Option<SimulationConfig>,
}

/// `[tune]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneSpec {
    pub algorithms: Vec<AlgorithmKind>,
    /// (ε, δ) budgets: the ε values, with `delta_priv`.
    pub epsilon: Option<ParamSpec>,
    pub delta_priv: Option<f64>,
    /// zCDP budgets (instead of `epsilon`/`delta_priv`).
    pub rho: Option<ParamSpec>,
    pub neighbouring: Option<crate::accountant::Neighbouring>,
    #[serde(default = "default_lambda_min")]
    pub lambda_min: f64,
    #[serde(default = "default_lambda_max")]
    pub lambda_max: f64,
    #[serde(default = "default_metric")]
    pub metric: String,
    /// DP-GD: candidate numbers of steps T (default 1, 2, 4, 8, 16, 32).
    pub steps: Option<ParamSpec>,
    /// DP-GD: candidate step sizes η as fractions of the stability limit 2/L
    /// (default 0.1, 0.25, 0.5, 0.9).
    pub eta_fraction: Option<ParamSpec>,
}

impl TuneSpec {
    /// The budgets to tune for, validated: ε (> 0) with `delta_priv`
    /// (0 < δ < 1), or ρ (> 0).
    pub fn budgets(&self) -> Result<Vec<crate::problem::Budget>, ConfigError> {
        use crate::problem::{Budget, Target};
        let neighbouring = self.neighbouring.unwrap_or(crate::accountant::Neighbouring::ReplaceOne);
        let positive = |field: &str, spec: &ParamSpec| -> Result<Vec<f64>, ConfigError> {
            let v = spec.values(field)?;
            match v.iter().find(|x| !(**x > 0.0 && x.is_finite())) {
                Some(&x) => Err(ConfigError::range(field, x, "> 0 and finite")),
                None => Ok(v),
            }
        };
        let targets: Vec<Target> = match (&self.epsilon, self.delta_priv, &self.rho) {
            (Some(e), Some(delta_priv), None) => {
                if !(delta_priv > 0.0 && delta_priv < 1.0) {
                    return Err(ConfigError::range("tune.delta_priv", delta_priv, "0 < delta_priv < 1"));
                }
                positive("tune.epsilon", e)?
                    .into_iter()
                    .map(|epsilon| Target::Approx { epsilon, delta_priv })
                    .collect()
            }
            (Some(_), None, None) => {
                return Err(missing("tune.delta_priv", "the δ of the (ε, δ) budgets, 0 < δ < 1"));
            }
            (None, None, Some(r)) => positive("tune.rho", r)?
                .into_iter()
                .map(|rho| Target::Zcdp { rho })
                .collect(),
            (None, Some(_), Some(_)) | (Some(_), _, Some(_)) => {
                return Err(not_applicable(
                    "tune.rho",
                    "budgets are either epsilon with delta_priv, or rho — not both",
                ));
            }
            (None, _, None) => {
                return Err(missing(
                    "tune.epsilon",
                    "privacy budgets: epsilon = [...] with delta_priv, or rho = [...]",
                ));
            }
        };
        Ok(targets
            .into_iter()
            .map(|target| Budget { target, neighbouring })
            .collect())
    }

    /// DP-GD candidate step counts, validated (integers in 1..=1000).
    pub fn dpgd_steps(&self) -> Result<Vec<usize>, ConfigError> {
        let Some(spec) = &self.steps else {
            return Ok(vec![1, 2, 4, 8, 16, 32]);
        };
        spec.values("tune.steps")?
            .into_iter()
            .map(|t| {
                if (1.0..=1000.0).contains(&t) && t.fract() == 0.0 {
                    Ok(t as usize)
                } else {
                    Err(ConfigError::range("tune.steps", t, "integers 1 ≤ T ≤ 1000"))
                }
            })
            .collect()
    }

    /// DP-GD candidate η/(2/L), validated (in (0, 1)).
    pub fn dpgd_eta_fractions(&self) -> Result<Vec<f64>, ConfigError> {
        let Some(spec) = &self.eta_fraction else {
            return Ok(vec![0.1, 0.25, 0.5, 0.9]);
        };
        let v = spec.values("tune.eta_fraction")?;
        match v.iter().find(|f| !(**f > 0.0 && **f < 1.0)) {
            Some(&f) => Err(ConfigError::range(
                "tune.eta_fraction",
                f,
                "0 < η·L/2 < 1 (gradient descent diverges at η ≥ 2/L)",
            )),
            None => Ok(v),
        }
    }
}

fn default_lambda_min() -> f64 {
    1e-3
}
fn default_lambda_max() -> f64 {
    1e3
}
fn default_metric() -> String {
    crate::metrics::EST_ERR2.into()
}

impl TuneConfig {
    /// Parse and validate; returns the config and the problem points (one per
    /// combination of the `[problem]` parameters, δ fastest).
    pub fn from_toml_str(text: &str) -> Result<(TuneConfig, Vec<crate::Point>), ConfigError> {
        let cfg: TuneConfig = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        let t = &cfg.tune;
        if t.algorithms.is_empty() {
            return Err(ConfigError::range(
                "tune.algorithms",
                "[]",
                "a non-empty list of \"objective\", \"output\" and \"dpgd\"",
            ));
        }
        let dpgd = t.algorithms.contains(&AlgorithmKind::Dpgd);
        for (field, given) in [("steps", t.steps.is_some()), ("eta_fraction", t.eta_fraction.is_some())] {
            if given && !dpgd {
                return Err(not_applicable(
                    &format!("tune.{field}"),
                    "only with \"dpgd\" in tune.algorithms",
                ));
            }
        }
        t.dpgd_steps()?;
        t.dpgd_eta_fractions()?;
        if dpgd
            && cfg.problem.model == ModelKind::Huber
            && cfg.problem.noise.as_ref().is_some_and(|n| n.law != NoiseKind::Gaussian)
        {
            return Err(ConfigError::range(
                "tune.algorithms",
                "\"dpgd\"",
                "objective/output only: the DMFT of DP-GD on the Huber loss needs noise.law = \"gaussian\"",
            ));
        }
        t.budgets()?;
        if !(t.lambda_min > 0.0 && t.lambda_max > t.lambda_min && t.lambda_max.is_finite()) {
            return Err(ConfigError::range(
                "tune.lambda_min",
                format!("[{}, {}]", t.lambda_min, t.lambda_max),
                "0 < lambda_min < lambda_max < ∞",
            ));
        }
        if crate::metrics::describe(&t.metric).is_none() {
            return Err(ConfigError::range(
                "tune.metric",
                &t.metric,
                "a metric name of SPEC.md §1",
            ));
        }
        cfg.solver.check()?;
        if let Some(sim) = &cfg.simulation {
            sim.check()?;
            if sim.d.len() != 1 {
                return Err(ConfigError::range(
                    "simulation.d",
                    format!("{:?}", sim.d),
                    "one value in a tune config (each optimum is simulated at that d)",
                ));
            }
        }
        // the problem points, via a run config with a placeholder algorithm
        let raw = RawConfig {
            name: None,
            description: None,
            problem: cfg.problem.clone(),
            algorithm: RawAlgorithm {
                kind: AlgorithmKind::Objective,
                lambda: ParamSpec::Scalar(1.0),
                sigma: Some(ParamSpec::Scalar(0.0)),
                tau: None,
                eta: None,
                steps: None,
                loss_variant: None,
                epsilon: None,
                delta_priv: None,
                rho: None,
                neighbouring: None,
            },
            solver: cfg.solver,
            simulation: None,
            plot: PlotSpec::default(),
        };
        raw.check()?;
        let points = Sweep::from_raw(&raw)?.points().to_vec();
        Ok((cfg, points))
    }
}

/// A validated config: the raw text, its parsed form and its sweep.
#[derive(Debug, Clone)]
pub struct Config {
    pub text: String,
    pub raw: RawConfig,
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
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        raw.check()?;
        let sweep = Sweep::from_raw(&raw)?;
        Ok(Config {
            text: text.to_string(),
            raw,
            sweep,
        })
    }
}

impl RawConfig {
    /// Structural checks: keys that must or must not be present for the
    /// chosen model, law and algorithm.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.solver.check()?;
        if let Some(metrics) = &self.plot.metrics {
            for m in metrics {
                if crate::metrics::describe(m).is_none() {
                    return Err(ConfigError::range(
                        "plot.metrics",
                        m,
                        "metric names of SPEC.md §1, e.g. \"est_err2\"",
                    ));
                }
            }
        }
        if let Some(sim) = &self.simulation {
            sim.check()?;
        }
        let p = &self.problem;
        match p.model {
            ModelKind::Huber => {
                if p.huber_m.is_none() {
                    return Err(missing("problem.huber_m", "the Huber threshold M > 0"));
                }
                let noise = p
                    .noise
                    .as_ref()
                    .ok_or_else(|| missing("problem.noise", "a noise law, e.g. { law = \"gaussian\", sd = 0.5 }"))?;
                noise.check()?;
            }
            ModelKind::Logistic => {
                if p.huber_m.is_some() {
                    return Err(not_applicable("problem.huber_m", "only the huber model has M"));
                }
                if p.noise.is_some() {
                    return Err(not_applicable(
                        "problem.noise",
                        "logistic labels come from the sigmoid model",
                    ));
                }
            }
        }
        let a = &self.algorithm;
        if a.kind != AlgorithmKind::Dpgd {
            for (field, present) in [
                ("eta", a.eta.is_some()),
                ("steps", a.steps.is_some()),
                ("loss_variant", a.loss_variant.is_some()),
            ] {
                if present {
                    return Err(not_applicable(
                        &format!("algorithm.{field}"),
                        "only kind = \"dpgd\" takes it",
                    ));
                }
            }
        }
        let noise_field = if a.kind == AlgorithmKind::Output {
            "tau"
        } else {
            "sigma"
        };
        let noise_given = a.sigma.is_some() || a.tau.is_some();
        if a.rho.is_some() {
            if noise_given {
                return Err(not_applicable(
                    &format!("algorithm.{noise_field}"),
                    "with a budget rho the noise is calibrated; give one or the other",
                ));
            }
            for (field, present) in [("epsilon", a.epsilon.is_some()), ("delta_priv", a.delta_priv.is_some())] {
                if present {
                    return Err(not_applicable(
                        &format!("algorithm.{field}"),
                        "a budget is either rho (zCDP) or epsilon with delta_priv, not both",
                    ));
                }
            }
            if a.kind == AlgorithmKind::Dpgd && (a.eta.is_none() || a.steps.is_none()) {
                return Err(missing("algorithm.steps", "DP-GD needs eta > 0 and steps ≥ 1"));
            }
            return Ok(());
        }
        if a.epsilon.is_some() {
            if noise_given {
                return Err(not_applicable(
                    &format!("algorithm.{noise_field}"),
                    "with a budget (epsilon, delta_priv) the noise is calibrated; give one or the other",
                ));
            }
            match a.delta_priv {
                None => return Err(missing("algorithm.delta_priv", "the δ of the (ε, δ) budget, 0 < δ < 1")),
                Some(d) if !(d > 0.0 && d < 1.0) => {
                    return Err(ConfigError::range("algorithm.delta_priv", d, "0 < delta_priv < 1"));
                }
                _ => {}
            }
            if a.kind == AlgorithmKind::Dpgd && (a.eta.is_none() || a.steps.is_none()) {
                return Err(missing("algorithm.steps", "DP-GD needs eta > 0 and steps ≥ 1"));
            }
            return Ok(());
        }
        for (field, present) in [
            ("delta_priv", a.delta_priv.is_some()),
            ("neighbouring", a.neighbouring.is_some()),
        ] {
            if present {
                return Err(not_applicable(
                    &format!("algorithm.{field}"),
                    "only with a budget `epsilon` (or `rho` for neighbouring)",
                ));
            }
        }
        match a.kind {
            AlgorithmKind::Dpgd => {
                for (field, present) in [
                    ("sigma", a.sigma.is_some()),
                    ("eta", a.eta.is_some()),
                    ("steps", a.steps.is_some()),
                ] {
                    if !present {
                        return Err(missing(
                            &format!("algorithm.{field}"),
                            "DP-GD needs sigma ≥ 0, eta > 0 and steps ≥ 1",
                        ));
                    }
                }
                if a.tau.is_some() {
                    return Err(not_applicable("algorithm.tau", "τ is for kind = \"output\""));
                }
            }
            AlgorithmKind::Objective => {
                if a.sigma.is_none() {
                    return Err(missing("algorithm.sigma", "objective perturbation needs σ ≥ 0"));
                }
                if a.tau.is_some() {
                    return Err(not_applicable("algorithm.tau", "τ is for kind = \"output\"; use sigma"));
                }
            }
            AlgorithmKind::Output => {
                if a.tau.is_none() {
                    return Err(missing("algorithm.tau", "output perturbation needs τ ≥ 0"));
                }
                if a.sigma.is_some() {
                    return Err(not_applicable(
                        "algorithm.sigma",
                        "σ is for kind = \"objective\"; use tau",
                    ));
                }
            }
        }
        Ok(())
    }
}

impl RawNoise {
    fn check(&self) -> Result<(), ConfigError> {
        let needed: &[&str] = match self.law {
            NoiseKind::Gaussian => &["sd"],
            NoiseKind::StudentT => &["dof", "scale"],
            NoiseKind::Laplace => &["scale"],
            NoiseKind::Contaminated => &["sd", "p", "outlier_sd"],
        };
        for (name, val) in self.fields() {
            let field = format!("problem.noise.{name}");
            match (needed.contains(&name), val.is_some()) {
                (true, false) => {
                    return Err(missing(&field, &format!("required by law = {:?}", self.law)));
                }
                (false, true) => {
                    return Err(not_applicable(&field, &format!("law {:?} takes {needed:?}", self.law)));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every optional parameter with its config name.
    pub fn fields(&self) -> [(&'static str, Option<&ParamSpec>); 5] {
        [
            ("sd", self.sd.as_ref()),
            ("dof", self.dof.as_ref()),
            ("scale", self.scale.as_ref()),
            ("p", self.p.as_ref()),
            ("outlier_sd", self.outlier_sd.as_ref()),
        ]
    }
}

fn missing(field: &str, why: &str) -> ConfigError {
    ConfigError::Missing {
        field: field.into(),
        why: why.into(),
    }
}

fn not_applicable(field: &str, why: &str) -> ConfigError {
    ConfigError::NotApplicable {
        field: field.into(),
        why: why.into(),
    }
}
