//! Objective-perturbation releases in the same certified composition as
//! DP-SGD (`epsilon` of `Events::ledger`): a release enters as the pair
//! whose privacy loss is its bound c + A|Z|. Checked against the bound's
//! exact ε, alone and composed twice (a quadrature over the first release's
//! loss), and against the composition theorems' simple bounds.

mod common;
#[allow(unused_imports)]
use common::{Events, MechanismExt};

use propdp_accountant::bracket::{BracketSettings, Method};
use propdp_accountant::events::Segment;
use propdp_accountant::{Neighbouring, ObjectiveBound, epsilon};

const S: BracketSettings = BracketSettings {
    relative_width: 1e-3,
    max_points: 1 << 22,
    method: Method::Certified,
};

/// The smallest ε ≥ 0 with δ(ε) ≤ δ, δ decreasing, by bisection.
fn epsilon_of(delta_of: impl Fn(f64) -> f64, delta: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while delta_of(hi) > delta {
        hi *= 2.0;
    }
    if delta_of(0.0) <= delta {
        return 0.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if delta_of(mid) > delta { lo = mid } else { hi = mid }
    }
    hi
}

/// δ(ε) of two releases: E over the first's loss L₁ = c + A|Z| of the
/// second's curve at ε − L₁ (the hockey stick of a product pair), by
/// Simpson's rule in z over [0, 14] (the half-normal's mass beyond is
/// below 1e-44).
fn two_releases(b: &ObjectiveBound, eps: f64) -> f64 {
    let n = 40_000;
    let h = 14.0 / n as f64;
    let f = |z: f64| {
        let density = 2.0 * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        density * b.delta(eps - b.c() - b.a * z)
    };
    let mut sum = f(0.0) + f(14.0);
    for i in 1..n {
        sum += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

fn bounds() -> Vec<ObjectiveBound> {
    // (L, β, R, λ, σ): logistic (β = 1/4) and Huber-like (β = 1) losses, a little to a lot of noise
    [
        (1.0, 0.25, 1.0, 10.0, 4.0),
        (1.0, 1.0, 1.0, 1.0, 2.0),
        (1.0, 0.25, 1.0, 100.0, 1.0),
    ]
    .iter()
    .map(|&(l, beta, r, lambda, sigma)| ObjectiveBound::new(l, beta, r, lambda, sigma))
    .collect()
}

#[test]
fn one_release_is_bracketed_around_its_bounds_exact_epsilon() {
    for b in bounds() {
        for delta in [1e-3, 1e-5, 1e-8] {
            let exact = epsilon_of(|e| b.delta(e), delta);
            let got = Events::ledger(&[], &[b])
                .and_then(|e| epsilon(&e, delta, Neighbouring::AddRemoveOne, S))
                .unwrap()
                .unwrap();
            assert!(
                got.lower <= exact && exact <= got.upper && got.reached,
                "{b:?} δ {delta}: {got:?} ∌ {exact}"
            );
        }
    }
}

#[test]
fn two_releases_are_bracketed_around_the_composed_bounds_exact_epsilon() {
    for b in bounds() {
        for delta in [1e-3, 1e-6] {
            let exact = epsilon_of(|e| two_releases(&b, e), delta);
            let got = Events::ledger(&[], &[b, b])
                .and_then(|e| epsilon(&e, delta, Neighbouring::AddRemoveOne, S))
                .unwrap()
                .unwrap();
            assert!(
                got.lower <= exact && exact <= got.upper && got.reached,
                "{b:?} δ {delta}: {got:?} ∌ {exact}"
            );
            // and tighter than composing the two (ε, δ/2) guarantees
            let basic = 2.0 * epsilon_of(|e| b.delta(e), delta / 2.0);
            assert!(got.upper < basic, "{b:?} δ {delta}: {} vs basic {basic}", got.upper);
        }
    }
}

#[test]
fn a_release_beside_dp_sgd_costs_between_the_parts_and_their_basic_composition() {
    let run = [Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 1000,
    }];
    let delta = 1e-5;
    for b in bounds() {
        for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
            let both = Events::ledger(&run, &[b])
                .and_then(|e| epsilon(&e, delta, n, S))
                .unwrap()
                .unwrap();
            let sgd = Events::ledger(&run, &[])
                .and_then(|e| epsilon(&e, delta, n, S))
                .unwrap()
                .unwrap();
            let obj = Events::ledger(&[], &[b])
                .and_then(|e| epsilon(&e, delta, n, S))
                .unwrap()
                .unwrap();
            // a composition is at least as costly as each part (post-processing)
            assert!(
                both.upper >= sgd.lower && both.upper >= obj.lower,
                "{b:?} {n:?}: {both:?}"
            );
            // and no costlier than the basic composition of the parts at δ/2 each, a bound
            // on the true ε (it sits 25–35% above the bracket at these cases: a 0.1%-wide
            // bracket can only cross it if the composition is wrong)
            let half = |segments: &[Segment], releases: &[ObjectiveBound]| {
                Events::ledger(segments, releases)
                    .and_then(|e| epsilon(&e, delta / 2.0, n, S))
                    .unwrap()
                    .unwrap()
                    .upper
            };
            let basic = half(&run, &[]) + half(&[], &[b]);
            assert!(
                both.lower <= both.upper && both.lower <= basic,
                "{b:?} {n:?}: {both:?} vs {basic}"
            );
            assert!(
                both.upper <= basic,
                "{b:?} {n:?}: {both:?} above the basic composition {basic}"
            );
        }
    }
}

#[test]
fn bad_releases_are_refused_by_name() {
    let e = Events::ledger(&[], &[])
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "segment");
    let bad = ObjectiveBound::new(1.0, 0.25, 1.0, 1.0, f64::INFINITY);
    let e = Events::ledger(&[], &[bounds()[0], bad])
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "objective[1].a");
    let bad = ObjectiveBound::new(1.0, 0.25, 1.0, -2.0, 1.0);
    let e = Events::ledger(&[], &[bad])
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "objective[0].c0");
    let seg = Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.0,
        steps: 10,
    };
    let e = Events::ledger(&[seg], &[bounds()[0]])
        .and_then(|e| epsilon(&e, 1e-5, Neighbouring::AddRemoveOne, S))
        .unwrap_err();
    assert_eq!(e.argument(), "segment[0].sample_rate");
}
