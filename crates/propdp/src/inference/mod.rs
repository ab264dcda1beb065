//! Private inference in the proportional regime: confidence intervals for
//! the coefficients θ* of a GLM fitted privately — objective or output
//! perturbation of a logistic or Huber model with ridge λ, or T steps of
//! DP-GD/DP-SGD (α and σ_eff then from the state evolution) — that keep their
//! coverage when d/n is not small (docs/inference.md; the derivation in
//! docs/theory.md §6).
//!
//! For rows x ~ N(0, I/d) the released estimate is, per coordinate and per
//! fixed contrast (not only on average: a rotation fixing θ* leaves the
//! data's law unchanged and maps θ̂ to its rotation),
//!
//!   θ̂ ≈ α·θ* + σ_eff·Z,  Z ~ N(0, I_d),
//!
//! with α (the bias factor) and σ_eff from the fixed point. The classical
//! interval, centred at θ̂, misses α ≠ 1; this one is
//!
//!   θ*_j ∈ θ̂_j/α̂ ± z·√(σ̂_eff² + r²α̂²·θ*_j²)/α̂,  r = min(se(α̂)/α̂, 1),
//!
//! θ*_j² estimated by its posterior second moment under θ*_j ~ N(0, ŝ²),
//! or where θ̂_j stands out of the noise by max(0, θ̂_j² − σ̂_eff²)/α̂² (the
//! same for a contrast ⟨a, θ*⟩): the error of α̂, shared by the
//! coordinates of one fit, enters through (α − α̂)θ*_j and is carried into
//! the width by the delta method, its relative size capped at 1
//! ([`MAX_RELATIVE_ERROR`]). The nuisances come from what the
//! release makes public ([`nuisance`]): for logistic, ‖θ̂‖²/d (free, and
//! the label sum, released to check the no-intercept model); for
//! Huber, two residual statistics released by the Gaussian mechanism and
//! charged in the same certified ledger as θ̂ ([`release`]).
//!
//! # References
//! - Chaudhuri, Monteleoni, Sarwate (2011), *Differentially private
//!   empirical risk minimization*, JMLR (objective and output perturbation).
//! - Sur, Candès (2019), *A modern maximum-likelihood theory for
//!   high-dimensional logistic regression*, PNAS (the debiased interval).
//! - Celentano, Montanari, Wei (2023), *The Lasso with general Gaussian
//!   designs with applications to hypothesis testing*, AoS (per-coordinate
//!   normality of regularised estimators).

pub mod deblur;
pub mod nuisance;
pub mod release;
pub mod test_error;
pub mod whitening;

use nalgebra::{DMatrix, DVector};
use propdp_core::accountant::Neighbouring;
use propdp_core::loss::Loss;
use propdp_core::{Algorithm, Model};
use propdp_sim::objective::Objective;
use propdp_theory::solve::TheorySolver;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::error::Argument;
pub use nuisance::Nuisance;
pub use test_error::TestError;
pub use whitening::Whitening;

/// The fewest features an interval is given for: the nuisances' error is
/// O(d^-1/2) and the fixed point a large-d law.
pub const MIN_FEATURES: usize = 200;

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
    /// which the test error of θ̂ is released (0: none; [`test_error`]).
    pub holdout: f64,
    /// Huber: the clip B of the held-out squared error (default
    /// [`test_error::default_clip`]).
    pub test_clip: Option<f64>,
    /// The descent of [`Release::Dpsgd`] (required there, absent otherwise).
    pub descent: Option<Descent>,
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
        if !(self.delta_priv > 0.0 && self.delta_priv < 1.0) {
            return Err(Argument::new(
                "delta_priv",
                format!(" = {} is invalid: allowed 0 < delta_priv < 1", self.delta_priv),
            ));
        }
        Ok(())
    }

    fn is_objective(&self) -> bool {
        self.release == Release::Objective
    }
}

/// Why no interval is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Fewer than [`MIN_FEATURES`] features.
    TooFewFeatures,
    /// Logistic labels near separability: the fixed point has no solution.
    NearSeparable,
    /// The nuisances do not determine α > 0.
    Unidentified,
    /// Huber output perturbation: its residual statistics would need the
    /// label noise's law.
    NoiseLawNeeded,
    /// Labels not of the model (logistic: ±1 or 0/1).
    Labels,
    /// Logistic labels whose released mean is far from 0: the model has
    /// no intercept.
    UnbalancedLabels,
}

/// A refused inference: the reason, and what was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no valid interval ({reason:?}): {detail}")]
pub struct Refusal {
    /// Why.
    pub reason: Reason,
    /// The values that decided it and what to change.
    pub detail: String,
}

