//! A `propdp tune` config: a `[problem]` table as for `run` and a `[tune]`
//! table naming the algorithms and budgets to compare.

use serde::{Deserialize, Serialize};

use super::{RawProblem, SimulationConfig, SolverOptions};
use crate::error::ConfigError;
use crate::param::ParamSpec;
use crate::problem::AlgorithmKind;
use crate::sweep::Sweep;

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
/// # with "dpsgd" in algorithms: candidate sample rates (steps and
/// # eta_fraction apply to it too, η as fractions of the batch step limit 2/L_B(q))
/// # sample_rate = [0.002, 0.01, 0.05, 0.2, 1.0]
/// # epochs = [1, 2, 5, 10]     # instead of steps: T = epochs/q at each q
/// # clip = [0.1, 0.5]          # DP-SGD: candidate clipping norms C
/// # max_hours = 1.0            # refuse a search estimated to take longer
/// # search = "auto"            # "grid" (every candidate) or "staged"; auto: staged beyond 300
/// # strategies = ["identity", "bandmf", "optimized", "blt"]  # DP-SGD: also correlated noise at its optimum
/// # fit_intercept = true       # DP-GD, DP-SGD: learn an unpenalised intercept
/// #                            # ([problem] intercept = b*: the teacher's)
///
/// [simulation]                 # optional: simulate every optimum at one d
/// d = 200
/// reps = 16
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneConfig {
    /// Optional human name of the search.
    pub name: Option<String>,
    /// Optional free text.
    pub description: Option<String>,
    /// The problem points to tune for (every combination).
    #[serde(deserialize_with = "super::problem::deserialize")]
    pub problem: RawProblem,
    /// What to search.
    pub tune: TuneSpec,
    /// Numerical settings of the theory.
    #[serde(default)]
    pub solver: SolverOptions,
    /// Optional: simulate every optimum (one d) to check the prediction.
    pub simulation: Option<SimulationConfig>,
}

/// `[tune]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TuneSpec {
    /// The algorithms to compare.
    pub algorithms: Vec<AlgorithmKind>,
    /// (ε, δ) budgets: the ε values, with `delta_priv`.
    pub epsilon: Option<ParamSpec>,
    /// δ of the (ε, δ) budgets.
    pub delta_priv: Option<f64>,
    /// zCDP budgets (instead of `epsilon`/`delta_priv`).
    pub rho: Option<ParamSpec>,
    /// Neighbouring relation of the budgets (default replace-one).
    pub neighbouring: Option<crate::accountant::Neighbouring>,
    /// Smallest λ searched (log scale).
    #[serde(default = "default_lambda_min")]
    pub lambda_min: f64,
    /// Largest λ searched.
    #[serde(default = "default_lambda_max")]
    pub lambda_max: f64,
    /// The metric minimised.
    #[serde(default = "default_metric")]
    pub metric: String,
    /// Whether every candidate learns an unpenalised intercept (docs/theory.md
    /// §2.6, §3.5; default false): DP-GD and DP-SGD only, whose clipping
    /// bounds the gradient with the constant feature.
    #[serde(default)]
    pub fit_intercept: bool,
    /// DP-GD and DP-SGD: candidate numbers of steps T (default 1, 2, 4, 8, 16, 32).
    pub steps: Option<ParamSpec>,
    /// DP-GD and DP-SGD: candidate step sizes η as fractions of a typical
    /// batch's step limit 2/L_B(q), L_B(q) = β(1 + √(q/δ))² + λ (DP-GD:
    /// 2/L; default 0.1, 0.25, 0.5, 0.9).
    pub eta_fraction: Option<ParamSpec>,
    /// DP-SGD: candidate sample rates q (default 0.05, 0.2, 1).
    pub sample_rate: Option<ParamSpec>,
    /// DP-GD and DP-SGD: candidate numbers of epochs E instead of `steps`:
    /// at sample rate q a run takes T = max(1, round(E/q)) steps.
    pub epochs: Option<ParamSpec>,
    /// DP-SGD: candidate per-example clipping norms C > 0 (default: none —
    /// the loss's Lipschitz constant L bounds the gradient); the noise is
    /// calibrated to the sensitivity min(C, L).
    pub clip: Option<ParamSpec>,
    /// Refuse a search whose estimated time exceeds this many hours
    /// (default 1).
    pub max_hours: Option<f64>,
    /// How DP-GD and DP-SGD candidates are searched (default "auto").
    #[serde(default)]
    pub search: SearchKind,
    /// DP-SGD's noise strategies (default `["identity"]`, independent
    /// noise): with "bandmf" the DP-SGD optimum is also run as BandMF in
    /// cyclic groups at the same hyperparameters, expected batch and budget
    /// (prefix-sum-optimal coefficients), with "optimized" also with the
    /// coefficients optimised for the metric, with "blt" also as a BLT in
    /// the fixed order optimised for it (`propdp mechanism`).
    #[serde(default = "identity_only")]
    pub strategies: Vec<TuneStrategy>,
}

