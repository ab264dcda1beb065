//! The guarantee of a noise level, and the noise a budget needs, for each
//! algorithm — what `propdp privacy` prints.
//! Run: cargo run --release -p propdp --example privacy
use propdp::core::accountant::Neighbouring;
use propdp::core::{AlgorithmKind, Model};
use propdp::privacy::{NoiseLevel, Participation, Query, assess};

fn main() -> propdp::Result<()> {
    for algorithm in AlgorithmKind::ALL {
        let query = Query {
            algorithm,
            model: Model::Logistic,
            lambda: 1.0,
            steps: 10,
            sample_rate: 1.0,
            clip: None,
            participation: Participation::POISSON,
            neighbouring: Neighbouring::ReplaceOne,
            delta_priv: 1e-6,
            noise: NoiseLevel::Epsilon(2.0),
            extra_ridge: propdp::core::accountant::ExtraRidge::Auto,
        };
        let report = assess(&query)?;
        print!("{}", report.text());
        // the same noise, assessed as given
        let again = assess(&Query {
            noise: NoiseLevel::Given(report.noise),
            ..query
        })?;
        println!("  round trip: ε = {:.9}\n", again.epsilon.unwrap_or(f64::INFINITY));
    }
    Ok(())
}
