//! The `[problem]` table: the model, δ, s² and (Huber) the threshold and
//! noise law. One kind per model: a key another model takes is refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::table::Kinds;
use crate::covariance::RawCovariance;
use crate::param::ParamSpec;
use crate::problem::{DataModel, Model, ModelKind, NoiseLaw};

/// The keys of `[problem]` per model.
const PROBLEM: Kinds = Kinds {
    table: "problem",
    tag: "model",
    kinds: &[
        (
            "huber",
            &["delta", "s2", "intercept?", "huber_m", "noise", "covariance?"],
        ),
        (
            "logistic",
            &[
                "delta",
                "s2",
                "intercept?",
                "covariance?",
                "data_model?",
                "balance?",
                "within?",
            ],
        ),
        ("least_squares", &["delta", "s2", "intercept?", "noise", "covariance?"]),
    ],
};

/// The keys of `problem.noise` per law.
const NOISE: Kinds = Kinds {
    table: "problem.noise",
    tag: "law",
    kinds: &[
        ("gaussian", &["sd"]),
        ("student_t", &["dof", "scale"]),
        ("laplace", &["scale"]),
        ("contaminated", &["sd", "p", "outlier_sd"]),
    ],
};

/// `[problem]` table, as written.
///
/// ```
/// use propdp_core::config::RawProblem;
/// let t: toml::Table = toml::from_str("model = \"logistic\"\ndelta = 0.5\ns2 = 1.0\nhuber_m = 1.0").unwrap();
/// let e = RawProblem::from_table(t).unwrap_err().to_string();
/// assert!(e.contains("problem.huber_m") && e.contains("model = \"huber\""), "{e}");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum RawProblem {
    /// Huber robust regression.
    Huber {
        /// δ = d/n.
        delta: ParamSpec,
        /// Prior energy s² = E(Θ²).
        s2: ParamSpec,
        /// The teacher's intercept b* (absent: none, as b* = 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intercept: Option<ParamSpec>,
        /// Huber threshold M.
        huber_m: ParamSpec,
        /// Law of the label noise.
        #[serde(deserialize_with = "noise")]
        noise: RawNoise,
        /// The feature covariance (docs/theory.md §2.4); isotropic when absent.
        #[serde(default, deserialize_with = "covariance", skip_serializing_if = "Option::is_none")]
        covariance: Option<RawCovariance>,
    },
    /// Logistic regression.
    Logistic {
        /// δ = d/n.
        delta: ParamSpec,
        /// Prior energy s² = E(Θ²).
        s2: ParamSpec,
        /// The teacher's intercept b* (absent: none, as b* = 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intercept: Option<ParamSpec>,
        /// The feature covariance (docs/theory.md §2.4); isotropic when absent.
        #[serde(default, deserialize_with = "covariance", skip_serializing_if = "Option::is_none")]
        covariance: Option<RawCovariance>,
        /// How the data are drawn (absent: the teacher's labels).
        #[serde(default, deserialize_with = "data_model", skip_serializing_if = "Option::is_none")]
        data_model: Option<DataModel>,
        /// Two clusters: p = P(y = +1) (absent: ½).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        balance: Option<ParamSpec>,
        /// Two clusters: κ², the within-class share of E‖x‖² (absent: 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        within: Option<ParamSpec>,
    },
    /// Least-squares regression (DP-GD and DP-SGD only).
    LeastSquares {
        /// δ = d/n.
        delta: ParamSpec,
        /// Prior energy s² = E(Θ²).
        s2: ParamSpec,
        /// The teacher's intercept b* (absent: none, as b* = 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intercept: Option<ParamSpec>,
        /// Law of the label noise.
        #[serde(deserialize_with = "noise")]
        noise: RawNoise,
        /// The feature covariance (docs/theory.md §2.4); isotropic when absent.
        #[serde(default, deserialize_with = "covariance", skip_serializing_if = "Option::is_none")]
        covariance: Option<RawCovariance>,
    },
}

fn noise<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RawNoise, D::Error> {
    NOISE.deserialize(d)
}

/// `problem.data_model`: `"teacher"` or `"two_cluster"`, an error naming the field otherwise.
fn data_model<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DataModel>, D::Error> {
    let value = toml::Value::deserialize(d)?;
    match value.as_str() {
        Some("teacher") => Ok(Some(DataModel::Teacher)),
        Some("two_cluster") => Ok(Some(DataModel::TwoCluster)),
        _ => Err(serde::de::Error::custom(crate::ConfigError::range(
            "problem.data_model",
            &value,
            "\"teacher\" | \"two_cluster\"",
        ))),
    }
}