impl Refusal {
    pub(crate) fn new(reason: Reason, detail: String) -> Self {
        Refusal { reason, detail }
    }
}

/// What the release certifies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Privacy {
    /// The certified ε of everything released (the upper end of the
    /// accountant's bracket).
    pub epsilon: f64,
    /// A lower bound on that ε (the bracket's lower end).
    pub epsilon_lower: f64,
    /// δ.
    pub delta: f64,
    /// "replace-one" or "add/remove-one".
    pub neighbouring: &'static str,
    /// What was released, in the ledger's order.
    pub releases: Vec<String>,
}

/// The released residual statistics of a Huber fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Residuals {
    /// P̂, the fraction of residuals inside ±M.
    pub inside: f64,
    /// β̂², the mean clipped squared residual.
    pub beta2: f64,
    /// The standard deviation of each release's noise (P̂, β̂²).
    pub noise_sd: (f64, f64),
    /// Output perturbation: the largest blur of a residual at θ̂ by its
    /// noise, τR/M, which the statistics were de-blurred from
    /// ([`deblur::alpha_bias`]); 0 for objective perturbation.
    pub blur: f64,
}

/// One private fit and its intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inference {
    /// The settings.
    pub spec: Spec,
    /// The released estimate θ̂, in the rows' coordinates.
    pub params: Vec<f64>,
    /// θ̂ in the coordinates of the fit (whitened by a public covariance:
    /// Σ^{1/2}θ̂; else θ̂ itself).
    #[serde(skip)]
    pub fitted: Vec<f64>,
    /// Σ^{-1/2} of the public covariance the rows were whitened by, if any
    /// ([`fit_whitened`]).
    #[serde(skip)]
    pub whitening: Option<Whitening>,
    /// Whether the rows were whitened by a public covariance.
    pub whitened: bool,
    /// The nuisances α̂, σ̂_eff, ŝ² and their errors.
    pub nuisance: Nuisance,
    /// σ (objective) or τ (output) of the estimator's noise.
    pub noise: f64,
    /// The residual statistics released (Huber objective perturbation).
    pub residuals: Option<Residuals>,
    /// The test error released on the held-out rows (holdout > 0).
    pub test_error: Option<TestError>,
    /// What the release certifies.
    pub privacy: Privacy,
    /// Rows fitted (without the held-out ones).
    pub n: usize,
    /// Features.
    pub d: usize,
    /// Rows projected onto the ball ‖x‖ ≤ row_norm.
    pub projected: usize,
    /// The optimiser's final ‖∇F‖/√d.
    pub grad_norm: f64,
    /// The seed of the noise draws.
    pub seed: u64,
}

/// An interval for one quantity: a linear contrast ⟨a, θ*⟩, the test error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The estimate (a contrast: ⟨a, θ̂⟩/α̂).
    pub estimate: f64,
    /// Its standard error.
    pub se: f64,
    /// The interval's ends.
    pub lower: f64,
    /// See `lower`.
    pub upper: f64,
}

/// z_{1 − a/2}, or the argument `alpha` at fault.
fn quantile(alpha: f64) -> Result<f64, Argument> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Argument::new(
            "alpha",
            format!(" = {alpha} is invalid: allowed 0 < alpha < 1"),
        ));
    }
    Ok(Normal::standard().inverse_cdf(1.0 - alpha / 2.0))
}

impl Inference {
    /// θ̂/α̂, the debiased estimate (with a public covariance:
    /// Σ^{-1/2}θ̂'/α̂ from the whitened fit θ̂').
    pub fn debiased(&self) -> Vec<f64> {
        let fitted: Vec<f64> = self.fitted.iter().map(|t| t / self.nuisance.alpha).collect();
        match &self.whitening {
            Some(w) => w.apply(&fitted),
            None => fitted,
        }
    }

    /// The interval ⟨a, θ̂'⟩/α̂ ± z·se of a contrast `a` of the fit's own
    /// coordinates.
    fn interval_in_fit(&self, a: &[f64], z: f64) -> Interval {
        let norm2: f64 = a.iter().map(|v| v * v).sum();
        let x: f64 = a.iter().zip(&self.fitted).map(|(a, t)| a * t).sum();
        let estimate = x / self.nuisance.alpha;
        let se = self.se(self.energy(x, norm2), norm2);
        Interval {
            estimate,
            se,
            lower: estimate - z * se,
            upper: estimate + z * se,
        }
    }

