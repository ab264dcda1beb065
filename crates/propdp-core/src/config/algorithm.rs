//! The `[algorithm]` table: one kind per algorithm, each with its
//! hyperparameters, and the privacy noise either given (σ or τ) or
//! calibrated to a budget (ε with δ, or ρ).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::table::Kinds;
use crate::accountant::{ExtraRidge, Neighbouring};
use crate::error::ConfigError;
use crate::param::ParamSpec;
use crate::problem::{Algorithm, AlgorithmKind, LossVariant, Strategy};

/// Budget keys, taken by every kind.
macro_rules! with_budget {
    ($($k:literal),*) => {
        &[$($k,)* "epsilon?", "delta_priv?", "rho?", "neighbouring?"]
    };
}

/// The keys of `[algorithm]` per kind.
const ALGORITHM: Kinds = Kinds {
    table: "algorithm",
    tag: "kind",
    kinds: &[
        (
            "objective",
            with_budget!("lambda", "sigma?", "extra_ridge?", "fit_intercept?"),
        ),
        ("output", with_budget!("lambda", "tau?", "fit_intercept?")),
        (
            "dpgd",
            with_budget!("lambda", "sigma?", "eta", "steps", "loss_variant?", "fit_intercept?"),
        ),
        (
            "dpsgd",
            with_budget!(
                "lambda",
                "sigma?",
                "eta",
                "steps",
                "sample_rate",
                "clip?",
                "groups?",
                "strategy?",
                "loss_variant?",
                "fit_intercept?"
            ),
        ),
    ],
};

/// Every key of `[algorithm]` (the kind tag first).
pub(crate) fn keys() -> Vec<&'static str> {
    ALGORITHM.all_keys()
}

/// The kinds whose `[algorithm]` table takes `key`.
#[cfg(test)]
pub(crate) fn kinds_taking(key: &str) -> Vec<&'static str> {
    ALGORITHM
        .kinds
        .iter()
        .filter(|(_, keys)| keys.iter().any(|k| k.trim_end_matches('?') == key))
        .map(|(kind, _)| *kind)
        .collect()
}

/// `serde(deserialize_with)` of the `[algorithm]` table.
pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RawAlgorithm, D::Error> {
    ALGORITHM.deserialize(d)
}

/// `[algorithm]` table, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RawAlgorithm {
    /// Objective perturbation.
    Objective {
        /// Ridge λ.
        lambda: ParamSpec,
        /// Noise σ (or a budget).
        sigma: Option<ParamSpec>,
        /// Whether an unpenalised intercept is learned (true/false, or both
        /// as a sweep; absent: none).
        #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
        fit_intercept: Option<ParamSpec>,
        /// A budget instead of σ.
        #[serde(flatten)]
        budget: RawBudget,
    },
    /// Output perturbation.
    Output {
        /// Ridge λ.
        lambda: ParamSpec,
        /// Noise τ (or a budget).
        tau: Option<ParamSpec>,
        /// Whether an unpenalised intercept is learned (true/false, or both
        /// as a sweep; absent: none).
        #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
        fit_intercept: Option<ParamSpec>,
        /// A budget instead of τ.
        #[serde(flatten)]
        budget: RawBudget,
    },
    /// DP full-batch gradient descent.
    Dpgd {
        /// Ridge λ.
        lambda: ParamSpec,
        /// Gradient noise σ (or a budget).
        sigma: Option<ParamSpec>,
        /// Step size η.
        eta: ParamSpec,
        /// Number of steps T.
        steps: ParamSpec,
        /// The loss descended (default "standard").
        #[serde(default)]
        loss_variant: LossVariant,
        /// Whether an unpenalised intercept is learned (true/false, or both
        /// as a sweep; absent: none).
        #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
        fit_intercept: Option<ParamSpec>,
        /// A budget instead of σ.
        #[serde(flatten)]
        budget: RawBudget,
    },
    /// Mini-batch DP-SGD.
    Dpsgd {
        /// Ridge λ.
        lambda: ParamSpec,
        /// Noise σ on the summed clipped gradient (or a budget).
        sigma: Option<ParamSpec>,
        /// Step size η.
        eta: ParamSpec,
        /// Number of steps T.
        steps: ParamSpec,
        /// Poisson sample rate q.
        sample_rate: ParamSpec,
        /// Per-example clipping norm C (absent: no clipping).
        clip: Option<ParamSpec>,
        /// Cyclic participation groups G (absent: 1, plain Poisson sampling).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<ParamSpec>,
        /// The noise strategy `{ coefficients = [...] }`, `{ bands = B }`,
        /// `{ blt = {...} }` or `{ file = "coef.csv" }`
        /// (absent: the identity).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        strategy: Option<RawStrategy>,
        /// The loss descended (default "standard").
        #[serde(default)]
        loss_variant: LossVariant,
        /// Whether an unpenalised intercept is learned (true/false, or both
        /// as a sweep; absent: none).
        #[serde(default, deserialize_with = "flag", skip_serializing_if = "Option::is_none")]
        fit_intercept: Option<ParamSpec>,
        /// A budget instead of σ.
        #[serde(flatten)]
        budget: RawBudget,
    },
}

