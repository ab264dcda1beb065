//! A validated config: TOML text → [`RawConfig`] (the schema of
//! [`crate::config`]) → checks naming the field → its [`Sweep`] of
//! validated points. Kept apart from the schema, which the sweep reads.

use std::path::Path;

use crate::config::simulation::DataFile;
use crate::config::{RawAlgorithm, RawConfig, RawProblem};
use crate::covariance::Covariance;
use crate::error::ConfigError;
use crate::sweep::Sweep;

/// A validated config: the raw text, its parsed form and its sweep.
#[derive(Debug, Clone)]
pub struct Config {
    /// The TOML text, verbatim.
    pub text: String,
    /// The parsed tables.
    pub raw: RawConfig,
    /// Every point, validated.
    pub sweep: Sweep,
    /// The feature covariance, validated and normalised; `None` is the
    /// isotropic problem (docs/theory.md §2.4).
    pub covariance: Option<Covariance>,
    /// The `[simulation] data` file, read.
    pub data: Option<DataFile>,
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
        Config::from_toml_str_in(text, None)
    }

    /// [`Config::from_toml_str`] for a config read from a file in `dir`: a
    /// relative `problem.covariance.file` is taken relative to `dir` (to the
    /// current directory when `None`). The `s2` and `noise` it leaves out
    /// come from the file's effective model, if it has one
    /// ([`crate::effective_model::complete`]; the recorded text has them).
    pub fn from_toml_str_in(text: &str, dir: Option<&Path>) -> Result<Config, ConfigError> {
        // s2 and noise from the covariance file's effective model, when the config leaves them out
        let text = &crate::effective_model::complete(text, dir)?;
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| tagged_table_error(text).unwrap_or(ConfigError::Parse(e.to_string())))?;
        Config::from_raw_in(raw, text.to_string(), dir)
    }

    /// Validate parsed tables; `text` is the config as written (recorded and
    /// hashed in provenance). [`Config::from_toml_str`] is this after parsing.
    pub fn from_raw(raw: RawConfig, text: String) -> Result<Config, ConfigError> {
        Config::from_raw_in(raw, text, None)
    }

    /// [`Config::from_raw`] with relative covariance files in `dir`.
    pub fn from_raw_in(raw: RawConfig, text: String, dir: Option<&Path>) -> Result<Config, ConfigError> {
        Config::build(raw, text, Some(dir))
    }

    /// The config of a run already made (a manifest's text): its tables and
    /// sweep, validated, without reading the files it names
    /// (`problem.covariance.file`, `simulation.data.file`, which may not be
    /// where they were): `covariance` and `data` are `None`. For what needs
    /// the sweep only — figures, merging shards.
    pub fn from_recorded(text: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        Config::build(raw, text.to_string(), None)
    }

    /// Validate; resolve the files relative to `files` (`Some(None)`: the
    /// current directory; `None`: do not read them).
    fn build(mut raw: RawConfig, mut text: String, files: Option<Option<&Path>>) -> Result<Config, ConfigError> {
        raw.check()?;
        if let Some(dir) = files
            && let Some((file, strategy)) = raw.algorithm.read_strategy_file(dir)?
        {
            text = with_strategy_read(&text, &file, &strategy);
        }
        let (covariance, data) = match files {
            None => (None, None),
            Some(dir) => (
                match raw.problem.covariance() {
                    Some(c) => c.resolve(dir)?,
                    None => None,
                },
                match raw.simulation.as_ref().and_then(|s| s.data.as_ref()) {
                    Some(d) => Some(d.resolve(dir)?),
                    None => None,
                },
            ),
        };
        let sweep = Sweep::from_raw(&raw)?;
        if let Some(cov) = &covariance {
            check_step_sizes(&sweep, cov)?;
        }
        if let Some(sim) = &raw.simulation {
            let deltas = sweep.points().iter().map(|p| p.delta());
            let (smallest, largest) = deltas.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
            sim.check_memory(smallest)?;
            sim.check_samples(largest)?;
        }
        let swept: Vec<&str> = sweep.axes.iter().map(|a| a.name.as_str()).collect();
        raw.plot
            .check_keys(&swept, raw.simulation.is_some(), &raw.problem, &raw.algorithm)?;
        Ok(Config {
            text,
            raw,
            sweep,
            covariance,
            data,
        })
    }
}