    /// The standard error of θ̂_j/α̂ at a coefficient whose square is
    /// estimated by `energy`.
    fn se(&self, energy: f64, norm2: f64) -> f64 {
        let Nuisance {
            alpha,
            alpha_se,
            sigma_eff,
            sigma_eff_se,
            ..
        } = self.nuisance;
        let relative = (alpha_se / alpha).min(MAX_RELATIVE_ERROR);
        let noise2 = sigma_eff * sigma_eff + sigma_eff_se * sigma_eff_se;
        (noise2 * norm2 + relative * relative * alpha * alpha * energy).sqrt() / alpha
    }

    /// The estimated square of a contrast ⟨a, θ*⟩ from x = ⟨a, θ̂⟩, ‖a‖² =
    /// `norm2` (a coordinate: a = e_j). Where x stands out of the noise
    /// (|x| > [`SIGNAL_Z`]·σ̂_eff‖a‖: a large coordinate, a contrast aligned
    /// with θ*), the clipped unbiased estimate (x² − σ̂_eff²‖a‖²)/α̂²;
    /// below, the posterior second moment under the working law
    /// ⟨a, θ*⟩ ~ N(0, ŝ²‖a‖²), which stays near ŝ²‖a‖² where the noise swamps
    /// the signal — the unbiased estimate's clipping overshoots there and
    /// widened the intervals to 98% coverage for a 95% level.
    fn energy(&self, x: f64, norm2: f64) -> f64 {
        let Nuisance {
            alpha, sigma_eff, s2, ..
        } = self.nuisance;
        let noise2 = sigma_eff * sigma_eff * norm2;
        let unbiased = ((x * x - noise2) / (alpha * alpha)).max(0.0);
        let prior = s2 * norm2;
        let total = alpha * alpha * prior + noise2;
        let posterior = if total > 0.0 {
            let mean = alpha * prior * x / total;
            mean * mean + prior * noise2 / total
        } else {
            0.0
        };
        if x * x > SIGNAL_Z * SIGNAL_Z * noise2 {
            unbiased.max(posterior)
        } else {
            posterior
        }
    }

    /// The standard error of each coordinate's debiased estimate (with a
    /// public covariance, θ*_j = ⟨Σ^{-1/2}e_j, θ'*⟩ is a contrast of the
    /// whitened fit).
    pub fn standard_errors(&self) -> Vec<f64> {
        match &self.whitening {
            Some(w) => (0..self.d).map(|j| self.interval_in_fit(&w.row(j), 0.0).se).collect(),
            None => self.fitted.iter().map(|&t| self.se(self.energy(t, 1.0), 1.0)).collect(),
        }
    }

    /// The (1 − alpha) interval of every θ*_j: (lower, upper).
    pub fn conf_int(&self, alpha: f64) -> Result<Vec<(f64, f64)>, Argument> {
        let z = quantile(alpha)?;
        Ok(self
            .debiased()
            .iter()
            .zip(self.standard_errors())
            .map(|(&t, se)| (t - z * se, t + z * se))
            .collect())
    }

    /// The (1 − alpha) interval of ⟨a, θ*⟩ (the delta method carries α̂'s
    /// error, which a contrast aligned with θ* multiplies by up to √d).
    pub fn contrast(&self, a: &[f64], alpha: f64) -> Result<Interval, Argument> {
        if a.len() != self.d {
            return Err(Argument::new(
                "a",
                format!(" has {} entries; the model has d = {} coefficients", a.len(), self.d),
            ));
        }
        if a.iter().any(|v| !v.is_finite()) || a.iter().all(|&v| v == 0.0) {
            return Err(Argument::new("a", " must be finite and not all zero".into()));
        }
        let z = quantile(alpha)?;
        Ok(match &self.whitening {
            Some(w) => self.interval_in_fit(&w.apply(a), z),
            None => self.interval_in_fit(a, z),
        })
    }

    /// The (1 − alpha) interval of θ̂'s population test error, from the
    /// rows held out of the fit ([`test_error`]); an argument error when
    /// none were (holdout = 0).
    pub fn test_error_int(&self, alpha: f64) -> Result<Interval, Argument> {
        match &self.test_error {
            Some(t) => t.interval(alpha),
            None => Err(Argument::new(
                "holdout",
                " = 0: the test error's interval needs rows held out of the fit; fit with holdout > 0 (e.g. 0.2)"
                    .into(),
            )),
        }
    }
}

/// The largest relative error of α̂ the intervals carry. The centre's
/// error is (α − α̂)θ*_j = (1 − α̂/α)·αθ*_j: a bias factor underestimated
/// (where q(s²) saturates and ŝ² runs to the search's end, α̂ → 0) moves it
/// by at most the signal part αθ*_j, whose energy ‖θ̂‖²/d − σ̂_eff² is well
/// estimated even there; the delta method's se(α̂)/α̂ is unbounded as α̂ → 0
/// and would widen those intervals far past their level (measured: 100%
/// coverage on such fits, 97% on average for a 95% interval).
pub const MAX_RELATIVE_ERROR: f64 = 1.0;

