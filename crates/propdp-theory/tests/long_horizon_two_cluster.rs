//! The long-horizon state evolution of the two-cluster data model
//! (docs/theory.md §3.6: the modes of Σ_w = κ²Σ, every path's field shifted
//! by ỹ·m_t + β_t, its label independent of ν, the pathwise drift
//! Σ_k R_g(t,k)·m_k/ρ_w + a·E[ĝ_t ỹ]) against the full-memory DMFT of the
//! same model at T = 150, clipped DP-SGD at q = 0.05, κ² = 0.7: every metric
//! at every step as z-scores combining both solvers' standard errors (they
//! share no random numbers: rms z ≤ 2 over all steps, |z| ≤ 4 at the
//! checkpoints, the rule of `long_horizon.rs`). Isotropic at balance ½ and
//! ¾ (the latter with a learned intercept), and a 3-atom spectrum at ¾ with
//! and without the intercept (the one-field-per-path solver of §3.4). And
//! the dispatch of `TheorySolver` on two-cluster points under `solver.dmft`.

use propdp_core::config::{DmftMethod, SolverOptions};
use propdp_core::covariance::Covariance;
use propdp_core::loss::Loss;
use propdp_core::metrics::{FITTED_INTERCEPT, TEST_CLASS_ERR};
use propdp_core::problem::{TwoCluster, mean_step_smoothness_at};
use propdp_core::record::DynamicsMethod;
use propdp_core::{Algorithm, LossVariant, Model, Point};
use propdp_theory::dynamics::long_horizon::{self, TRUNCATION_TOL};
use propdp_theory::dynamics::{DmftParams, Intercept, full_memory};
use propdp_theory::solve::TheorySolver;

mod common;
use common::z_scores;

const KAPPA2: f64 = 0.7;

/// Clipped logistic DP-SGD at Bayes margin ρ_w = κ²s²·Σwωe.
fn params(rho_w: f64, cov: Option<&Covariance>) -> DmftParams {
    DmftParams {
        delta: 0.5,
        s2: rho_w / (KAPPA2 * cov.map_or(1.0, Covariance::teacher_field)),
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
        seed: 5,
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    }
}

fn covariance() -> Covariance {
    Covariance::from_columns(&[3.0, 1.0, 0.25], &[0.2, 0.3, 0.5], &[2.0, 1.0, 0.6], "c")
        .unwrap()
        .unwrap()
}

fn agrees_with_the_full_memory_solver(p: DmftParams, cov: Option<&Covariance>, balance: f64, learned: bool) {
    let mix = TwoCluster {
        balance,
        within: KAPPA2,
    };
    let icp = Intercept {
        teacher: 0.0,
        learned: true,
        lambda: 0.0,
    };
    let icp = learned.then_some(&icp);
    let long = long_horizon::solve_two_cluster(&p, cov, &mix, icp, &|| false).expect("long-horizon solve");
    let exact = full_memory::solve_two_cluster(&DmftParams { points: 2048, ..p }, cov, &mix, icp, &|| false)
        .expect("full-memory solve");
    let err = long.path.mean[TEST_CLASS_ERR][p.steps];
    assert!(err < 0.4, "test_class_err_T = {err}: nothing learned");
    if learned {
        let beta = long.path.mean[FITTED_INTERCEPT][p.steps];
        assert!(beta.is_finite(), "β_T = {beta}");
    }
    let (rms, max) = z_scores(&long.path, &exact);
    println!(
        "p = {balance}, Σ: {}, intercept: {learned}: rms z {rms:.2}, max |z| {max:.2}, test_class_err_T {err:.4}, \
         window {}",
        cov.is_some(),
        long.window
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
fn isotropic_balanced_two_clusters_agree_with_the_full_memory_solver() {
    agrees_with_the_full_memory_solver(params(4.0, None), None, 0.5, false);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn isotropic_unbalanced_two_clusters_with_an_intercept_agree_with_the_full_memory_solver() {
    agrees_with_the_full_memory_solver(params(9.0, None), None, 0.75, true);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn two_clusters_on_a_spectrum_agree_with_the_full_memory_solver() {
    let cov = covariance();
    agrees_with_the_full_memory_solver(params(4.0, Some(&cov)), Some(&cov), 0.75, false);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn two_clusters_on_a_spectrum_with_an_intercept_agree_with_the_full_memory_solver() {
    let cov = covariance();
    agrees_with_the_full_memory_solver(params(4.0, Some(&cov)), Some(&cov), 0.75, true);
}

/// A two-cluster DP-SGD point (p = ¾, κ² = 0.7, ρ_w = 4, q = 0.05, C = 0.5)
/// at step size η over T steps.
fn two_cluster_point(eta: f64, steps: usize) -> Point {
    let algorithm = Algorithm::Dpsgd {
        lambda: 0.1,
        sigma: 1.0,
        eta,
        steps,
        loss_variant: LossVariant::Standard,
        sample_rate: 0.05,
        clip: Some(0.5),
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    };
    Point::new(0.5, 4.0 / KAPPA2, Model::Logistic, algorithm)
        .unwrap()
        .with_two_cluster(TwoCluster {
            balance: 0.75,
            within: KAPPA2,
        })
        .unwrap()
}

fn solver(method: DmftMethod) -> TheorySolver {
    TheorySolver::new(SolverOptions {
        dmft_points: Some(256),
        dmft_scrambles: 2,
        dmft: method,
        ..Default::default()
    })
}

/// "auto" takes the full-memory DMFT up to 100 steps and the long horizon
/// beyond, "long_horizon" the long horizon at any horizon, "exact" the
/// full-memory DMFT; beyond the mean step's limit 2/L_q — with XᵀX's
/// spectrum scaled by κ² — a long horizon is refused, naming the limit.
#[test]
fn two_clusters_take_the_long_horizon_beyond_100_steps() {
    for (method, steps, want) in [
        (DmftMethod::Auto, 100, DynamicsMethod::Dmft),
        (DmftMethod::Auto, 101, DynamicsMethod::LongHorizon),
        (DmftMethod::LongHorizon, 20, DynamicsMethod::LongHorizon),
        (DmftMethod::Exact, 120, DynamicsMethod::Dmft),
    ] {
        let sol = solver(method).solve(&two_cluster_point(1.0, steps), None).unwrap();
        assert_eq!(sol.report.method, Some(want), "{method:?}, T = {steps}");
        assert_eq!(sol.per_step.unwrap().mean[TEST_CLASS_ERR].len(), steps + 1);
    }
    let limit = 2.0 / mean_step_smoothness_at(0.25 * KAPPA2, 0.5, 0.1, 0.05, None);
    let e = solver(DmftMethod::Auto)
        .solve(&two_cluster_point(limit + 0.5, 400), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("algorithm.eta") && e.contains(&format!("{limit:.4}")), "{e}");
}
