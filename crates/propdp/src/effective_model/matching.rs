//! What both data models of an effective model share (docs/theory.md
//! §2.5, §3.6): the constants of the fits, the checks and the probe, the
//! cross-fitted held-out error of the non-private ridge fit, and the match
//! of the theory's error, decreasing in the signal, to the observed one.
//! The teacher's model ([`super`]) and the two clusters'
//! ([`super::two_cluster`]) both use it; it uses neither.
//!
//! # References
//! - P. Sur, E. J. Candès, "A modern maximum-likelihood theory for
//!   high-dimensional logistic regression", PNAS 116 (2019): estimating the
//!   signal strength from data by matching the theory (their ProbeFrontier).

use crate::error::Context;
use nalgebra::{DMatrix, DVector};
use propdp_core::covariance::Covariance;
use propdp_core::loss::Loss;
use propdp_core::metrics::sign_error;
use propdp_core::{Algorithm, Model, ModelKind, Point};
use propdp_sim::objective::Objective;
use propdp_theory::solve::TheorySolver;
use rand::RngExt;

use crate::error::Argument;

/// Folds of the cross-fit.
pub const FOLDS: usize = 5;
/// The ridge λ₀ of every fit, in propdp's objective units (F = Σℓ + (λ₀/2)‖θ‖², rows of mean ‖x‖² = 1).
pub const LAMBDA0: f64 = 1.0;
/// The Huber threshold (in sd(y)) that stands for least squares in the theory.
pub const LEAST_SQUARES_M: f64 = 1e3;
/// |z| beyond which a check says the model does not describe the data.
pub const DISAGREE_Z: f64 = 3.0;
/// The seed and key of the folds' permutation (`propdp_sim::rng::stream`).
pub const FOLD_STREAM: (u64, u64) = (0, 0x666f_6c64); // "fold"
/// The teacher field's variance ρ searched by the logistic match.
pub const RHO_MIN: f64 = 1e-6;
/// The teacher field's variance ρ searched by the logistic match (its floor of error).
pub const RHO_MAX: f64 = 1e3;

/// A prediction of the model against what the data show.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What is compared.
    pub name: &'static str,
    /// The model's value.
    pub predicted: f64,
    /// Its standard error (from the interval of s²).
    pub predicted_se: f64,
    /// The data's value.
    pub observed: f64,
    /// Its standard error.
    pub observed_se: f64,
}

impl Check {
    /// (observed − predicted)/√(se² + se²).
    pub fn z(&self) -> f64 {
        let se = self.predicted_se.hypot(self.observed_se);
        if se > 0.0 {
            (self.observed - self.predicted) / se
        } else if self.observed == self.predicted {
            0.0
        } else {
            f64::INFINITY
        }
    }

    /// Whether |z| ≤ [`DISAGREE_Z`].
    pub fn agrees(&self) -> bool {
        self.z().abs() <= DISAGREE_Z
    }

    /// Whether this is the class-balance check (a model without intercept
    /// against the data's mean label).
    pub fn is_balance(&self) -> bool {
        self.name == BALANCE
    }
}

/// The class-balance check's name.
pub(super) const BALANCE: &str = "class balance: the mean ±1 label (the model's rows are centred, without intercept)";

/// The effective model of a data set (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct EffectiveModel {
    /// The model.
    pub model: ModelKind,
    /// Huber's threshold M (sd(y) units) of the checked fit.
    pub huber_m: Option<f64>,
    /// s² in propdp's scale.
    pub s2: f64,
    /// s² at one standard error either side (the upper end may be ∞).
    pub s2_interval: (f64, f64),
    /// The label noise sd (Huber, least squares), in sd(y).
    pub noise_sd: Option<f64>,
    /// The teacher field's variance ρ = s²·Σwωe.
    pub rho: f64,
    /// Training rows of one fold's fit.
    pub n_train: usize,
    /// δ = k/n_train.
    pub delta: f64,
    /// The headline: held-out error (logistic, matched) or MSE of the non-private fit.
    pub headline: Check,
    /// The checks of the fit (module docs).
    pub checks: Vec<Check>,
    /// The data model (logistic: a teacher's link, or two clusters).
    pub data: DataModel,
}

/// How the rows and labels are modelled.
#[derive(Debug, Clone, PartialEq)]
pub enum DataModel {
    /// Gaussian rows of the data's covariance, labels by the model's link of a teacher's field.
    Teacher,
    /// Two Gaussian clusters ([`super::two_cluster`]).
    TwoCluster {
        /// p = P(y = +1), `problem.balance`.
        balance: f64,
        /// κ² = tr S_w, the within-class share of E‖x‖², `problem.within`.
        within: f64,
        /// Eigenvalues of the pooled within-class covariance S_w, largest first.
        eigenvalues: Vec<f64>,
        /// Relative teacher energies θ*_k² per eigenvalue.
        teacher: Vec<f64>,
    },
}

