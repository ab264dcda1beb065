//! Statistical models, their noise laws, designs and priors
//! (docs/theory.md §1).

use serde::{Deserialize, Serialize};

use super::{nonneg, positive};
use crate::error::ConfigError;

/// Law of the regression noise ε. Every law here is a Gaussian scale mixture
/// ε = S·G, which the theory exploits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case")]
pub enum NoiseLaw {
    /// N(0, sd²).
    Gaussian {
        /// Standard deviation.
        sd: f64,
    },
    /// scale · t_dof.
    StudentT {
        /// Degrees of freedom.
        dof: f64,
        /// Scale.
        scale: f64,
    },
    /// Laplace with density e^{−|x|/scale}/(2·scale).
    Laplace {
        /// Scale.
        scale: f64,
    },
    /// (1−p)·N(0, sd²) + p·N(0, outlier_sd²).
    Contaminated {
        /// Standard deviation of the bulk.
        sd: f64,
        /// Probability of an outlier.
        p: f64,
        /// Standard deviation of the outliers.
        outlier_sd: f64,
    },
}

/// The law in the config's spelling, `{ law = "student_t", dof = 3, scale = 0.5 }`
/// (what an error message shows a user).
///
/// ```
/// use propdp_core::NoiseLaw;
/// let t = NoiseLaw::StudentT { dof: 3.0, scale: 0.5 };
/// assert_eq!(t.to_string(), r#"{ law = "student_t", dof = 3, scale = 0.5 }"#);
/// ```
impl std::fmt::Display for NoiseLaw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            NoiseLaw::Gaussian { sd } => write!(f, "{{ law = \"gaussian\", sd = {sd} }}"),
            NoiseLaw::StudentT { dof, scale } => {
                write!(f, "{{ law = \"student_t\", dof = {dof}, scale = {scale} }}")
            }
            NoiseLaw::Laplace { scale } => write!(f, "{{ law = \"laplace\", scale = {scale} }}"),
            NoiseLaw::Contaminated { sd, p, outlier_sd } => write!(
                f,
                "{{ law = \"contaminated\", sd = {sd}, p = {p}, outlier_sd = {outlier_sd} }}"
            ),
        }
    }
}

impl NoiseLaw {
    /// Variance of ε, or `None` when infinite (Student-t with dof ≤ 2).
    ///
    /// ```
    /// use propdp_core::NoiseLaw;
    /// assert_eq!(NoiseLaw::Laplace { scale: 1.0 }.variance(), Some(2.0));
    /// assert_eq!(NoiseLaw::StudentT { dof: 2.0, scale: 1.0 }.variance(), None);
    /// ```
    pub fn variance(&self) -> Option<f64> {
        match *self {
            NoiseLaw::Gaussian { sd } => Some(sd * sd),
            NoiseLaw::StudentT { dof, scale } => (dof > 2.0).then(|| scale * scale * dof / (dof - 2.0)),
            NoiseLaw::Laplace { scale } => Some(2.0 * scale * scale),
            NoiseLaw::Contaminated { sd, p, outlier_sd } => Some((1.0 - p) * sd * sd + p * outlier_sd * outlier_sd),
        }
    }

    /// Range checks, naming the field (`noise.sd`, …).
    pub fn check(&self) -> Result<(), ConfigError> {
        match *self {
            NoiseLaw::Gaussian { sd } => nonneg("noise.sd", sd),
            NoiseLaw::StudentT { dof, scale } => {
                positive("noise.dof", dof)?;
                positive("noise.scale", scale)
            }
            NoiseLaw::Laplace { scale } => positive("noise.scale", scale),
            NoiseLaw::Contaminated { sd, p, outlier_sd } => {
                nonneg("noise.sd", sd)?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(ConfigError::range("noise.p", p, "0 ≤ p ≤ 1"));
                }
                positive("noise.outlier_sd", outlier_sd)
            }
        }
    }

    /// The law's parameters by config name (`noise.sd`, …).
    pub fn params(&self) -> Vec<(&'static str, f64)> {
        match *self {
            NoiseLaw::Gaussian { sd } => vec![("noise.sd", sd)],
            NoiseLaw::StudentT { dof, scale } => vec![("noise.dof", dof), ("noise.scale", scale)],
            NoiseLaw::Laplace { scale } => vec![("noise.scale", scale)],
            NoiseLaw::Contaminated { sd, p, outlier_sd } => {
                vec![("noise.sd", sd), ("noise.p", p), ("noise.outlier_sd", outlier_sd)]
            }
        }
    }

    /// Config name of the law.
    pub fn name(&self) -> &'static str {
        match self {
            NoiseLaw::Gaussian { .. } => "gaussian",
            NoiseLaw::StudentT { .. } => "student_t",
            NoiseLaw::Laplace { .. } => "laplace",
            NoiseLaw::Contaminated { .. } => "contaminated",
        }
    }
}

/// Law of the rows xᵢ (entries of variance 1/d).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// N(0, 1/d) entries.
    Gaussian,
    /// ±1/√d entries (‖xᵢ‖ = 1 exactly).
    Rademacher,
    /// Gaussian rows projected onto the unit ball.
    GaussianProjected,
}

/// Law of the coordinates of θ*, all with E(Θ²) = s².
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "law", rename_all = "snake_case", deny_unknown_fields)]
pub enum Prior {
    /// N(0, s²).
    #[default]
    Gaussian,
    /// ±s with probability ½ each.
    TwoPoint,
    /// N(0, s²/p) with probability p, else 0.
    Sparse {
        /// Probability of a non-zero coordinate.
        p: f64,
    },
}

