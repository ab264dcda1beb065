//! One point of the theory: the predicted metrics of objective perturbation
//! for Huber regression, and of DP-GD step by step.
//! Run: cargo run --release -p propdp --example solve
use propdp::core::{Algorithm, LossVariant, Model, NoiseLaw, Point};
use propdp::theory::solve::TheorySolver;

fn main() -> propdp::Result<()> {
    let model = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let solver = TheorySolver::default();
    let point = Point::new(
        0.5,
        1.0,
        model,
        Algorithm::Objective {
            lambda: 1.0,
            sigma: 1.0,
        },
    )?;
    let sol = solver.solve(&point, None)?;
    println!("objective perturbation, δ = 0.5, λ = 1, σ = 1 ({:?}):", sol.report);
    for (metric, value) in &sol.metrics {
        println!("  {metric:<18} {value:.6}");
    }
    let dpgd = point.with_algorithm(Algorithm::Dpgd {
        lambda: 0.1,
        sigma: 1.0,
        eta: 0.2,
        steps: 10,
        loss_variant: LossVariant::Standard,
    })?;
    let path = solver.solve(&dpgd, None)?.per_step.expect("DP-GD has a path");
    println!("DP-GD, η = 0.2, T = 10: est_err2 by step (± RQMC stderr)");
    for (t, (m, se)) in path.mean["est_err2"].iter().zip(&path.stderr["est_err2"]).enumerate() {
        println!("  t = {t:>2}  {m:.5} ± {se:.1e}");
    }
    Ok(())
}
