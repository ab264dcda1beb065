//! Inputs reconstructed from failures reported against other accountants,
//! run through the certified bracket: every answer finite, 0 ≤ lower ≤
//! upper, and consistent across neighbouring inputs (issue #29's regression
//! grid). Memory is bounded by construction (`BracketSettings::max_points`).
//!
//! - prv_accountant #17: ε jumped from 0.06 to 3.8 when δ moved by 3% —
//!   here ε must move smoothly and monotonically with δ.
//! - prv_accountant #36, Opacus #601/#604/#591: "discrete mean differs"
//!   crashes and negative ε at large noise or tiny rates — here ε ≥ 0, no error.
//! - dpsynth #71 (dp-accounting): 75 GB of memory at ε = 0.01 — here a
//!   bracket within the point limit.
//! - google/differential-privacy #378: replace-one's sensitivity off by 2×
//!   — here the full batch under replace-one is the Gaussian mechanism of
//!   sensitivity 2C, exactly.
//! - ε > 10 and δ = 1e-18 (issue #29): finite.
//! - Opacus #346/#566: a noise calibrated to a target read back above it,
//!   or the calibration ran for minutes — here every calibration (noise,
//!   steps, rate; ε from 0.05 to 50, δ down to 1e-18) reads back at most
//!   its target within a bounded number of certified evaluations.

mod common;
#[allow(unused_imports)]
use common::{Events, MechanismExt};

use propdp_accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_accountant::calibrate::{Knob, Target};
use propdp_accountant::events::Segment;
use propdp_accountant::sampling::{Sampling, sampled_epsilon};
use propdp_accountant::{Neighbouring, epsilon, gdp_to_eps};

/// The certified ε of one run: the Poisson figure of [`sampled_epsilon`].
fn certified(run: &Segment, delta: f64, n: Neighbouring, s: BracketSettings) -> Option<EpsilonBracket> {
    let events = Events::run(*run).ok()?;
    sampled_epsilon(Sampling::Poisson, &events, delta, n, s).ok()?.epsilon
}

fn bracket(z: f64, q: f64, steps: u64, delta: f64, n: Neighbouring) -> EpsilonBracket {
    let b = Events::run(Segment {
        noise_multiplier: z,
        sample_rate: q,
        steps,
    })
    .and_then(|e| epsilon(&e, delta, n, BracketSettings::default()))
    .unwrap_or_else(|e| panic!("z {z} q {q} T {steps} δ {delta}: {e}"))
    .unwrap_or_else(|| panic!("z {z} q {q} T {steps} δ {delta}: no finite ε"));
    assert!(
        b.lower.is_finite() && b.upper.is_finite() && 0.0 <= b.lower && b.lower <= b.upper,
        "z {z} q {q} T {steps} δ {delta}: {b:?}"
    );
    b
}

#[test]
fn epsilon_moves_smoothly_and_monotonically_with_delta() {
    // small-ε regime (prv_accountant #17): δ from 0.97e-5 to 1.03e-5 in 1% steps
    let n = Neighbouring::AddRemoveOne;
    let mut last: Option<EpsilonBracket> = None;
    for i in 0..7 {
        let delta = 0.97e-5 * (1.0 + 0.01 * i as f64);
        let b = bracket(5.0, 0.01, 100, delta, n);
        if let Some(prev) = last {
            // a larger δ never needs a larger ε, and 1% in δ moves ε by far less than 5%
            assert!(b.lower <= prev.upper, "δ {delta}: {b:?} after {prev:?}");
            assert!(
                (b.upper / prev.upper - 1.0).abs() < 0.05,
                "δ {delta}: {b:?} after {prev:?}"
            );
        }
        last = Some(b);
    }
}

