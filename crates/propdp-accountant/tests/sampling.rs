//! Sampling schemes (`sampling`): fixed-size batches are the subsampled
//! pair at the 2C shift; shuffled batches get the no-amplification
//! Gaussian ε, with the Poisson figure beside it.

mod common;
#[allow(unused_imports)]
use common::{Events, MechanismExt};

use propdp_accountant::bracket::{BracketSettings, Method};
use propdp_accountant::events::Segment;
use propdp_accountant::sampling::{Sampling, sampled_epsilon};
use propdp_accountant::{Neighbouring, delta_gaussian, gdp_to_eps};

const S: BracketSettings = BracketSettings {
    relative_width: 1e-3,
    max_points: 1 << 22,
    method: Method::Certified,
};

#[test]
fn one_fixed_size_step_brackets_the_coupling_bound_of_balle_et_al() {
    // Balle, Barthe, Gaboardi (2018): an (ε0, δ0)-DP step (replace-one) subsampled
    // without replacement at γ is (log(1 + γ(e^ε0 − 1)), γδ0)-DP; the Gaussian step
    // at the 2C shift is (ε0, δ_G(ε0; 2/z))-DP for every ε0
    for (z, gamma) in [(1.0, 0.01), (2.0, 0.1), (0.8, 0.3)] {
        let run = Segment {
            noise_multiplier: z,
            sample_rate: gamma,
            steps: 1,
        };
        for eps0 in [0.5f64, 1.0, 2.0, 4.0] {
            let delta0 = delta_gaussian(eps0, 2.0 / z);
            let amplified = (gamma * eps0.exp_m1()).ln_1p();
            let ours = Events::run(run)
                .and_then(|e| sampled_epsilon(Sampling::FixedSize, &e, gamma * delta0, Neighbouring::ReplaceOne, S))
                .unwrap()
                .epsilon
                .unwrap();
            // advanced joint convexity makes the bound an equality for the mixture pair
            // H_{e^ε'}(γP + (1−γ)Q ‖ Q) = γ·H_{e^ε0}(P ‖ Q), and the other order is
            // smaller: the exact ε at γδ0 is ε', and the bracket must hold it
            assert!(
                ours.lower <= amplified && amplified <= ours.upper,
                "z {z} γ {gamma} ε0 {eps0}: {ours:?} ∌ {amplified}"
            );
        }
    }
}

#[test]
fn full_fixed_size_batches_are_the_gaussian_mechanism_at_the_2c_shift() {
    let run = Segment {
        noise_multiplier: 3.0,
        sample_rate: 1.0,
        steps: 50,
    };
    let r = Events::run(run)
        .and_then(|e| sampled_epsilon(Sampling::FixedSize, &e, 1e-6, Neighbouring::ReplaceOne, S))
        .unwrap();
    let exact = gdp_to_eps(2.0 * 50f64.sqrt() / 3.0, 1e-6).unwrap();
    assert_eq!(r.epsilon.unwrap().upper, exact);
    assert_eq!(r.sensitivity, 2.0);
    // and a subsampled run is far more private than its full batch
    let sub = Segment {
        sample_rate: 0.01,
        ..run
    };
    let s = Events::run(sub)
        .and_then(|e| sampled_epsilon(Sampling::FixedSize, &e, 1e-6, Neighbouring::ReplaceOne, S))
        .unwrap();
    let b = s.epsilon.unwrap();
    assert!(b.lower <= b.upper && b.upper < 0.2 * exact, "{b:?} vs {exact}");
}

#[test]
fn shuffled_batches_get_the_unamplified_epsilon_beside_the_poisson_figure() {
    for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
        let run = Segment {
            noise_multiplier: 1.5,
            sample_rate: 0.01,
            steps: 950, // 9.5 epochs: at most 10 batches per example
        };
        let r = Events::run(run)
            .and_then(|e| sampled_epsilon(Sampling::Shuffled, &e, 1e-5, n, S))
            .unwrap();
        let s = match n {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        };
        assert_eq!(r.sensitivity, s);
        let exact = gdp_to_eps(s * 10f64.sqrt() / 1.5, 1e-5).unwrap();
        assert_eq!(r.epsilon.unwrap().upper, exact);
        let poisson = r.if_poisson.unwrap();
        assert!(poisson.upper < exact, "{poisson:?} vs {exact}");
        assert!(r.assumption.contains("Poisson"));
    }
}