/// A noise strategy `propdp tune` tries for DP-SGD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TuneStrategy {
    /// Independent noise: DP-SGD's own search.
    Identity,
    /// BandMF in G cyclic groups, prefix-sum-optimal coefficients.
    Bandmf,
    /// BandMF with coefficients optimised for the predicted metric.
    Optimized,
    /// A BLT in the fixed order optimised for the predicted metric.
    Blt,
}

/// `tune.strategies`' default: DP-SGD's independent noise alone.
fn identity_only() -> Vec<TuneStrategy> {
    vec![TuneStrategy::Identity]
}

/// How the DP-GD and DP-SGD candidates are searched at the coarse budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// The whole grid up to [`STAGED_FROM`] candidates, staged beyond.
    #[default]
    Auto,
    /// Every candidate of the grid.
    Grid,
    /// In two stages: every (q, T, C) at λ ∈ {0, the grid's middle λ} and
    /// every η, then the whole η × λ grid of the three best (q, T, C).
    Staged,
}

/// Grids of more candidates are searched in stages under `search = "auto"`.
pub const STAGED_FROM: usize = 300;

/// The candidate horizons of DP-GD and DP-SGD: numbers of steps, or of
/// epochs (T = E/q at sample rate q).
#[derive(Debug, Clone, PartialEq)]
pub enum Horizons {
    /// `tune.steps`: the same T at every q.
    Steps(Vec<usize>),
    /// `tune.epochs`: T = max(1, round(E/q)).
    Epochs(Vec<f64>),
}

impl Horizons {
    /// The candidate numbers of steps at sample rate `q`, increasing and
    /// without repeats.
    ///
    /// ```
    /// use propdp_core::config::tune::Horizons;
    /// assert_eq!(Horizons::Epochs(vec![1.0, 2.5]).at(0.01), vec![100, 250]);
    /// assert_eq!(Horizons::Epochs(vec![0.5, 1.0]).at(1.0), vec![1]);
    /// assert_eq!(Horizons::Steps(vec![8, 2]).at(0.2), vec![2, 8]);
    /// ```
    pub fn at(&self, q: f64) -> Vec<usize> {
        let mut t: Vec<usize> = match self {
            Horizons::Steps(t) => t.clone(),
            Horizons::Epochs(e) => e.iter().map(|e| ((e / q).round() as usize).max(1)).collect(),
        };
        t.sort_unstable();
        t.dedup();
        t
    }
}

/// Default limit of a search's estimated time.
pub const DEFAULT_MAX_HOURS: f64 = 1.0;

impl TuneSpec {
    /// The budgets to tune for, validated: ε (> 0) with `delta_priv`
    /// (0 < δ < 1), or ρ (> 0).
    pub fn budgets(&self) -> Result<Vec<crate::problem::Budget>, ConfigError> {
        use crate::problem::{Budget, Target};
        let neighbouring = self.neighbouring.unwrap_or(crate::accountant::Neighbouring::ReplaceOne);
        let values = |name: &str, spec: &ParamSpec| -> Result<Vec<f64>, ConfigError> {
            let field = format!("tune.{name}");
            let v = spec.values(&field)?;
            for &x in &v {
                crate::parameters::check(name, &field, x)?;
            }
            Ok(v)
        };
        let targets: Vec<Target> = match (&self.epsilon, self.delta_priv, &self.rho) {
            (Some(e), Some(delta_priv), None) => {
                crate::parameters::check("delta_priv", "tune.delta_priv", delta_priv)?;
                values("epsilon", e)?
                    .into_iter()
                    .map(|epsilon| Target::Approx { epsilon, delta_priv })
                    .collect()
            }
            (Some(_), None, None) => {
                return Err(ConfigError::missing(
                    "tune.delta_priv",
                    "the δ of the (ε, δ) budgets, 0 < δ < 1",
                ));
            }
            (None, None, Some(r)) => values("rho", r)?.into_iter().map(|rho| Target::Zcdp { rho }).collect(),
            (None, Some(_), Some(_)) | (Some(_), _, Some(_)) => {
                return Err(ConfigError::not_applicable(
                    "tune.rho",
                    "budgets are either epsilon with delta_priv, or rho — not both",
                ));
            }
            (None, _, None) => {
                return Err(ConfigError::missing(
                    "tune.epsilon",
                    "privacy budgets: epsilon = [...] with delta_priv, or rho = [...]",
                ));
            }
        };
        Ok(targets
            .into_iter()
            .map(|target| Budget::new(target, neighbouring))
            .collect())
    }

