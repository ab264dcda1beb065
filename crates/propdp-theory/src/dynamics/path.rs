//! What every state evolution of DP-GD and DP-SGD (docs/theory.md §3)
//! shares: the parameters of a solve ([`DmftParams`]), its failures
//! ([`DmftError`]), the predicted path of every metric with its standard error
//! over replicates ([`DmftPath`], [`aggregate`]), and the metrics of a step
//! from the overlap m_t and the norm C_θ(t,t) ([`step_metrics`]).
//!
//! # References
//! - Celentano, Cheng, Montanari (2021), *The high-dimensional asymptotics of
//!   first order methods with random data*.
//! - Mignacco, Krzakala, Urbani, Zdeborová (2020), *Dynamical mean-field theory
//!   for stochastic gradient descent in Gaussian mixture classification*.

use std::collections::BTreeMap;

use propdp_core::loss::Loss;
use propdp_core::metrics::{self, Metrics};
use propdp_core::problem::{Strategy, TwoCluster};
use thiserror::Error;

use crate::fixed_points::logistic::test_class_error;
use propdp_core::population::test_class_error_shifted;

/// Parameters of a DMFT solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DmftParams {
    /// δ = d/n.
    pub delta: f64,
    /// Prior energy s².
    pub s2: f64,
    /// Ridge λ.
    pub lambda: f64,
    /// Gradient noise σ.
    pub sigma: f64,
    /// Step size η.
    pub eta: f64,
    /// Number of steps T.
    pub steps: usize,
    /// Poisson sample rate q (1: full batch).
    pub sample_rate: f64,
    /// Clipping threshold C of the scalar gradient factor (∞: none).
    pub clip: f64,
    /// The descended loss (standard losses draw labels from the model).
    pub loss: Loss,
    /// Label noise sd for the standard Huber and squared losses (y = ν + e, e ~ N(0, sd²)).
    pub noise_sd: f64,
    /// Sample points per scramble (≤ 2^16).
    pub points: usize,
    /// Independent scrambles (≥ 2, for a standard error).
    pub scrambles: usize,
    /// Seed of the Sobol scrambles.
    pub seed: u32,
    /// Cyclic participation groups G (1: plain Poisson sampling; docs/theory.md §3.7).
    pub groups: usize,
    /// The privacy noise's strategy (identity: independent noise; §3.7).
    pub strategy: Strategy,
}

impl DmftParams {
    /// The mean rate at which an example is selected, q/G: what the mean
    /// step sees of the full gradient.
    pub fn mean_rate(&self) -> f64 {
        self.sample_rate / self.groups as f64
    }
}

/// An intercept (docs/theory.md §3.5): the teacher's b* (labels
/// P(y = 1 | ν) = sigmoid(ν + b*), or y = ν + b* + e) and, if `learned`, a
/// learner's intercept b on a constant feature c = 1/√d, clipped jointly with
/// θ and penalised by λ_b. Its field β_t = c·b_t is deterministic in the
/// limit: β_{t+1} = (1 − ηλ_b)β_t − η·a·E\[ĝ_t\] (ĝ_t with the selection S_t).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intercept {
    /// The teacher's intercept b*.
    pub teacher: f64,
    /// Whether the learner fits an intercept.
    pub learned: bool,
    /// Its ridge λ_b (0: unpenalised).
    pub lambda: f64,
}

/// The metric of the learned intercept's field β_t = c·b_t.
pub const INTERCEPT: &str = metrics::FITTED_INTERCEPT;

/// The parameters as a user set them (config keys), for error messages.
impl std::fmt::Display for DmftParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "delta = {}, s2 = {}, lambda = {}, sigma = {}, eta = {}, steps = {}",
            self.delta, self.s2, self.lambda, self.sigma, self.eta, self.steps
        )?;
        if self.sample_rate < 1.0 {
            write!(f, ", sample_rate = {}", self.sample_rate)?;
        }
        if self.clip.is_finite() {
            write!(f, ", clip = {}", self.clip)?;
        }
        if self.groups > 1 {
            write!(f, ", groups = {}", self.groups)?;
        }
        if !self.strategy.is_identity() {
            match (self.strategy.coefficients(), self.strategy.blt_parameters()) {
                (Some(c), _) => write!(f, ", strategy coefficients {c:?}")?,
                (None, Some((decay, scale))) => {
                    write!(f, ", BLT strategy buf_decay {decay:?}, output_scale {scale:?}")?
                }
                (None, None) => unreachable!("a strategy is banded or a BLT"),
            }
        }
        write!(f, ", loss {}", self.loss)?;
        if self.noise_sd > 0.0 {
            write!(f, ", label noise sd = {}", self.noise_sd)?;
        }
        write!(f, " ({} RQMC points × {} scrambles)", self.points, self.scrambles)
    }
}

