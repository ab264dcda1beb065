//! DMFT of mini-batch DP-SGD (Poisson selections per sample path, scalar
//! clipping; docs/theory.md §3.1) against simulated DP-SGD (fresh Poisson
//! batches, per-example clipping by ‖ℓ'ᵢxᵢ‖), at every step and for every
//! metric, with the combined standard error of the simulation
//! (repetitions) and the theory (RQMC scrambles).
//!
//! One path is k ≈ 100–200 comparisons (steps × metrics): at |z| ≤ 3 each,
//! a correct theory would fail a path about one time in three (k·0.27%).
//! A path passes when every |z| ≤ z_k, the two-sided Bonferroni threshold
//! at which the *whole path's* false-alarm rate is that of one 3σ
//! comparison (0.27%; z_k ≈ 4.1 at k = 140), plus the docs/theory.md §5.1
//! finite-size allowance of each metric.

use propdp_core::validation::finite_size_allowance;
use propdp_core::{Algorithm, Design, LossVariant, Model, NoiseLaw, Point, Prior, config::SolverOptions};
use propdp_sim::{SimSettings, simulate};
use propdp_theory::solve::TheorySolver;

/// (disagreements, rms z over steps t ≥ 1 and metrics).
fn compare(
    theory_point: &Point,
    sim_point: &Point,
    d: usize,
    reps: usize,
    design: Design,
    index: u64,
) -> (Vec<String>, f64) {
    let theory = TheorySolver::new(SolverOptions::default())
        .solve(theory_point, None)
        .expect("DMFT solves");
    let tpath = theory.per_step.expect("DP-SGD has a path");
    let sim = simulate(
        sim_point,
        &SimSettings::new(d, reps, design, Prior::Gaussian, 91),
        index,
    )
    .expect("simulation runs");
    let spath = sim.per_step.expect("DP-SGD has a path");
    let k = tpath.mean.values().map(|v| v.len() - 1).sum::<usize>() as f64;
    // two-sided: P(|z| > z_k) = 0.0027/k
    let z_k = -propdp_theory::numerics::gaussian::quantile(0.00135 / k);
    let (mut bad, mut z2) = (Vec::new(), 0.0);
    for (name, tv) in &tpath.mean {
        for (t, &th) in tv.iter().enumerate().skip(1) {
            let (m, se_sim) = (spath.mean[name][t], spath.stderr[name][t]);
            let se = (se_sim.powi(2) + tpath.stderr[name][t].powi(2)).sqrt();
            z2 += ((th - m) / se).powi(2);
            if (th - m).abs() > z_k * se + finite_size_allowance(name, th, d, false) {
                bad.push(format!(
                    "{design:?} {name} t={t}: theory {th:.5} sim {m:.5} ± {se_sim:.5} (|z| > {z_k:.2})"
                ));
            }
        }
    }
    (bad, (z2 / k).sqrt())
}

#[allow(clippy::too_many_arguments)]
fn dpsgd(
    model: Model,
    delta: f64,
    lambda: f64,
    sigma: f64,
    eta: f64,
    steps: usize,
    q: f64,
    clip: Option<f64>,
) -> Point {
    Point::new(
        delta,
        1.0,
        model,
        Algorithm::Dpsgd {
            lambda,
            sigma,
            eta,
            steps,
            loss_variant: LossVariant::Standard,
            sample_rate: q,
            clip,
            groups: 1,
            strategy: propdp_core::problem::Strategy::IDENTITY,
        },
    )
    .unwrap()
}

fn huber() -> Model {
    Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    }
}

/// The same point with the full batch (q = 1): what a closure that ignores
/// the selections predicts.
fn full_batch(p: &Point) -> Point {
    let Algorithm::Dpsgd {
        lambda,
        sigma,
        eta,
        steps,
        loss_variant,
        clip,
        ..
    } = p.algorithm()
    else {
        unreachable!("DP-SGD points")
    };
    let a = Algorithm::Dpsgd {
        lambda,
        sigma,
        eta,
        steps,
        loss_variant,
        sample_rate: 1.0,
        clip,
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    };
    p.with_algorithm(a).unwrap()
}

#[test]
fn standard_logistic_q_0_2() {
    // η = 2 is above full-batch GD's 2/L = 1.33 here: the mini-batch steps are smaller on average
    let p = dpsgd(Model::Logistic, 1.0, 0.5, 1.0, 2.0, 20, 0.2, None);
    let (bad, rms) = compare(&p, &p, 1000, 40, Design::Gaussian, 0);
    assert!(bad.is_empty(), "rms z {rms:.2}: {bad:#?}");
}