fn covariance<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RawCovariance>, D::Error> {
    let value = toml::Value::deserialize(d)?;
    RawCovariance::from_value(&value)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// `serde(deserialize_with)` of the `[problem]` table.
pub(crate) fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RawProblem, D::Error> {
    let table = toml::Table::deserialize(d)?;
    RawProblem::from_table(table).map_err(serde::de::Error::custom)
}

/// Every key of `[problem]` (the model tag first, `kappa` last).
pub(crate) fn keys() -> Vec<&'static str> {
    let mut keys = PROBLEM.all_keys();
    keys.push("kappa");
    keys
}

/// `kappa` (the Sur–Candès notation for p/n) is read as `delta`; giving both is refused.
fn kappa_as_delta(mut table: toml::Table) -> Result<toml::Table, crate::ConfigError> {
    if let Some(kappa) = table.remove("kappa") {
        if table.contains_key("delta") {
            return Err(crate::ConfigError::not_applicable(
                "problem.kappa",
                "kappa is another name of delta (d/n); give one of them",
            ));
        }
        table.insert("delta".into(), kappa);
    }
    Ok(table)
}

/// `problem.balance` when absent: balanced classes.
const DEFAULT_BALANCE: ParamSpec = ParamSpec::Scalar(0.5);
/// `problem.within` when absent: class means of no share of E‖x‖² (the limit d → ∞).
const DEFAULT_WITHIN: ParamSpec = ParamSpec::Scalar(1.0);

/// `problem.noise` table, as written: one kind per law.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case")]
pub enum RawNoise {
    /// N(0, sd²).
    Gaussian {
        /// Standard deviation.
        sd: ParamSpec,
    },
    /// scale · t_dof.
    StudentT {
        /// Degrees of freedom.
        dof: ParamSpec,
        /// Scale.
        scale: ParamSpec,
    },
    /// Laplace(scale).
    Laplace {
        /// Scale.
        scale: ParamSpec,
    },
    /// (1−p)·N(0, sd²) + p·N(0, outlier_sd²).
    Contaminated {
        /// Standard deviation of the bulk.
        sd: ParamSpec,
        /// Outlier probability.
        p: ParamSpec,
        /// Standard deviation of the outliers.
        outlier_sd: ParamSpec,
    },
}

impl RawNoise {
    /// Every parameter with its config name (`noise.sd`, …).
    fn axes(&self) -> Vec<(&'static str, &ParamSpec)> {
        match self {
            RawNoise::Gaussian { sd } => vec![("noise.sd", sd)],
            RawNoise::StudentT { dof, scale } => vec![("noise.dof", dof), ("noise.scale", scale)],
            RawNoise::Laplace { scale } => vec![("noise.scale", scale)],
            RawNoise::Contaminated { sd, p, outlier_sd } => {
                vec![("noise.sd", sd), ("noise.p", p), ("noise.outlier_sd", outlier_sd)]
            }
        }
    }

    /// The law at one sweep point's values.
    fn law(&self, v: &BTreeMap<&str, f64>) -> NoiseLaw {
        match self {
            RawNoise::Gaussian { .. } => NoiseLaw::Gaussian { sd: v["noise.sd"] },
            RawNoise::StudentT { .. } => NoiseLaw::StudentT {
                dof: v["noise.dof"],
                scale: v["noise.scale"],
            },
            RawNoise::Laplace { .. } => NoiseLaw::Laplace {
                scale: v["noise.scale"],
            },
            RawNoise::Contaminated { .. } => NoiseLaw::Contaminated {
                sd: v["noise.sd"],
                p: v["noise.p"],
                outlier_sd: v["noise.outlier_sd"],
            },
        }
    }

    /// Whether the law is Gaussian.
    pub fn is_gaussian(&self) -> bool {
        matches!(self, RawNoise::Gaussian { .. })
    }
}

