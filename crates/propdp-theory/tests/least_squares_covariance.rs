//! Unclipped least-squares DP-GD/DP-SGD with a feature covariance, solved
//! exactly as integrals over the spectrum of XᵀX (docs/theory.md §3.2, "With
//! a feature covariance"), against independent references: the full-memory
//! state evolution of §3.4 (RQMC, its own standard errors), a simulation of
//! the real algorithm at a long horizon, and the isotropic solver.

use propdp_core::config::{DmftMethod, SolverOptions};
use propdp_core::covariance::{Covariance, TeacherShape};
use propdp_core::record::DynamicsMethod;
use propdp_core::validation::agrees;
use propdp_core::{Algorithm, Design, LossVariant, Model, NoiseLaw, Point, Prior};
use propdp_sim::gd::evaluation_steps;
use propdp_sim::{SimSettings, simulate};
use propdp_theory::dynamics::least_squares::{self, LeastSquaresError, LeastSquaresParams};
use propdp_theory::solve::TheorySolver;

fn point(delta: f64, lambda: f64, eta: f64, steps: usize, q: f64) -> Point {
    Point::new(
        delta,
        1.0,
        Model::LeastSquares {
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        Algorithm::Dpsgd {
            lambda,
            sigma: 0.5,
            eta,
            steps,
            loss_variant: LossVariant::Standard,
            sample_rate: q,
            clip: None,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        },
    )
    .unwrap()
}

/// The three spectra of the checks: two atoms, a 10-level power law with the
/// teacher aligned, and one with the teacher anti-aligned.
fn spectra() -> Vec<(&'static str, Covariance)> {
    vec![
        (
            "two atoms",
            Covariance::from_columns(&[4.0, 1.0], &[0.3, 0.7], &[0.5, 2.0], "c")
                .unwrap()
                .unwrap(),
        ),
        (
            "power law, aligned",
            Covariance::power_law(1.0, 30.0, 10, TeacherShape::Aligned)
                .unwrap()
                .unwrap(),
        ),
        (
            "power law, anti-aligned",
            Covariance::power_law(1.0, 30.0, 10, TeacherShape::AntiAligned)
                .unwrap()
                .unwrap(),
        ),
    ]
}

/// A step at 60% of the mean step's limit 2/L_q with Σ (and at most 1.5).
fn step(cov: &Covariance, delta: f64, q: f64, lambda: f64) -> f64 {
    (1.2 / (q * cov.right_edge(delta) + lambda)).min(1.5)
}

fn exact(cov: &Covariance, p: &Point) -> propdp_theory::dynamics::DmftPath {
    let sol = TheorySolver::default()
        .with_covariance(Some(cov.clone()))
        .solve(p, None)
        .expect("solves");
    assert_eq!(sol.report.method, Some(DynamicsMethod::Spectral));
    assert!(sol.report.approx_error.is_some_and(|e| e < 1e-4));
    sol.per_step.expect("a path")
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn the_exact_path_agrees_with_the_full_memory_state_evolution() {
    // the full-memory solver's RQMC spread (16 scrambles) is its only error: |z| < 4 at
    // every checkpoint and metric, pred_err2 (the two-point term) included
    let opts = SolverOptions {
        dmft: DmftMethod::Exact,
        dmft_scrambles: 16,
        dmft_points: Some(8192),
        ..SolverOptions::default()
    };
    let steps = 100;
    let (mut worst, mut z2, mut count) = (0.0f64, 0.0, 0.0);
    for (i, (name, cov)) in spectra().into_iter().enumerate() {
        // the anti-aligned teacher at δ = 2: the atom at 0 of XᵀX
        let delta = if i == 2 { 2.0 } else { 0.5 };
        for q in [1.0, 0.1, 0.01] {
            let p = point(delta, 0.1, step(&cov, delta, q, 0.1), steps, q);
            let e = exact(&cov, &p);
            let full = TheorySolver::new(opts)
                .with_covariance(Some(cov.clone()))
                .solve(&p, None)
                .expect("solves");
            assert_eq!(full.report.method, Some(DynamicsMethod::Dmft));
            let f = full.per_step.expect("a path");
            assert_eq!(e.mean.keys().collect::<Vec<_>>(), f.mean.keys().collect::<Vec<_>>());
            for (metric, ev) in &e.mean {
                for t in [1, 2, 5, 10, 20, 50, steps] {
                    let z = (ev[t] - f.mean[metric][t]) / f.stderr[metric][t];
                    assert!(
                        z.abs() < 4.0,
                        "{name}, δ = {delta}, q = {q}, {metric} t = {t}: exact {} full memory {} ± {} (z = {z:.2})",
                        ev[t],
                        f.mean[metric][t],
                        f.stderr[metric][t]
                    );
                    worst = worst.max(z.abs());
                    z2 += z * z;
                    count += 1.0;
                }
            }
        }
    }
    eprintln!(
        "against the full memory: max |z| {worst:.2}, rms z {:.2} over {count}",
        (z2 / count).sqrt()
    );
}

/// (disagreements by the §5.1 rule at the checkpoints, rms z over every
/// evaluated step and metric, max |z|) of the exact path against a simulation.
fn against_simulation(cov: &Covariance, p: &Point, d: usize, reps: usize, seed: u64) -> (Vec<String>, f64, f64) {
    let theory = exact(cov, p);
    let settings =
        SimSettings::new(d, reps, Design::Gaussian, Prior::Gaussian, seed).with_covariance(Some(cov.clone()));
    let sim = simulate(p, &settings, 0).expect("runs").per_step.expect("a path");
    let steps = p.params()["steps"] as usize;
    let at = evaluation_steps(steps).unwrap_or_else(|| (0..=steps).collect());
    let (mut bad, mut z2, mut k, mut worst) = (Vec::new(), 0.0, 0.0, 0.0f64);
    for (name, tv) in &theory.mean {
        for (i, &t) in at.iter().enumerate().skip(1) {
            let (th, m, se) = (tv[t], sim.mean[name][i], sim.stderr[name][i]);
            let z = (th - m) / se;
            z2 += z * z;
            k += 1.0;
            worst = worst.max(z.abs());
            let checkpoint = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].contains(&t) || t == steps;
            if checkpoint && !agrees(name, th, m, se, d, true) {
                bad.push(format!("{name} t={t}: exact {th:.5} sim {m:.5} ± {se:.5}"));
            }
        }
    }
    let rms = (z2 / k).sqrt();
    eprintln!(
        "δ = {}, T = {steps}: rms z {rms:.2}, max |z| {worst:.2} over {k}",
        p.delta()
    );
    (bad, rms, worst)
}

#[test]
#[ignore = "slow: run with --include-ignored"]
fn long_horizons_agree_with_simulated_dpsgd_with_a_covariance() {
    let spectra = spectra();
    // DP-SGD, q = 0.05 for 150 epochs, power law with an aligned teacher, at
    // d = 2000: the simulation's finite-size excess in its stationary norm2
    // is about 25/d (measured over seeds 11, 41, 51, t ≥ 500: +10.5% at
    // d = 250, +4.7% at 500, +2.4% at 1000, +1.0% at 2000), above the 3%
    // standard error of 20 repetitions at d = 500, which made rms z ≈ 1.5
    // there whichever the seed; at d = 2000 it is below the 1.3% error
    let (_, aligned) = &spectra[1];
    let p = point(0.5, 0.05, step(aligned, 0.5, 0.05, 0.05), 3000, 0.05);
    let (bad, rms, _) = against_simulation(aligned, &p, 2000, 20, 11);
    assert!(bad.is_empty() && rms < 1.5, "rms z {rms:.2}: {bad:#?}");
    // DP-GD on two atoms at δ = 2 (the atom at 0), 2000 steps
    let (_, two) = &spectra[0];
    let p = point(2.0, 0.05, step(two, 2.0, 1.0, 0.05), 2000, 1.0);
    let (bad, rms, _) = against_simulation(two, &p, 500, 20, 12);
    assert!(bad.is_empty() && rms < 1.5, "rms z {rms:.2}: {bad:#?}");
}

#[test]
fn two_atoms_of_one_eigenvalue_are_the_isotropic_solution() {
    // Σ = I with the teacher's energy split 3/2 : 1/2 is the isotropic problem through the
    // covariance code (μ* = μ_Σ = μ, ν_ac = 0): the isotropic solver's path to rounding,
    // and pred_err2 = est_err2
    let cov = Covariance::from_columns(&[1.0, 1.0], &[0.5, 0.5], &[1.5, 0.5], "c")
        .unwrap()
        .unwrap();
    for (delta, q, steps) in [(0.5, 1.0, 300), (2.0, 0.1, 2000), (0.5, 0.01, 5000)] {
        let p = LeastSquaresParams {
            delta,
            s2: 1.0,
            noise_sd: 0.5,
            lambda: 0.05,
            sigma: 0.3,
            eta: (0.6 / (q * propdp_core::spectrum::right_edge(delta) + 0.05)).min(1.5),
            sample_rate: q,
            steps,
        };
        let iso = least_squares::solve(&p).unwrap().path.mean;
        let with = least_squares::solve_with_covariance(&p, Some(&cov)).unwrap().path.mean;
        for (name, v) in &iso {
            for (t, (a, b)) in v.iter().zip(&with[name]).enumerate() {
                assert!(
                    (a - b).abs() < 1e-11 * a.abs().max(1.0),
                    "δ = {delta}, q = {q}, {name} t = {t}: {a} vs {b}"
                );
            }
        }
        for (t, (a, b)) in iso["est_err2"].iter().zip(&with["pred_err2"]).enumerate() {
            assert!((a - b).abs() < 1e-11 * a.max(1.0), "pred_err2 t = {t}: {b} vs {a}");
        }
    }
    // a one-atom spectrum is no covariance at all: the isotropic route, bit for bit
    assert!(Covariance::from_columns(&[3.0], &[1.0], &[5.0], "c").unwrap().is_none());
    let p = point(0.5, 0.1, 0.3, 1000, 0.2);
    let (a, b) = (
        TheorySolver::default().solve(&p, None).unwrap(),
        TheorySolver::default().with_covariance(None).solve(&p, None).unwrap(),
    );
    assert_eq!(a.per_step, b.per_step);
}

#[test]
fn any_horizon_is_served_and_a_divergent_step_is_refused_with_its_gain() {
    let (_, cov) = &spectra()[1];
    // beyond the full-memory solver's 1000 steps: the exact route, in well under a second
    let p = point(0.5, 0.1, step(cov, 0.5, 0.1, 0.1), 20_000, 0.1);
    let t0 = std::time::Instant::now();
    let path = exact(cov, &p);
    assert!(t0.elapsed().as_secs_f64() < 5.0 && path.mean["pred_err2"].len() == 20_001);
    // q = 0.01 and η = 7 < 2/L_q: the sampling noise's gain G > 1 (a Point refuses it
    // already by the isotropic gain; the solver checks the spectrum's own)
    let p = LeastSquaresParams {
        delta: 0.5,
        s2: 1.0,
        noise_sd: 0.5,
        lambda: 0.05,
        sigma: 0.3,
        eta: 7.0,
        sample_rate: 0.01,
        steps: 10,
    };
    assert!(7.0 * (0.01 * cov.right_edge(0.5) + 0.05) < 2.0);
    match least_squares::solve_with_covariance(&p, Some(cov)) {
        Err(LeastSquaresError::Diverges { gain, ratio, .. }) => {
            assert!(gain > 1.0 && ratio < 1.0, "G = {gain}, ηL_q/2 = {ratio}")
        }
        other => panic!("{other:?}"),
    }
}
