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

use nalgebra::DVector;
use propdp_core::covariance::Covariance;
use propdp_core::loss::Loss;
use propdp_core::metrics::{TEST_CLASS_ERR, TEST_LOGLOSS, TEST_MSE};
use propdp_core::{Model, ModelKind, NoiseLaw};
use propdp_theory::solve::TheorySolver;

mod matching;
pub mod two_cluster;

use matching::{BALANCE, cross_fit, match_error, mean_se, predict, refuse};
pub use matching::{
    Check, CrossFit, DISAGREE_Z, DataModel, DataModelChoice, Design, EffectiveModel, FOLD_STREAM, FOLDS, LAMBDA0,
    LEAST_SQUARES_M, Probe, RHO_MAX, RHO_MIN, stein_mu,
};

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
