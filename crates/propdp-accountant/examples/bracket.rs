//! The certified ε bracket against dp-accounting's pessimistic ε (the
//! reference files of the tests), with the time each query takes; or, given
//! DELTA WIDTH and segments Z Q T …, the bracket of that schedule at that
//! relative width — the propdp side of scripts/bench/bench_dpsgd_accountant.py
//! and scripts/reference/accountant_reference.py. Add/remove-one, or replace-one
//! with `--replace-one` first.
//!
//! Run: cargo run --release -p propdp-accountant --example bracket [-- [--replace-one] [DELTA WIDTH Z Q T [Z Q T …]]]

use std::time::Instant;

use propdp_accountant::Neighbouring;
use propdp_accountant::bracket::BracketSettings;
use propdp_accountant::epsilon;
use propdp_accountant::events::{Event, Segment};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let relation = if args.first().is_some_and(|a| a == "--replace-one") {
        args.remove(0);
        Neighbouring::ReplaceOne
    } else {
        Neighbouring::AddRemoveOne
    };
    if !args.is_empty() {
        one_case(&args, relation);
        return;
    }
    let text = match relation {
        Neighbouring::AddRemoveOne => include_str!("../tests/data/dp_accounting_eps.csv"),
        Neighbouring::ReplaceOne => include_str!("../tests/data/dp_accounting_replace_eps.csv"),
    };
    println!(
        "{:>5} {:>6} {:>7} {:>7} {:>14} {:>14} {:>14} {:>9} {:>9} {:>8} {:>7}",
        "z", "q", "T", "δ", "lower", "upper", "dp-accounting", "width", "up/dpa-1", "grid", "secs"
    );
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.starts_with('z')) {
        let f: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let (z, q, steps, delta, reference) = (f[0], f[1], f[2] as u64, f[3], f[5]);
        let start = Instant::now();
        let b = epsilon(&Event::dpsgd(z, q, steps), delta, relation, BracketSettings::default());
        let secs = start.elapsed().as_secs_f64();
        match b {
            Ok(Some(b)) => println!(
                "{z:>5} {q:>6} {steps:>7} {delta:>7.0e} {:>14.8} {:>14.8} {reference:>14.8} {:>9.2e} {:>9.2e} {:>8.1e} {secs:>7.2}{}",
                b.lower,
                b.upper,
                (b.upper - b.lower) / b.upper,
                b.upper / reference - 1.0,
                b.grid,
                if b.reached { "" } else { "  (width not reached)" }
            ),
            other => println!("{z:>5} {q:>6} {steps:>7} {delta:>7.0e} {other:?} {secs:.2}"),
        }
    }
}

/// `lower … upper … grid … reached … seconds …` of one schedule.
fn one_case(args: &[String], relation: Neighbouring) {
    let num = |s: &String| s.parse::<f64>().expect("a number");
    if args.len() < 5 || !(args.len() - 2).is_multiple_of(3) {
        eprintln!("usage: bracket [--replace-one] [DELTA WIDTH Z Q T [Z Q T …]]");
        std::process::exit(2);
    }
    let settings = BracketSettings {
        relative_width: num(&args[1]),
        ..BracketSettings::default()
    };
    let segments: Vec<Segment> = args[2..]
        .chunks(3)
        .map(|s| Segment {
            noise_multiplier: num(&s[0]),
            sample_rate: num(&s[1]),
            steps: s[2].parse().expect("T"),
        })
        .collect();
    let start = Instant::now();
    let b = epsilon(&Event::schedule(&segments), num(&args[0]), relation, settings);
    let seconds = start.elapsed().as_secs_f64();
    match b {
        Ok(Some(b)) => println!(
            "lower {:.10} upper {:.10} grid {:.3e} reached {} seconds {seconds:.4}",
            b.lower, b.upper, b.grid, b.reached
        ),
        other => {
            eprintln!("{other:?}");
            std::process::exit(2);
        }
    }
}
