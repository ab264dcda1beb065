//! DMFT of DP-GD against simulated DP-GD, at every step and for every
//! metric, by the docs/theory.md §5 rule with the combined standard error of the
//! simulation (repetitions) and the theory (RQMC scrambles).

use propdp_core::validation::agrees;
use propdp_core::{Algorithm, Design, LossVariant, Model, NoiseLaw, Point, Prior, config::SolverOptions};
use propdp_sim::{SimSettings, simulate};
use propdp_theory::solve::TheorySolver;

const D: usize = 500;
const REPS: usize = 40;

fn disagreements(point: &Point, design: Design, index: u64) -> Vec<String> {
    let theory = TheorySolver::new(SolverOptions::default())
        .solve(point, None)
        .expect("DMFT solves");
    let tpath = theory.per_step.expect("DP-GD has a path");
    let sim = simulate(point, &SimSettings::new(D, REPS, design, Prior::Gaussian, 77), index).expect("simulation runs");
    let spath = sim.per_step.expect("DP-GD has a path");
    let mut bad = Vec::new();
    for (name, tv) in &tpath.mean {
        for (t, &th) in tv.iter().enumerate().skip(1) {
            let (m, se_sim) = (spath.mean[name][t], spath.stderr[name][t]);
            let se = (se_sim.powi(2) + tpath.stderr[name][t].powi(2)).sqrt();
            if !agrees(name, th, m, se, D, false) {
                bad.push(format!(
                    "{design:?} {name} t={t}: theory {th:.5} sim {m:.5} ± {se_sim:.5}"
                ));
            }
        }
    }
    bad
}

fn dpgd(model: Model, delta: f64, lambda: f64, sigma: f64, eta: f64, variant: LossVariant) -> Point {
    Point::new(
        delta,
        1.0,
        model,
        Algorithm::Dpgd {
            lambda,
            sigma,
            eta,
            steps: 15,
            loss_variant: variant,
        },
    )
    .unwrap()
}

#[test]
fn conditional_huber_delta_1_sigma_1() {
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let p = dpgd(huber, 1.0, 0.1, 1.0, 0.3, LossVariant::Conditional);
    let bad = disagreements(&p, Design::Gaussian, 0);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn standard_logistic_delta_2_sigma_3() {
    let p = dpgd(Model::Logistic, 2.0, 0.1, 3.0, 1.0, LossVariant::Standard);
    let bad = disagreements(&p, Design::Gaussian, 1);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn rademacher_design_conditional_logistic() {
    let p = dpgd(Model::Logistic, 0.5, 0.1, 1.0, 0.5, LossVariant::Conditional);
    let bad = disagreements(&p, Design::Rademacher, 2);
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn standard_huber_with_random_labels() {
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let p = dpgd(huber, 0.5, 0.1, 1.0, 0.2, LossVariant::Standard);
    let bad = disagreements(&p, Design::Gaussian, 3);
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The comparison has power: the DMFT of σ = 3.6 is rejected by the
/// simulation of σ = 3.
#[test]
fn wrong_noise_level_is_rejected() {
    let truth = dpgd(Model::Logistic, 2.0, 0.1, 3.0, 1.0, LossVariant::Standard);
    let wrong = dpgd(Model::Logistic, 2.0, 0.1, 3.6, 1.0, LossVariant::Standard);
    let theory = TheorySolver::new(SolverOptions::default()).solve(&wrong, None).unwrap();
    let sim = simulate(
        &truth,
        &SimSettings::new(D, REPS, Design::Gaussian, Prior::Gaussian, 77),
        1,
    )
    .unwrap();
    let (t, m, se) = (theory.metrics["norm2"], sim.mean["norm2"], sim.stderr["norm2"]);
    assert!(
        !agrees("norm2", t, m, se, D, false),
        "σ = 3.6 theory {t} not rejected by σ = 3 simulation {m} ± {se}"
    );
}
