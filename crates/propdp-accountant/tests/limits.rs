//! Memory and time stay bounded at the edges of the ledger (issue #41,
//! 4b, 5b, 5c, 7d): a huge Lipschitz constant, one objective release at
//! small noise, schedules of 10⁴–10⁵ segments, step counts near 2⁶⁴. Each
//! case once allocated terabytes, ran for minutes or wrapped around.

mod common;
#[allow(unused_imports)]
use common::{Events, MechanismExt};

use std::time::Instant;

use propdp_accountant::bracket::BracketSettings;
use propdp_accountant::events::Segment;
use propdp_accountant::{Mechanism, MechanismKind, Neighbouring, ObjectiveBound, epsilon};

const RELATIONS: [Neighbouring; 2] = [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne];

fn segment(z: f64, q: f64, steps: u64) -> Segment {
    Segment {
        noise_multiplier: z,
        sample_rate: q,
        steps,
    }
}

/// Huber M = 10⁶ beside DP-SGD steps: the release's loss spans about
/// A² = 10¹² (replace-one) or 2A·8 = 1.6·10⁷ (add/remove-one) loss units,
/// beyond any grid the point budget allows: refused naming
/// `objective[0].a` and what to change, at once (it tried to allocate 125 TB).
#[test]
fn a_huge_lipschitz_constant_is_refused_by_name() {
    let release = [ObjectiveBound::new(1e6, 1.0, 1.0, 10.0, 1.0)];
    let run = [segment(1.0, 0.01, 100)];
    for n in RELATIONS {
        let start = Instant::now();
        let err = Events::ledger(&run, &release)
            .and_then(|e| epsilon(&e, 1e-5, n, BracketSettings::default()))
            .unwrap_err();
        assert_eq!(err.argument(), "objective[0].a", "{n:?}: {err}");
        let text = err.to_string();
        assert!(text.contains("raise the noise") && text.contains("Lipschitz"), "{text}");
        assert!(start.elapsed().as_secs_f64() < 2.0, "{n:?}: {:?}", start.elapsed());
    }
}

/// One release alone needs no grid: its own curve (replace-one: its
/// group-privacy bound), the ε the closed-form `Mechanism::epsilon`
/// reports — at Huber M = 10⁶, and at σ = 10⁻³ (61 s and 11.8 GB before).
#[test]
fn one_release_alone_is_its_closed_form_at_once() {
    for (l, beta, lambda, sigma) in [(1e6, 1.0, 10.0, 1.0), (1.0, 0.25, 10.0, 1e-3), (1.0, 0.25, 10.0, 4.0)] {
        for n in RELATIONS {
            let start = Instant::now();
            let release = [ObjectiveBound::new(l, beta, 1.0, lambda, sigma)];
            let b = Events::ledger(&[], &release)
                .and_then(|e| epsilon(&e, 1e-5, n, BracketSettings::default()))
                .unwrap()
                .unwrap();
            let m = Mechanism::new(MechanismKind::Objective { lambda }, l, beta, n);
            let exact = m.epsilon(sigma, 1e-5).unwrap();
            assert!(
                b.lower <= exact && exact <= b.upper,
                "L {l} σ {sigma} {n:?}: {b:?} vs {exact}"
            );
            assert!(b.upper - b.lower <= 3e-12 * b.upper, "{b:?}");
            assert!(start.elapsed().as_secs_f64() < 0.5, "{:?}", start.elapsed());
        }
    }
}

