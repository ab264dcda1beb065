//! The certified ε bracket against dp-accounting's pessimistic ε (the
//! reference file of the tests), with the time each query takes.
//!
//! Run: cargo run --release -p propdp-accountant --example bracket

use std::time::Instant;

use propdp_accountant::Neighbouring;
use propdp_accountant::bracket::{BracketSettings, dpsgd_epsilon_bracket};

fn main() {
    let text = include_str!("../tests/data/dp_accounting_eps.csv");
    println!(
        "{:>5} {:>6} {:>7} {:>7} {:>14} {:>14} {:>14} {:>9} {:>9} {:>8} {:>7}",
        "z", "q", "T", "δ", "lower", "upper", "dp-accounting", "width", "up/dpa-1", "grid", "secs"
    );
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.starts_with('z')) {
        let f: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let (z, q, steps, delta, reference) = (f[0], f[1], f[2] as u64, f[3], f[5]);
        let start = Instant::now();
        let b = dpsgd_epsilon_bracket(
            z,
            q,
            steps,
            delta,
            Neighbouring::AddRemoveOne,
            BracketSettings::default(),
        );
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
