//! The metrics of docs/theory.md §1 for one fitted θ̂. Test metrics are
//! those of a fresh sample from the same model and θ*: for a Gaussian
//! design exactly, from the population ([`TestSet::Population`]); otherwise
//! estimated on held-out rows ([`TestSet::Rows`]).
//!
//! For Gaussian rows x ~ N(0, Σ/d) the test fit f = xᵀθ̂ and the teacher's
//! field ν = xᵀθ* are jointly Gaussian with Var f = q = θ̂ᵀΣθ̂/d,
//! Cov(f, ν) = m = θ̂ᵀΣθ*/d and Var ν = s² = θ*ᵀΣθ*/d, so the test metrics
//! of θ̂ are functions of (q, m, s²) and the label law: test_mse =
//! q − 2m + s² + Var ε (Huber, least squares); test_class_err =
//! 2E[sigmoid(ν)Φ(−bν/τ)] and test_logloss = 2E[sigmoid(ν)E ρ(−bν − τξ)]
//! with b = m/s², τ² = q − m²/s² (logistic), by one-dimensional quadrature
//! ([`propdp_core::population`], which the theory evaluates at its
//! predicted overlaps).

use nalgebra::DVector;
use propdp_core::Model;
use propdp_core::metrics::{self, Metrics};

use crate::data::{Coordinates, Dataset};
use propdp_core::loss::softplus;
use propdp_core::population;

/// Where the test metrics of a fitted θ̂ come from.
#[derive(Debug, Clone, Copy)]
pub enum TestSet<'a> {
    /// Held-out rows and their labels.
    Rows(&'a Dataset),
    /// The population of a Gaussian design (exact), with the label noise's
    /// variance for the regression models.
    Population {
        /// Var ε of the label noise (regression models; `None`: logistic).
        noise_variance: Option<f64>,
    },
}

/// (q, m, s²) = (θ̂ᵀΣθ̂, θ̂ᵀΣθ*, θ*ᵀΣθ*)/d, Σ = diag(ω) in `coords`' basis (I without).
fn population_overlaps(theta: &DVector<f64>, star: &DVector<f64>, coords: Option<&Coordinates>) -> [f64; 3] {
    let d = theta.len() as f64;
    let mut acc = [0.0; 3];
    for j in 0..theta.len() {
        let w = coords.map_or(1.0, |c| c.feature_sd[j] * c.feature_sd[j]);
        acc[0] += w * theta[j] * theta[j];
        acc[1] += w * theta[j] * star[j];
        acc[2] += w * star[j] * star[j];
    }
    acc.map(|a| a / d)
}

/// Fraction of sign errors ([`metrics::sign_error`]: a tie counts ½).
fn class_error(y: &DVector<f64>, fit: &DVector<f64>) -> f64 {
    let wrong: f64 = y.iter().zip(fit.iter()).map(|(y, f)| metrics::sign_error(*y, *f)).sum();
    wrong / y.len() as f64
}

/// DP-GD metrics at one step (docs/theory.md §3 observables): est_err2,
/// pred_err2 (= est_err2 without a covariance), overlap, norm2,
/// train_loss, and the test error: test_class_err (logistic) or test_mse
/// (Huber, least squares), on the held-out rows or exactly from the
/// population, as objective perturbation records them. With an intercept
/// `Some((β, b*))` (the learned field β, the teacher's b*): the fit is xᵀθ +
/// β against labels of ν + b*, and β is recorded as fitted_intercept.
pub fn dpgd_metrics(
    model: &Model,
    train: &Dataset,
    test: TestSet,
    theta: &DVector<f64>,
    train_loss: f64,
    coords: Option<&Coordinates>,
    intercept: Option<(f64, f64)>,
) -> Metrics {
    let d = theta.len() as f64;
    let star = &train.theta_star;
    let mut out = Metrics::new();
    let err = theta - star;
    let err2 = err.norm_squared() / d;
    out.insert(metrics::EST_ERR2.into(), err2);
    out.insert(metrics::PRED_ERR2.into(), coords.map_or(err2, |c| c.pred_err2(&err)));
    out.insert(metrics::OVERLAP.into(), theta.dot(star) / d);
    out.insert(metrics::NORM2.into(), theta.norm_squared() / d);
    out.insert(metrics::TRAIN_LOSS.into(), train_loss);
    if let Some((beta, _)) = intercept {
        out.insert(metrics::FITTED_INTERCEPT.into(), beta);
    }
    // a held-out row's fit: xᵀθ (+ β)
    let fit = |test: &Dataset| {
        let mut f = test.xt.tr_mul(theta);
        if let Some((beta, _)) = intercept {
            f.add_scalar_mut(beta);
        }
        f
    };
    match (model, test) {
        (Model::Logistic, TestSet::Rows(test)) => {
            out.insert(metrics::TEST_CLASS_ERR.into(), class_error(&test.y, &fit(test)));
        }
        (Model::Logistic, TestSet::Population { .. }) => {
            let [q, m, s2] = population_overlaps(theta, star, coords);
            let err = match intercept {
                Some((beta, b_star)) => population::test_class_error_shifted(s2, m, q, beta, b_star),
                None => population::test_class_error(s2, m, q),
            };
            out.insert(metrics::TEST_CLASS_ERR.into(), err);
        }
        (Model::Huber { .. } | Model::LeastSquares { .. }, TestSet::Rows(test)) => {
            out.insert(metrics::TEST_MSE.into(), mean_squared(&test.y, &fit(test)));
        }
        (Model::Huber { .. } | Model::LeastSquares { .. }, TestSet::Population { noise_variance }) => {
            if let Some(var) = noise_variance {
                let [q, m, s2] = population_overlaps(theta, star, coords);
                let shift = intercept.map_or(0.0, |(beta, b_star)| (beta - b_star).powi(2));
                out.insert(metrics::TEST_MSE.into(), population::test_mse(s2, m, q, var) + shift);
            }
        }
    }
    out
}

