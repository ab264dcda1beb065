use propdp_core::{Algorithm, Model, NoiseLaw, Point, config::SolverOptions};
use propdp_sim::{Design, Prior, SimSettings, simulate};
use propdp_theory::solve::TheorySolver;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let d: usize = args.get(1).map_or(400, |s| s.parse().unwrap());
    let reps: usize = args.get(2).map_or(12, |s| s.parse().unwrap());
    let hub = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let hubt = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
    };
    let pts = [
        (
            Point::new(
                0.5,
                1.0,
                hub,
                Algorithm::Objective {
                    lambda: 1.0,
                    sigma: 1.0,
                },
            )
            .unwrap(),
            Design::Gaussian,
        ),
        (
            Point::new(
                2.0,
                1.0,
                hub,
                Algorithm::Objective {
                    lambda: 0.5,
                    sigma: 2.0,
                },
            )
            .unwrap(),
            Design::Rademacher,
        ),
        (
            Point::new(
                0.8,
                1.0,
                hubt,
                Algorithm::Objective {
                    lambda: 0.1,
                    sigma: 0.5,
                },
            )
            .unwrap(),
            Design::Gaussian,
        ),
        (
            Point::new(0.5, 1.0, hub, Algorithm::Output { lambda: 1.0, tau: 0.5 }).unwrap(),
            Design::Gaussian,
        ),
        (
            Point::new(
                0.5,
                1.0,
                Model::Logistic,
                Algorithm::Objective {
                    lambda: 1.0,
                    sigma: 1.0,
                },
            )
            .unwrap(),
            Design::Gaussian,
        ),
        (
            Point::new(
                2.0,
                1.0,
                Model::Logistic,
                Algorithm::Objective {
                    lambda: 0.1,
                    sigma: 2.0,
                },
            )
            .unwrap(),
            Design::Rademacher,
        ),
        (
            Point::new(
                2.0,
                4.0,
                Model::Logistic,
                Algorithm::Objective {
                    lambda: 1e-3,
                    sigma: 0.0,
                },
            )
            .unwrap(),
            Design::Gaussian,
        ),
        (
            Point::new(0.5, 1.0, Model::Logistic, Algorithm::Output { lambda: 0.5, tau: 0.5 }).unwrap(),
            Design::Gaussian,
        ),
    ];
    let th = TheorySolver::new(SolverOptions::default());
    for (i, (p, design)) in pts.iter().enumerate() {
        let t = Instant::now();
        let theory = th.solve(p, None).unwrap();
        let sim = simulate(p, &SimSettings::new(d, reps, *design, Prior::Gaussian, 42), i as u64).unwrap();
        println!(
            "== {} {} δ={} params {:?} {:?} [{:.1}s, newton its ≤ {}]",
            p.model.name(),
            p.algorithm.name(),
            p.delta,
            p.algorithm,
            design,
            t.elapsed().as_secs_f64(),
            sim.max_iterations
        );
        for (k, tv) in &theory.metrics {
            let (m, se) = (sim.mean[k], sim.stderr[k]);
            println!(
                "  {k:18} theory {tv:12.6} sim {m:12.6} ± {se:9.6}  z={:6.2}",
                (m - tv) / se
            );
        }
    }
}