impl Config {
    /// The step-size warnings of the sweep's DP-SGD points
    /// ([`crate::Point::step_size_warning`]), with a covariance against its
    /// mean step's smoothness L_{q,Σ} = q·β·λ₊(Σ, δ) + λ
    /// ([`Covariance::right_edge`]).
    pub fn step_size_warnings(&self) -> Vec<String> {
        let Some(cov) = &self.covariance else {
            return self
                .sweep
                .points()
                .iter()
                .filter_map(|p| p.step_size_warning())
                .collect();
        };
        self.sweep
            .points()
            .iter()
            .filter_map(|p| {
                use crate::Algorithm;
                let (eta, sample_rate) = match p.algorithm() {
                    Algorithm::Dpsgd { eta, sample_rate, .. } => (eta, sample_rate),
                    // DP-GD's η is refused at the limit (check_step_sizes)
                    Algorithm::Objective { .. } | Algorithm::Output { .. } | Algorithm::Dpgd { .. } => return None,
                };
                let limit = 2.0 / mean_step_smoothness(p, cov, sample_rate);
                (eta >= limit).then(|| {
                    format!(
                        "algorithm.eta = {eta:?} ≥ 2/L_q = {limit:.4} at δ = {:?}, q = {sample_rate:?} with this \
                         covariance (largest eigenvalue of XᵀX {:.4}): the gradient is bounded, so the iterates \
                         stay bounded, but they may oscillate",
                        p.delta(),
                        cov.right_edge(p.delta())
                    )
                })
            })
            .collect()
    }
}

/// L_{q,Σ} = q·β·λ₊(Σ, δ) + λ: the smoothness of the mean step at sample
/// rate q (q = 1: full batch) with features of covariance Σ, λ₊ the right
/// edge of XᵀX's spectrum ([`Covariance::right_edge`]).
fn mean_step_smoothness(p: &crate::Point, cov: &Covariance, q: f64) -> f64 {
    crate::problem::mean_step_smoothness_at(p.model().curvature(), p.delta(), p.algorithm().lambda(), q, Some(cov))
}

/// DP-GD with a covariance: η below 2/L_Σ, L_Σ = β·λ₊(Σ, δ) + λ with the
/// generalised Marchenko–Pastur edge ([`Covariance::right_edge`]), as the
/// isotropic check of [`crate::Point`] (which also applies) does at Σ = I.
fn check_step_sizes(sweep: &Sweep, cov: &Covariance) -> Result<(), ConfigError> {
    for p in sweep.points() {
        use crate::Algorithm;
        let eta = match p.algorithm() {
            Algorithm::Dpgd { eta, .. } => eta,
            // DP-SGD's oscillation is a warning (Config::step_size_warnings)
            Algorithm::Objective { .. } | Algorithm::Output { .. } | Algorithm::Dpsgd { .. } => continue,
        };
        let limit = 2.0 / mean_step_smoothness(p, cov, 1.0);
        if eta >= limit {
            return Err(ConfigError::range(
                "algorithm.eta",
                eta,
                &format!(
                    "η < 2/L_Σ = {limit:?} at δ = {:?}: the largest eigenvalue of XᵀX with this \
                     covariance is {:.4}, and noiseless gradient descent diverges above",
                    p.delta(),
                    cov.right_edge(p.delta())
                ),
            ));
        }
    }
    Ok(())
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

/// The config text with `algorithm.strategy = { file = … }` replaced by the
/// coefficients read from it, so that the recorded text reproduces the run
/// without the file (rendered again, its comments lost; a first comment
/// line names the file).
fn with_strategy_read(text: &str, file: &str, strategy: &crate::problem::Strategy) -> String {
    let Ok(mut table) = toml::from_str::<toml::Table>(text) else {
        return text.to_string();
    };
    if let Some(toml::Value::Table(alg)) = table.get_mut("algorithm") {
        let coefficients = strategy.coefficients().unwrap_or_default();
        let mut s = toml::Table::new();
        s.insert(
            "coefficients".into(),
            toml::Value::Array(coefficients.iter().map(|&c| toml::Value::Float(c)).collect()),
        );
        alg.insert("strategy".into(), toml::Value::Table(s));
    }
    format!(
        "# algorithm.strategy: the coefficients of {file:?}, normalised\n{}",
        crate::config::text::render(&table)
    )
}