/// `strategy` as written: the coefficients of the first column of C, a
/// BLT's parameters, a number of bands whose prefix-sum-optimal
/// coefficients propdp computes for each point's steps
/// ([`Strategy::prefix_sum_optimal`]), or a file of coefficients.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RawStrategy {
    /// `{ coefficients = [...] }` (normalised) or `{ blt = { buf_decay =
    /// [...], output_scale = [...] } }` (boxed: a strategy holds its
    /// coefficients inline).
    Given(Box<Strategy>),
    /// `{ bands = B }`.
    Bands {
        /// The number of bands B.
        bands: usize,
    },
    /// `{ file = "coef.csv" }`: the coefficients c₀, c₁, … of a file (one
    /// or more per line, comma- or space-separated, `#` comments, an
    /// optional header line), read relative to the config's directory when
    /// the config is loaded ([`RawStrategy::read_file`]); the config's
    /// recorded text then carries the coefficients.
    File {
        /// The file's path as written.
        file: String,
    },
}

/// `strategy`'s keys: one of them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StrategyKeys {
    coefficients: Option<Vec<f64>>,
    bands: Option<usize>,
    blt: Option<toml::Value>,
    file: Option<String>,
}

impl<'de> Deserialize<'de> for RawStrategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let keys = StrategyKeys::deserialize(d)?;
        let given = [
            keys.coefficients.is_some(),
            keys.bands.is_some(),
            keys.blt.is_some(),
            keys.file.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() != 1 {
            return Err(serde::de::Error::custom(
                "algorithm.strategy: give one of coefficients = [c₀, …] (the first column of C), bands = B \
                 (prefix-sum-optimal coefficients), blt = { buf_decay = [θ…], output_scale = [ω…] } \
                 (jax_privacy's buffered linear Toeplitz) or file = \"coef.csv\" (coefficients c₀, c₁, …)",
            ));
        }
        let given = |s: Result<Strategy, ConfigError>| {
            s.map(|s| RawStrategy::Given(Box::new(s)))
                .map_err(serde::de::Error::custom)
        };
        match keys {
            StrategyKeys {
                coefficients: Some(c), ..
            } => given(Strategy::banded(&c)),
            StrategyKeys { bands: Some(bands), .. } => Ok(RawStrategy::Bands { bands }),
            StrategyKeys { blt: Some(b), .. } => {
                let b: crate::problem::BltFields = b.try_into().map_err(|e: toml::de::Error| {
                    serde::de::Error::custom(format!(
                        "algorithm.strategy.blt: {} (expected {{ buf_decay = [θ…], output_scale = [ω…] }})",
                        e.message()
                    ))
                })?;
                given(Strategy::blt(&b.buf_decay, &b.output_scale))
            }
            StrategyKeys { file: Some(file), .. } => Ok(RawStrategy::File { file }),
            StrategyKeys { .. } => unreachable!("exactly one key, checked above"),
        }
    }
}

impl RawStrategy {
    /// The strategy at `steps` steps.
    fn at(&self, steps: usize) -> Result<Strategy, ConfigError> {
        match self {
            RawStrategy::Given(s) => Ok(**s),
            RawStrategy::Bands { bands } => Strategy::prefix_sum_optimal(*bands, steps),
            RawStrategy::File { file } => Err(ConfigError::not_applicable(
                "algorithm.strategy.file",
                &format!("{file:?} is read when a config is loaded from its file or text; this config was not"),
            )),
        }
    }

