//! Replace-one accounting of Poisson-subsampled DP-SGD on its tight pair
//! P = (1 − q)N(0, z²) + qN(−1, z²), Q = (1 − q)N(0, z²) + qN(1, z²) (Zhu,
//! Dong, Wang 2022; dp-accounting's `REPLACE_ONE`), checked against
//! independent references: the Gaussian mechanism at q = 1, a quadrature of
//! the pair's hockey stick written here, and dp-accounting's ε (data from
//! scripts/reference/dp_accounting_replace_reference.py). Group privacy of size 2,
//! the accounting before, lies 7–168% above these and its lower end above
//! the true ε: every test here fails on it.

mod common;
#[allow(unused_imports)]
use common::{Events, MechanismExt};

use propdp_accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_accountant::calibrate::{Knob, Target, calibrate};
use propdp_accountant::events::{Event, Segment};
use propdp_accountant::pld::{Direction, SubsampledGaussian};
use propdp_accountant::sampling::{Sampling, sampled_epsilon};
use propdp_accountant::{Mechanism, MechanismKind, Neighbouring, ObjectiveBound, delta_gaussian, epsilon, gdp_to_eps};

/// The certified ε of one run: the Poisson figure of [`sampled_epsilon`].
fn certified(run: &Segment, delta: f64, n: Neighbouring, s: BracketSettings) -> Option<EpsilonBracket> {
    let events = Events::run(*run).ok()?;
    sampled_epsilon(Sampling::Poisson, &events, delta, n, s).ok()?.epsilon
}

const REPLACE: Neighbouring = Neighbouring::ReplaceOne;

fn bracket(z: f64, q: f64, steps: u64, delta: f64) -> propdp_accountant::bracket::EpsilonBracket {
    Events::run(Segment {
        noise_multiplier: z,
        sample_rate: q,
        steps,
    })
    .and_then(|e| epsilon(&e, delta, REPLACE, BracketSettings::default()))
    .unwrap()
    .unwrap()
}

/// (a) At q = 1 the pair is N(−1, z²) against N(1, z²): the Gaussian
/// mechanism with μ = 2/z, its curve δ_G in closed form — one step's curve
/// exactly, and T steps (μ = 2√T/z) through the PLD bracket just below
/// q = 1, where the pair is within total variation T(1 − q) of it: δ moves
/// by at most T(1 − q)(1 + e^ε) ≈ 10⁻¹⁰ ≪ δ, so ε by far less than the
/// bracket's width.
#[test]
fn at_the_full_batch_the_pair_is_the_gaussian_mechanism_with_mu_2_over_z() {
    for z in [0.5, 1.0, 3.0] {
        let m = SubsampledGaussian { z, q: 1.0 };
        for eps in [0.0, 0.3, 1.0, 4.0, 9.0] {
            let (ours, exact) = (m.delta(Direction::Replace, eps), delta_gaussian(eps, 2.0 / z));
            assert!(
                (ours - exact).abs() <= 1e-12 * exact.max(1e-300) + 1e-300,
                "z {z} ε {eps}: {ours:e} vs {exact:e}"
            );
        }
    }
    for (z, steps, delta) in [(8.0, 10u64, 1e-5), (20.0, 100, 1e-6)] {
        let exact = gdp_to_eps(2.0 * (steps as f64).sqrt() / z, delta).unwrap();
        let full = bracket(z, 1.0, steps, delta);
        assert_eq!((full.lower, full.upper), (exact, exact), "z {z} T {steps}");
        let near = bracket(z, 1.0 - 1e-12, steps, delta);
        assert!(
            near.lower <= exact * (1.0 + 1e-9) && exact <= near.upper * (1.0 + 1e-9),
            "z {z} T {steps}: {near:?} vs {exact}"
        );
        assert!(near.upper <= exact * 1.001, "z {z} T {steps}: {near:?} vs {exact}");
    }
}

