//! Cold-start convergence over the whole default grid (δ ∈ [0.05, 5],
//! σ ∈ [0, 5], λ ∈ [0.01, 10], s² ∈ [0.25, 9]) for both models.
//! Prints failures and timing. Run: cargo run --release --example grid
use propdp_core::{Algorithm, Model, NoiseLaw, Point, config::SolverOptions};
use propdp_theory::solve::TheorySolver;
use std::time::Instant;

fn main() {
    let solver = TheorySolver::new(SolverOptions::default());
    let deltas: Vec<f64> = (0..12).map(|i| 0.05 * (100f64).powf(i as f64 / 11.0)).collect();
    let models = [
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
        },
        Model::Logistic,
    ];
    for model in models {
        let (mut n, mut fails, t) = (0, 0, Instant::now());
        let mut worst: f64 = 0.0;
        for &s2 in &[0.25, 1.0, 4.0, 9.0] {
            for &lambda in &[0.01, 0.1, 1.0, 10.0] {
                for &sigma in &[0.0, 0.5, 2.0, 5.0] {
                    for &delta in &deltas {
                        let p = Point::new(delta, s2, model, Algorithm::Objective { lambda, sigma }).unwrap();
                        n += 1;
                        match solver.solve(&p, None) {
                            Ok(s) => worst = worst.max(s.report.residual),
                            Err(e) => {
                                fails += 1;
                                println!("FAIL {e}");
                            }
                        }
                    }
                }
            }
        }
        let el = t.elapsed();
        println!(
            "{}: {n} points, {fails} failures, worst residual {worst:e}, {:.3} ms/point",
            model.name(),
            el.as_secs_f64() * 1e3 / n as f64
        );
    }
}