/// How the data of a classification problem are drawn (`problem.data_model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataModel {
    /// Labels from the teacher's field xᵀθ* (docs/theory.md §1).
    #[default]
    Teacher,
    /// Two Gaussian clusters x = (y − (2p − 1))·μ + g (centred), labels independent of g
    /// (docs/theory.md §3.6).
    TwoCluster,
}

/// The family of a model, by its config name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Huber robust linear regression.
    Huber,
    /// Logistic regression.
    Logistic,
    /// Least-squares linear regression (DP-GD and DP-SGD only).
    LeastSquares,
}

impl ModelKind {
    /// Every model, in config-name order.
    pub const ALL: [ModelKind; 3] = [ModelKind::Huber, ModelKind::Logistic, ModelKind::LeastSquares];

    /// Config name: `huber`, `logistic` or `least_squares`.
    ///
    /// ```
    /// use propdp_core::ModelKind;
    /// assert_eq!(ModelKind::Logistic.name(), "logistic");
    /// assert_eq!("huber".parse::<ModelKind>(), Ok(ModelKind::Huber));
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Huber => "huber",
            ModelKind::Logistic => "logistic",
            ModelKind::LeastSquares => "least_squares",
        }
    }

    /// Name for figure titles.
    pub fn title(self) -> &'static str {
        match self {
            ModelKind::Huber => "Huber robust regression",
            ModelKind::Logistic => "Logistic regression",
            ModelKind::LeastSquares => "Least-squares regression",
        }
    }

    /// β, the bound 0 ≤ f'' ≤ β of the per-sample loss in the fitted field
    /// (Huber, least squares: 1; logistic: sigmoid' ≤ 1/4).
    pub fn curvature(self) -> f64 {
        match self {
            ModelKind::Huber | ModelKind::LeastSquares => 1.0,
            ModelKind::Logistic => 0.25,
        }
    }
}

impl std::fmt::Display for ModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ModelKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown model {s:?}: allowed \"huber\", \"logistic\", \"least_squares\""))
    }
}

/// Statistical model (docs/theory.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Model {
    /// y = xᵀθ* + ε, loss ρ_M(y − xᵀθ) (Huber, threshold M).
    Huber {
        /// The Huber threshold M.
        huber_m: f64,
        /// The law of ε.
        noise: NoiseLaw,
    },
    /// P(y = +1 | x) = sigmoid(xᵀθ*), loss log(1 + exp(−y xᵀθ)).
    Logistic,
    /// y = xᵀθ* + ε, loss (y − xᵀθ)²/2. Its gradient is unbounded (not
    /// Lipschitz), so it is private only through DP-SGD's clipping.
    LeastSquares {
        /// The law of ε.
        noise: NoiseLaw,
    },
}

impl Model {
    /// The model's family.
    pub fn kind(&self) -> ModelKind {
        match self {
            Model::Huber { .. } => ModelKind::Huber,
            Model::Logistic => ModelKind::Logistic,
            Model::LeastSquares { .. } => ModelKind::LeastSquares,
        }
    }

    /// Config name: `huber`, `logistic` or `least_squares`.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// L, the bound |f'| ≤ L of the per-sample loss in the fitted field: the
    /// Huber threshold M, 1 for the logistic loss, ∞ for least squares. With
    /// ‖x‖ ≤ R the per-sample gradient has norm ≤ LR.
    ///
    /// ```
    /// use propdp_core::{Model, NoiseLaw};
    /// let huber = Model::Huber { huber_m: 2.0, noise: NoiseLaw::Gaussian { sd: 1.0 } };
    /// assert_eq!((huber.lipschitz(), huber.curvature()), (2.0, 1.0));
    /// assert_eq!((Model::Logistic.lipschitz(), Model::Logistic.curvature()), (1.0, 0.25));
    /// ```
    pub fn lipschitz(&self) -> f64 {
        match *self {
            Model::Huber { huber_m, .. } => huber_m,
            Model::Logistic => 1.0,
            Model::LeastSquares { .. } => f64::INFINITY,
        }
    }

    /// β, the bound 0 ≤ f'' ≤ β ([`ModelKind::curvature`]).
    pub fn curvature(&self) -> f64 {
        self.kind().curvature()
    }

    /// The accountant's mechanism of `kind` for this model's loss constants
    /// (L, β) under `neighbouring`.
    ///
    /// ```
    /// use propdp_core::Model;
    /// use propdp_core::accountant::{MechanismKind, Neighbouring};
    /// let m = Model::Logistic.mechanism(MechanismKind::Dpgd { steps: 10 }, Neighbouring::ReplaceOne);
    /// assert_eq!((m.lipschitz, m.curvature), (1.0, 0.25));
    /// ```
    pub fn mechanism(
        &self,
        kind: crate::accountant::MechanismKind,
        neighbouring: crate::accountant::Neighbouring,
    ) -> crate::accountant::Mechanism {
        crate::accountant::Mechanism::new(kind, self.lipschitz(), self.curvature(), neighbouring)
    }

    /// Range checks of the model's parameters, naming the field.
    pub fn check(&self) -> Result<(), ConfigError> {
        match self {
            Model::Huber { huber_m, noise } => {
                crate::parameters::check("huber_m", "problem.huber_m", *huber_m)?;
                noise.check()
            }
            Model::LeastSquares { noise } => noise.check(),
            Model::Logistic => Ok(()),
        }
    }
}