    /// DP-SGD candidate sample rates, validated (in (0, 1]).
    pub fn sample_rates(&self) -> Result<Vec<f64>, ConfigError> {
        let Some(spec) = &self.sample_rate else {
            return Ok(vec![0.05, 0.2, 1.0]);
        };
        let v = spec.values("tune.sample_rate")?;
        for &q in &v {
            crate::parameters::check("sample_rate", "tune.sample_rate", q)?;
        }
        Ok(v)
    }

    /// DP-GD and DP-SGD candidate horizons, validated: `steps` (integers
    /// 1 ≤ T ≤ [`crate::problem::MAX_STEPS`]) or `epochs` (E > 0 with
    /// E/q ≤ MAX_STEPS at the smallest sample rate), not both; default
    /// steps 1, 2, 4, 8, 16, 32.
    pub fn horizons(&self) -> Result<Horizons, ConfigError> {
        let most = crate::problem::MAX_STEPS;
        match (&self.steps, &self.epochs) {
            (Some(_), Some(_)) => Err(ConfigError::not_applicable(
                "tune.epochs",
                "give either tune.steps or tune.epochs (T = epochs/q), not both",
            )),
            (None, None) => Ok(Horizons::Steps(vec![1, 2, 4, 8, 16, 32])),
            (Some(spec), None) => spec
                .values("tune.steps")?
                .into_iter()
                .map(|t| {
                    if (1.0..=most as f64).contains(&t) && t.fract() == 0.0 {
                        Ok(t as usize)
                    } else {
                        Err(ConfigError::range("tune.steps", t, &format!("integers 1 ≤ T ≤ {most}")))
                    }
                })
                .collect::<Result<_, _>>()
                .map(Horizons::Steps),
            (None, Some(spec)) => {
                let q_min = self.sample_rates()?.into_iter().fold(1.0, f64::min);
                let epochs = spec.values("tune.epochs")?;
                match epochs.iter().find(|&&e| !(e > 0.0 && e / q_min <= most as f64)) {
                    Some(&e) => Err(ConfigError::range(
                        "tune.epochs",
                        e,
                        &format!("0 < epochs ≤ {most}·q (T = epochs/q ≤ {most} steps at q = {q_min})"),
                    )),
                    None => Ok(Horizons::Epochs(epochs)),
                }
            }
        }
    }

    /// DP-SGD candidate clipping norms, validated (C > 0); `[None]` (no
    /// clipping) by default.
    pub fn clips(&self) -> Result<Vec<Option<f64>>, ConfigError> {
        let Some(spec) = &self.clip else {
            return Ok(vec![None]);
        };
        let v = spec.values("tune.clip")?;
        match v.iter().find(|c| !(**c > 0.0 && c.is_finite())) {
            Some(&c) => Err(ConfigError::range("tune.clip", c, "clipping norms 0 < C < ∞")),
            None => Ok(v.into_iter().map(Some).collect()),
        }
    }

    /// The limit of the search's estimated time, validated (hours > 0).
    pub fn max_hours(&self) -> Result<f64, ConfigError> {
        match self.max_hours {
            None => Ok(DEFAULT_MAX_HOURS),
            Some(h) if h > 0.0 && h.is_finite() => Ok(h),
            Some(h) => Err(ConfigError::range("tune.max_hours", h, "0 < hours < ∞")),
        }
    }

    /// DP-GD and DP-SGD candidate η/(2/L_B(q)), validated (in (0, 1)).
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
    /// The feature covariance of `problem.covariance`, its file read
    /// relative to `dir` (the current directory when `None`); `None` for
    /// isotropic features (or a spectrum of one atom).
    pub fn covariance_in(
        &self,
        dir: Option<&std::path::Path>,
    ) -> Result<Option<crate::covariance::Covariance>, ConfigError> {
        match self.problem.covariance() {
            Some(c) => c.resolve(dir),
            None => Ok(None),
        }
    }