/// Standard deviations of the noise beyond which a contrast of θ̂ counts as
/// signal (see `Inference::energy`). Measured (logistic, s² = 4, d = 400, 60
/// data sets): at 3 the widest cases covered 96.4% for a 95% level, at 4
/// 96.0% with the large coordinates at 94–96%; with the posterior alone the
/// large coordinates fell to 94.0% (δ = 0.2, ε = 8).
pub const SIGNAL_Z: f64 = 4.0;

/// Standard deviations (sampling and privacy noise) by which the released
/// mean of logistic labels may miss 0 before the fit is refused
/// ([`Reason::UnbalancedLabels`]); a false refusal has probability 6e-7. At
/// 4 (6e-5) one data set in the validation's ~6000 fits was refused (n = 200,
/// ε = 32: its labels' mean −0.295 was 4.1 standard deviations from 0) — a
/// study of thousands of fits would meet one; an intercept moves the mean by
/// far more (at n = 400 a mean label of 0.25 is 5 standard deviations).
pub const LABEL_SDS: f64 = 5.0;

/// The key of the inference's random streams ([`propdp_sim::rng::stream`]).
const STREAM: u64 = 0x1_F3E5;

/// Fits `spec`'s model privately to the n × d rows (`rows`, row-major) and
/// labels `y`, and estimates the nuisances of its intervals; `seed` fixes
/// the noise (a random one when `None`, recorded in the result).
pub fn fit(rows: &[f64], n: usize, d: usize, y: &[f64], spec: &Spec, seed: Option<u64>) -> crate::Result<Inference> {
    spec.check()?;
    if rows.len() != n * d || y.len() != n || n < 2 {
        return Err(Argument::new(
            "y",
            format!(
                " has {} labels for {} rows of {d} features ({} values): one label per row, at least two rows",
                y.len(),
                n,
                rows.len()
            ),
        )
        .into());
    }
    if d < MIN_FEATURES {
        return Err(refused(Refusal::new(
            Reason::TooFewFeatures,
            format!(
                "d = {d} features, below {MIN_FEATURES}: the intervals rest on large-d laws whose nuisance error is \
                 O(d^-1/2)"
            ),
        )));
    }
    finite_rows(rows, d)?;
    let labels = labels(spec.model, y)?;
    let seed = seed.unwrap_or_else(rand::random);
    let side = test_error::held_out(n, spec.holdout, seed);
    let held = side.iter().filter(|&&h| h).count();
    if spec.holdout > 0.0 && (held < test_error::MIN_HELD_OUT || n - held < 2) {
        return Err(Argument::new(
            "holdout",
            format!(
                " = {} held out {held} of {n} rows: the test error's interval needs at least {} held out and two \
                 fitted",
                spec.holdout,
                test_error::MIN_HELD_OUT
            ),
        )
        .into());
    }
    // (fitted, held out): rows row-major and labels
    let mut parts = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
    for ((x, &y), &h) in rows.chunks_exact(d).zip(labels.iter()).zip(&side) {
        let part = &mut parts[usize::from(h)];
        part.0.extend_from_slice(x);
        part.1.push(y);
    }
    let [(rows, labels), (test_rows, test_labels)] = parts;
    let (n, labels) = (n - held, DVector::from_vec(labels));
    if matches!(spec.model, Glm::Huber { .. }) && spec.release == Release::Dpsgd && spec.noise.is_none() {
        return Err(refused(Refusal::new(
            Reason::NoiseLawNeeded,
            "Huber DP-SGD: the residual statistics' equations are the fixed point's, which T steps from θ₀ = 0 have \
             not reached, so the fraction inside ±M and the clipped residual at θ̂ do not give its bias factor \
             without the label noise's law; give the law (noise) or use algorithm = \"objective\""
                .into(),
        )));
    }
    let mut xt = DMatrix::from_column_slice(d, n, &rows);
    let mut projected = 0;
    for mut row in xt.column_iter_mut() {
        let norm = row.norm();
        if norm > spec.row_norm {
            row *= spec.row_norm / norm;
            projected += 1;
        }
    }
    // the residual statistics are released only for Huber without a noise law
    let huber_m = match spec.model {
        Glm::Huber { m } if spec.noise.is_none() => Some(m),
        _ => None,
    };
    // Huber without a noise law releases two residual statistics; logistic the label sum
    let nuisances = match (spec.model, huber_m) {
        (_, Some(_)) => 2,
        (Glm::Logistic, None) => 1,
        (Glm::Huber { .. }, None) => 0,
    };
    let plan = release::plan(spec, nuisances)?;
    let label_mean = if spec.model == Glm::Logistic {
        let z = plan.nuisance_z.expect("logistic plans its label release");
        let mut rng = propdp_sim::rng::stream(seed, &[STREAM, 3]);
        let g = propdp_sim::data::draw_gaussian_vector(1, &mut rng)[0];
        let nf = n as f64;
        // Σ yᵢ, yᵢ = ±1: add/remove sensitivity 1 (replace-one 2, the accountant's pair)
        let mean = ((labels.sum() + z * g) / nf).clamp(-1.0, 1.0);
        let sd = (1.0 / nf + (z / nf).powi(2)).sqrt();
        if mean.abs() > LABEL_SDS * sd {
            return Err(refused(Refusal::new(
                Reason::UnbalancedLabels,
                format!(
                    "the released mean label is {mean:+.4}, {:.1} standard deviations ({sd:.4}) from the 0 that \
                     logistic labels without an intercept have: the theory has no intercept, and its intervals \
                     would be wrong here; centre the problem (fit the intercept on public data) or rebalance",
                    mean.abs() / sd
                ),
            )));
        }
        Some((mean, z))
    } else {
        None
    };
    let b = propdp_sim::data::draw_gaussian_vector(d, &mut propdp_sim::rng::stream(seed, &[STREAM, 0]));
    let (sigma, tau) = if spec.is_objective() {
        (plan.noise, 0.0)
    } else {
        (0.0, plan.noise)
    };
    let (loss, model) = match spec.model {
        Glm::Logistic => (Loss::Logistic, Model::Logistic),
        Glm::Huber { m } => (
            Loss::Huber { m },
            Model::Huber {
                huber_m: m,
                // the unknown-noise route never reads it
                noise: spec.noise.unwrap_or(propdp_core::NoiseLaw::Gaussian { sd: 0.0 }),
            },
        ),
    };
    let (theta, grad_norm, released) = match spec.descent {
        Some(g) => {
            let descent = propdp_sim::gd::Descent {
                loss,
                lambda: spec.lambda,
                sigma: plan.noise,
                eta: g.eta,
                steps: g.steps,
                sample_rate: g.sample_rate,
                clip: g.clip.unwrap_or(f64::INFINITY),
            };
            let mut rng = propdp_sim::rng::stream(seed, &[STREAM, 2]);
            let theta = descent.run(&xt, &labels, &mut rng, |_, _, _| {}).map_err(|e| {
                anyhow::anyhow!(
                    "the private descent (n = {n}, d = {d}, lambda = {}, eta = {}, steps = {}, noise σ = {:.4}): {e}",
                    spec.lambda,
                    g.eta,
                    g.steps,
                    plan.noise
                )
            })?;
            let grad_norm = ridge_gradient_norm(&xt, &labels, loss, spec.lambda, &theta);
            let text = format!(
                "θ̂ by DP-SGD ({} steps at sample rate {}, clip {}, noise σ = {:.6})",
                g.steps,
                g.sample_rate,
                g.clip.map_or("none".to_string(), |c| c.to_string()),
                plan.noise
            );
            (theta, grad_norm, text)
        }
        None => {
            let objective = Objective {
                xt: &xt,
                y: &labels,
                loss,
                lambda: spec.lambda,
                sigma,
                b: &b,
            };
            let (theta, report) = objective.minimize(1e-9, 200).map_err(|e| {
                anyhow::anyhow!(
                    "the private fit (n = {n}, d = {d}, lambda = {}, noise = {:.4}) did not converge: {e}",
                    spec.lambda,
                    plan.noise
                )
            })?;
            let text = format!(
                "θ̂ by {} perturbation (noise {} = {:.6})",
                if spec.is_objective() { "objective" } else { "output" },
                if spec.is_objective() { "σ" } else { "τ" },
                plan.noise
            );
            (theta + tau * &b, report.grad_norm, text)
        }
    };
    let delta = d as f64 / n as f64;
    let q_obs = theta.norm_squared() / d as f64;
    let mut releases = vec![released];
    if let Some((mean, z)) = label_mean {
        releases.push(format!(
            "the mean label ({mean:+.4}; logistic has no intercept: checked against 0) by the Gaussian mechanism \
             (noise multiplier {z:.3})"
        ));
    }
    let (nuisance, residuals) = match huber_m {
        None => {
            let (solver, algorithm) = match spec.descent {
                Some(g) => (
                    TheorySolver::new(propdp_core::config::SolverOptions {
                        dmft_points: Some(nuisance::DESCENT_POINTS),
                        ..Default::default()
                    }),
                    Algorithm::Dpsgd {
                        lambda: spec.lambda,
                        sigma: plan.noise,
                        eta: g.eta,
                        steps: g.steps,
                        loss_variant: propdp_core::LossVariant::Standard,
                        sample_rate: g.sample_rate,
                        clip: g.clip,
                    },
                ),
                None if spec.is_objective() => (
                    TheorySolver::default(),
                    Algorithm::Objective {
                        lambda: spec.lambda,
                        sigma,
                    },
                ),
                None => (
                    TheorySolver::default(),
                    Algorithm::Output {
                        lambda: spec.lambda,
                        tau,
                    },
                ),
            };
            let curve = nuisance::Curve::new(&solver, delta, model, algorithm);
            (curve.estimate(q_obs, d)?.map_err(refused)?, None)
        }
        Some(m) => {
            let z = plan
                .nuisance_z
                .expect("Huber without a noise law plans its nuisance releases");
            let r = &labels - xt.tr_mul(&theta);
            // each residual's blur by the output noise, τ‖xᵢ‖ (0 for objective perturbation)
            let blur: Vec<f64> = xt.column_iter().map(|x| tau * x.norm()).collect();
            let g = propdp_sim::data::draw_gaussian_vector(2, &mut propdp_sim::rng::stream(seed, &[STREAM, 1]));
            let nf = n as f64;
            // the centred sum Σ(ψ(rᵢ) − mid) with noise z·half (its add/remove sensitivity)
            let release = |f: deblur::Functional, g: f64| {
                let (mid, half) = f.range(m, tau * spec.row_norm);
                let sum: f64 = r.iter().zip(&blur).map(|(&ri, &si)| f.psi(ri, si, m) - mid).sum();
                ((sum + z * half * g) / nf + mid, z * half / nf)
            };
            let ((p, p_noise), (beta2, b_noise)) = (
                release(deblur::Functional::Inside, g[0]),
                release(deblur::Functional::Clipped, g[1]),
            );
            let (p, beta2) = (p.clamp(0.0, 1.0), beta2.clamp(0.0, m * m));
            let est = if tau > 0.0 {
                releases.push(format!(
                    "the fraction of residuals inside ±M and the mean clipped squared residual of the unperturbed \
                     fit, de-blurred from the residuals at θ̂ (blur τR/M = {:.3}), each by the Gaussian mechanism \
                     (noise multiplier {z:.3})",
                    tau * spec.row_norm / m
                ));
                // the de-blurred fraction's own spread around the realised one (|ψ_P − 1{·}| ≤ 2 in
                // the mean) beside the release's noise, and the extrapolation's bias allowance
                let p_sd = (4.0 / nf + p_noise * p_noise).sqrt();
                let mut est =
                    nuisance::huber((p, p_sd), beta2, delta, spec.lambda, sigma, tau, q_obs).map_err(refused)?;
                est.alpha_se = est
                    .alpha_se
                    .hypot(deblur::alpha_bias(tau * spec.row_norm / m) * est.alpha);
                est
            } else {
                releases.push(format!(
                    "the fraction of residuals inside ±M and the mean clipped squared residual at θ̂, each by the \
                     Gaussian mechanism (noise multiplier {z:.3})"
                ));
                nuisance::huber((p, p_noise), beta2, delta, spec.lambda, sigma, 0.0, q_obs).map_err(refused)?
            };
            (
                est,
                Some(Residuals {
                    inside: p,
                    beta2,
                    noise_sd: (p_noise, b_noise),
                    blur: tau * spec.row_norm / m,
                }),
            )
        }
    };
    let test_error = if held > 0 {
        let t = test_error::release(spec, theta.as_slice(), &test_rows, &test_labels, seed)?;
        releases.push(t.release_text());
        Some(t)
    } else {
        None
    };
    // the held-out release composes in parallel: the larger of the two
    let (lower, upper) = test_error.map_or((plan.bracket.lower, plan.bracket.upper), |t| {
        (
            plan.bracket.lower.max(t.epsilon_lower),
            plan.bracket.upper.max(t.epsilon),
        )
    });
    Ok(Inference {
        spec: *spec,
        params: theta.iter().copied().collect(),
        fitted: theta.iter().copied().collect(),
        whitening: None,
        whitened: false,
        nuisance,
        noise: plan.noise,
        residuals,
        test_error,
        privacy: Privacy {
            epsilon: upper,
            epsilon_lower: lower,
            delta: spec.delta_priv,
            neighbouring: spec.neighbouring.label(),
            releases,
        },
        n,
        d,
        projected,
        grad_norm,
        seed,
    })
}