/// H_ε(P‖Q) = ∫_{x < x*} p(x) − e^ε q(x) dx by composite Simpson's rule, with
/// the densities written out here and the threshold x* (where p = e^ε q;
/// p/q decreases in x) found by bisection on them: no code under test.
fn quadrature_delta(z: f64, q: f64, eps: f64) -> f64 {
    let normal = |x: f64, mean: f64| (-(x - mean).powi(2) / (2.0 * z * z)).exp() / (z * std::f64::consts::TAU.sqrt());
    let p = |x: f64| (1.0 - q) * normal(x, 0.0) + q * normal(x, -1.0);
    let qq = |x: f64| (1.0 - q) * normal(x, 0.0) + q * normal(x, 1.0);
    // log p − log q − ε, decreasing in x
    let gap = |x: f64| p(x).ln() - qq(x).ln() - eps;
    let (mut lo, mut hi) = (-1.0 - 30.0 * z, 1.0 + 30.0 * z);
    if gap(hi) >= 0.0 {
        hi = lo; // no x with loss below ε in range: (cannot happen at ε ≥ 0, q < 1)
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if gap(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    let x_star = 0.5 * (lo + hi);
    let a = -1.0 - 40.0 * z;
    let n = 400_000usize;
    let h = (x_star - a) / n as f64;
    let f = |x: f64| p(x) - eps.exp() * qq(x);
    let mut sum = f(a) + f(x_star);
    for i in 1..n {
        sum += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

/// (b) One step: the certified bracket holds the ε at which the
/// quadrature's δ crosses the target (the quadrature's δ is above the
/// target at the lower end and below it at the upper end, to the
/// quadrature's accuracy).
#[test]
fn one_step_matches_a_quadrature_of_the_pairs_hockey_stick() {
    for (z, q, delta) in [(0.5, 0.01, 1e-5), (1.0, 0.1, 1e-6), (0.8, 0.3, 1e-4), (2.0, 0.5, 1e-3)] {
        let b = bracket(z, q, 1, delta);
        assert!(b.upper - b.lower <= 1e-9 * b.upper, "z {z} q {q}: {b:?}");
        let (below, above) = (
            quadrature_delta(z, q, b.lower * (1.0 - 1e-6)),
            quadrature_delta(z, q, b.upper * (1.0 + 1e-6)),
        );
        assert!(
            below > delta && above < delta,
            "z {z} q {q} δ {delta}: {b:?}, quadrature {below:e} {above:e}"
        );
        // and the curve itself, at a few ε
        let m = SubsampledGaussian { z, q };
        for eps in [0.1, 0.5 * b.upper, b.upper] {
            let (ours, quad) = (m.delta(Direction::Replace, eps), quadrature_delta(z, q, eps));
            assert!(
                (ours / quad - 1.0).abs() < 1e-7,
                "z {z} q {q} ε {eps}: {ours:e} vs {quad:e}"
            );
        }
    }
}

/// A row of dp-accounting's replace-one references.
struct Reference {
    z: f64,
    q: f64,
    steps: u64,
    delta: f64,
    epsilon: f64,
    delta_below: f64,
}

fn references() -> Vec<Reference> {
    include_str!("data/dp_accounting_replace_eps.csv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('z'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<f64>().unwrap();
            Reference {
                z: n(0),
                q: n(1),
                steps: f[2].parse().unwrap(),
                delta: n(3),
                epsilon: n(5),
                delta_below: n(6),
            }
        })
        .collect()
}

/// (c), (d) Against dp-accounting's `REPLACE_ONE` ε (pessimistic, grid
/// 10⁻⁴ or finer; q from 0.001 to 1, T from 1 to 10⁴): the upper end within
/// +0.1% / −0.01% of it, and the lower end not above it (its ε is an upper
/// bound on the true one).
#[test]
fn the_bracket_matches_dp_accountings_replace_one_epsilon() {
    let refs = references();
    assert!(refs.len() >= 10, "{} rows", refs.len());
    for r in refs {
        // where dp-accounting's curve already meets δ 0.1% lower, its ε was rounded up
        assert!(
            r.delta_below > r.delta,
            "z {} q {} T {}: reference rounded",
            r.z,
            r.q,
            r.steps
        );
        let b = bracket(r.z, r.q, r.steps, r.delta);
        let case = format!(
            "z {} q {} T {} δ {}: {b:?} vs {}",
            r.z, r.q, r.steps, r.delta, r.epsilon
        );
        assert!(b.lower <= r.epsilon, "lower end above the reference: {case}");
        assert!(b.upper <= r.epsilon * 1.001, "{case}");
        assert!(b.upper >= r.epsilon * (1.0 - 1e-4), "{case}");
        assert!(b.reached, "{case}");
    }
}

/// The issue's case through every door: the certified bracket, the fast
/// fixed-grid figure of `Mechanism::epsilon` (an upper bound), and the
/// noise calibrated to dp-accounting's ε at z = 1 — which is z = 1 to
/// within the brackets' 0.1% (group privacy, at ε = 6.16 for z = 1, asked
/// for more).
#[test]
fn the_issue_case_is_tight_through_the_mechanism_and_calibration() {
    const REFERENCE: f64 = 4.192781756816147; // dp-accounting, z 1, q 0.01, T 2000, δ 1e-5
    let kind = MechanismKind::Dpsgd {
        steps: 2000,
        sample_rate: 0.01,
        clip: Some(1.0),
    };
    let m = Mechanism::new(kind, 1.0, 0.25, REPLACE);
    let fast = m.epsilon(1.0, 1e-5).unwrap();
    assert!((REFERENCE * (1.0 - 1e-4)..=REFERENCE * 1.01).contains(&fast), "{fast}");
    let run = Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 2000,
    };
    let s = BracketSettings::default();
    let target = Target::Approx {
        epsilon: REFERENCE,
        delta_priv: 1e-5,
    };
    let make_event = |z: f64| Event::dpsgd(z, run.sample_rate, run.steps);
    let c = calibrate(Knob::NoiseMultiplier, make_event, target, REPLACE, s).unwrap();
    let z = c.value;
    assert!((0.999..=1.002).contains(&z), "calibrated z {z}");
    assert!(
        certified(
            &Segment {
                noise_multiplier: z,
                ..run
            },
            1e-5,
            REPLACE,
            s
        )
        .unwrap()
        .upper
            <= REFERENCE
    );
}

/// An objective release in a replace-one ledger enters as the convex hull
/// of its own group-privacy bound: alone, its ε is at most that bound's
/// (the closed form `Mechanism::epsilon` reports), and beside DP-SGD steps
/// the ledger costs more than the steps alone.
#[test]
fn an_objective_release_keeps_its_own_replace_one_bound() {
    let s = BracketSettings::default();
    let (l, beta, lambda, sigma) = (1.0, 0.25, 10.0, 4.0);
    let release = [ObjectiveBound::new(l, beta, 1.0, lambda, sigma)];
    let alone = Events::ledger(&[], &release)
        .and_then(|e| epsilon(&e, 1e-5, REPLACE, s))
        .unwrap()
        .unwrap();
    let m = Mechanism::new(MechanismKind::Objective { lambda }, l, beta, REPLACE);
    let group = m.epsilon(sigma, 1e-5).unwrap();
    assert!(
        alone.lower <= alone.upper && alone.upper <= group * (1.0 + 1e-3),
        "{alone:?} vs {group}"
    );
    let run = [Segment {
        noise_multiplier: 1.0,
        sample_rate: 0.01,
        steps: 1000,
    }];
    let both = Events::ledger(&run, &release)
        .and_then(|e| epsilon(&e, 1e-5, REPLACE, s))
        .unwrap()
        .unwrap();
    let steps = Events::ledger(&run, &[])
        .and_then(|e| epsilon(&e, 1e-5, REPLACE, s))
        .unwrap()
        .unwrap();
    assert!(
        both.lower > steps.upper && both.lower <= both.upper,
        "{both:?} vs {steps:?}"
    );
}
