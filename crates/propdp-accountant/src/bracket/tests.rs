//! Unit tests of the bracket's curves against independent references.

use super::curves::{Curves, OneStep, Profile, TAIL, smallest_eps};
use super::{BracketSettings, EpsilonBracket};
use crate::events::{Event, Segment};
use crate::gaussian::gdp_to_eps;
use crate::neighbouring::Neighbouring;
use crate::pld::{Direction, SubsampledGaussian};
use crate::{AccountantError, epsilon};

/// The certified ε of one run (as [`crate::epsilon`] of [`Event::dpsgd`]).
fn run_bracket(
    z: f64,
    q: f64,
    steps: u64,
    delta: f64,
    n: Neighbouring,
    s: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    let segment = Segment {
        noise_multiplier: z,
        sample_rate: q,
        steps,
    };
    epsilon(&Event::schedule(&[segment]), delta, n, s)
}

/// The certified ε of a schedule (as [`crate::epsilon`] of [`Event::schedule`]).
fn schedule_bracket(
    segments: &[Segment],
    delta: f64,
    n: Neighbouring,
    s: BracketSettings,
) -> Result<Option<EpsilonBracket>, AccountantError> {
    epsilon(&Event::schedule(segments), delta, n, s)
}

/// δ of two steps in one direction, E_{Y₁}[δ₁(ε − Y₁)] with Y₁ the first
/// step's loss (the second step's hockey stick given the first), by
/// Simpson's rule over the observation x (the loss is monotone in x, the
/// integrand smooth): an independent reference at a peaked, far from
/// Gaussian composed loss.
fn two_steps(m: SubsampledGaussian, d: Direction, eps: f64) -> f64 {
    let z = m.z;
    let normal = |x: f64, mean: f64| (-(x - mean).powi(2) / (2.0 * z * z)).exp() / (z * std::f64::consts::TAU.sqrt());
    let (a, b, n) = (-1.0 - 14.0 * z, 1.0 + 14.0 * z, 40_000usize);
    let h = (b - a) / n as f64;
    let mut sum = 0.0;
    for i in 0..=n {
        let x = a + i as f64 * h;
        let w = match i {
            0 => 1.0,
            i if i == n => 1.0,
            i if i % 2 == 1 => 4.0,
            _ => 2.0,
        };
        let (density, y) = match d {
            Direction::Remove => ((1.0 - m.q) * normal(x, 0.0) + m.q * normal(x, 1.0), m.loss(x)),
            Direction::Add => (normal(x, 0.0), -m.loss(x)),
            Direction::Replace => ((1.0 - m.q) * normal(x, 0.0) + m.q * normal(x, -1.0), m.replace_loss(x)),
        };
        sum += w * density * m.delta(d, eps - y);
    }
    sum * h / 3.0
}

/// The second-order lower curve lies below the two-step δ(ε) at every ε
/// of a sweep, under either relation — at small q the composed loss is
/// two spikes, nothing like the smooth density the bound's Δ² order
/// rests on — and, at Δ = 10⁻³, within 1% of it where δ ≥ 10⁻⁹ (below,
/// the untilted round-off bound counts).
#[test]
fn the_second_order_lower_curve_is_below_the_two_step_curve() {
    let relations = [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne];
    for ((z, q), n) in [(0.8, 0.01), (0.5, 0.001), (1.0, 0.2), (0.4, 0.05)]
        .into_iter()
        .flat_map(|c| relations.map(|n| (c, n)))
    {
        let m = SubsampledGaussian { z, q };
        let run = [Segment {
            noise_multiplier: z,
            sample_rate: q,
            steps: 2,
        }];
        let sweep: Vec<(f64, f64)> = (0..20)
            .map(|k| {
                let eps = 0.1 * k as f64 * (1.0 + 1.0 / z);
                let exact = (Direction::of(n).iter())
                    .map(|&d| two_steps(m, d, eps))
                    .fold(0.0, f64::max);
                (eps, exact)
            })
            .collect();
        for grid in [1e-2, 4e-3, 1e-3] {
            let curves = Curves::new(&run, n, grid, 1 << 22, None, TAIL).unwrap();
            for &(eps, exact) in &sweep {
                let lower = curves.delta_lower_smooth(eps);
                let case = format!("{n:?} z {z} q {q} Δ {grid} ε {eps}: {lower:e} vs {exact:e}");
                assert!(lower <= exact * (1.0 + 1e-9), "{case}");
                if grid == 1e-3 && exact >= 1e-9 && eps > 0.0 {
                    assert!(lower >= 0.99 * exact, "{case}");
                }
            }
        }
    }
}