/// Which data model `propdp spectrum --model logistic` estimates (`--data-model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataModelChoice {
    /// Both: the teacher model if it describes the data (every check,
    /// the class balance's too), else the two-cluster model if it does,
    /// else the teacher if it does but for the class balance, else the
    /// two-cluster model with its failed checks.
    #[default]
    Auto,
    /// The logistic link of a Gaussian teacher field.
    Teacher,
    /// Two Gaussian clusters.
    TwoCluster,
}

impl EffectiveModel {
    /// Whether every check (and the headline) agrees within [`DISAGREE_Z`].
    pub fn describes(&self) -> bool {
        self.headline.agrees() && self.checks.iter().all(Check::agrees)
    }

    /// Whether every check but the class balance's agrees.
    pub fn describes_but_for_balance(&self) -> bool {
        self.headline.agrees() && self.checks.iter().all(|c| c.agrees() || c.is_balance())
    }
}

/// The least-squares fit of labels in the eigenbasis that the effective models start from.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// k.
    pub directions: usize,
    /// N.
    pub rows: usize,
    /// σ̂² = RSS/(N − k − 1).
    pub noise2: f64,
    /// ‖P_X y‖²/N, the explained variance (not debiased).
    pub explained: f64,
}

impl Probe {
    /// R̂² = explained − kσ̂²/N (labels of unit variance) and its first-order
    /// s.e. √((4σ̂²R̂² + 2kσ̂⁴/N)/N).
    pub fn debiased(&self) -> (f64, f64) {
        let (n, k) = (self.rows as f64, self.directions as f64);
        let r2 = self.explained - k * self.noise2 / n;
        let var = (4.0 * self.noise2 * r2.max(0.0) + 2.0 * k * self.noise2 * self.noise2 / n) / n;
        (r2, var.sqrt())
    }
}

/// The rows and spectrum every fit and prediction uses.
pub struct Design<'a> {
    /// The rows as columns (k × N), propdp's scale.
    pub xt: &'a DMatrix<f64>,
    /// Eigenvalues (any scale; normalised by the covariance).
    pub eigenvalues: &'a [f64],
    /// Relative teacher energies per eigenvalue.
    pub teacher: &'a [f64],
}

impl Design<'_> {
    pub(super) fn covariance(&self) -> crate::Result<Option<Covariance>> {
        let k = self.eigenvalues.len();
        Covariance::from_columns(self.eigenvalues, &vec![1.0 / k as f64; k], self.teacher, "spectrum")
            .context("the data's spectrum as a covariance")
    }
}

/// Held-out fits of the K folds: the fitted value of every row by the fit
/// that did not see it, and the mean training rows.
pub(super) fn cross_fit(xt: &DMatrix<f64>, y: &DVector<f64>, loss: Loss) -> crate::Result<(DVector<f64>, usize)> {
    let (k, n) = xt.shape();
    let mut order: Vec<usize> = (0..n).collect();
    let rng = &mut propdp_sim::rng::stream(FOLD_STREAM.0, &[FOLD_STREAM.1]);
    for i in (1..n).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut fold = vec![0; n];
    for (pos, &i) in order.iter().enumerate() {
        fold[i] = pos % FOLDS;
    }
    let mut fitted = DVector::zeros(n);
    let zero = DVector::zeros(k);
    for f in 0..FOLDS {
        let (train, test): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| fold[i] != f);
        let xtr = xt.select_columns(&train);
        let ytr = DVector::from_iterator(train.len(), train.iter().map(|&i| y[i]));
        let obj = Objective {
            xt: &xtr,
            y: &ytr,
            loss,
            lambda: LAMBDA0,
            sigma: 0.0,
            b: &zero,
        };
        let (theta, _) = obj
            .minimize(1e-9, 500)
            .map_err(|e| crate::error::Error::compute(format!("the {loss} fit of fold {} of {FOLDS}: {e}", f + 1)))?;
        for &i in &test {
            fitted[i] = xt.column(i).dot(&theta);
        }
    }
    Ok((fitted, n - n.div_ceil(FOLDS)))
}

/// Mean and s.e. of values.
pub(super) fn mean_se(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = v.collect();
    propdp_core::metrics::mean_stderr(&v)
}

