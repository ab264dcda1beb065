//! Calibration of one knob on the certified ε (`calibrate`): the value
//! returned never overshoots — its ε read back, recomputed from scratch, is
//! at most the target over thousands of generated targets — and it is
//! close to the best the certificate allows.

use propdp_accountant::Neighbouring;
use propdp_accountant::bracket::{BracketSettings, EpsilonBracket, Method};
use propdp_accountant::calibrate::{Knob, Target};
use propdp_accountant::events::{Event, Segment};
use propdp_accountant::sampling::{Sampling, sampled_epsilon};
use proptest::prelude::*;

mod common;
use common::calibrate;

/// The certified ε of one run: the Poisson figure of [`sampled_epsilon`].
fn certified(run: &Segment, delta: f64, n: Neighbouring, s: BracketSettings) -> Option<EpsilonBracket> {
    let event = Event::dpsgd(run.noise_multiplier, run.sample_rate, run.steps);
    sampled_epsilon(Sampling::Poisson, &event, delta, n, s).ok()?.epsilon
}

/// Brackets 1% wide: the search is the same, each evaluation cheaper.
const COARSE: BracketSettings = BracketSettings {
    relative_width: 1e-2,
    max_points: 1 << 20,
    method: Method::Certified,
};

fn relation() -> impl Strategy<Value = Neighbouring> {
    prop_oneof![Just(Neighbouring::AddRemoveOne), Just(Neighbouring::ReplaceOne)]
}

/// One (ε, δ) calibration of `knob` under `n`: refused as unattainable, or
/// its ε read back from scratch is at most the target (and is the bracket
/// the calibration reported).
fn never_overshoots(knob: Knob, n: Neighbouring, run: Segment, epsilon: f64, delta: f64) -> Result<(), TestCaseError> {
    match calibrate(
        knob,
        run,
        Target::Approx {
            epsilon,
            delta_priv: delta,
        },
        n,
        COARSE,
    ) {
        Ok(c) => {
            let back = certified(&c.run, delta, n, COARSE).expect("a finite ε read back");
            prop_assert!(
                back.upper <= epsilon,
                "{knob:?} {n:?} {run:?}: {c:?} reads back {back:?} > {epsilon}"
            );
            prop_assert_eq!(Some(back), c.epsilon);
        }
        Err(e) => prop_assert_eq!(e.argument(), "epsilon", "{}", e),
    }
    Ok(())
}

/// Runs of up to 12 steps at z ∈ [1, 10] (each certified ε a few ms; the
/// search is the one used at every size), q ∈ [0.01, 1], and targets
/// ε ∈ [0.2, 16], δ ∈ [10⁻¹⁰, 10⁻³].
fn run_and_target() -> impl Strategy<Value = (Segment, f64, f64)> {
    (0.0f64..1.0, -2.0f64..0.0, 1u64..13, -0.7f64..1.2, -10.0f64..-3.0).prop_map(|(lz, lq, steps, le, ld)| {
        let run = Segment {
            noise_multiplier: 10f64.powf(lz),
            sample_rate: 10f64.powf(lq),
            steps,
        };
        (run, 10f64.powf(le), 10f64.powf(ld))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 700, ..ProptestConfig::default() })]

    /// 700 generated targets for the noise multiplier, 700 for the sample
    /// rate and 300 for the steps (below) never read back above the target.
    #[test]
    #[ignore = "slow: run with --include-ignored"]
    fn calibrated_noise_never_reads_back_above_its_target((run, e, d) in run_and_target(), n in relation()) {
        never_overshoots(Knob::NoiseMultiplier, n, run, e, d)?;
    }

    #[test]
    #[ignore = "slow: run with --include-ignored"]
    fn a_calibrated_sample_rate_never_reads_back_above_its_target((run, e, d) in run_and_target(), n in relation()) {
        never_overshoots(Knob::SampleRate, n, run, e, d)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Steps at q ≥ 0.1 and ε ≤ 3 (so that the calibrated T, and each
    /// certified ε on the way, stays small).
    #[test]
    #[ignore = "slow: run with --include-ignored"]
    fn calibrated_steps_never_read_back_above_their_target((run, e, d) in run_and_target(), n in relation()) {
        let run = Segment { sample_rate: run.sample_rate.max(0.1), ..run };
        never_overshoots(Knob::Steps, n, run, e.min(3.0), d)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// A ρ calibration (closed form) reads back at most ρ, and is within
    /// one step or 10⁻¹² of it.
    #[test]
    #[ignore = "slow: run with --include-ignored"]
    fn a_rho_calibration_never_reads_back_above_its_target(
        steps in 1u64..100_000,
        log_z in -1.0f64..2.0,
        log_rho in -4.0f64..2.0,
        n in relation(),
    ) {
        let run = Segment { noise_multiplier: 10f64.powf(log_z), sample_rate: 0.01, steps };
        let rho = 10f64.powf(log_rho);
        let c = calibrate(Knob::NoiseMultiplier, run, Target::Zcdp { rho }, n, COARSE).unwrap();
        prop_assert!(c.rho <= rho && c.rho >= rho * (1.0 - 1e-12), "{c:?}");
        if let Ok(c) = calibrate(Knob::Steps, run, Target::Zcdp { rho }, n, COARSE) {
            // and one more step would exceed ρ
            prop_assert!(c.rho <= rho && c.rho * (c.run.steps + 1) as f64 / c.run.steps as f64 > rho, "{c:?}");
        }
    }
}

/// The calibrated value is close to the best the certificate allows: 1%
/// less noise, or 1% more steps or sample rate, is certainly above the
/// target (the bracket's lower end says so).
#[test]
fn a_calibration_is_within_one_percent_of_the_true_optimum() {
    let s = BracketSettings::default();
    let run = Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 1000,
    };
    for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
        for (epsilon, delta) in [(1.0, 1e-5), (4.0, 1e-8)] {
            let target = Target::Approx {
                epsilon,
                delta_priv: delta,
            };
            for (knob, nudge) in [
                (Knob::NoiseMultiplier, 0.99),
                (Knob::SampleRate, 1.01),
                (Knob::Steps, 1.01),
            ] {
                let c = calibrate(knob, run, target, n, s).unwrap();
                let b = c.epsilon.unwrap();
                assert!(b.upper <= epsilon, "{knob:?} {n:?} {c:?}");
                let worse = match knob {
                    Knob::NoiseMultiplier => Segment {
                        noise_multiplier: c.run.noise_multiplier * nudge,
                        ..c.run
                    },
                    Knob::SampleRate => Segment {
                        sample_rate: c.run.sample_rate * nudge,
                        ..c.run
                    },
                    Knob::Steps => Segment {
                        steps: (c.run.steps as f64 * nudge).ceil() as u64,
                        ..c.run
                    },
                };
                let w = certified(&worse, delta, n, s).unwrap();
                assert!(
                    w.lower > epsilon,
                    "{knob:?} {n:?} ε {epsilon}: {c:?}, 1% worse {worse:?} reads {w:?}"
                );
            }
        }
    }
}