    /// The `[simulation] data` file, read relative to `dir` (the current
    /// directory when `None`); `None` without one.
    pub fn data_in(
        &self,
        dir: Option<&std::path::Path>,
    ) -> Result<Option<crate::config::simulation::DataFile>, ConfigError> {
        match self.simulation.as_ref().and_then(|s| s.data.as_ref()) {
            Some(d) => d.resolve(dir).map(Some),
            None => Ok(None),
        }
    }

    /// The problem points with the teacher's intercept (`problem.intercept`)
    /// and `tune.fit_intercept` (docs/theory.md §2.6, §3.5), checked against
    /// every algorithm searched: a learned intercept with DP-GD and DP-SGD
    /// only (objective and output perturbation are calibrated to the budget,
    /// and their guarantee does not hold with an unpenalised intercept), and
    /// each point valid for each algorithm (Huber's objective and output
    /// perturbation take a teacher's intercept only when it is learned).
    fn with_intercepts(&self, points: Vec<crate::Point>) -> Result<Vec<crate::Point>, ConfigError> {
        let learned = self.tune.fit_intercept;
        if self.problem.intercept().is_none() && !learned {
            return Ok(points);
        }
        if learned
            && let Some(kind) =
                (self.tune.algorithms.iter()).find(|k| matches!(k, AlgorithmKind::Objective | AlgorithmKind::Output))
        {
            return Err(ConfigError::not_applicable(
                "tune.fit_intercept",
                &format!(
                    "{} with a learned intercept under a budget: the intercept is unpenalised, so its privacy \
                     guarantee does not hold (docs/theory.md §2.6); tune \"dpgd\" and \"dpsgd\" with it",
                    kind.title()
                ),
            ));
        }
        if self.simulation.as_ref().is_some_and(|s| s.data.is_some()) {
            return Err(ConfigError::not_applicable(
                "simulation.data",
                "real rows with an intercept are not simulated (docs/theory.md §3.5)",
            ));
        }
        points
            .into_iter()
            .map(|p| {
                let teacher = p.intercept().map_or(0.0, |i| i.teacher);
                let p = p.with_intercept(crate::problem::Intercept { teacher, learned })?;
                for kind in &self.tune.algorithms {
                    let probe = match kind {
                        AlgorithmKind::Objective => crate::Algorithm::Objective {
                            lambda: 1.0,
                            sigma: 0.0,
                        },
                        AlgorithmKind::Output => crate::Algorithm::Output { lambda: 1.0, tau: 0.0 },
                        AlgorithmKind::Dpgd | AlgorithmKind::Dpsgd => continue,
                    };
                    p.with_algorithm(probe)?;
                }
                Ok(p)
            })
            .collect()
    }