/// ‖Σᵢℓ'(yᵢ, xᵢᵀθ)xᵢ + λθ‖/√d: how far θ is from the ridge optimum.
fn ridge_gradient_norm(xt: &DMatrix<f64>, y: &DVector<f64>, loss: Loss, lambda: f64, theta: &DVector<f64>) -> f64 {
    let psi = DVector::from_iterator(
        y.len(),
        xt.tr_mul(theta)
            .iter()
            .zip(y.iter())
            .map(|(&r, &yi)| loss.eval(yi, r).1),
    );
    (xt * psi + lambda * theta).norm() / (theta.len() as f64).sqrt()
}

/// [`fit`] with a public feature covariance Σ (d × d, row-major; rows
/// x ~ N(0, Σ/d)): the rows are whitened, x' = Σ^{-1/2}x, the isotropic fit
/// and its intervals made there, and every interval for θ* read as a
/// contrast of it ([`whitening`]); `params` is θ̂ = Σ^{-1/2}θ̂'.
pub fn fit_whitened(
    rows: &[f64],
    n: usize,
    d: usize,
    y: &[f64],
    covariance: &[f64],
    spec: &Spec,
    seed: Option<u64>,
) -> crate::Result<Inference> {
    let w = Whitening::new(covariance, d)?;
    if rows.len() != n * d {
        return Err(Argument::new(
            "X",
            format!(" has {} values; {n} rows of {d} features have {}", rows.len(), n * d),
        )
        .into());
    }
    finite_rows(rows, d)?;
    let mut f = fit(&w.rows(rows, d), n, d, y, spec, seed)?;
    f.params = w.apply(&f.fitted);
    f.whitening = Some(w);
    f.whitened = true;
    Ok(f)
}

