//! DP-SGD in cyclic groups (amplified BandMF, `propdp privacy --groups`):
//! certified as Poisson DP-SGD over ⌈T/G⌉ rounds, checked against
//! dp_accounting's PLD ε of that event (the accountant's reference table,
//! made by scripts/reference/dp_accounting_reference.py), and the patterns
//! it refuses.

use propdp::core::accountant::Neighbouring;
use propdp::core::{AlgorithmKind, ModelKind};
use propdp::privacy::{QueryArgs, assess};

/// (z, q, T, δ, ε) rows of dp_accounting's PLD accountant (add/remove-one)
/// where its ε is tight: its own δ at 0.999·ε is above δ (on the other rows
/// its get_epsilon rounds ε up by more than 0.1%).
fn references() -> Vec<(f64, f64, u64, f64, f64)> {
    include_str!("../../propdp-accountant/tests/data/dp_accounting_eps.csv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('z'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let (delta, eps): (f64, f64) = (f[3].parse().unwrap(), f[5].parse().unwrap());
            let tight = f[6].parse::<f64>().unwrap() > delta;
            tight.then(|| {
                (
                    f[0].parse().unwrap(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                    delta,
                    eps,
                )
            })
        })
        .collect()
}

fn grouped(z: f64, q: f64, steps: u64, groups: u64, bands: Option<u64>, delta: f64) -> QueryArgs {
    QueryArgs {
        noise: Some(z),
        clip: Some(1.0),
        sample_rate: Some(q),
        steps: Some(steps),
        groups: Some(groups),
        bands,
        delta_priv: Some(delta),
        ..QueryArgs::new(AlgorithmKind::Dpsgd, ModelKind::Logistic)
    }
}

#[test]
fn groups_are_certified_as_their_rounds_against_dp_accounting() {
    // ε ≥ 0.5: below, dp_accounting's grid (1e-4) is more than 0.1% of ε
    let rows: Vec<_> = references()
        .into_iter()
        .filter(|r| (10..=1000).contains(&r.2) && r.4 >= 0.5)
        .collect();
    assert!(rows.len() >= 6, "{} reference rows", rows.len());
    for (k, &(z, q, rounds, delta, theirs)) in rows.iter().enumerate() {
        // G groups over T = G·rounds − (G − 1) steps: still ⌈T/G⌉ = rounds
        let groups = [2u64, 4, 8, 32][k % 4];
        let steps = groups * rounds - (groups - 1);
        let q_args = grouped(z, q, steps, groups, Some(groups), delta);
        let r = assess(&q_args.query().unwrap()).unwrap();
        let (eps, lower) = (r.epsilon.unwrap(), r.epsilon_lower.unwrap());
        // the default relation with groups is add/remove-one, dp_accounting's
        assert_eq!(r.query.neighbouring, Neighbouring::AddRemoveOne);
        assert!(
            lower <= theirs && (eps - theirs).abs() <= 1e-3 * theirs,
            "z {z}, q {q}, {rounds} rounds of G = {groups}, δ {delta}: [{lower}, {eps}] against {theirs}"
        );
    }
}

#[test]
fn more_bands_than_groups_have_no_certified_epsilon() {
    let e = grouped(1.0, 0.1, 1000, 4, Some(8), 1e-5).query().unwrap_err();
    assert_eq!((e.argument, e.also), ("bands", Some("groups")));
    assert!(e.to_string().contains("no certified ε"), "{e}");
    let e = grouped(1.0, 0.1, 1000, 0, None, 1e-5).query().unwrap_err();
    assert_eq!(e.argument, "groups");
    let mut objective = QueryArgs::new(AlgorithmKind::Objective, ModelKind::Logistic);
    (objective.noise, objective.groups) = (Some(1.0), Some(2));
    assert_eq!(objective.query().unwrap_err().argument, "groups");
}

#[test]
fn a_schedule_segment_in_groups_composes_its_rounds() {
    use propdp::core::Model;
    use propdp::core::accountant::sampling::Sampling;
    use propdp::privacy::schedule::{Schedule, assess as assess_schedule};
    let read = |text: &str| -> Schedule { toml::from_str(text).unwrap() };
    let eps = |text: &str| {
        assess_schedule(
            &read(text),
            &Model::Logistic,
            Neighbouring::AddRemoveOne,
            Sampling::Poisson,
            1e-5,
        )
        .unwrap()
        .epsilon
        .expect("a finite ε")
    };
    // 1000 steps in 4 groups then 300 plain: the ε of 250 + 300 plain steps, and not of 1300
    let grouped = eps(
        "[[segment]]\nnoise = 1.0\nsample_rate = 0.05\nsteps = 1000\nclip = 1.0\ngroups = 4\n\
                       [[segment]]\nnoise = 1.0\nsample_rate = 0.05\nsteps = 300\nclip = 1.0\n",
    );
    let rounds = eps("[[segment]]\nnoise = 1.0\nsample_rate = 0.05\nsteps = 550\nclip = 1.0\n");
    assert_eq!(grouped, rounds);
    let all = eps("[[segment]]\nnoise = 1.0\nsample_rate = 0.05\nsteps = 1300\nclip = 1.0\n");
    assert!(all.upper > grouped.upper * 1.2, "{all:?} vs {grouped:?}");
    let bad = assess_schedule(
        &read("[[segment]]\nnoise = 1.0\nsample_rate = 0.05\nsteps = 10\nclip = 1.0\ngroups = 0\n"),
        &Model::Logistic,
        Neighbouring::AddRemoveOne,
        Sampling::Poisson,
        1e-5,
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("segment[0].groups"), "{bad}");
}
