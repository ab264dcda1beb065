//! The exact least-squares trajectory (docs/theory.md §3.2: a spectral
//! integral, no Monte Carlo) against simulated DP-GD/DP-SGD of the real
//! algorithm at long horizons, and against the full-memory DMFT (RQMC) at a
//! short one: every evaluated step, every metric.

use propdp_core::config::{DmftMethod, SolverOptions};
use propdp_core::record::DynamicsMethod;
use propdp_core::validation::agrees;
use propdp_core::{Algorithm, Design, LossVariant, Model, NoiseLaw, Point, Prior};
use propdp_sim::gd::evaluation_steps;
use propdp_sim::{SimSettings, simulate};
use propdp_theory::solve::TheorySolver;

fn least_squares(delta: f64, lambda: f64, sigma: f64, eta: f64, steps: usize, q: f64) -> Point {
    Point::new(
        delta,
        1.0,
        Model::LeastSquares {
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        Algorithm::Dpsgd {
            lambda,
            sigma,
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

/// (disagreements by the §5 rule at the checkpoints t = 1, 2, 5, 10, 20, …
/// and T, rms z over every evaluated step t ≥ 1 and metric) of the exact path against
/// a simulation at dimension `d`. (The rule at each of thousands of
/// correlated steps would fail by chance: max |z| reaches 4–5.5 over 8000
/// values at rms z 1.)
fn against_simulation(point: &Point, d: usize, reps: usize) -> (Vec<String>, f64) {
    let sol = TheorySolver::default().solve(point, None).expect("solves");
    assert_eq!(sol.report.method, Some(DynamicsMethod::Spectral));
    let theory = sol.per_step.expect("a path");
    let sim = simulate(
        point,
        &SimSettings::new(d, reps, Design::Gaussian, Prior::Gaussian, 5),
        0,
    )
    .expect("runs");
    let sim = sim.per_step.expect("a path");
    // the simulation's evaluated steps (every step up to 1000)
    let steps = point.params()["steps"] as usize;
    let at = evaluation_steps(steps).unwrap_or_else(|| (0..=steps).collect());
    let (mut bad, mut z2, mut k) = (Vec::new(), 0.0, 0.0);
    for (name, tv) in &theory.mean {
        for (i, &t) in at.iter().enumerate().skip(1) {
            let th = tv[t];
            let (m, se) = (sim.mean[name][i], sim.stderr[name][i]);
            z2 += ((th - m) / se).powi(2);
            k += 1.0;
            if checkpoint(t, tv.len() - 1) && !agrees(name, th, m, se, d, false) {
                bad.push(format!("{name} t={t}: exact {th:.5} sim {m:.5} ± {se:.5}"));
            }
        }
    }
    let rms = (z2 / k).sqrt();
    eprintln!(
        "δ = {}, q = {:?}, T = {:?}: rms z {rms:.2}",
        point.delta(),
        point.params()["sample_rate"],
        point.params()["steps"]
    );
    (bad, rms)
}

fn checkpoint(t: usize, steps: usize) -> bool {
    let mut c = 1;
    while c < t {
        c = match c.to_string().as_bytes()[0] {
            b'1' => c * 2,
            b'2' => c / 2 * 5,
            _ => c * 2,
        };
    }
    c == t || t == steps
}

#[test]
fn small_batches_over_two_thousand_steps_agree_with_simulation() {
    // q = 0.01 for 20 epochs; η half the largest step whose second moments stay
    // bounded (4.59 here, although 2/L_q = 18.5)
    let p = least_squares(0.5, 0.05, 0.3, 2.2947, 2000, 0.01);
    let (bad, rms) = against_simulation(&p, 500, 20);
    assert!(bad.is_empty() && rms < 1.5, "rms z {rms:.2}: {bad:#?}");
}

#[test]
fn the_full_batch_and_a_wide_design_agree_with_simulation() {
    for p in [
        least_squares(0.5, 0.1, 0.5, 0.3, 200, 1.0),
        least_squares(2.0, 0.1, 0.5, 0.3, 200, 0.1),
    ] {
        let (bad, rms) = against_simulation(&p, 500, 20);
        assert!(bad.is_empty() && rms < 1.5, "rms z {rms:.2}: {bad:#?}");
    }
}

#[test]
fn the_full_memory_dmft_converges_to_the_exact_path() {
    // the DMFT's RQMC spread is its only error: z over every step and metric
    let opts = SolverOptions {
        dmft_scrambles: 16,
        dmft: DmftMethod::Exact,
        ..SolverOptions::default()
    };
    for q in [1.0, 0.2, 0.05] {
        let p = least_squares(0.5, 0.1, 0.5, 0.3, 20, q);
        let exact = TheorySolver::default().solve(&p, None).unwrap().per_step.unwrap();
        let sol = TheorySolver::new(opts).solve(&p, None).unwrap();
        assert_eq!(sol.report.method, Some(DynamicsMethod::Dmft));
        let dmft = sol.per_step.unwrap();
        let (mut z2, mut k, mut worst) = (0.0, 0.0, 0.0f64);
        for (name, ev) in &exact.mean {
            for (t, e) in ev.iter().enumerate().skip(1) {
                let z = (dmft.mean[name][t] - e) / dmft.stderr[name][t];
                z2 += z * z;
                k += 1.0;
                worst = worst.max(z.abs());
            }
        }
        let rms = (z2 / k).sqrt();
        eprintln!("DMFT at q = {q}: rms z {rms:.2}, max |z| {worst:.2}");
        assert!(rms < 2.0 && worst < 5.0, "q = {q}: rms z {rms:.2}, max |z| {worst:.2}");
    }
}