/// Every value of the rows finite, or the first that is not, named by row and column.
fn finite_rows(rows: &[f64], d: usize) -> Result<(), Argument> {
    match rows.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(Argument::new(
            "X",
            format!(" row {}, column {}: {} is not finite", i / d, i % d, rows[i]),
        )),
        None => Ok(()),
    }
}

fn refused(r: Refusal) -> crate::Error {
    anyhow::Error::new(r).into()
}

/// The labels as the loss reads them (logistic: 0/1 mapped to ∓1).
fn labels(model: Glm, y: &[f64]) -> crate::Result<DVector<f64>> {
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Argument::new("y", format!("[{i}] = {} is not finite", y[i])).into());
    }
    if model != Glm::Logistic {
        return Ok(DVector::from_column_slice(y));
    }
    let zero_one = y.iter().all(|&v| v == 0.0 || v == 1.0);
    if let Some(i) = y.iter().position(|&v| !(zero_one || v == 1.0 || v == -1.0)) {
        return Err(refused(Refusal::new(
            Reason::Labels,
            format!("logistic labels must be ±1 or 0/1; y[{i}] = {}", y[i]),
        )));
    }
    Ok(DVector::from_iterator(
        y.len(),
        y.iter().map(|&v| if zero_one { 2.0 * v - 1.0 } else { v }),
    ))
}