/// Failures of the DMFT solver.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum DmftError {
    #[error("dmft: covariance of (ν, w) lost positive-definiteness at step {step} (pivot {pivot:e}) at {params}")]
    /// The covariance of the Gaussian fields lost positive definiteness.
    NotPositiveDefinite {
        /// The step.
        step: usize,
        /// The failing Cholesky pivot.
        pivot: f64,
        /// The parameters.
        params: Box<DmftParams>,
    },
    #[error(
        "dmft: ‖θ_t‖²/d = {norm2:e} at step {step}, beyond the state evolution's range (1e12): the iterates \
         diverge, or the privacy noise alone (η²σ² = {:e} per step) is too large for a finite answer; lower \
         algorithm.eta or algorithm.sigma, at {params}",
        params.eta * params.eta * params.sigma * params.sigma
    )]
    /// The iterates grew beyond the solver's range: divergence, or noise too large.
    Diverged {
        /// The step.
        step: usize,
        /// ‖θ_t‖²/d there.
        norm2: f64,
        /// The parameters.
        params: Box<DmftParams>,
    },
    #[error(
        "dmft: the long-horizon state evolution's replicates disagree at step {step}: norm2 = {norm2:.4} with \
         standard error {stderr:.2e}, {:.1}% of it, above the {:.0}% a solve writes (healthy ones stay below \
         5%): the solve went unstable, and its numbers are not written (docs/theory.md §3.3, \
         \"Refusing an unstable solve\"); more paths (solver.dmft_points), a shorter horizon or dmft = \"exact\" \
         (T ≤ 1000) may avoid it, at {params}",
        100.0 * stderr / norm2.abs(),
        100.0 * MAX_RELATIVE_SPREAD
    )]
    /// The replicates of a long-horizon solve disagree far beyond their
    /// RQMC spread: an instability of the solve, not an answer.
    Unstable {
        /// The first step where they disagree.
        step: usize,
        /// The mean of norm2 over the replicates there.
        norm2: f64,
        /// Its standard error over the replicates.
        stderr: f64,
        /// The parameters.
        params: Box<DmftParams>,
    },
    #[error("dmft: cancelled at step {step} of {steps} (interrupted)")]
    /// The caller asked the solve to stop (`full_memory::solve_cancellable`).
    Cancelled {
        /// The step reached.
        step: usize,
        /// T.
        steps: usize,
    },
    #[error("dmft: {what} at {params}")]
    /// The parameters are outside what the state evolution covers.
    Invalid {
        /// What is unsupported.
        what: String,
        /// The parameters.
        params: Box<DmftParams>,
    },
}

/// Per-step prediction: metric → values at t = 0..=T, and their RQMC
/// standard errors over scrambles.
#[derive(Debug, Clone, PartialEq)]
pub struct DmftPath {
    /// Prediction of every metric at every step t = 0..=T.
    pub mean: BTreeMap<String, Vec<f64>>,
    /// RQMC standard error of every value (spread over scrambles).
    pub stderr: BTreeMap<String, Vec<f64>>,
}

impl DmftPath {
    /// The test error of every step from the prediction error: pred_err2
    /// (= est_err2 when no covariance wrote it) and, for regression labels
    /// y = xᵀθ* + e with Var e = `label_variance`, test_mse = pred_err2 +
    /// Var e (a fresh row's field error is independent of its label noise);
    /// both with pred_err2's standard error — unless the path has a
    /// test_mse of its own (an intercept's, with (β − b*)²), which is kept.
    pub fn with_test_error(mut self, label_variance: Option<f64>) -> Self {
        for map in [&mut self.mean, &mut self.stderr] {
            if !map.contains_key(metrics::PRED_ERR2)
                && let Some(e) = map.get(metrics::EST_ERR2).cloned()
            {
                map.insert(metrics::PRED_ERR2.into(), e);
            }
        }
        // a path with an intercept wrote its own test_mse (with (β − b*)²): kept
        if let (Some(var), Some(pred), false) = (
            label_variance,
            self.mean.get(metrics::PRED_ERR2),
            self.mean.contains_key(metrics::TEST_MSE),
        ) {
            let test: Vec<f64> = pred.iter().map(|p| p + var).collect();
            let se = self.stderr[metrics::PRED_ERR2].clone();
            self.mean.insert(metrics::TEST_MSE.into(), test);
            self.stderr.insert(metrics::TEST_MSE.into(), se);
        }
        self
    }

    /// The metrics at the last step.
    pub fn last(&self) -> Metrics {
        self.mean
            .iter()
            .map(|(k, v)| (k.clone(), *v.last().expect("T ≥ 0")))
            .collect()
    }
}

/// The mean over independent replicates of per-step metrics (t = 0..=steps)
/// and its standard error from their spread.
pub(crate) fn aggregate(runs: Vec<Vec<Metrics>>, steps: usize) -> DmftPath {
    let k = runs.len() as f64;
    let mut mean: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut stderr: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for name in runs[0][0].keys() {
        for t in 0..=steps {
            let vs: Vec<f64> = runs.iter().map(|r| r[t][name]).collect();
            let mu = vs.iter().sum::<f64>() / k;
            let var = vs.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (k - 1.0);
            mean.entry(name.clone()).or_default().push(mu);
            stderr.entry(name.clone()).or_default().push((var / k).sqrt());
        }
    }
    DmftPath { mean, stderr }
}