#[test]
fn unattainable_targets_and_bad_arguments_are_refused_by_name() {
    let (n, s) = (Neighbouring::AddRemoveOne, BracketSettings::default());
    let run = Segment {
        noise_multiplier: 0.5,
        sample_rate: 0.5,
        steps: 10,
    };
    let eps = |epsilon: f64, delta: f64| Target::Approx {
        epsilon,
        delta_priv: delta,
    };
    let err = |knob: Knob, run: Segment, t: Target| calibrate(knob, run, t, n, s).unwrap_err();
    // one step at z = 0.5, q = 0.5 is far above ε = 0.01
    let e = err(Knob::Steps, run, eps(0.01, 1e-6));
    assert_eq!(e.argument(), "epsilon");
    assert!(e.to_string().contains("steps"), "{e}");
    let e = err(Knob::SampleRate, run, Target::Zcdp { rho: 1.0 });
    assert_eq!(e.argument(), "sample_rate");
    assert!(e.to_string().contains("does not depend on the sample rate"), "{e}");
    assert_eq!(err(Knob::NoiseMultiplier, run, eps(-1.0, 1e-6)).argument(), "epsilon");
    assert_eq!(err(Knob::NoiseMultiplier, run, eps(1.0, 0.0)).argument(), "delta");
    assert_eq!(
        err(Knob::NoiseMultiplier, run, Target::Zcdp { rho: 0.0 }).argument(),
        "rho"
    );
    let bad_q = Segment {
        sample_rate: 2.0,
        ..run
    };
    assert_eq!(
        err(Knob::NoiseMultiplier, bad_q, eps(1.0, 1e-6)).argument(),
        "segment[0].sample_rate"
    );
    // the knob's own field is not checked: it is what is solved for
    assert!(calibrate(Knob::SampleRate, bad_q, eps(1.0, 1e-6), n, s).is_ok());
    let zero = BracketSettings {
        relative_width: 0.0,
        ..s
    };
    let e = calibrate(Knob::NoiseMultiplier, run, eps(1.0, 1e-6), n, zero).unwrap_err();
    assert_eq!(e.argument(), "relative_width");
    // a target every value meets returns the knob's limit
    let c = calibrate(
        Knob::SampleRate,
        Segment {
            noise_multiplier: 50.0,
            ..run
        },
        eps(5.0, 1e-6),
        n,
        s,
    )
    .unwrap();
    assert_eq!(c.run.sample_rate, 1.0);
}