#[test]
fn standard_huber_q_0_1() {
    let p = dpsgd(huber(), 2.0, 1.0, 2.0, 1.0, 20, 0.1, None);
    let (bad, rms) = compare(&p, &p, 1000, 40, Design::Gaussian, 1);
    assert!(bad.is_empty(), "rms z {rms:.2}: {bad:#?}");
}

#[test]
fn clipped_logistic_on_a_rademacher_design() {
    let p = dpsgd(Model::Logistic, 0.5, 0.1, 0.5, 1.0, 20, 0.5, Some(0.5));
    let (bad, rms) = compare(&p, &p, 500, 30, Design::Rademacher, 2);
    assert!(bad.is_empty(), "rms z {rms:.2}: {bad:#?}");
}

/// The comparison has power: the full-batch closure (selections ignored) is
/// rejected by the simulation of q = 0.2 (measured rms z 15–25).
#[test]
fn ignoring_the_selections_is_rejected() {
    let p = dpsgd(Model::Logistic, 1.0, 0.5, 1.0, 2.0, 20, 0.2, None);
    let (bad, rms) = compare(&full_batch(&p), &p, 1000, 40, Design::Gaussian, 0);
    assert!(
        rms > 5.0 && bad.len() > 10,
        "rms z {rms:.2}, {} disagreements",
        bad.len()
    );
}

/// q = 1 without clipping is DP-GD: the same theory and the same simulation
/// (no selection draws at q = 1), number for number.
#[test]
fn full_batch_unclipped_dpsgd_is_dpgd() {
    let p = dpsgd(huber(), 1.0, 0.2, 1.0, 0.3, 10, 1.0, None);
    let Algorithm::Dpsgd {
        lambda,
        sigma,
        eta,
        steps,
        loss_variant,
        ..
    } = p.algorithm()
    else {
        unreachable!()
    };
    let gd = p
        .with_algorithm(Algorithm::Dpgd {
            lambda,
            sigma,
            eta,
            steps,
            loss_variant,
        })
        .unwrap();
    let solver = TheorySolver::new(SolverOptions::default());
    let (a, b) = (solver.solve(&p, None).unwrap(), solver.solve(&gd, None).unwrap());
    assert_eq!(a.per_step, b.per_step);
    let s = SimSettings::new(200, 4, Design::Gaussian, Prior::Gaussian, 5);
    let (x, y) = (simulate(&p, &s, 0).unwrap(), simulate(&gd, &s, 0).unwrap());
    assert_eq!(x.per_step, y.per_step);
}

fn least_squares() -> Model {
    Model::LeastSquares {
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    }
}

#[test]
fn clipped_squared_loss_q_0_3() {
    let p = dpsgd(least_squares(), 0.5, 0.1, 0.5, 1.5, 20, 0.3, Some(1.0));
    let (bad, rms) = compare(&p, &p, 1000, 40, Design::Gaussian, 3);
    assert!(bad.is_empty(), "rms z {rms:.2}: {bad:#?}");
}

/// Clipped at C, the squared loss's gradient factor is the Huber loss's with
/// threshold M = C: the DMFT predicts the same iterates (est_err2, overlap,
/// norm2 at every step); only the training loss, a different function, differs.
#[test]
fn clipped_squared_loss_descends_like_huber_with_threshold_c() {
    let ls = dpsgd(least_squares(), 0.5, 0.1, 0.5, 1.0, 12, 0.3, Some(0.8));
    let huber = Model::Huber {
        huber_m: 0.8,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let hb = dpsgd(huber, 0.5, 0.1, 0.5, 1.0, 12, 0.3, None);
    let solver = TheorySolver::new(SolverOptions::default());
    let (a, b) = (solver.solve(&ls, None).unwrap(), solver.solve(&hb, None).unwrap());
    let (a, b) = (a.per_step.unwrap(), b.per_step.unwrap());
    for name in ["est_err2", "overlap", "norm2"] {
        for (x, y) in a.mean[name].iter().zip(&b.mean[name]) {
            assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{name}: {x} vs {y}");
        }
    }
    assert_ne!(a.mean["train_loss"], b.mean["train_loss"]);
}