/// Mean of (y − fit)².
fn mean_squared(y: &DVector<f64>, fit: &DVector<f64>) -> f64 {
    y.iter().zip(fit.iter()).map(|(y, f)| (y - f).powi(2)).sum::<f64>() / y.len() as f64
}

/// Every metric the model defines, by its name (docs/theory.md §1); the
/// prediction error pred_err2 in Σ's metric (`None`: isotropic, = est_err2).
pub fn metrics(
    model: &Model,
    train: &Dataset,
    test: TestSet,
    theta: &DVector<f64>,
    b: &DVector<f64>,
    coords: Option<&Coordinates>,
) -> Metrics {
    metrics_with_intercept(model, train, test, theta, b, coords, None)
}

/// [`metrics()`] of a fit with an intercept `Some((β, b*))` (docs/theory.md
/// §2.6: the fitted field β, the teacher's b*): every fit is xᵀθ̂ + β against
/// labels of ν + b*, and β is recorded as fitted_intercept.
pub fn metrics_with_intercept(
    model: &Model,
    train: &Dataset,
    test: TestSet,
    theta: &DVector<f64>,
    b: &DVector<f64>,
    coords: Option<&Coordinates>,
    intercept: Option<(f64, f64)>,
) -> Metrics {
    let d = theta.len() as f64;
    let (beta, b_star) = intercept.unwrap_or((0.0, 0.0));
    let star = &train.theta_star;
    let err = theta - star;
    let err2 = err.norm_squared() / d;
    let overlap = theta.dot(star) / d;
    let mut out = Metrics::new();
    out.insert(metrics::EST_ERR2.into(), err2);
    out.insert(metrics::PRED_ERR2.into(), coords.map_or(err2, |c| c.pred_err2(&err)));
    out.insert(metrics::EST_ERR.into(), err2.sqrt());
    out.insert(metrics::OVERLAP.into(), overlap);
    out.insert(metrics::NORM2.into(), theta.norm_squared() / d);
    out.insert(metrics::BIAS_FACTOR.into(), theta.dot(star) / star.norm_squared());
    out.insert(metrics::NOISE_CORR.into(), theta.dot(b) / d);
    if intercept.is_some() {
        out.insert(metrics::FITTED_INTERCEPT.into(), beta);
    }
    let fit = |xt: &nalgebra::DMatrix<f64>| xt.tr_mul(theta).add_scalar(beta);
    let fit_train = fit(&train.xt);
    let mean = |v: &mut dyn Iterator<Item = f64>, n: usize| v.sum::<f64>() / n as f64;
    let n = train.y.len();
    let overlaps = || population_overlaps(theta, star, coords);
    match *model {
        Model::Huber { huber_m, .. } => {
            let trunc = mean(
                &mut train
                    .y
                    .iter()
                    .zip(fit_train.iter())
                    .map(|(y, f)| (y - f).clamp(-huber_m, huber_m).powi(2)),
                n,
            );
            let mse = match test {
                TestSet::Rows(test) => mean_squared(&test.y, &fit(&test.xt)),
                TestSet::Population { noise_variance } => {
                    let [q, m, s2] = overlaps();
                    population::test_mse(
                        s2,
                        m,
                        q,
                        noise_variance.expect("a regression model's population has Var ε"),
                    ) + (beta - b_star).powi(2)
                }
            };
            out.insert(metrics::TRAIN_RESID_TRUNC.into(), trunc);
            out.insert(metrics::TEST_MSE.into(), mse);
        }
        Model::Logistic => {
            let (wrong, test_ll) = match test {
                TestSet::Rows(test) => {
                    let fit_test = fit(&test.xt);
                    let ll = mean(
                        &mut test.y.iter().zip(fit_test.iter()).map(|(y, f)| softplus(-y * f)),
                        test.y.len(),
                    );
                    (class_error(&test.y, &fit_test), ll)
                }
                TestSet::Population { .. } => {
                    let [q, m, s2] = overlaps();
                    match intercept {
                        Some(_) => (
                            population::test_class_error_shifted(s2, m, q, beta, b_star),
                            population::test_logloss_shifted(s2, m, q, beta, b_star),
                        ),
                        None => (
                            population::test_class_error(s2, m, q),
                            population::test_logloss(s2, m, q),
                        ),
                    }
                }
            };
            let train_ll = mean(
                &mut train.y.iter().zip(fit_train.iter()).map(|(y, f)| softplus(-y * f)),
                n,
            );
            out.insert(metrics::TEST_CLASS_ERR.into(), wrong);
            out.insert(metrics::TEST_LOGLOSS.into(), test_ll);
            out.insert(metrics::TRAIN_LOGLOSS.into(), train_ll);
        }
        Model::LeastSquares { .. } => {
            unreachable!("least squares is refused for objective and output perturbation by Point::check")
        }
    }
    out
}