    /// The banded strategy of a `{ file = … }` (relative to `dir`, or the
    /// current directory), naming the file and line of a bad value.
    pub fn read_file(file: &str, dir: Option<&std::path::Path>) -> Result<Strategy, ConfigError> {
        const FIELD: &str = "algorithm.strategy.file";
        let path = match dir {
            Some(dir) if std::path::Path::new(file).is_relative() => dir.join(file),
            _ => std::path::PathBuf::from(file),
        };
        let bytes = crate::input::read_regular(&path)
            .map_err(|e| ConfigError::range(FIELD, format!("{file:?}"), &format!("a readable file ({e})")))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ConfigError::range(FIELD, format!("{file:?}"), "a UTF-8 text file"))?;
        let mut coefficients = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let tokens: Vec<&str> = line.split([',', ' ', '\t']).filter(|t| !t.is_empty()).collect();
            let numbers: Result<Vec<f64>, _> = tokens.iter().map(|t| t.parse::<f64>()).collect();
            match numbers {
                Ok(xs) => coefficients.extend(xs),
                // a header before the first number
                Err(_) if coefficients.is_empty() && tokens.iter().all(|t| t.parse::<f64>().is_err()) => {}
                Err(_) => {
                    return Err(ConfigError::range(
                        FIELD,
                        format!("{file:?} line {}: {line:?}", i + 1),
                        "numbers c₀, c₁, … (comma- or space-separated; a header line only before them)",
                    ));
                }
            }
        }
        Strategy::banded(&coefficients).map_err(|e| {
            ConfigError::range(
                FIELD,
                format!("{file:?}"),
                &format!("coefficients a strategy takes: {e}"),
            )
        })
    }
}

/// `fit_intercept`: `true`, `false` or a list of them (a sweep), read as
/// 1 and 0 (as are the numbers 1 and 0, the form a config is written back in).
fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ParamSpec>, D::Error> {
    fn one(v: &toml::Value) -> Option<f64> {
        match v {
            toml::Value::Boolean(b) => Some(f64::from(u8::from(*b))),
            toml::Value::Integer(i) if *i == 0 || *i == 1 => Some(*i as f64),
            toml::Value::Float(x) if *x == 0.0 || *x == 1.0 => Some(*x),
            _ => None,
        }
    }
    let value = toml::Value::deserialize(d)?;
    let spec = match &value {
        toml::Value::Array(xs) if !xs.is_empty() => {
            xs.iter().map(one).collect::<Option<Vec<f64>>>().map(ParamSpec::List)
        }
        v => one(v).map(ParamSpec::Scalar),
    };
    spec.map(Some).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "algorithm.fit_intercept = {value}: expected true, false, or [false, true] (a sweep)"
        ))
    })
}

/// The budget keys of `[algorithm]`: the noise is calibrated to
/// (`epsilon`, `delta_priv`) or to zCDP `rho`, under `neighbouring`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RawBudget {
    /// ε of an (ε, δ) budget.
    pub epsilon: Option<ParamSpec>,
    /// δ of the (ε, δ) budget.
    pub delta_priv: Option<f64>,
    /// ρ of a zCDP budget.
    pub rho: Option<ParamSpec>,
    /// Neighbouring relation (default replace-one).
    pub neighbouring: Option<Neighbouring>,
    /// Objective perturbation below twice its floor: "auto" (the default)
    /// adds the extra ridge, "refuse" keeps λ and refuses a budget at or
    /// below the floor.
    pub extra_ridge: Option<ExtraRidge>,
}

/// Where the noise of each point comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NoiseSource<'a> {
    /// Given: σ or τ.
    Given(&'a ParamSpec),
    /// Calibrated to an (ε, δ) budget.
    Approx {
        /// ε values.
        epsilon: &'a ParamSpec,
        /// δ.
        delta_priv: f64,
        /// Relation.
        neighbouring: Neighbouring,
        /// Objective perturbation's extra-ridge policy.
        extra_ridge: ExtraRidge,
    },
    /// Calibrated to a ρ-zCDP budget.
    Zcdp {
        /// ρ values.
        rho: &'a ParamSpec,
        /// Relation.
        neighbouring: Neighbouring,
        /// Objective perturbation's extra-ridge policy.
        extra_ridge: ExtraRidge,
    },
}

