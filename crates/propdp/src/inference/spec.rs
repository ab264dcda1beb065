//! What a private fit is asked for: the model ([`Glm`]), the algorithm
//! releasing θ̂ and its budget, and the settings ([`Spec`]) an inference is
//! run with.

use propdp_core::accountant::{ExtraRidge, Neighbouring};
use propdp_core::{Algorithm, LossVariant, Shape};
use serde::{Serialize, Serializer};

use crate::error::Argument;

/// The model fitted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "model")]
pub enum Glm {
    /// Logistic regression on labels ±1 (or 0/1).
    Logistic,
    /// Huber regression with threshold M.
    Huber {
        /// The threshold M.
        m: f64,
    },
}

/// A private fit's settings, checked by [`Spec::check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// The model.
    pub model: Glm,
    /// How θ̂ is made private, with its ridge λ > 0: objective perturbation
    /// (argmin Σℓ + (λ/2)‖θ‖² + σbᵀθ), output perturbation (the minimiser
    /// plus τb), or T steps of DP-SGD on the standard loss from θ₀ = 0,
    /// θ_{t+1} = θ_t − η(Σ_{i∈B_t} clip_C(ℓ'ᵢxᵢ) + λθ_t + σξ_t), Poisson
    /// batches B_t of rate q (q = 1: full-batch DP-GD; propdp-sim's `gd`).
    /// Its noise (σ or τ) is 0: the budget calibrates it ([`super::release::plan`]).
    pub algorithm: Algorithm,
    /// The budget ε of everything released.
    pub epsilon: f64,
    /// The budget's δ.
    pub delta_priv: f64,
    /// The neighbouring relation of the guarantee.
    pub neighbouring: Neighbouring,
    /// Rows are projected onto ‖x‖ ≤ row_norm.
    pub row_norm: f64,
    /// Huber: the label noise's law, if known. Then, like logistic, the one
    /// unknown is s², read from ‖θ̂‖²/d for free (no residual statistics are
    /// released), and output perturbation is served too.
    pub noise: Option<propdp_core::NoiseLaw>,
    /// The share of the rows held out of the fit, 0 ≤ holdout < 1, on
    /// which the test error of θ̂ is released (0: none; [`super::test_error`]).
    pub holdout: f64,
    /// Huber: the clip B of the held-out squared error (default
    /// [`super::test_error::default_clip`]).
    pub test_clip: Option<f64>,
    /// Objective perturbation whose floor exceeds half of ε: add the extra
    /// ridge Δ that halves it (`Auto`, the standard algorithm) or refuse.
    pub extra_ridge: ExtraRidge,
    /// Standardise the columns by private, charged means and standard
    /// deviations before the projection ([`super::standardize`]).
    pub standardize: bool,
    /// Fit an intercept, a learned constant feature c (docs/theory.md §6,
    /// *With an intercept*): objective and output perturbation put it at c = row_norm,
    /// penalised by λ like θ, so the mechanism's bound holds for rows of
    /// norm √2·row_norm (its ridge is O(1/n) of the loss: in the limit the
    /// fit is the unpenalised one of the fixed point); DP-SGD at c = 1/√d,
    /// unpenalised and clipped with θ's gradient. A logistic teacher's
    /// intercept is read from the released mean label; Huber's is recovered
    /// exactly and changes nothing in θ̂'s law. Not for Huber DP-SGD. The
    /// classical interval (below [`super::MIN_FEATURES`]) always has one.
    pub intercept: bool,
}

fn relation<S: Serializer>(n: &Neighbouring, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(n.label())
}

/// The spec as a report writes it: the algorithm as `release` (its name),
/// `lambda` and, for DP-SGD, `descent` (steps, eta, sample_rate, clip).
#[derive(Serialize)]
struct Written<'a> {
    model: &'a Glm,
    release: &'static str,
    lambda: f64,
    epsilon: f64,
    delta_priv: f64,
    #[serde(serialize_with = "relation")]
    neighbouring: &'a Neighbouring,
    row_norm: f64,
    noise: &'a Option<propdp_core::NoiseLaw>,
    holdout: f64,
    test_clip: Option<f64>,
    descent: Option<WrittenDescent>,
    extra_ridge: &'a ExtraRidge,
    standardize: bool,
    intercept: bool,
}

/// A DP-SGD release's descent as a report writes it.
#[derive(Serialize)]
struct WrittenDescent {
    steps: usize,
    eta: f64,
    sample_rate: f64,
    clip: Option<f64>,
}

impl Serialize for Spec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let descent = match self.algorithm {
            Algorithm::Objective { .. } | Algorithm::Output { .. } => None,
            Algorithm::Dpgd { steps, eta, .. } => Some(WrittenDescent {
                steps,
                eta,
                sample_rate: 1.0,
                clip: None,
            }),
            Algorithm::Dpsgd {
                steps,
                eta,
                sample_rate,
                clip,
                ..
            } => Some(WrittenDescent {
                steps,
                eta,
                sample_rate,
                clip,
            }),
        };
        Written {
            model: &self.model,
            release: self.algorithm.name(),
            lambda: self.algorithm.lambda(),
            epsilon: self.epsilon,
            delta_priv: self.delta_priv,
            neighbouring: &self.neighbouring,
            row_norm: self.row_norm,
            noise: &self.noise,
            holdout: self.holdout,
            test_clip: self.test_clip,
            descent,
            extra_ridge: &self.extra_ridge,
            standardize: self.standardize,
            intercept: self.intercept,
        }
        .serialize(s)
    }
}

