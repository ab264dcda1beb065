//! What a private fit is asked for: the model ([`Glm`]), the release
//! mechanism and its budget ([`Release`], [`Descent`]), and the settings
//! ([`Spec`]) an inference is run with.

use propdp_core::accountant::{ExtraRidge, Neighbouring};
use propdp_core::{Algorithm, LossVariant};
use serde::Serialize;

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

/// How θ̂ is made private.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    /// argmin Σℓ + (λ/2)‖θ‖² + σbᵀθ.
    Objective,
    /// argmin Σℓ + (λ/2)‖θ‖², plus τb.
    Output,
    /// T steps of DP-SGD (DP-GD at sample rate 1) from θ₀ = 0 with the
    /// settings of [`Spec::descent`]: θ_{t+1} = θ_t − η(Σ_{i∈B_t} clip_C(ℓ'ᵢxᵢ)
    /// + λθ_t + σξ_t), Poisson batches B_t of rate q (propdp-sim's `gd`).
    Dpsgd,
}

/// The descent of a DP-SGD release ([`Release::Dpsgd`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Descent {
    /// Steps T ≥ 1.
    pub steps: usize,
    /// Step size η > 0 (on the summed gradient).
    pub eta: f64,
    /// Poisson sample rate 0 < q ≤ 1 (1: full-batch DP-GD).
    pub sample_rate: f64,
    /// Per-example clipping norm C of ℓ'ᵢxᵢ (none: the loss's bound times
    /// row_norm is the sensitivity).
    pub clip: Option<f64>,
}

impl Descent {
    /// The DP-SGD run this descent is, at ridge λ and noise σ on the summed
    /// gradient (the standard loss): what the theory predicts, the
    /// simulation runs and the accountant charges.
    pub(crate) fn algorithm(&self, lambda: f64, sigma: f64) -> Algorithm {
        Algorithm::Dpsgd {
            lambda,
            sigma,
            eta: self.eta,
            steps: self.steps,
            loss_variant: LossVariant::Standard,
            sample_rate: self.sample_rate,
            clip: self.clip,
        }
    }
}

/// A private fit's settings, checked by [`Spec::check`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spec {
    /// The model.
    pub model: Glm,
    /// The mechanism.
    pub release: Release,
    /// Ridge λ > 0.
    pub lambda: f64,
    /// The budget ε of everything released.
    pub epsilon: f64,
    /// The budget's δ.
    pub delta_priv: f64,
    /// The neighbouring relation of the guarantee.
    #[serde(serialize_with = "relation")]
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
    /// The descent of [`Release::Dpsgd`] (required there, absent otherwise).
    pub descent: Option<Descent>,
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

fn relation<S: serde::Serializer>(n: &Neighbouring, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(n.label())
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
        positive("lambda", self.lambda)?;
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
        match (self.release, self.descent) {
            (Release::Dpsgd, None) => {
                return Err(Argument::new(
                    "steps",
                    " is needed by algorithm = \"dpsgd\" (with eta, sample_rate and optionally clip)".into(),
                ));
            }
            (Release::Dpsgd, Some(g)) => {
                if g.steps == 0 {
                    return Err(Argument::new("steps", " = 0 is invalid: allowed steps ≥ 1".into()));
                }
                positive("eta", g.eta)?;
                if !(g.sample_rate > 0.0 && g.sample_rate <= 1.0) {
                    return Err(Argument::new(
                        "sample_rate",
                        format!(" = {} is invalid: allowed 0 < sample_rate ≤ 1", g.sample_rate),
                    ));
                }
                if let Some(c) = g.clip {
                    positive("clip", c)?;
                }
            }
            (_, Some(_)) => {
                return Err(Argument::new(
                    "steps",
                    " (and eta, sample_rate, clip) apply to algorithm = \"dpsgd\" only".into(),
                ));
            }
            (_, None) => {}
        }
        if self.intercept && matches!(self.model, Glm::Huber { .. }) && self.release == Release::Dpsgd {
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

    pub(super) fn is_objective(&self) -> bool {
        self.release == Release::Objective
    }
}