/// The small-noise release (A = 1000) beside DP-SGD steps. Add/remove-one:
/// a coarser first grid keeps its PLD (loss c + A|Z|, c = 5·10⁵, about
/// 8A wide) within the budget, and the bracket holds the release's own ε
/// from above, within seconds. Replace-one: its group-privacy bound
/// stays at δ = 1 up to ε ≈ 5.8·10⁶, more than the budget spans even at
/// grid 4: refused naming `objective[0].a`, at once.
#[test]
fn a_small_noise_release_beside_steps_is_bounded() {
    let release = [ObjectiveBound::new(1.0, 0.25, 1.0, 10.0, 1e-3)];
    let run = [segment(1.0, 0.01, 100)];
    let s = BracketSettings::default();
    let start = Instant::now();
    let n = Neighbouring::AddRemoveOne;
    let b = Events::ledger(&run, &release)
        .and_then(|e| epsilon(&e, 1e-5, n, s))
        .unwrap()
        .unwrap();
    let m = Mechanism::new(MechanismKind::Objective { lambda: 10.0 }, 1.0, 0.25, n);
    let alone = m.epsilon(1e-3, 1e-5).unwrap();
    assert!(b.lower <= b.upper && b.upper >= alone, "{b:?} vs {alone}");
    assert!(b.upper <= alone * 1.001, "{b:?} vs {alone}");
    assert!(start.elapsed().as_secs_f64() < 20.0, "{:?}", start.elapsed());
    let start = Instant::now();
    let err = Events::ledger(&run, &release)
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::ReplaceOne, s))
        .unwrap_err();
    assert_eq!(err.argument(), "objective[0].a", "{err}");
    assert!(start.elapsed().as_secs_f64() < 2.0, "{:?}", start.elapsed());
}

/// 10⁵ one-step segments at two settings are the schedule of two segments
/// of their summed steps — the same bracket, bit for bit (equal segments
/// compose as one PLD raised to their summed power) — and 10⁴ segments
/// at ten settings take seconds (113 s and 4.75 GB before; 10⁵ gave no
/// answer in 250 s).
#[test]
fn many_segments_compose_as_their_distinct_settings() {
    let s = BracketSettings::default();
    for n in RELATIONS {
        let many: Vec<Segment> = (0..100_000)
            .map(|i| {
                if i % 2 == 0 {
                    segment(1.0, 0.01, 1)
                } else {
                    segment(2.0, 0.02, 1)
                }
            })
            .collect();
        let start = Instant::now();
        let b = Events::schedule(&many)
            .and_then(|e| epsilon(&e, 1e-5, n, s))
            .unwrap()
            .unwrap();
        let secs = start.elapsed().as_secs_f64();
        let two = Events::schedule(&[segment(1.0, 0.01, 50_000), segment(2.0, 0.02, 50_000)])
            .and_then(|e| epsilon(&e, 1e-5, n, s))
            .unwrap()
            .unwrap();
        assert_eq!(b, two, "{n:?}");
        assert!(secs < 10.0, "{n:?}: 10⁵ segments took {secs} s");
        let ten: Vec<Segment> = (0..10_000)
            .map(|i| segment(1.0 + (i % 10) as f64 / 10.0, 0.01, 10))
            .collect();
        let start = Instant::now();
        let b = Events::schedule(&ten)
            .and_then(|e| epsilon(&e, 1e-5, n, s))
            .unwrap()
            .unwrap();
        let secs = start.elapsed().as_secs_f64();
        assert!(b.lower <= b.upper && b.reached, "{n:?}: {b:?}");
        assert!(secs < 30.0, "{n:?}: 10⁴ segments took {secs} s");
    }
}

/// Two segments of 2⁶³ − 1 steps sum within u64 (2⁶⁴ − 2), three do not:
/// refused naming `steps` with the true total, never wrapped around.
#[test]
fn a_step_total_beyond_u64_is_refused_by_name() {
    let big = segment(1.0, 0.01, i64::MAX as u64);
    let err = Events::schedule(&[big, big, big])
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::AddRemoveOne, BracketSettings::default()))
        .unwrap_err();
    assert_eq!(err.argument(), "steps", "{err}");
    let total = 3 * u128::from(i64::MAX as u64);
    assert!(err.to_string().contains(&total.to_string()), "{err}");
}