    /// Parse and validate; returns the config and the problem points (one per
    /// combination of the `[problem]` parameters, δ fastest).
    pub fn from_toml_str(text: &str) -> Result<(TuneConfig, Vec<crate::Point>), ConfigError> {
        let cfg: TuneConfig = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        let t = &cfg.tune;
        if let Some(labels) = cfg
            .simulation
            .as_ref()
            .and_then(|s| s.data.as_ref())
            .and_then(|d| d.labels.as_ref())
            && crate::metrics::NEED_TEACHER.contains(&t.metric.as_str())
        {
            return Err(ConfigError::not_applicable(
                "simulation.data.labels",
                &format!(
                    "the data's own labels ({labels:?}) have no ground truth θ*, and tune.metric = {:?} needs one: \
                     drop `labels` (the labels are then drawn from θ* on your rows) or tune a metric without θ*",
                    t.metric
                ),
            ));
        }
        if t.algorithms.is_empty() {
            return Err(ConfigError::range(
                "tune.algorithms",
                "[]",
                "a non-empty list of \"objective\", \"output\", \"dpgd\" and \"dpsgd\"",
            ));
        }
        if let Some((i, a)) = t
            .algorithms
            .iter()
            .enumerate()
            .find(|(i, a)| t.algorithms[..*i].contains(a))
        {
            return Err(ConfigError::range(
                "tune.algorithms",
                format!(
                    "{:?} (\"{a}\" again at position {})",
                    t.algorithms.iter().map(|a| a.name()).collect::<Vec<_>>(),
                    i + 1
                ),
                "each algorithm once",
            ));
        }
        let dpgd = t.algorithms.contains(&AlgorithmKind::Dpgd);
        let dpsgd = t.algorithms.contains(&AlgorithmKind::Dpsgd);
        if cfg.problem.data_model() == crate::problem::DataModel::TwoCluster
            && (!dpgd && !dpsgd || t.algorithms.len() > usize::from(dpgd) + usize::from(dpsgd))
        {
            return Err(ConfigError::range(
                "tune.algorithms",
                format!("{:?}", t.algorithms.iter().map(|a| a.name()).collect::<Vec<_>>()),
                "\"dpgd\" and/or \"dpsgd\" with data_model = \"two_cluster\": the fixed points of objective and \
                 output perturbation have no two clusters (docs/theory.md §3.6)",
            ));
        }
        if cfg.problem.kind() == crate::ModelKind::LeastSquares {
            // the squared loss is not Lipschitz: private only through DP-SGD's clipping
            if t.algorithms != [AlgorithmKind::Dpsgd] {
                return Err(ConfigError::range(
                    "tune.algorithms",
                    format!("{:?}", t.algorithms.iter().map(|a| a.name()).collect::<Vec<_>>()),
                    "[\"dpsgd\"] with model = \"least_squares\": the squared loss is private only through \
                     DP-SGD's per-example clipping (tune.clip)",
                ));
            }
            if t.clip.is_none() {
                return Err(ConfigError::Missing {
                    field: "tune.clip".into(),
                    why: "least squares is private only through DP-SGD's clipping, and tune searches the clip \
                          among these candidates: give a few around the labels' scale √(s² + Var ε), e.g. \
                          clip = [0.25, 0.5, 1.0, 2.0] for labels of unit variance"
                        .into(),
                });
            }
        }
        if !t.strategies.contains(&TuneStrategy::Identity) {
            return Err(ConfigError::range(
                "tune.strategies",
                format!("{:?}", t.strategies),
                "a list holding \"identity\" (DP-SGD's search, whose optimum the other strategies rerun), \
                 and optionally \"bandmf\", \"optimized\" and \"blt\"",
            ));
        }
        if t.strategies.len() > 1 && !dpsgd {
            return Err(ConfigError::not_applicable(
                "tune.strategies",
                "correlated-noise strategies apply to \"dpsgd\": add it to tune.algorithms",
            ));
        }
        for (field, given, applies, which) in [
            ("steps", t.steps.is_some(), dpgd || dpsgd, "\"dpgd\" or \"dpsgd\""),
            (
                "eta_fraction",
                t.eta_fraction.is_some(),
                dpgd || dpsgd,
                "\"dpgd\" or \"dpsgd\"",
            ),
            ("sample_rate", t.sample_rate.is_some(), dpsgd, "\"dpsgd\""),
            ("epochs", t.epochs.is_some(), dpgd || dpsgd, "\"dpgd\" or \"dpsgd\""),
            ("clip", t.clip.is_some(), dpsgd, "\"dpsgd\""),
        ] {
            if given && !applies {
                return Err(ConfigError::not_applicable(
                    &format!("tune.{field}"),
                    &format!("only with {which} in tune.algorithms"),
                ));
            }
        }
        t.horizons()?;
        t.dpgd_eta_fractions()?;
        t.sample_rates()?;
        t.clips()?;
        t.max_hours()?;
        if (dpgd || dpsgd) && cfg.problem.noise().is_some_and(|n| !n.is_gaussian()) {
            return Err(ConfigError::range(
                "tune.algorithms",
                if dpgd { "\"dpgd\"" } else { "\"dpsgd\"" },
                "objective/output only: the DMFT of DP-GD and DP-SGD on the Huber loss needs noise.law = \"gaussian\"",
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
        if !crate::metrics::MINIMISED.contains(&t.metric.as_str()) {
            return Err(ConfigError::range(
                "tune.metric",
                &t.metric,
                &format!(
                    "an error or loss tune can minimise: {} (overlap, bias_factor, norm2 and noise_corr have no \
                     \"lower is better\")",
                    crate::metrics::MINIMISED.join(", ")
                ),
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
        let points = Sweep::problem_points(&cfg.problem)?;
        let points = cfg.with_intercepts(points)?;
        Ok((cfg, points))
    }
}