impl RawAlgorithm {
    /// Read a `strategy = { file = … }` (relative to `dir`, or the current
    /// directory) into its coefficients; the file's name and its strategy,
    /// or `None` when the strategy is not a file.
    pub(crate) fn read_strategy_file(
        &mut self,
        dir: Option<&std::path::Path>,
    ) -> Result<Option<(String, Strategy)>, ConfigError> {
        let RawAlgorithm::Dpsgd { strategy, .. } = self else {
            return Ok(None);
        };
        let Some(RawStrategy::File { file }) = strategy else {
            return Ok(None);
        };
        let file = file.clone();
        let read = RawStrategy::read_file(&file, dir)?;
        *strategy = Some(RawStrategy::Given(Box::new(read)));
        Ok(Some((file, read)))
    }

    /// Read an `[algorithm]` table, refusing keys its kind does not take.
    ///
    /// ```
    /// use propdp_core::config::RawAlgorithm;
    /// let t: toml::Table = toml::from_str("kind = \"objective\"\nlambda = 1.0\nsigma = 1.0\neta = 0.1").unwrap();
    /// let e = RawAlgorithm::from_table(t).unwrap_err().to_string();
    /// assert!(e.contains("algorithm.eta") && e.contains("kind = \"dpgd\""), "{e}");
    /// ```
    pub fn from_table(table: toml::Table) -> Result<RawAlgorithm, ConfigError> {
        ALGORITHM.read(table)
    }

    /// The algorithm family.
    pub fn kind(&self) -> AlgorithmKind {
        match self {
            RawAlgorithm::Objective { .. } => AlgorithmKind::Objective,
            RawAlgorithm::Output { .. } => AlgorithmKind::Output,
            RawAlgorithm::Dpgd { .. } => AlgorithmKind::Dpgd,
            RawAlgorithm::Dpsgd { .. } => AlgorithmKind::Dpsgd,
        }
    }

    /// (λ, the given noise, the budget keys).
    fn parts(&self) -> (&ParamSpec, Option<&ParamSpec>, &RawBudget) {
        match self {
            RawAlgorithm::Objective {
                lambda, sigma, budget, ..
            }
            | RawAlgorithm::Dpgd {
                lambda, sigma, budget, ..
            }
            | RawAlgorithm::Dpsgd {
                lambda, sigma, budget, ..
            } => (lambda, sigma.as_ref(), budget),
            RawAlgorithm::Output {
                lambda, tau, budget, ..
            } => (lambda, tau.as_ref(), budget),
        }
    }