/// A rate whose epochs drop a remainder: at q = 0.4 an epoch is two batches
/// of 0.4n (0.2n dropped), so five steps touch three epochs and an example
/// can be in three batches — ⌈T·q⌉ = 2 undercounted it. Counted by
/// simulating the epochs: the largest number of batches any row is in.
#[test]
fn shuffled_batches_count_the_epochs_a_dropped_remainder_adds() {
    for (q, steps) in [(0.4, 5u64), (0.3, 7), (0.25, 9), (0.7, 3), (0.01, 950)] {
        let n = 1000usize;
        let b = (q * n as f64).round() as usize;
        let per_epoch = n / b;
        // one epoch's batches cover rows [0, per_epoch·b); a row in them is in one batch per epoch
        let most = (0..steps)
            .map(|t| t / per_epoch as u64)
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let m = propdp_accountant::sampling::shuffled_batches(steps, q);
        assert_eq!(m, most as f64, "q = {q}, T = {steps}");
        let run = Segment {
            noise_multiplier: 2.0,
            sample_rate: q,
            steps,
        };
        let r = Events::run(run)
            .and_then(|e| sampled_epsilon(Sampling::Shuffled, &e, 1e-5, Neighbouring::AddRemoveOne, S))
            .unwrap();
        assert_eq!(r.epsilon.unwrap().upper, gdp_to_eps(m.sqrt() / 2.0, 1e-5).unwrap());
    }
}

#[test]
fn fixed_size_batches_under_add_remove_are_refused_naming_the_relation() {
    let run = Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.1,
        steps: 10,
    };
    let e = Events::run(run)
        .and_then(|e| sampled_epsilon(Sampling::FixedSize, &e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "neighbouring");
    let bad = Segment {
        sample_rate: 0.0,
        ..run
    };
    let e = Events::run(bad)
        .and_then(|e| sampled_epsilon(Sampling::Poisson, &e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "segment[0].sample_rate");
    assert_eq!(Sampling::parse("fixed-size"), Some(Sampling::FixedSize));
    assert_eq!(Sampling::parse("uniform"), None);
}

#[test]
fn schedules_are_accounted_under_every_scheme() {
    use propdp_accountant::epsilon;
    let run = [
        Segment {
            noise_multiplier: 1.0,
            sample_rate: 0.01,
            steps: 450, // 4.5 epochs: 5 batches per example at most
        },
        Segment {
            noise_multiplier: 2.0,
            sample_rate: 0.02,
            steps: 500, // 10 epochs
        },
    ];
    for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
        let s = match n {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        };
        // shuffled: 5 releases at z = 1 and 10 at z = 2, each segment starting an epoch
        let shuffled = Events::schedule(&run)
            .and_then(|e| sampled_epsilon(Sampling::Shuffled, &e, 1e-5, n, S))
            .unwrap();
        let exact = gdp_to_eps(s * (5.0f64 / 1.0 + 10.0 / 4.0).sqrt(), 1e-5).unwrap();
        let got = shuffled.epsilon.unwrap().upper;
        assert!((got / exact - 1.0).abs() < 1e-12, "{n:?}: {got} vs {exact}");
        assert_eq!(shuffled.sensitivity, s);
        // beside it, the Poisson figure of the same schedule
        let poisson = Events::schedule(&run)
            .and_then(|e| sampled_epsilon(Sampling::Poisson, &e, 1e-5, n, S))
            .unwrap();
        assert_eq!(shuffled.if_poisson, poisson.epsilon);
        assert_eq!(
            poisson.epsilon,
            Events::schedule(&run).and_then(|e| epsilon(&e, 1e-5, n, S)).unwrap(),
            "{n:?}: Poisson batches are the schedule's certified bracket"
        );
        assert!(poisson.epsilon.unwrap().upper < got);
    }
    // fixed-size: the schedule at z/2 under add/remove-one, and only under replace-one
    let halved: Vec<Segment> = run
        .iter()
        .map(|r| Segment {
            noise_multiplier: r.noise_multiplier / 2.0,
            ..*r
        })
        .collect();
    let fixed = Events::schedule(&run)
        .and_then(|e| sampled_epsilon(Sampling::FixedSize, &e, 1e-5, Neighbouring::ReplaceOne, S))
        .unwrap();
    let want = Events::schedule(&halved)
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap();
    assert_eq!(fixed.epsilon, want);
    assert_eq!(fixed.sensitivity, 2.0);
    let e = Events::schedule(&run)
        .and_then(|e| sampled_epsilon(Sampling::FixedSize, &e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "neighbouring");
    // a segment out of range is named by its index
    let bad = [
        run[0],
        Segment {
            sample_rate: 1.5,
            ..run[1]
        },
    ];
    let e = Events::schedule(&bad)
        .and_then(|e| sampled_epsilon(Sampling::Shuffled, &e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "segment[1].sample_rate");
}

#[test]
fn a_one_segment_schedule_is_the_run() {
    let run = Segment {
        noise_multiplier: 1.5,
        sample_rate: 0.01,
        steps: 950,
    };
    for sampling in [Sampling::Poisson, Sampling::FixedSize, Sampling::Shuffled] {
        let one = Events::run(run)
            .and_then(|e| sampled_epsilon(sampling, &e, 1e-5, Neighbouring::ReplaceOne, S))
            .unwrap();
        let schedule = Events::schedule(&[run])
            .and_then(|e| sampled_epsilon(sampling, &e, 1e-5, Neighbouring::ReplaceOne, S))
            .unwrap();
        assert_eq!(one, schedule, "{sampling:?}");
    }
}
