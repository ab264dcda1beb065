//! Monotonicity of every guarantee in every argument (property tests): more
//! noise, more ridge, a larger ε or δ never weaken a guarantee; more steps, a
//! larger Lipschitz constant or the replace-one relation never strengthen it.

mod common;
use common::MechanismExt;

use propdp_accountant::{Mechanism, MechanismKind, Neighbouring};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

/// The mechanism of `kind` for Huber's loss at M = `huber_m` (L = M, β = 1),
/// or the logistic loss (L = 1, β = 1/4) without one.
fn mechanism(huber_m: Option<f64>, kind: MechanismKind, relation: Neighbouring) -> Mechanism {
    let (l, beta) = huber_m.map_or((1.0, 0.25), |m| (m, 1.0));
    Mechanism::new(kind, l, beta, relation)
}

fn kind(which: u8, lambda: f64, steps: usize) -> MechanismKind {
    match which % 3 {
        0 => MechanismKind::Objective { lambda },
        1 => MechanismKind::Output { lambda },
        _ => MechanismKind::Dpgd { steps },
    }
}

/// a ≤ b up to rounding.
fn le(a: f64, b: f64) -> bool {
    a <= b * (1.0 + 1e-12) + 1e-300
}

/// 2000 cases from a fixed-seed generator: the same cases on every run.
#[test]
fn guarantees_are_monotone_in_every_argument() {
    let config = ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let cases = (
        0u8..3,
        proptest::option::of(0.3f64..3.0),
        0.05f64..50.0,
        1usize..200,
        0.2f64..200.0,
        0.05f64..12.0,
        any::<bool>(),
    );
    let result = runner.run(&cases, |(which, huber_m, lambda, steps, noise, eps, replace)| {
        let rel = if replace {
            Neighbouring::ReplaceOne
        } else {
            Neighbouring::AddRemoveOne
        };
        let m = mechanism(huber_m, kind(which, lambda, steps), rel);
        let d = m.delta(eps, noise);
        let r = m.rho(noise);
        prop_assert!((0.0..=1.0).contains(&d));
        // larger ε, more noise: smaller δ(ε); more noise: smaller ρ
        prop_assert!(le(m.delta(eps * 1.2, noise), d));
        prop_assert!(le(m.delta(eps, noise * 1.2), d));
        prop_assert!(le(m.rho(noise * 1.2), r));
        // more ridge (objective, output): smaller δ and ρ; more steps (DP-GD): larger
        let stronger = mechanism(huber_m, kind(which, lambda * 1.2, steps + 1), rel);
        if which % 3 == 2 {
            prop_assert!(le(d, stronger.delta(eps, noise)) && le(r, stronger.rho(noise)));
        } else {
            prop_assert!(le(stronger.delta(eps, noise), d) && le(stronger.rho(noise), r));
        }
        // a larger Lipschitz constant (Huber M): weaker
        if let Some(mm) = huber_m {
            let rough = mechanism(Some(mm * 1.2), kind(which, lambda, steps), rel);
            prop_assert!(le(d, rough.delta(eps, noise)) && le(r, rough.rho(noise)));
        }
        // replace-one is never stronger than add/remove-one
        let add = mechanism(huber_m, kind(which, lambda, steps), Neighbouring::AddRemoveOne);
        let rep = mechanism(huber_m, kind(which, lambda, steps), Neighbouring::ReplaceOne);
        prop_assert!(le(add.delta(eps, noise), rep.delta(eps, noise)) && le(add.rho(noise), rep.rho(noise)));
        // ε achieved: smaller with more noise and with a larger δ
        if let (Some(e0), Some(e1), Some(e2)) = (
            m.epsilon(noise, 1e-6),
            m.epsilon(noise * 1.2, 1e-6),
            m.epsilon(noise, 1e-4),
        ) {
            prop_assert!(le(e1, e0) && le(e2, e0), "ε: {e0} {e1} {e2}");
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