    /// Where the noise comes from: given, or one budget — refusing a noise
    /// and a budget together, two budgets, or budget keys without a budget.
    pub fn noise_source(&self) -> Result<NoiseSource<'_>, ConfigError> {
        let (_, noise, b) = self.parts();
        let noise_field = format!("algorithm.{}", self.kind().noise_param());
        let neighbouring = b.neighbouring.unwrap_or(Neighbouring::ReplaceOne);
        let extra_ridge = b.extra_ridge.unwrap_or_default();
        if let Some(rho) = &b.rho {
            if noise.is_some() {
                return Err(ConfigError::not_applicable(
                    &noise_field,
                    "with a budget rho the noise is calibrated; give one or the other",
                ));
            }
            for (field, present) in [("epsilon", b.epsilon.is_some()), ("delta_priv", b.delta_priv.is_some())] {
                if present {
                    return Err(ConfigError::not_applicable(
                        &format!("algorithm.{field}"),
                        "a budget is either rho (zCDP) or epsilon with delta_priv, not both",
                    ));
                }
            }
            return Ok(NoiseSource::Zcdp {
                rho,
                neighbouring,
                extra_ridge,
            });
        }
        if let Some(epsilon) = &b.epsilon {
            if noise.is_some() {
                return Err(ConfigError::not_applicable(
                    &noise_field,
                    "with a budget (epsilon, delta_priv) the noise is calibrated; give one or the other",
                ));
            }
            let delta_priv = match b.delta_priv {
                None => {
                    return Err(ConfigError::missing(
                        "algorithm.delta_priv",
                        "the δ of the (ε, δ) budget, 0 < δ < 1",
                    ));
                }
                Some(d) if !(d > 0.0 && d < 1.0) => {
                    return Err(ConfigError::range("algorithm.delta_priv", d, "0 < delta_priv < 1"));
                }
                Some(d) => d,
            };
            return Ok(NoiseSource::Approx {
                epsilon,
                delta_priv,
                neighbouring,
                extra_ridge,
            });
        }
        for (field, present) in [
            ("delta_priv", b.delta_priv.is_some()),
            ("neighbouring", b.neighbouring.is_some()),
            ("extra_ridge", b.extra_ridge.is_some()),
        ] {
            if present {
                return Err(ConfigError::not_applicable(
                    &format!("algorithm.{field}"),
                    "only with a budget `epsilon` (or `rho` for neighbouring and extra_ridge)",
                ));
            }
        }
        match noise {
            Some(n) => Ok(NoiseSource::Given(n)),
            None => Err(ConfigError::missing(
                &noise_field,
                &format!(
                    "{} needs {} ≥ 0, or a budget (epsilon with delta_priv, or rho)",
                    self.kind().title(),
                    self.kind().noise_param()
                ),
            )),
        }
    }

    /// The swept parameters, by name, in sweep order (outermost first): λ,
    /// the noise or budget level, then DP-GD's η and T (DP-SGD's also q, C and G).
    pub(crate) fn axes(&self) -> Result<Vec<(&'static str, &ParamSpec)>, ConfigError> {
        let (lambda, _, _) = self.parts();
        let mut v = vec![("lambda", lambda)];
        v.push(match self.noise_source()? {
            NoiseSource::Given(n) => (self.kind().noise_param(), n),
            NoiseSource::Approx { epsilon, .. } => ("epsilon", epsilon),
            NoiseSource::Zcdp { rho, .. } => ("rho", rho),
        });
        match self {
            RawAlgorithm::Dpgd {
                eta,
                steps,
                fit_intercept,
                ..
            } => {
                v.extend(fit_intercept.as_ref().map(|f| ("fit_intercept", f)));
                v.extend([("eta", eta), ("steps", steps)]);
            }
            RawAlgorithm::Dpsgd {
                eta,
                steps,
                sample_rate,
                clip,
                groups,
                fit_intercept,
                ..
            } => {
                v.extend(fit_intercept.as_ref().map(|f| ("fit_intercept", f)));
                v.extend([("eta", eta), ("steps", steps), ("sample_rate", sample_rate)]);
                v.extend(clip.as_ref().map(|c| ("clip", c)));
                v.extend(groups.as_ref().map(|g| ("groups", g)));
            }
            RawAlgorithm::Objective { fit_intercept, .. } | RawAlgorithm::Output { fit_intercept, .. } => {
                v.extend(fit_intercept.as_ref().map(|f| ("fit_intercept", f)));
            }
        }
        Ok(v)
    }

    /// The number of steps T at one sweep point (DP-GD, DP-SGD), checked to
    /// be in its table's range ([`crate::parameters`]).
    pub(crate) fn steps(&self, v: &BTreeMap<&str, f64>) -> Result<Option<usize>, ConfigError> {
        if !self.kind().is_iterative() {
            return Ok(None);
        }
        let steps = v["steps"];
        crate::parameters::check("steps", "algorithm.steps", steps)?;
        Ok(Some(steps as usize))
    }

    /// The algorithm at one sweep point's values, with noise `noise`.
    pub(crate) fn algorithm(&self, v: &BTreeMap<&str, f64>, noise: f64) -> Result<Algorithm, ConfigError> {
        let lambda = v["lambda"];
        Ok(match self {
            RawAlgorithm::Objective { .. } => Algorithm::Objective { lambda, sigma: noise },
            RawAlgorithm::Output { .. } => Algorithm::Output { lambda, tau: noise },
            RawAlgorithm::Dpgd { loss_variant, .. } => Algorithm::Dpgd {
                lambda,
                sigma: noise,
                eta: v["eta"],
                steps: self.steps(v)?.expect("DP-GD has steps"),
                loss_variant: *loss_variant,
            },
            RawAlgorithm::Dpsgd {
                loss_variant, strategy, ..
            } => Algorithm::Dpsgd {
                lambda,
                sigma: noise,
                eta: v["eta"],
                steps: self.steps(v)?.expect("DP-SGD has steps"),
                loss_variant: *loss_variant,
                sample_rate: v["sample_rate"],
                clip: v.get("clip").copied(),
                groups: match v.get("groups") {
                    Some(&g) => {
                        crate::parameters::check("groups", "algorithm.groups", g)?;
                        g as usize
                    }
                    None => 1,
                },
                strategy: match strategy {
                    Some(s) => s.at(self.steps(v)?.expect("DP-SGD has steps"))?,
                    None => Strategy::IDENTITY,
                },
            },
        })
    }
}