impl RawProblem {
    /// Read a `[problem]` table, refusing keys its model does not take;
    /// `kappa` is accepted as another name of `delta`.
    ///
    /// ```
    /// use propdp_core::config::RawProblem;
    /// let t: toml::Table = toml::from_str("model = \"logistic\"\nkappa = 0.2\ns2 = 1.0").unwrap();
    /// let RawProblem::Logistic { delta, .. } = RawProblem::from_table(t).unwrap() else { panic!() };
    /// assert_eq!(delta.values("problem.delta").unwrap(), vec![0.2]);
    /// ```
    pub fn from_table(table: toml::Table) -> Result<RawProblem, crate::ConfigError> {
        let problem: RawProblem = PROBLEM.read(kappa_as_delta(table)?)?;
        if let RawProblem::Logistic {
            data_model,
            balance,
            within,
            ..
        } = &problem
            && data_model.unwrap_or_default() == DataModel::Teacher
            && let Some(key) = [("balance", balance), ("within", within)]
                .into_iter()
                .find_map(|(k, v)| v.as_ref().map(|_| k))
        {
            return Err(crate::ConfigError::not_applicable(
                &format!("problem.{key}"),
                "only data_model = \"two_cluster\" takes it (docs/theory.md §3.6)",
            ));
        }
        Ok(problem)
    }

    /// How the data are drawn (`problem.data_model`; the teacher's labels
    /// unless a logistic problem says `"two_cluster"`).
    pub fn data_model(&self) -> DataModel {
        match self {
            RawProblem::Logistic { data_model, .. } => data_model.unwrap_or_default(),
            RawProblem::Huber { .. } | RawProblem::LeastSquares { .. } => DataModel::Teacher,
        }
    }

    /// The model family.
    pub fn kind(&self) -> ModelKind {
        match self {
            RawProblem::Huber { .. } => ModelKind::Huber,
            RawProblem::Logistic { .. } => ModelKind::Logistic,
            RawProblem::LeastSquares { .. } => ModelKind::LeastSquares,
        }
    }

    /// δ, swept innermost.
    pub fn delta(&self) -> &ParamSpec {
        match self {
            RawProblem::Huber { delta, .. }
            | RawProblem::Logistic { delta, .. }
            | RawProblem::LeastSquares { delta, .. } => delta,
        }
    }

    /// The feature covariance as written (none: isotropic).
    pub fn covariance(&self) -> Option<&RawCovariance> {
        match self {
            RawProblem::Huber { covariance, .. }
            | RawProblem::Logistic { covariance, .. }
            | RawProblem::LeastSquares { covariance, .. } => covariance.as_ref(),
        }
    }

    /// The label noise law (Huber, least squares), if any.
    pub fn noise(&self) -> Option<&RawNoise> {
        match self {
            RawProblem::Huber { noise, .. } | RawProblem::LeastSquares { noise, .. } => Some(noise),
            RawProblem::Logistic { .. } => None,
        }
    }

    /// The teacher's intercept b* as written (absent: no intercept).
    pub fn intercept(&self) -> Option<&ParamSpec> {
        match self {
            RawProblem::Huber { intercept, .. }
            | RawProblem::Logistic { intercept, .. }
            | RawProblem::LeastSquares { intercept, .. } => intercept.as_ref(),
        }
    }

    /// The parameters other than δ, by name, in sweep order (outermost
    /// first): s² and b* (if given) first.
    pub(crate) fn axes(&self) -> Vec<(&'static str, &ParamSpec)> {
        let mut v = self.model_axes();
        if let Some(b) = self.intercept() {
            v.insert(1, ("intercept", b));
        }
        if let RawProblem::Logistic { balance, within, .. } = self
            && self.data_model() == DataModel::TwoCluster
        {
            v.push(("balance", balance.as_ref().unwrap_or(&DEFAULT_BALANCE)));
            v.push(("within", within.as_ref().unwrap_or(&DEFAULT_WITHIN)));
        }
        v
    }

    /// [`RawProblem::axes`] without the intercept.
    fn model_axes(&self) -> Vec<(&'static str, &ParamSpec)> {
        match self {
            RawProblem::Huber { s2, huber_m, noise, .. } => {
                let mut v = vec![("s2", s2), ("huber_m", huber_m)];
                v.extend(noise.axes());
                v
            }
            RawProblem::Logistic { s2, .. } => vec![("s2", s2)],
            RawProblem::LeastSquares { s2, noise, .. } => {
                let mut v = vec![("s2", s2)];
                v.extend(noise.axes());
                v
            }
        }
    }

    /// The model at one sweep point's values.
    pub(crate) fn model(&self, v: &BTreeMap<&str, f64>) -> Model {
        match self {
            RawProblem::Huber { noise, .. } => Model::Huber {
                huber_m: v["huber_m"],
                noise: noise.law(v),
            },
            RawProblem::Logistic { .. } => Model::Logistic,
            RawProblem::LeastSquares { noise, .. } => Model::LeastSquares { noise: noise.law(v) },
        }
    }
}