/// At q = 1 (forced through the PLD) the second-order lower end lies
/// below the exact Gaussian ε at grids up to 2·10⁻², and its distance
/// shrinks like Δ²: from Δ = 4·10⁻³ to 10⁻³ at least 8-fold, where the
/// Hoeffding ends shrink 4-fold.
#[test]
fn the_second_order_lower_end_is_below_the_exact_gaussian_epsilon() {
    for (z, steps, delta) in [
        (1.0, 100u64, 1e-5),
        (10.0, 100, 1e-5),
        (0.8, 10, 1e-3),
        (30.0, 10_000, 1e-6),
        (0.5, 2, 1e-5),
    ] {
        let run = [Segment {
            noise_multiplier: z,
            sample_rate: 1.0,
            steps,
        }];
        let exact = gdp_to_eps((steps as f64).sqrt() / z, delta).unwrap();
        let mut gaps = Vec::new();
        for grid in [2e-2, 1e-2, 4e-3, 1e-3] {
            let curves = Curves::new(&run, Neighbouring::AddRemoveOne, grid, 1 << 22, None, TAIL).unwrap();
            let smooth = smallest_eps(|e| curves.delta_lower_smooth(e).ln(), delta.ln())
                .unwrap()
                .0;
            assert!(smooth <= exact, "z {z} T {steps} Δ {grid}: {smooth} > {exact}");
            gaps.push(exact - smooth);
        }
        assert!(gaps[2] >= 8.0 * gaps[3], "z {z} T {steps}: gaps {gaps:?}");
    }
}

/// At q = 1 the PLD machinery (forced, not the closed-form shortcut)
/// brackets the exact Gaussian ε, μ = √T/z (add/remove-one) or 2√T/z
/// (replace-one): a test of the certificate itself.
#[test]
fn the_pld_bracket_contains_the_exact_gaussian_epsilon_at_q_1() {
    for (z, steps, delta) in [(1.0, 100u64, 1e-5), (3.0, 1000, 1e-8), (0.8, 10, 1e-3)] {
        let run = [Segment {
            noise_multiplier: z,
            sample_rate: 1.0,
            steps,
        }];
        for (n, shift) in [(Neighbouring::AddRemoveOne, 1.0), (Neighbouring::ReplaceOne, 2.0)] {
            let exact = gdp_to_eps(shift * (steps as f64).sqrt() / z, delta).unwrap();
            for grid in [4e-3, 1e-3] {
                let curves = Curves::new(&run, n, grid, 1 << 22, None, TAIL).unwrap();
                let (lo, hi) = curves.bracket(delta).unwrap();
                assert!(
                    lo <= exact && exact <= hi,
                    "{n:?} z {z} T {steps} δ {delta} grid {grid}: [{lo}, {hi}] ∌ {exact}"
                );
                assert!(hi - lo < 0.05 * exact, "[{lo}, {hi}] too wide around {exact}");
            }
        }
    }
}

/// One step: the closed form's bracket (a few ulp wide) lies inside the
/// FFT machinery's certified bracket at a fine grid, both relations.
#[test]
fn the_one_step_closed_form_lies_in_the_pld_bracket() {
    let mut compared = 0;
    for (z, q) in [(0.5, 0.01), (1.0, 0.2), (0.3, 1e-4), (2.0, 0.5), (0.8, 0.05)] {
        for delta in [1e-3, 1e-6, 1e-10] {
            for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
                let run = [Segment {
                    noise_multiplier: z,
                    sample_rate: q,
                    steps: 1,
                }];
                let exact = OneStep { z, q, neighbouring: n }.bracket(delta);
                let pld = Curves::new(&run, n, 1e-4, 1 << 22, None, TAIL).unwrap().bracket(delta);
                let (Some((lo, hi)), Some((plo, phi))) = (exact, pld) else {
                    assert_eq!(exact.is_some(), pld.is_some(), "z {z}, q {q}, δ {delta}, {n:?}");
                    continue;
                };
                assert!(
                    hi - lo <= 1e-9 * hi.max(1e-300),
                    "z {z}, q {q}, δ {delta}: [{lo}, {hi}]"
                );
                assert!(
                    plo <= lo && hi <= phi,
                    "z {z}, q {q}, δ {delta}, {n:?}: [{lo}, {hi}] not in [{plo}, {phi}]"
                );
                compared += usize::from(hi > 0.0);
            }
        }
    }
    assert!(
        compared >= 20,
        "only {compared} of 30 cases have a positive ε to compare"
    );
}

