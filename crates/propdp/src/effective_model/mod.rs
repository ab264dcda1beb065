//! The effective model of a data set (`propdp spectrum DATA --label y
//! --model …`, docs/covariance.md, docs/theory.md §2.5): the s² (and label
//! noise) for which propdp's model of the data's spectrum predicts what a
//! non-private fit on the data does, and checks that can say the model does
//! not describe the data. Everything here is computed without privacy.
//!
//! Units: the rows are in propdp's scale (eigen-coordinates of the
//! standardised columns, mean ‖xᵢ‖² = 1, [`propdp_sim::real::RealRows`]);
//! regression labels are centred and divided by their sd (ddof 0); binary
//! labels are ±1.
//!
//! **Logistic.** K = [`FOLDS`] folds (a permutation from the named stream
//! [`FOLD_STREAM`]); on each, ridge logistic regression with λ₀ =
//! [`LAMBDA0`] (F(θ) = Σᵢ log(1 + e^{−yᵢxᵢᵀθ}) + (λ₀/2)‖θ‖², propdp-sim's
//! solver) is fitted on the other K − 1 folds and scored on this one. The
//! pooled held-out error ê (binomial s.e. √(ê(1 − ê)/N)) is matched by
//! the theory's error of the same fit, objective perturbation at σ = 0
//! with this spectrum and teacher at δ = k/n_train:
//!
//!   E(s²; δ, λ₀, Σ, e) = ê,
//!
//! E decreasing in s² (from ½ at s² = 0 to a floor at s² → ∞), solved by
//! Brent's method in ln ρ, ρ = s²·Σwωe ∈ [[`RHO_MIN`], [`RHO_MAX`]]; ê ± s.e.
//! inverted the same way is the interval of s². Refused (naming `label`)
//! when ê is at or above E(ρ_min) ≈ ½ (no signal) or at or below the floor
//! E(ρ_max) (separable data: the theory has no finite s² for it).
//!
//! Checks, each a z-score against [`DISAGREE_Z`]: (1) the linear probe —
//! the least-squares fit of the ±1 labels explains, debiased, R̂² =
//! (‖P_X y‖² − kσ̂²)/N, where the model says μ(ρ)²ρ with μ(ρ) = 2E[σ'(√ρ g)]
//! (Stein's lemma; at most 2/π); (2) the predicted against the observed
//! held-out log-loss; (3) the class balance: the model (centred rows, no
//! intercept) has E y = 0.
//!
//! **Huber, least squares.** s² and the noise sd from the debiased
//! least-squares fit ([`crate::data_spectrum`]); the check is the held-out
//! MSE of the cross-fitted ridge fit (squared loss, or Huber with threshold
//! M in sd(y) units) against the theory's `test_mse` of that fit (least
//! squares as Huber with M = [`LEAST_SQUARES_M`], beyond every residual).
//!
//! # References
//! - D. R. Brillinger, "A generalized linear model with Gaussian regressor
//!   variables", in *A Festschrift for Erich L. Lehmann* (1982): the
//!   least-squares direction of a GLM with Gaussian rows is ∝ Σθ*.
//! - C. Stein, "Estimation of the mean of a multivariate normal
//!   distribution", Ann. Statist. 9 (1981): E[g f(g)] = E f'(g).
//! - P. Sur, E. J. Candès, "A modern maximum-likelihood theory for
//!   high-dimensional logistic regression", PNAS 116 (2019): estimating the
//!   signal strength from data by matching the theory (their ProbeFrontier).

use anyhow::{Context, anyhow};
use nalgebra::{DMatrix, DVector};
use propdp_core::covariance::Covariance;
use propdp_core::loss::Loss;
use propdp_core::metrics::{TEST_CLASS_ERR, TEST_LOGLOSS, TEST_MSE, sign_error};
use propdp_core::{Algorithm, Model, ModelKind, NoiseLaw, Point};
use propdp_sim::objective::Objective;
use propdp_theory::solve::TheorySolver;
use rand::RngExt;

