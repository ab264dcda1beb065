//! The long-horizon state evolution with an intercept (docs/theory.md §3.3,
//! §3.5: the field β_t on every path, labels of ν + b*, logistic labels
//! drawn from their tilted laws) against the full-memory DMFT with the
//! intercept at T = 150, clipped DP-SGD at q = 0.05: every metric at every
//! step as z-scores combining both solvers' standard errors (they share no
//! random numbers: rms z ≤ 2 over all steps, |z| ≤ 4 at the checkpoints,
//! the rule of `long_horizon.rs`). Isotropic logistic (b* = 2.3) and Huber
//! (b* = 1.5), and logistic on a 3-atom spectrum (b* = 0.8; the
//! one-field-per-path solver of §3.4).

use propdp_core::covariance::Covariance;
use propdp_core::loss::Loss;
use propdp_core::metrics::FITTED_INTERCEPT;
use propdp_theory::dynamics::long_horizon::{self, TRUNCATION_TOL};
use propdp_theory::dynamics::{DmftParams, Intercept, full_memory};

mod common;
use common::z_scores;

fn logistic() -> DmftParams {
    DmftParams {
        delta: 0.5,
        s2: 4.0,
        lambda: 0.1,
        sigma: 1.0,
        eta: 1.0,
        steps: 150,
        sample_rate: 0.05,
        clip: 0.5,
        loss: Loss::Logistic,
        noise_sd: 0.0,
        points: 1024,
        scrambles: 16,
        seed: 3,
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    }
}

fn agrees_with_the_full_memory_solver(p: DmftParams, cov: Option<&Covariance>, b_star: f64) {
    let icp = Intercept {
        teacher: b_star,
        learned: true,
        lambda: 0.0,
    };
    let long = long_horizon::solve_intercept(&p, cov, &icp, &|| false).expect("long-horizon solve");
    let exact = full_memory::solve_intercept(&DmftParams { points: 2048, ..p }, cov, &icp, &|| false)
        .expect("full-memory solve");
    let beta = long.path.mean[FITTED_INTERCEPT][p.steps];
    assert!(beta > 0.5 * b_star, "β_T = {beta}: the intercept is not learned");
    let (rms, max) = z_scores(&long.path, &exact);
    println!(
        "{:?}, b* = {b_star}: rms z {rms:.2}, max |z| {max:.2}, β_T = {beta:.4}",
        p.loss
    );
    assert!(
        rms <= 2.0 && max <= 4.0,
        "{p:?}: rms z {rms:.2}, max |z| {max:.2} (window {})",
        long.window
    );
    assert!(long.approx_error <= TRUNCATION_TOL, "{}", long.approx_error);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn clipped_logistic_dpsgd_with_an_intercept_agrees_with_the_full_memory_solver() {
    agrees_with_the_full_memory_solver(logistic(), None, 2.3);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn clipped_huber_dpsgd_with_an_intercept_agrees_with_the_full_memory_solver() {
    let p = DmftParams {
        s2: 1.0,
        eta: 0.5,
        loss: Loss::Huber { m: 1.0 },
        noise_sd: 0.5,
        ..logistic()
    };
    agrees_with_the_full_memory_solver(p, None, 1.5);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn clipped_logistic_with_an_intercept_and_a_spectrum_agrees_with_the_full_memory_solver() {
    let cov = Covariance::from_columns(&[3.0, 1.0, 0.25], &[0.2, 0.3, 0.5], &[0.5, 1.0, 2.0], "c")
        .unwrap()
        .unwrap();
    agrees_with_the_full_memory_solver(logistic(), Some(&cov), 0.8);
}
