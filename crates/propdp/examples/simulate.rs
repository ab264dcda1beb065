//! The real algorithm at finite d: 8 repetitions of objective perturbation
//! on synthetic data, against the prediction.
//! Run: cargo run --release -p propdp --example simulate
use propdp::core::validation::agrees;
use propdp::core::{Algorithm, Design, Model, Point, Prior};
use propdp::sim::{SimSettings, simulate};
use propdp::theory::solve::TheorySolver;

fn main() -> propdp::Result<()> {
    let point = Point::new(
        2.0,
        4.0,
        Model::Logistic,
        Algorithm::Objective {
            lambda: 1.0,
            sigma: 0.5,
        },
    )?;
    let settings = SimSettings::new(200, 8, Design::Gaussian, Prior::Gaussian, 1);
    let sim = simulate(&point, &settings, 0)?;
    let theory = TheorySolver::default().solve(&point, None)?;
    println!(
        "logistic, δ = 2, s² = 4, λ = 1, σ = 0.5; simulation at d = {}, n = {}",
        sim.d, sim.n
    );
    for (metric, &t) in &theory.metrics {
        let (mean, se) = (sim.mean[metric], sim.stderr[metric]);
        let verdict = if agrees(metric, t, mean, se, sim.d, false) {
            "agrees"
        } else {
            "DISAGREES"
        };
        println!("  {metric:<16} theory {t:.5}  simulation {mean:.5} ± {se:.5}  {verdict}");
    }
    Ok(())
}