/// μ(ρ) = 2E[σ'(√ρ g)], by the trapezoid rule (h = 0.005) in the wider of
/// the two variables: over g ∈ [−12, 12] for ρ ≤ 1, else over u = √ρ g ∈
/// [−40, 40], 2∫σ'(u)φ(u/√ρ)/√ρ du (σ' is narrow in g when ρ is large).
pub fn stein_mu(rho: f64) -> f64 {
    let s = rho.sqrt();
    let phi = |g: f64| (-0.5 * g * g).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let dsig = |u: f64| {
        let v = propdp_core::loss::sigmoid(u);
        v * (1.0 - v)
    };
    let (h, half) = (0.005, if s <= 1.0 { 12.0 } else { 40.0 });
    let f = |x: f64| {
        if s <= 1.0 {
            dsig(s * x) * phi(x)
        } else {
            dsig(x) * phi(x / s) / s
        }
    };
    let steps = (2.0 * half / h) as usize;
    let inner: f64 = (1..steps).map(|i| f(-half + i as f64 * h)).sum();
    2.0 * h * (inner + 0.5 * (f(-half) + f(half)))
}

/// The theory's metrics of the non-private ridge fit at s².
pub(super) fn predict(
    solver: &TheorySolver,
    delta: f64,
    s2: f64,
    model: Model,
) -> crate::Result<propdp_core::metrics::Metrics> {
    let point = Point::new(
        delta,
        s2,
        model,
        Algorithm::Objective {
            lambda: LAMBDA0,
            sigma: 0.0,
        },
    )
    .context("the effective model's point")?;
    Ok(solver
        .solve(&point, None)
        .with_context(|| format!("the theory of the non-private fit at δ = {delta}, s² = {s2:e}"))?
        .metrics)
}

/// The x in `range` at which a decreasing `error_at(x)` equals `target`, by
/// Brent's method in ln x; at or above `chance` (error_at(range.0)) and at
/// or below `floor` (error_at(range.1)) the clamps `beyond` = (below the
/// range, above it).
pub(super) fn match_error(
    error_at: &dyn Fn(f64) -> crate::Result<f64>,
    range: (f64, f64),
    (chance, floor): (f64, f64),
    target: f64,
    beyond: (f64, f64),
) -> crate::Result<f64> {
    if target >= chance {
        return Ok(beyond.0);
    }
    if target <= floor {
        return Ok(beyond.1);
    }
    let failure = std::cell::Cell::new(None);
    let root = propdp_numerics::roots::brent(
        range.0.ln(),
        range.1.ln(),
        |t| match error_at(t.exp()) {
            Ok(e) => e - target,
            Err(e) => {
                failure.set(Some(e.to_string()));
                f64::NAN
            }
        },
        1e-6,
        200,
    );
    match (root, failure.take()) {
        (Some((t, _)), None) => Ok(t.exp()),
        (_, Some(e)) => Err(crate::error::Error::compute(format!(
            "matching the held-out error: {e}"
        ))),
        (None, None) => Err(crate::error::Error::compute(format!(
            "matching the held-out error {target}: Brent's method did not converge"
        ))),
    }
}

/// A refusal naming `label`.
pub(super) fn refuse(why: String) -> crate::Error {
    Argument::new("label", format!(": {why}")).into()
}

/// The held-out results of the cross-fitted ridge logistic regression.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossFit {
    /// Held-out error ê and its binomial s.e.
    pub error: f64,
    /// s.e. of ê.
    pub error_se: f64,
    /// Held-out log-loss, mean and s.e.
    pub logloss: (f64, f64),
    /// Training rows of one fold's fit.
    pub n_train: usize,
}

impl CrossFit {
    /// The cross-fit of ridge logistic regression of ±1 labels `y` on the rows `xt`.
    pub fn logistic(xt: &DMatrix<f64>, y: &DVector<f64>) -> crate::Result<CrossFit> {
        let n = y.len();
        let (fitted, n_train) = cross_fit(xt, y, Loss::Logistic)?;
        let error = fitted
            .iter()
            .zip(y.iter())
            .map(|(r, y)| sign_error(*y, *r))
            .sum::<f64>()
            / n as f64;
        Ok(CrossFit {
            error,
            error_se: (error * (1.0 - error) / n as f64).sqrt(),
            logloss: mean_se(fitted.iter().zip(y.iter()).map(|(r, y)| Loss::Logistic.eval(*y, *r).0)),
            n_train,
        })
    }

    /// "5-fold held-out error ê ± s.e. of ridge logistic regression (λ₀ = 1)".
    pub(super) fn describe(&self) -> String {
        format!(
            "{FOLDS}-fold held-out error {:.4} ± {:.4} of ridge logistic regression (λ₀ = {LAMBDA0})",
            self.error, self.error_se
        )
    }
}