/// [`fit`] on a data file (`propdp infer DATA`: a CSV with a header row or
/// a 2-D float64 `.npy`): the column `label` holds the labels, every other
/// column is a feature. With `covariance`, a file of the same kinds holding
/// the public d × d covariance Σ ([`fit_whitened`]).
pub fn fit_file(
    path: &std::path::Path,
    label: &str,
    spec: &Spec,
    seed: Option<u64>,
    covariance: Option<&std::path::Path>,
) -> crate::Result<Inference> {
    let (names, x) = crate::data_spectrum::read_data(path)?;
    let Some(j) = names.iter().position(|n| n == label) else {
        return Err(Argument::new(
            "label",
            format!(
                ": {label:?} is not a column of {}: {}",
                path.display(),
                names.join(", ")
            ),
        )
        .into());
    };
    let y: Vec<f64> = x.column(j).iter().copied().collect();
    let keep: Vec<usize> = (0..names.len()).filter(|&k| k != j).collect();
    let features = x.select_columns(&keep);
    let (n, d) = features.shape();
    // row-major, as `fit` reads the rows
    let rows: Vec<f64> = features.transpose().as_slice().to_vec();
    match covariance {
        None => fit(&rows, n, d, &y, spec, seed),
        Some(c) => {
            let (_, sigma) = crate::data_spectrum::read_data(c)?;
            if sigma.shape() != (d, d) {
                return Err(Argument::new(
                    "covariance",
                    format!(
                        ": {} is {} × {}; the data has d = {d} features",
                        c.display(),
                        sigma.nrows(),
                        sigma.ncols()
                    ),
                )
                .into());
            }
            fit_whitened(&rows, n, d, &y, sigma.transpose().as_slice(), spec, seed)
        }
    }
}