/// The lower curve is below the upper one at every ε, and the round-off
/// bound is far below the δ the tests ask for.
#[test]
fn the_lower_curve_stays_below_the_upper_one() {
    let run = [Segment {
        noise_multiplier: 0.8,
        sample_rate: 0.02,
        steps: 2000,
    }];
    let curves = Curves::new(&run, Neighbouring::AddRemoveOne, 2e-3, 1 << 22, None, TAIL).unwrap();
    for i in 0..60 {
        let e = 0.1 * i as f64;
        for beta in [Some(1e-9), None] {
            assert!(
                curves.delta_lower(e, beta) <= curves.delta_upper(e),
                "ε = {e}, β = {beta:?}"
            );
        }
    }
    for (c, _) in curves.fresh() {
        assert!(c.roundoff < 1e-11, "round-off bound {:e}", c.roundoff);
    }
}

/// A schedule of two equal segments is the run of their total steps;
/// a mixed one lies between the runs at either noise throughout.
#[test]
fn schedules_compose_like_the_runs_they_split() {
    let s = BracketSettings::default();
    let n = Neighbouring::AddRemoveOne;
    let seg = |z: f64, steps: u64| Segment {
        noise_multiplier: z,
        sample_rate: 0.02,
        steps,
    };
    let whole = run_bracket(1.0, 0.02, 1000, 1e-5, n, s).unwrap().unwrap();
    let split = schedule_bracket(&[seg(1.0, 300), seg(1.0, 700)], 1e-5, n, s)
        .unwrap()
        .unwrap();
    assert!(
        split.lower <= whole.upper && whole.lower <= split.upper,
        "{split:?} vs {whole:?}"
    );
    let mixed = schedule_bracket(&[seg(1.0, 500), seg(2.0, 500)], 1e-5, n, s)
        .unwrap()
        .unwrap();
    let loud = run_bracket(2.0, 0.02, 1000, 1e-5, n, s).unwrap().unwrap();
    assert!(
        loud.upper < mixed.lower && mixed.upper < whole.lower,
        "{loud:?} {mixed:?} {whole:?}"
    );
    // full-batch segments: the Gaussian mechanism with μ² = Σ T_i/z_i²
    let full = |z: f64, steps: u64| Segment {
        sample_rate: 1.0,
        ..seg(z, steps)
    };
    let g = schedule_bracket(&[full(1.0, 4), full(2.0, 16)], 1e-5, n, s)
        .unwrap()
        .unwrap();
    assert_eq!(g.lower, gdp_to_eps((4.0f64 + 16.0 / 4.0).sqrt(), 1e-5).unwrap());
}

#[test]
fn bad_arguments_are_refused_by_name() {
    let s = BracketSettings::default();
    let err = |r: Result<Option<EpsilonBracket>, AccountantError>| r.unwrap_err().argument().to_string();
    let n = Neighbouring::AddRemoveOne;
    assert_eq!(err(run_bracket(1.0, 1.5, 10, 1e-5, n, s)), "segment[0].sample_rate");
    assert_eq!(
        err(run_bracket(0.0, 0.5, 10, 1e-5, n, s)),
        "segment[0].noise_multiplier"
    );
    assert_eq!(err(run_bracket(1.0, 0.5, 0, 1e-5, n, s)), "segment[0].steps");
    assert_eq!(err(run_bracket(1.0, 0.5, 10, 1.0, n, s)), "delta");
    let zero = BracketSettings {
        relative_width: 0.0,
        ..s
    };
    assert_eq!(err(run_bracket(1.0, 0.5, 10, 1e-5, n, zero)), "relative_width");
    let bad = [
        Segment {
            noise_multiplier: 1.0,
            sample_rate: 0.1,
            steps: 5,
        },
        Segment {
            noise_multiplier: 1.0,
            sample_rate: 0.0,
            steps: 5,
        },
    ];
    assert_eq!(err(schedule_bracket(&bad, 1e-5, n, s)), "segment[1].sample_rate");
    assert_eq!(err(schedule_bracket(&[], 1e-5, n, s)), "segment");
}