/// The metrics at step t from the overlap m_t = s²A_t, C_θ(t,t) and the
/// training loss, or [`DmftError::Diverged`] when C_θ(t,t) blew up.
pub(crate) fn step_metrics(
    p: &DmftParams,
    t: usize,
    m_t: f64,
    c_tt: f64,
    train_loss: f64,
) -> Result<Metrics, DmftError> {
    if !c_tt.is_finite() || c_tt > 1e12 {
        return Err(DmftError::Diverged {
            step: t,
            norm2: c_tt,
            params: Box::new(*p),
        });
    }
    let mut mt = Metrics::new();
    mt.insert(metrics::EST_ERR2.into(), c_tt - 2.0 * m_t + p.s2);
    mt.insert(metrics::OVERLAP.into(), m_t);
    mt.insert(metrics::NORM2.into(), c_tt);
    mt.insert(metrics::TRAIN_LOSS.into(), train_loss);
    if matches!(p.loss, Loss::Logistic | Loss::ConditionalLogistic) {
        mt.insert(metrics::TEST_CLASS_ERR.into(), test_class_error(p.s2, m_t, c_tt));
    }
    Ok(mt)
}

/// The metrics of step t with an intercept (docs/theory.md §3.5), into
/// `mt`: β_t as fitted_intercept, and the test error of the fresh field
/// w + β_t against labels of ν + b*, ν of variance ρ (s² isotropic),
/// Cov(ν, w) = m_t, Var w = C_w(t,t) = `c_tt`: test_class_err of sign(w + β)
/// (logistic) or test_mse = C_w − 2m_t + ρ + (β − b*)² + sd² (Huber, squared).
pub(crate) fn insert_intercept_metrics(
    p: &DmftParams,
    mt: &mut Metrics,
    (rho, m_t, c_tt): (f64, f64, f64),
    beta: f64,
    b_star: f64,
) {
    mt.insert(INTERCEPT.into(), beta);
    if p.loss == Loss::Logistic {
        let err = test_class_error_shifted(rho, m_t, c_tt, beta, b_star);
        mt.insert(metrics::TEST_CLASS_ERR.into(), err);
    } else {
        let field = c_tt - 2.0 * m_t + rho + (beta - b_star).powi(2);
        mt.insert(metrics::TEST_MSE.into(), field + p.noise_sd * p.noise_sd);
    }
}

/// The overlap's drift D_t = Σ_k R_g(t,k)A_k + M_g(t) is the Stein quotient
/// (a/s)·E[z₀(ĝ_t − βc_t)] from s² ≥ STEIN_MIN_S2·κ², κ² = 1 + sd² (sd the label
/// noise); below, s·z₀ is lost in the rounding of paths of scale κ (relative
/// errors 2e-3 at s² = 1e-28) and D_t is summed from the pathwise (score) M_g
/// and R_g, whose windows ν no longer narrows (docs/theory.md §3.1).
pub(crate) const STEIN_MIN_S2: f64 = 1e-10;

/// Largest relative standard error of norm2 over the replicates that a
/// long-horizon solve writes. Healthy solves stay below 5% (their RQMC
/// spread: about 0.1% at q ≥ 0.1, up to 5% at q = 0.01 with 8 × 1024
/// paths); the generator's instability of Rao–Blackwellised C_g rows
/// (fixed in session 26, docs/theory.md §3.3: one replicate's C_θ(t,t)
/// drifted from 2.4 to 5–270 while the others stayed) reached 20–79%.
pub const MAX_RELATIVE_SPREAD: f64 = 0.2;

/// An intercept's losses (docs/theory.md §3.5): the standard logistic,
/// Huber and squared losses; refused otherwise. Both state evolutions check it.
pub(crate) fn check_intercept_loss(p: &DmftParams) -> Result<(), DmftError> {
    if matches!(p.loss, Loss::Logistic | Loss::Huber { .. } | Loss::Squared) {
        return Ok(());
    }
    Err(DmftError::Invalid {
        what: format!("an intercept with the {} loss (standard losses only)", p.loss),
        params: Box::new(*p),
    })
}

/// The parameters both state evolutions solve two clusters at (docs/theory.md
/// §3.6): the standard logistic loss and no teacher's intercept, or refused;
/// the clip C of the per-example gradient ĝᵢxᵢ with ‖xᵢ‖² → κ² (the class
/// mean's share is O(1/d)) clips the scalar ℓ' at C/κ.
pub(crate) fn two_cluster_params(
    p: &DmftParams,
    mix: &TwoCluster,
    icp: Option<&Intercept>,
) -> Result<DmftParams, DmftError> {
    let invalid = |what: String| DmftError::Invalid {
        what,
        params: Box::new(*p),
    };
    if p.loss != Loss::Logistic {
        return Err(invalid(format!(
            "two clusters with the {} loss (the standard logistic loss only)",
            p.loss
        )));
    }
    if icp.is_some_and(|c| c.teacher != 0.0) {
        return Err(invalid(
            "two clusters with a teacher's intercept (their balance is problem.balance)".into(),
        ));
    }
    Ok(DmftParams {
        clip: p.clip / mix.within.sqrt(),
        ..*p
    })
}