impl Inference {
    /// The intervals as CSV: one row per coefficient j with θ̂_j, θ̂_j/α̂,
    /// its standard error and the (1 − alpha) interval.
    pub fn intervals_csv(&self, alpha: f64) -> Result<String, Argument> {
        let ci = self.conf_int(alpha)?;
        let mut out = String::from("j,theta_hat,debiased,se,lower,upper\n");
        for (j, ((t, b), (se, (lo, hi)))) in self
            .params
            .iter()
            .zip(self.debiased())
            .zip(self.standard_errors().into_iter().zip(ci))
            .enumerate()
        {
            out += &format!("{j},{t:e},{b:e},{se:e},{lo:e},{hi:e}\n");
        }
        Ok(out)
    }

    /// Writes `intervals.csv` and `report.json` (settings, nuisances,
    /// privacy, level, provenance) into `dir`, created if missing; refuses
    /// to replace either file (propdp never replaces a file it did not write).
    pub fn write(&self, dir: &std::path::Path, alpha: f64) -> crate::Result<()> {
        let (csv, json) = (dir.join("intervals.csv"), dir.join("report.json"));
        for f in [&csv, &json] {
            if f.symlink_metadata().is_ok() {
                return Err(crate::error::Refused(format!(
                    "{} exists: propdp does not replace a file it did not write; choose another --out",
                    f.display()
                ))
                .into());
            }
        }
        let text = self.intervals_csv(alpha)?;
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
        let mut report = serde_json::to_value(self).map_err(anyhow::Error::from)?;
        if let Some(o) = report.as_object_mut() {
            o.remove("params");
            o.insert("level".into(), (1.0 - alpha).into());
            if let Ok(i) = self.test_error_int(alpha) {
                o.insert(
                    "test_error_interval".into(),
                    serde_json::to_value(i).map_err(anyhow::Error::from)?,
                );
            }
            o.insert(
                "provenance".into(),
                serde_json::json!({
                    "git_commit": crate::provenance::GIT_COMMIT,
                    "crate_version": crate::provenance::CRATE_VERSION,
                }),
            );
        }
        crate::file::write_atomic(&csv, &text)?;
        crate::file::write_atomic(&json, &format!("{report:#}\n"))?;
        Ok(())
    }

    /// A short text report: settings, privacy, nuisances.
    pub fn text(&self) -> String {
        let n = &self.nuisance;
        let how = match self.spec.release {
            Release::Dpsgd => "DP-SGD".to_string(),
            r => format!("{r:?} perturbation"),
        };
        let mut out = format!(
            "{:?} by {how}, lambda = {}, n = {}, d = {} (d/n = {:.3})\n",
            self.spec.model,
            self.spec.lambda,
            self.n,
            self.d,
            self.d as f64 / self.n as f64
        );
        out += &format!(
            "privacy: epsilon ≤ {:.4} (lower bound {:.4}) at delta = {:e}, {}\n",
            self.privacy.epsilon, self.privacy.epsilon_lower, self.privacy.delta, self.privacy.neighbouring
        );
        for r in &self.privacy.releases {
            out += &format!("  released: {r}\n");
        }
        out += &format!(
            "rows projected onto ‖x‖ ≤ {}: {} of {}\n",
            self.spec.row_norm, self.projected, self.n
        );
        out += &format!(
            "bias factor α̂ = {:.4} (se {:.4}), σ̂_eff = {:.4}, signal ŝ² = {:.4}\n",
            n.alpha, n.alpha_se, n.sigma_eff, n.s2
        );
        if n.sigma_eff_se > 0.0 {
            out += &format!(
                "  from the state evolution at ŝ²: RQMC standard error of σ̂_eff {:.2e}, in the width\n",
                n.sigma_eff_se
            );
        }
        if let Some(t) = &self.test_error {
            let i = t.interval(0.05).expect("0.05 is a level");
            out += &format!(
                "test error ({}) of θ̂ on {} held-out rows: {:.4}, 95% interval [{:.4}, {:.4}]\n",
                t.metric.name(),
                t.rows,
                i.estimate,
                i.lower,
                i.upper
            );
        }
        out += if self.whitened {
            "rows whitened by the public covariance Σ (assumes rows N(0, Σ/d), no intercept; the fit's penalty is \
             (λ/2)θᵀΣθ, docs/inference.md)\n"
        } else {
            "assumes rows with isotropic covariance I/d and no intercept (docs/inference.md)\n"
        };
        out
    }
}