#[test]
fn large_noise_and_tiny_rates_give_a_small_nonnegative_epsilon() {
    // prv_accountant #36, Opacus #601/#604/#591
    for (z, q, steps) in [(50.0, 0.001, 1), (20.0, 1e-4, 1000), (100.0, 0.5, 10)] {
        let b = bracket(z, q, steps, 1e-5, Neighbouring::AddRemoveOne);
        assert!(b.upper < 0.1, "z {z} q {q} T {steps}: {b:?}");
    }
}

#[test]
fn a_strict_budget_stays_within_the_point_limit() {
    // dpsynth #71: ε ≈ 0.01 needs a large noise; the bracket stays within 2²² points
    let b = bracket(300.0, 0.01, 1000, 1e-6, Neighbouring::AddRemoveOne);
    assert!(b.upper < 0.05, "{b:?}");
}

#[test]
fn replace_one_at_the_full_batch_is_the_gaussian_mechanism_of_sensitivity_2c() {
    // google/differential-privacy #378
    let (z, steps, delta) = (2.0, 100u64, 1e-6);
    let b = bracket(z, 1.0, steps, delta, Neighbouring::ReplaceOne);
    let exact = gdp_to_eps(2.0 * (steps as f64).sqrt() / z, delta).unwrap();
    assert_eq!((b.lower, b.upper), (exact, exact));
    // and below the full batch replace-one costs more than add/remove-one
    let rep = bracket(z, 0.1, steps, delta, Neighbouring::ReplaceOne);
    let add = bracket(z, 0.1, steps, delta, Neighbouring::AddRemoveOne);
    assert!(rep.lower > add.upper, "{rep:?} vs {add:?}");
}

#[test]
fn large_epsilon_and_tiny_delta_are_finite() {
    let tiny = bracket(0.5, 0.1, 1000, 1e-18, Neighbouring::AddRemoveOne);
    let big = bracket(0.5, 0.1, 1000, 1e-5, Neighbouring::AddRemoveOne);
    assert!(big.upper > 10.0 && tiny.lower > big.lower, "{tiny:?} vs {big:?}");
    // replace-one at δ = 1e-18 and large ε (group privacy once asked the
    // add/remove PLD for δ/(1 + e^{250}), beyond any grid): still finite
    use propdp_accountant::{Mechanism, MechanismKind};
    let kind = MechanismKind::Dpsgd {
        steps: 1000,
        sample_rate: 0.1,
        clip: Some(1.0),
    };
    let m = Mechanism::new(kind, 1.0, 0.25, Neighbouring::ReplaceOne);
    let b = m
        .epsilon_bracket(0.5, 1e-18, BracketSettings::default())
        .expect("a finite ε");
    assert!(b.upper.is_finite() && 0.0 <= b.lower && b.lower <= b.upper, "{b:?}");
}

#[test]
fn calibrations_never_overshoot_and_stay_bounded() {
    let s = BracketSettings::default();
    let run = Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 1000,
    };
    for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
        for (epsilon, delta) in [(0.05, 1e-5), (1.0, 1e-5), (50.0, 1e-5), (12.0, 1e-18)] {
            // every knob at ε = 1; the noise (the common calibration) at all
            let knobs: &[Knob] = if epsilon == 1.0 {
                &[Knob::NoiseMultiplier, Knob::Steps, Knob::SampleRate]
            } else {
                &[Knob::NoiseMultiplier]
            };
            for &knob in knobs {
                let target = Target::Approx {
                    epsilon,
                    delta_priv: delta,
                };
                let Ok(c) = common::calibrate(knob, run, target, n, s) else {
                    // only the steps can be out of reach (one step above the target)
                    assert_eq!(knob, Knob::Steps, "{n:?} ε {epsilon} δ {delta}");
                    continue;
                };
                let back = certified(&c.run, delta, n, s).unwrap();
                assert!(back.upper <= epsilon, "{knob:?} {n:?} ε {epsilon} δ {delta}: {c:?}");
                assert!(c.evaluations <= 40, "{knob:?} {n:?} ε {epsilon} δ {delta}: {c:?}");
            }
        }
    }
}
