//! ε far beyond ln(DBL_MAX) ≈ 709.78 (issue 59, C). Where e^ε left f64 the
//! curves read δ(ε) = 0, so one step at z = 0.02, q = 0.01 was certified at
//! ε = 709.782713 for a true 1398.95, ten steps at z = 10⁻³ at 7051.78 (ten
//! losses cut at 705.18) for a true 1.5·10⁶, and z below 10⁻¹⁵² at ε = 0.
//! Every bracket here is checked against references computed outside
//! propdp (tests/data/large_epsilon.csv, scripts/reference/large_epsilon_reference.py:
//! mpmath closed forms, and dp-accounting's PMFs read stably).

mod common;
#[allow(unused_imports)]
use common::{Events, MechanismExt};

use propdp_accountant::bracket::BracketSettings;
use propdp_accountant::events::Segment;
use propdp_accountant::{Mechanism, MechanismKind, Neighbouring, epsilon};

/// One reference row: the schedule, δ, its kind and [lower, upper].
struct Case {
    relation: Neighbouring,
    segments: Vec<Segment>,
    delta: f64,
    kind: String,
    lower: f64,
    upper: f64,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/large_epsilon.csv");
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("relation"))
    {
        let f: Vec<&str> = line.split(',').collect();
        let list = |s: &str| s.split(';').map(|x| x.parse::<f64>().unwrap()).collect::<Vec<f64>>();
        let (z, q, t) = (list(f[1]), list(f[2]), list(f[3]));
        out.push(Case {
            relation: match f[0] {
                "replace" => Neighbouring::ReplaceOne,
                _ => Neighbouring::AddRemoveOne,
            },
            segments: (0..z.len())
                .map(|i| Segment {
                    noise_multiplier: z[i],
                    sample_rate: q[i],
                    steps: t[i] as u64,
                })
                .collect(),
            delta: f[4].parse().unwrap(),
            kind: f[5].to_string(),
            lower: f[6].parse().unwrap(),
            upper: f[7].parse().unwrap(),
        });
    }
    out
}

/// Every bracket holds the reference's: its upper end is at least the
/// reference's lower end (never a bound below the truth), its lower end at
/// most the reference's upper end, and, where the reference is exact, it
/// reached the asked width.
#[test]
fn brackets_beyond_709_hold_the_references() {
    let cases = cases();
    assert!(cases.len() >= 10, "{} cases", cases.len());
    for c in &cases {
        let events = Events::schedule(&c.segments).unwrap();
        let b = epsilon(&events, c.delta, c.relation, BracketSettings::default())
            .unwrap()
            .unwrap_or_else(|| panic!("{:?} {:?}: no finite ε", c.relation, c.segments));
        let what = format!(
            "{} {:?} {:?} δ {}: {b:?} vs [{}, {}]",
            c.kind, c.relation, c.segments, c.delta, c.lower, c.upper
        );
        assert!(c.lower > 709.79, "{what}: a reference beyond 709 is the point");
        assert!(b.upper >= c.lower * (1.0 - 1e-12), "certified below the truth: {what}");
        assert!(b.lower <= c.upper * (1.0 + 1e-12), "lower end above the truth: {what}");
        if c.lower == c.upper && c.kind != "mixture_upper" {
            assert!(b.reached && b.upper - b.lower <= 1e-3 * b.upper, "{what}");
        }
    }
}

/// The command line's DP-SGD figure (`Mechanism::epsilon_bracket`, the
/// issue's `propdp privacy --algorithm dpsgd --model logistic --noise 0.02
/// --sample-rate 0.01 --steps 1 --delta-priv 1e-5`, replace-one) is the
/// exact 1398.946 (mpmath), not 709.782713.
#[test]
fn the_issue_one_step_is_its_exact_epsilon() {
    let kind = MechanismKind::Dpsgd {
        steps: 1,
        sample_rate: 0.01,
        clip: None,
    };
    let m = Mechanism::new(kind, 1.0, 0.25, Neighbouring::ReplaceOne);
    let b = m.epsilon_bracket(0.02, 1e-5, BracketSettings::default()).unwrap();
    let exact = 1_398.946_294_488_761_9;
    assert!(b.lower <= exact && exact <= b.upper, "{b:?}");
    assert!(b.upper - b.lower <= 1e-9 * exact, "{b:?}");
}

/// Below 10⁻¹⁵⁰ the loss of one included example, 1/(2z²), leaves f64: the
/// noise multiplier is refused by name with its allowed range (it was
/// certified at ε = 0 below about 10⁻¹⁵²); at 10⁻¹⁵⁰ one step's ε is
/// the full batch's, 1/(2z²) ≈ 5·10²⁹⁹, or none, never 0; and a run or a
/// schedule whose composition outgrows the point budget even at the
/// coarsest grid falls back on its full-batch (and, alone, RDP) bound,
/// never below the truth (it read ε = 7051.78 at z = 10⁻³, T = 1000, whose
/// ε is 1.30·10⁷: the `mixture_upper` row of the references).
#[test]
fn tiny_noise_multipliers_are_refused_or_have_no_finite_epsilon() {
    let settings = BracketSettings::default();
    for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
        for z in [1e-151, 1e-153, 1e-155, 1e-200, 5e-324] {
            let err = Events::run(Segment {
                noise_multiplier: z,
                sample_rate: 0.01,
                steps: 1,
            })
            .unwrap_err();
            assert_eq!(err.argument(), "segment[0].noise_multiplier", "{z}: {err}");
            assert!(err.to_string().contains("1e-150 ≤ noise_multiplier"), "{err}");
        }
        let one = Events::run(Segment {
            noise_multiplier: 1e-150,
            sample_rate: 0.01,
            steps: 1,
        })
        .unwrap();
        let b = epsilon(&one, 1e-5, n, settings).unwrap();
        assert!(b.is_none_or(|b| b.upper > 5e299), "{n:?}: {b:?}");
        let wide = Segment {
            noise_multiplier: 1e-3,
            sample_rate: 0.01,
            steps: 1000,
        };
        let many = Events::schedule(&[wide, Segment { steps: 1, ..wide }]).unwrap();
        let b = epsilon(&many, 1e-5, n, settings).unwrap().unwrap();
        // T = 1001 steps: at least the 1000 steps' ε (mpmath)
        assert!(
            b.upper >= 13_000_610.4 && b.lower <= b.upper && !b.reached,
            "{n:?}: {b:?}"
        );
    }
}
