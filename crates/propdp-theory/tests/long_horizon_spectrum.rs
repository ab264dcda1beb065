//! The long-horizon state evolution with a feature covariance (one
//! coordinate-side mode per atom, docs/theory.md §3.4) against the
//! full-memory solver with the same spectrum at T = 200: every metric at
//! every step as z-scores combining both solvers' standard errors (they
//! share no random numbers: rms z ≤ 2, |z| ≤ 4 at the checkpoints, as the
//! isotropic comparison of `long_horizon.rs`), and the metrics a spectrum
//! adds (pred_err2) present in both.

use propdp_core::covariance::{Covariance, TeacherShape};
use propdp_core::loss::Loss;
use propdp_theory::dmft::{self, DmftParams};
use propdp_theory::long_horizon::{self, TRUNCATION_TOL};

mod common;
use common::z_scores;

fn base() -> DmftParams {
    DmftParams {
        delta: 0.5,
        s2: 1.0,
        lambda: 0.1,
        sigma: 0.5,
        eta: 0.5,
        steps: 200,
        sample_rate: 1.0,
        clip: f64::INFINITY,
        loss: Loss::Huber { m: 1.0 },
        noise_sd: 0.5,
        points: 1024,
        scrambles: 32,
        seed: 7,
    }
}

fn agrees_with_the_full_memory_solver(p: DmftParams, cov: &Covariance) {
    let long = long_horizon::solve_spectrum(&p, Some(cov), &|| false).expect("long-horizon solve");
    let exact = dmft::solve_spectral(&DmftParams { points: 2048, ..p }, Some(cov), &|| false).expect("full memory");
    assert!(long.path.mean.contains_key("pred_err2") && exact.mean.contains_key("pred_err2"));
    assert_eq!(
        long.path.mean.keys().collect::<Vec<_>>(),
        exact.mean.keys().collect::<Vec<_>>()
    );
    let (rms, max) = z_scores(&long.path, &exact);
    assert!(
        rms <= 2.0 && max <= 4.0,
        "{p:?}: rms z {rms:.2}, max |z| {max:.2} (window {})",
        long.window
    );
    assert!(long.approx_error <= TRUNCATION_TOL, "{}", long.approx_error);
}

#[test]
fn huber_dpgd_on_a_power_law_spectrum_agrees_with_the_full_memory_solver() {
    // η below this spectrum's limit 2/L_Σ = 0.138 (λ₊ of XᵀX grows with the condition number)
    let cov = Covariance::power_law(1.0, 20.0, 8, TeacherShape::Aligned)
        .unwrap()
        .unwrap();
    agrees_with_the_full_memory_solver(DmftParams { eta: 0.1, ..base() }, &cov);
}

#[test]
fn clipped_logistic_dpsgd_on_an_anti_aligned_spectrum_agrees_with_the_full_memory_solver() {
    let cov = Covariance::from_columns(&[4.0, 1.0, 0.25], &[0.2, 0.3, 0.5], &[0.25, 1.0, 4.0], "test")
        .unwrap()
        .unwrap();
    agrees_with_the_full_memory_solver(
        DmftParams {
            s2: 4.0,
            lambda: 0.05,
            eta: 1.0,
            sample_rate: 0.1,
            clip: 0.5,
            loss: Loss::Logistic,
            noise_sd: 0.0,
            ..base()
        },
        &cov,
    );
}
