//! The long-horizon state evolution with a feature covariance (one
//! coordinate-side mode per atom, docs/theory.md §3.4) against the
//! full-memory solver with the same spectrum at T = 200: every metric at
//! every step as z-scores combining both solvers' standard errors (they
//! share no random numbers: rms z ≤ 2, |z| ≤ 4 at the checkpoints, as the
//! isotropic comparison of `long_horizon.rs`), and the metrics a spectrum
//! adds (pred_err2) present in both.

use propdp_core::covariance::{Covariance, TeacherShape};
use propdp_core::loss::Loss;
use propdp_theory::dynamics::long_horizon::{self, LongHorizonPath, TRUNCATION_TOL};
use propdp_theory::dynamics::{DmftParams, DmftPath, full_memory};

mod common;
use common::{z_scores, z_scores_with};

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
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    }
}

fn agrees_with_the_full_memory_solver(p: DmftParams, cov: &Covariance) {
    let long = long_horizon::solve_spectrum(&p, Some(cov), &|| false).expect("long-horizon solve");
    agrees(&p, cov, &long, z_scores);
}

fn agrees(p: &DmftParams, cov: &Covariance, long: &LongHorizonPath, z: impl Fn(&DmftPath, &DmftPath) -> (f64, f64)) {
    let exact =
        full_memory::solve_spectral(&DmftParams { points: 2048, ..*p }, Some(cov), &|| false).expect("full memory");
    assert!(long.path.mean.contains_key("pred_err2") && exact.mean.contains_key("pred_err2"));
    assert_eq!(
        long.path.mean.keys().collect::<Vec<_>>(),
        exact.mean.keys().collect::<Vec<_>>()
    );
    let (rms, max) = z(&long.path, &exact);
    assert!(
        rms <= 2.0 && max <= 4.0,
        "{p:?}: rms z {rms:.2}, max |z| {max:.2} (window {})",
        long.window
    );
    assert!(
        long.approx_error <= TRUNCATION_TOL.max(long_horizon::COMPRESSION_TOL),
        "{}",
        long.approx_error
    );
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn huber_dpgd_on_a_power_law_spectrum_agrees_with_the_full_memory_solver() {
    // η below this spectrum's limit 2/L_Σ = 0.138 (λ₊ of XᵀX grows with the condition number)
    let cov = Covariance::power_law(1.0, 20.0, 8, TeacherShape::Aligned)
        .unwrap()
        .unwrap();
    agrees_with_the_full_memory_solver(DmftParams { eta: 0.1, ..base() }, &cov);
}

#[test]
#[ignore = "slow: run with --include-ignored"]
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

/// Clipped DP-SGD at η = 0.1, q = 0.1, C = 1 on [`base`].
fn clipped_dpsgd() -> DmftParams {
    DmftParams {
        eta: 0.1,
        sample_rate: 0.1,
        clip: 1.0,
        ..base()
    }
}

/// A spectrum of 100 atoms, above the long-horizon solver's `MAX_MODES`, is
/// compressed: the solve reports the compression's measured effect in
/// `approx_error` (within `COMPRESSION_TOL`) and agrees with the
/// full-memory solver on all 100 atoms within its standard errors and that
/// stated error.
#[test]
#[ignore = "slow: run with --include-ignored"]
fn a_spectrum_of_many_atoms_is_compressed_with_its_effect_reported() {
    let cov = Covariance::power_law(1.0, 20.0, 100, TeacherShape::Spread)
        .unwrap()
        .unwrap();
    let p = clipped_dpsgd();
    let long = long_horizon::solve_spectrum(&p, Some(&cov), &|| false).expect("long-horizon solve");
    assert!(long.approx_error > 0.0, "{}", long.approx_error);
    agrees(&p, &cov, &long, |a, b| z_scores_with(a, b, long.approx_error));
}

/// A spectrum of 20 atoms (at most `MAX_MODES`) is solved on the fewest
/// nodes of its quadrature that move the linearised dynamics by at most
/// `NEGLIGIBLE_COMPRESSION` (a handful for a smooth power law), the effect
/// in `approx_error`, and agrees with the full-memory solver on all 20 atoms.
#[test]
#[ignore = "slow: run with --include-ignored"]
fn a_spectrum_whose_compression_is_negligible_is_solved_compressed() {
    let cov = Covariance::power_law(1.0, 20.0, 20, TeacherShape::Aligned)
        .unwrap()
        .unwrap();
    let p = clipped_dpsgd();
    let long = long_horizon::solve_spectrum(&p, Some(&cov), &|| false).expect("long-horizon solve");
    assert!(long.modes <= 8, "{} modes", long.modes);
    assert!(long.approx_error > 0.0, "{}", long.approx_error);
    agrees(&p, &cov, &long, |a, b| z_scores_with(a, b, long.approx_error));
}