use crate::error::Argument;

pub mod two_cluster;

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
const BALANCE: &str = "class balance: the mean ±1 label (the model's rows are centred, without intercept)";

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
    /// Two Gaussian clusters ([`two_cluster`]).
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
    fn covariance(&self) -> crate::Result<Option<Covariance>> {
        let k = self.eigenvalues.len();
        Ok(
            Covariance::from_columns(self.eigenvalues, &vec![1.0 / k as f64; k], self.teacher, "spectrum")
                .context("the data's spectrum as a covariance")?,
        )
    }
}

/// Held-out fits of the K folds: the fitted value of every row by the fit
/// that did not see it, and the mean training rows.
fn cross_fit(xt: &DMatrix<f64>, y: &DVector<f64>, loss: Loss) -> crate::Result<(DVector<f64>, usize)> {
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
            .map_err(|e| anyhow!("the {loss} fit of fold {} of {FOLDS}: {e}", f + 1))?;
        for &i in &test {
            fitted[i] = xt.column(i).dot(&theta);
        }
    }
    Ok((fitted, n - n.div_ceil(FOLDS)))
}

/// Mean and s.e. of values.
fn mean_se(v: impl Iterator<Item = f64>) -> (f64, f64) {
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
fn predict(solver: &TheorySolver, delta: f64, s2: f64, model: Model) -> crate::Result<propdp_core::metrics::Metrics> {
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
fn match_error(
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
    let root = propdp_theory::numerics::roots::brent(
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
        (_, Some(e)) => Err(anyhow!("matching the held-out error: {e}").into()),
        (None, None) => Err(anyhow!("matching the held-out error {target}: Brent's method did not converge").into()),
    }
}

/// A refusal naming `label`.
fn refuse(why: String) -> crate::Error {
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
    fn describe(&self) -> String {
        format!(
            "{FOLDS}-fold held-out error {:.4} ± {:.4} of ridge logistic regression (λ₀ = {LAMBDA0})",
            self.error, self.error_se
        )
    }
}

/// The logistic effective model of ±1 labels `y` under `choice` (module
/// docs; [`DataModelChoice::Auto`] tries both data models).
pub fn classification(
    design: &Design,
    y: &DVector<f64>,
    probe: &Probe,
    choice: DataModelChoice,
) -> crate::Result<EffectiveModel> {
    let cv = CrossFit::logistic(design.xt, y)?;
    match choice {
        DataModelChoice::Teacher => logistic(design, y, probe, &cv),
        DataModelChoice::TwoCluster => two_cluster::estimate(design.xt, y, &cv, probe),
        DataModelChoice::Auto => {
            let teacher = logistic(design, y, probe, &cv);
            if let Ok(t) = &teacher
                && t.describes()
            {
                return teacher;
            }
            let clusters = two_cluster::estimate(design.xt, y, &cv, probe);
            match (clusters, teacher) {
                (Ok(c), _) if c.describes() => Ok(c),
                (_, Ok(t)) if t.describes_but_for_balance() => Ok(t),
                (Ok(c), _) => Ok(c),
                (Err(_), Ok(t)) => Ok(t),
                (Err(c), Err(t)) => Err(refuse(format!(
                    "neither data model describes these labels — a logistic teacher: {}; two clusters: {}",
                    strip(&t),
                    strip(&c)
                ))),
            }
        }
    }
}

/// A refusal's text without its `label: ` prefix.
fn strip(e: &crate::Error) -> String {
    let s = e.to_string();
    s.split_once(": ").map_or(s.clone(), |(_, rest)| rest.to_string())
}

/// The logistic effective model of ±1 labels `y` with a teacher (module docs).
fn logistic(design: &Design, y: &DVector<f64>, probe: &Probe, cv: &CrossFit) -> crate::Result<EffectiveModel> {
    let k = design.xt.nrows();
    let cov = design.covariance()?;
    let field = cov.as_ref().map_or(1.0, Covariance::teacher_field);
    let solver = TheorySolver::default().with_covariance(cov);
    let n_train = cv.n_train;
    let delta = k as f64 / n_train as f64;
    let (err, err_se) = (cv.error, cv.error_se);
    let at = |rho: f64| predict(&solver, delta, rho / field, Model::Logistic);
    let error_at = |rho: f64| at(rho).map(|m| m[TEST_CLASS_ERR]);
    let (chance, floor) = (error_at(RHO_MIN)?, error_at(RHO_MAX)?);
    let rows = cv.describe();
    if err >= chance {
        return Err(refuse(format!(
            "{rows} is at chance (the theory gives {chance:.4} at ρ = {RHO_MIN:e}): the labels carry no signal a \
             linear classifier finds"
        )));
    }
    if err <= floor {
        return Err(refuse(format!(
            "{rows} is at or below {floor:.4}, the theory's error of that fit as s² → ∞ (ρ = {RHO_MAX:e}) at \
             δ = {delta:.4}: the data are (nearly) separable, and no s² of the logistic model describes them"
        )));
    }
    // ρ at which the predicted error is `target` (0 at chance, ∞ at the floor)
    let invert = |target: f64| {
        match_error(
            &error_at,
            (RHO_MIN, RHO_MAX),
            (chance, floor),
            target,
            (0.0, f64::INFINITY),
        )
    };
    let rho = invert(err)?;
    let (rho_lo, rho_hi) = (invert(err + err_se)?, invert(err - err_se)?);
    let metrics = at(rho)?;
    // the predictions at the interval's ends (ρ_max for an unbounded one) give their s.e.
    let spread = |f: &dyn Fn(f64) -> crate::Result<f64>| -> crate::Result<f64> {
        Ok((f(rho_hi.min(RHO_MAX))? - f(rho_lo.max(RHO_MIN))?).abs() / 2.0)
    };
    let probe_at = |r: f64| Ok(stein_mu(r).powi(2) * r);
    let (r2, r2_se) = probe.debiased();
    let logloss_at = |r: f64| at(r).map(|m| m[TEST_LOGLOSS]);
    let (ll, ll_se) = cv.logloss;
    let (balance, balance_se) = mean_se(y.iter().copied());
    let checks = vec![
        Check {
            name: "linear probe: debiased R² of the least-squares fit of the ±1 labels, against μ(ρ)²ρ",
            predicted: probe_at(rho)?,
            predicted_se: spread(&probe_at)?,
            observed: r2,
            observed_se: r2_se,
        },
        Check {
            name: "held-out log-loss of the cross-fitted ridge logistic regression",
            predicted: metrics[TEST_LOGLOSS],
            predicted_se: spread(&logloss_at)?,
            observed: ll,
            observed_se: ll_se,
        },
        Check {
            name: BALANCE,
            predicted: 0.0,
            predicted_se: 0.0,
            observed: balance,
            observed_se: balance_se,
        },
    ];
    Ok(EffectiveModel {
        model: ModelKind::Logistic,
        huber_m: None,
        s2: rho / field,
        s2_interval: (rho_lo / field, rho_hi / field),
        noise_sd: None,
        rho,
        n_train,
        delta,
        headline: Check {
            name: "held-out classification error",
            predicted: metrics[TEST_CLASS_ERR],
            predicted_se: 0.0,
            observed: err,
            observed_se: err_se,
        },
        checks,
        data: DataModel::Teacher,
    })
}

/// The Huber (threshold `huber_m`) or least-squares (`None`) effective model
/// of standardised labels `y` with s², noise sd `noise_sd` from the
/// least-squares fit (module docs).
pub fn regression(
    design: &Design,
    y: &DVector<f64>,
    probe: &Probe,
    s2: f64,
    huber_m: Option<f64>,
) -> crate::Result<EffectiveModel> {
    let (k, n) = design.xt.shape();
    let cov = design.covariance()?;
    let field = cov.as_ref().map_or(1.0, Covariance::teacher_field);
    let solver = TheorySolver::default().with_covariance(cov);
    let loss = huber_m.map_or(Loss::Squared, |m| Loss::Huber { m });
    let (fitted, n_train) = cross_fit(design.xt, y, loss)?;
    let delta = k as f64 / n_train as f64;
    let noise_sd = probe.noise2.sqrt();
    let mse_at = |s2: f64, sd: f64| -> crate::Result<f64> {
        let model = Model::Huber {
            huber_m: huber_m.unwrap_or(LEAST_SQUARES_M),
            noise: NoiseLaw::Gaussian { sd },
        };
        Ok(predict(&solver, delta, s2, model)?[TEST_MSE])
    };
    let predicted = mse_at(s2, noise_sd)?;
    // first-order s.e. of the prediction from those of ρ̂ (Probe::debiased) and σ̂² (χ² of N − k − 1)
    let (_, rho_se) = probe.debiased();
    let s2_se = rho_se / field;
    let noise2_se = probe.noise2 * (2.0 / (n - k - 1) as f64).sqrt();
    let (hs, hn) = (0.5 * s2_se.min(0.5 * s2), 0.5 * noise2_se.min(0.5 * probe.noise2));
    let d_s2 = (mse_at(s2 + hs, noise_sd)? - mse_at(s2 - hs, noise_sd)?) / (2.0 * hs) * s2_se;
    let d_n =
        (mse_at(s2, (probe.noise2 + hn).sqrt())? - mse_at(s2, (probe.noise2 - hn).sqrt())?) / (2.0 * hn) * noise2_se;
    let (mse, mse_se) = mean_se(fitted.iter().zip(y.iter()).map(|(r, y)| (y - r).powi(2)));
    Ok(EffectiveModel {
        model: if huber_m.is_some() {
            ModelKind::Huber
        } else {
            ModelKind::LeastSquares
        },
        huber_m,
        s2,
        s2_interval: ((s2 - s2_se).max(0.0), s2 + s2_se),
        noise_sd: Some(noise_sd),
        rho: s2 * field,
        n_train,
        delta,
        headline: Check {
            name: "held-out mean squared error",
            predicted,
            predicted_se: d_s2.hypot(d_n),
            observed: mse,
            observed_se: mse_se,
        },
        checks: Vec::new(),
        data: DataModel::Teacher,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// μ(ρ) = 2E[σ'(√ρ g)]: ½ at ρ = 0 (σ'(0) = ¼), and μ²ρ → 2/π as ρ → ∞
    /// (σ' integrates to 1: E σ'(√ρ g) ≈ φ(0)/√ρ); against a plain Monte
    /// Carlo-free check by Gauss–Hermite at moderate ρ.
    #[test]
    fn stein_mu_has_its_limits_and_matches_gauss_hermite() {
        assert!((stein_mu(1e-8) - 0.5).abs() < 1e-6);
        let big = 1e6;
        assert!((stein_mu(big).powi(2) * big - 2.0 / std::f64::consts::PI).abs() < 1e-3);
        let rule = propdp_theory::numerics::gauss_hermite::NormalRule::new(200);
        for rho in [0.3f64, 1.0, 4.0] {
            let gh = 2.0
                * rule.expect(|g| {
                    let s = propdp_core::loss::sigmoid(rho.sqrt() * g);
                    s * (1.0 - s)
                });
            assert!(
                (stein_mu(rho) - gh).abs() < 1e-9,
                "ρ = {rho}: {} vs {gh}",
                stein_mu(rho)
            );
        }
    }

    /// z is the difference over the combined s.e.; agreement within 3.
    #[test]
    fn a_check_agrees_within_three_standard_errors() {
        let c = Check {
            name: "x",
            predicted: 1.0,
            predicted_se: 0.3,
            observed: 2.0,
            observed_se: 0.4,
        };
        assert!((c.z() - 2.0).abs() < 1e-12 && c.agrees());
        assert!(!Check { observed: 3.1, ..c }.agrees());
    }
}