impl Spec {
    /// Every setting in range, or the argument at fault.
    pub fn check(&self) -> Result<(), Argument> {
        let positive = |name: &'static str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(Argument::new(
                    name,
                    format!(" = {v} is invalid: allowed 0 < {name} < ∞"),
                ))
            }
        };
        positive("lambda", self.algorithm.lambda())?;
        positive("epsilon", self.epsilon)?;
        positive("row_norm", self.row_norm)?;
        if let Glm::Huber { m } = self.model {
            positive("huber_m", m)?;
        }
        if !(self.holdout >= 0.0 && self.holdout < 1.0) {
            return Err(Argument::new(
                "holdout",
                format!(" = {} is invalid: allowed 0 ≤ holdout < 1", self.holdout),
            ));
        }
        if let Some(b) = self.test_clip {
            if self.model == Glm::Logistic {
                return Err(Argument::new(
                    "test_clip",
                    " applies to the Huber model only (the logistic test error is the 0–1 error)".into(),
                ));
            }
            positive("test_clip", b)?;
        }
        if self.noise.is_some() && self.model == Glm::Logistic {
            return Err(Argument::new(
                "noise",
                " applies to the Huber model only (logistic labels have no noise law to give)".into(),
            ));
        }
        match self.algorithm {
            Algorithm::Objective { .. } | Algorithm::Output { .. } => {}
            Algorithm::Dpsgd {
                eta,
                steps,
                loss_variant,
                sample_rate,
                clip,
                ..
            } => {
                if steps == 0 {
                    return Err(Argument::new("steps", " = 0 is invalid: allowed steps ≥ 1".into()));
                }
                positive("eta", eta)?;
                if !(sample_rate > 0.0 && sample_rate <= 1.0) {
                    return Err(Argument::new(
                        "sample_rate",
                        format!(" = {sample_rate} is invalid: allowed 0 < sample_rate ≤ 1"),
                    ));
                }
                if let Some(c) = clip {
                    positive("clip", c)?;
                }
                if loss_variant != LossVariant::Standard {
                    return Err(Argument::new(
                        "loss_variant",
                        " = \"conditional\" is invalid: allowed \"standard\" (the private fit descends the \
                         model's own loss; the conditional one needs the teacher)"
                            .into(),
                    ));
                }
            }
            Algorithm::Dpgd { .. } => {
                return Err(Argument::new(
                    "algorithm",
                    " = \"dpgd\" is invalid: allowed \"objective\", \"output\", \"dpsgd\" (DP-GD is \"dpsgd\" at \
                     sample_rate = 1)"
                        .into(),
                ));
            }
        }
        let (noise, name) = (self.algorithm.noise(), self.algorithm.kind().noise_param());
        if noise != 0.0 {
            return Err(Argument::new(
                name,
                format!(" = {noise} is invalid: allowed 0 (the budget epsilon calibrates the noise)"),
            ));
        }
        if self.intercept && matches!(self.model, Glm::Huber { .. }) && self.is_descent() {
            return Err(Argument::new(
                "intercept",
                " is not served for Huber DP-SGD: its T steps have not reached the teacher's intercept, whose \
                 value the state evolution needs and unbounded labels do not release; centre the labels, or use \
                 algorithm = \"objective\" or \"output\""
                    .into(),
            ));
        }
        if !(self.delta_priv > 0.0 && self.delta_priv < 1.0) {
            return Err(Argument::new(
                "delta_priv",
                format!(" = {} is invalid: allowed 0 < delta_priv < 1", self.delta_priv),
            ));
        }
        Ok(())
    }

    /// The default of [`Spec::intercept`]: logistic fits one (real labels
    /// are rarely balanced, and without one a mean label off 0 is refused),
    /// Huber none (its labels are centred by the user, and DP-SGD does not
    /// serve one).
    pub fn default_intercept(model: Glm) -> bool {
        model == Glm::Logistic
    }

    /// The ridge λ.
    pub fn lambda(&self) -> f64 {
        self.algorithm.lambda()
    }

    /// Whether θ̂ is released by gradient steps (DP-SGD), not as a
    /// perturbed minimiser.
    pub(super) fn is_descent(&self) -> bool {
        match self.algorithm.shape() {
            Shape::Static { .. } => false,
            Shape::Descent(_) => true,
        }
    }

    /// The same spec at another ridge λ.
    pub(super) fn with_lambda(&self, lambda: f64) -> Spec {
        Spec {
            algorithm: self.algorithm.with_lambda(lambda),
            ..*self
        }
    }
}
