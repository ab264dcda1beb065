//! A point with an intercept (docs/theory.md §3.5) through `TheorySolver`:
//! dispatched to the intercept's full-memory DMFT, its test_mse kept
//! (est_err2 + (β − b*)² + sd², not overwritten by `with_test_error`), and
//! refused where that DMFT does not serve it.

use propdp_core::config::{DmftMethod, SolverOptions};
use propdp_core::covariance::Covariance;
use propdp_core::metrics::{EST_ERR2, FITTED_INTERCEPT, PRED_ERR2, TEST_MSE};
use propdp_core::problem::Intercept;
use propdp_core::{Algorithm, LossVariant, Model, NoiseLaw, Point};
use propdp_theory::solve::TheorySolver;

const SD: f64 = 0.5;

fn huber(steps: usize) -> Point {
    let algorithm = Algorithm::Dpsgd {
        lambda: 0.1,
        sigma: 0.5,
        eta: 0.5,
        steps,
        loss_variant: LossVariant::Standard,
        sample_rate: 0.2,
        clip: Some(0.5),
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    };
    let model = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: SD },
    };
    Point::new(0.5, 1.0, model, algorithm).unwrap()
}

fn solver(method: DmftMethod) -> TheorySolver {
    TheorySolver::new(SolverOptions {
        dmft_points: Some(1 << 11),
        dmft: method,
        ..Default::default()
    })
}

#[test]
fn the_intercept_path_keeps_its_test_mse_with_the_intercept_error() {
    let b_star = 1.5;
    let p = huber(10)
        .with_intercept(Intercept {
            teacher: b_star,
            learned: true,
        })
        .unwrap();
    let sol = solver(DmftMethod::Auto).solve(&p, None).unwrap();
    let path = sol.per_step.unwrap();
    let (err, beta, mse) = (&path.mean[EST_ERR2], &path.mean[FITTED_INTERCEPT], &path.mean[TEST_MSE]);
    assert_eq!(beta[0], 0.0);
    assert!(beta[10] > 0.3 && beta[10] < b_star, "β_T = {}", beta[10]);
    // the mean over k scrambles of (β_k − b*)² is (β̄ − b*)² + (k − 1)·se(β)²
    let k = SolverOptions::default().dmft_scrambles as f64;
    let se = &path.stderr[FITTED_INTERCEPT];
    for t in 0..=10 {
        let want = err[t] + (beta[t] - b_star).powi(2) + (k - 1.0) * se[t] * se[t] + SD * SD;
        assert!((mse[t] - want).abs() < 1e-12, "t = {t}: {} vs {want}", mse[t]);
    }
    assert_eq!(sol.metrics[TEST_MSE], mse[10]);
    // without a learned intercept β stays 0 and the error of b* is all of it
    let fixed = huber(10)
        .with_intercept(Intercept {
            teacher: b_star,
            learned: false,
        })
        .unwrap();
    let m = solver(DmftMethod::Auto).solve(&fixed, None).unwrap().metrics;
    assert_eq!(m[FITTED_INTERCEPT], 0.0);
    assert!((m[TEST_MSE] - (m[EST_ERR2] + b_star * b_star + SD * SD)).abs() < 1e-12);
    // the point without the feature: no intercept metric, test_mse = est_err2 + sd²
    let plain = solver(DmftMethod::Auto).solve(&huber(10), None).unwrap().metrics;
    assert!(!plain.contains_key(FITTED_INTERCEPT));
    assert!((plain[TEST_MSE] - (plain[EST_ERR2] + SD * SD)).abs() < 1e-12);
}

/// With a covariance the intercept's path carries pred_err2 and its
/// test_mse = pred_err2 + (β − b*)² + sd² (up to the scrambles' spread of β,
/// as above).
#[test]
fn an_intercept_with_a_covariance_measures_its_test_error_in_the_prediction_space() {
    let b_star = 1.0;
    let p = huber(10)
        .with_intercept(Intercept {
            teacher: b_star,
            learned: true,
        })
        .unwrap();
    let cov = Covariance::from_columns(&[2.0, 0.5], &[0.5, 0.5], &[1.0, 1.0], "c")
        .unwrap()
        .unwrap();
    let path = solver(DmftMethod::Auto)
        .with_covariance(Some(cov))
        .solve(&p, None)
        .unwrap()
        .per_step
        .unwrap();
    let (pred, est) = (&path.mean[PRED_ERR2], &path.mean[EST_ERR2]);
    let (beta, mse) = (&path.mean[FITTED_INTERCEPT], &path.mean[TEST_MSE]);
    let k = SolverOptions::default().dmft_scrambles as f64;
    let se = &path.stderr[FITTED_INTERCEPT];
    assert!(beta[10] > 0.3 && beta[10] < b_star, "β_T = {}", beta[10]);
    assert!(
        (pred[10] - est[10]).abs() > 1e-3,
        "pred_err2 {} = est_err2 {}",
        pred[10],
        est[10]
    );
    for t in 0..=10 {
        let want = pred[t] + (beta[t] - b_star).powi(2) + (k - 1.0) * se[t] * se[t] + SD * SD;
        assert!((mse[t] - want).abs() < 1e-12, "t = {t}: {} vs {want}", mse[t]);
    }
}

