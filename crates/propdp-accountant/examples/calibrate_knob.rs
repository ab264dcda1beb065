//! Calibrates each knob of a DP-SGD run to (ε, δ) on the certified ε and
//! reads the guarantee back: `cargo run --release -p propdp-accountant --example calibrate_knob`.

use propdp_accountant::Neighbouring;
use propdp_accountant::bracket::{BracketSettings, EpsilonBracket};
use propdp_accountant::calibrate::{Knob, Target, calibrate};
use propdp_accountant::events::{Event, Segment};
use propdp_accountant::sampling::{Sampling, sampled_epsilon};

/// The certified ε of one run: the Poisson figure of [`sampled_epsilon`].
fn certified(run: &Segment, delta: f64, n: Neighbouring, s: BracketSettings) -> Option<EpsilonBracket> {
    let event = Event::dpsgd(run.noise_multiplier, run.sample_rate, run.steps);
    sampled_epsilon(Sampling::Poisson, &event, delta, n, s).ok()?.epsilon
}

fn main() {
    let run = Segment {
        noise_multiplier: 0.6,
        sample_rate: 0.004,
        steps: 10_000,
    };
    let s = BracketSettings::default();
    for n in [Neighbouring::AddRemoveOne, Neighbouring::ReplaceOne] {
        for (eps, delta) in [(1.0, 1e-5), (8.0, 1e-5), (0.1, 1e-8), (20.0, 1e-18)] {
            for knob in [Knob::NoiseMultiplier, Knob::Steps, Knob::SampleRate] {
                let t = std::time::Instant::now();
                let target = Target::Approx {
                    epsilon: eps,
                    delta_priv: delta,
                };
                let make_event = |v: f64| match knob {
                    Knob::NoiseMultiplier => Event::dpsgd(v, run.sample_rate, run.steps),
                    Knob::Steps => Event::dpsgd(run.noise_multiplier, run.sample_rate, v as u64),
                    Knob::SampleRate => Event::dpsgd(run.noise_multiplier, v, run.steps),
                };
                match calibrate(knob, make_event, target, n, s) {
                    Ok(c) => {
                        let run = c.event.parts().unwrap().segments[0];
                        let back = certified(&run, delta, n, s).unwrap();
                        println!(
                            "{:<15} ε {eps:<5} δ {delta:e} {:<18}: z {:.6} q {:.6e} T {:>9}  ε ∈ [{:.6}, {:.6}] ({} evals, {:.2} s)",
                            n.label(),
                            knob.name(),
                            run.noise_multiplier,
                            run.sample_rate,
                            run.steps,
                            back.lower,
                            back.upper,
                            c.evaluations,
                            t.elapsed().as_secs_f64()
                        );
                    }
                    Err(e) => println!("{:<15} ε {eps:<5} δ {delta:e} {:<18}: {e}", n.label(), knob.name()),
                }
            }
        }
    }
}