/// Beyond 100 steps (or under `dmft = "long_horizon"`) the long-horizon
/// state evolution serves the intercept, with its field and metrics; a
/// conditional loss is refused by it as by the full-memory one.
#[test]
fn the_long_horizon_serves_an_intercept() {
    let p = huber(120)
        .with_intercept(Intercept {
            teacher: 1.0,
            learned: true,
        })
        .unwrap();
    for method in [DmftMethod::Auto, DmftMethod::LongHorizon] {
        let sol = solver(method).solve(&p, None).unwrap();
        assert_eq!(
            sol.report.method,
            Some(propdp_core::record::DynamicsMethod::LongHorizon)
        );
        let beta = sol.metrics[FITTED_INTERCEPT];
        assert!(beta > 0.5 && beta < 1.0, "β_T = {beta}");
    }
    let params = propdp_theory::dynamics::DmftParams {
        delta: 0.5,
        s2: 1.0,
        lambda: 0.1,
        sigma: 0.5,
        eta: 0.5,
        steps: 120,
        sample_rate: 0.2,
        clip: 0.5,
        loss: propdp_core::loss::Loss::ConditionalHuber { m: 1.0, se: SD },
        noise_sd: SD,
        points: 256,
        scrambles: 2,
        seed: 1,
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    };
    let icp = propdp_theory::dynamics::Intercept {
        teacher: 1.0,
        learned: true,
        lambda: 0.0,
    };
    let e = propdp_theory::dynamics::long_horizon::solve_intercept(&params, None, &icp, &|| false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("intercept") && e.contains("standard losses"), "{e}");
}

/// `propdp_sim::simulate` of Huber and least-squares points with an
/// intercept (the simulator's own descent, not the standalone reference of
/// `propdp-sim/tests/intercept_agreement.rs`) against the theory at every
/// step: |z| ≤ 4 with the combined standard error, rms z ≤ 1.6.
#[test]
fn the_simulator_agrees_with_the_theory_for_regression_with_an_intercept() {
    use propdp_core::{Design, Prior};
    use propdp_sim::{SimSettings, simulate};
    let ls = Point::new(
        0.5,
        1.0,
        Model::LeastSquares {
            noise: NoiseLaw::Gaussian { sd: SD },
        },
        Algorithm::Dpsgd {
            lambda: 0.1,
            sigma: 0.5,
            eta: 0.3,
            steps: 10,
            loss_variant: LossVariant::Standard,
            sample_rate: 0.3,
            clip: Some(1.0),
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        },
    )
    .unwrap();
    let (mut z2, mut k) = (0.0, 0.0);
    let mut bad = Vec::new();
    for (index, (point, b_star)) in [(huber(10), 1.5), (ls, -2.0)].into_iter().enumerate() {
        let p = point
            .with_intercept(Intercept {
                teacher: b_star,
                learned: true,
            })
            .unwrap();
        let theory = solver(DmftMethod::Auto).solve(&p, None).unwrap().per_step.unwrap();
        let sim = simulate(
            &p,
            &SimSettings::new(400, 40, Design::Gaussian, Prior::Gaussian, 31),
            index as u64,
        )
        .unwrap()
        .per_step
        .unwrap();
        for name in [EST_ERR2, FITTED_INTERCEPT, TEST_MSE, "train_loss", "overlap"] {
            for t in 1..=10 {
                let (x, m) = (theory.mean[name][t], sim.mean[name][t]);
                let se = (theory.stderr[name][t].powi(2) + sim.stderr[name][t].powi(2)).sqrt();
                let z = (m - x) / se;
                z2 += z * z;
                k += 1.0;
                if z.abs() > 4.0 {
                    bad.push(format!(
                        "b* = {b_star} {name} t = {t}: theory {x:.5}, sim {m:.5} (z {z:.2})"
                    ));
                }
            }
        }
    }
    let rms = (z2 / k).sqrt();
    println!("rms z {rms:.2} over {k} comparisons");
    assert!(bad.is_empty() && rms <= 1.6, "rms z {rms:.2}\n{}", bad.join("\n"));
}
