//! Robustness across scales: σ and τ from 1e-300 to 1e300, s² and λ from
//! 1e-12 to 1e12 (log grids), both models. Every point either solves to
//! finite, converged, physically consistent values or returns a typed error.

use propdp_core::config::SolverOptions;
use propdp_core::{Algorithm, Model, NoiseLaw, Point};
use propdp_theory::solve::{TheorySolver, check_solution};

#[test]
#[ignore = "slow: run with --include-ignored"]
fn every_scale_solves_consistently_or_errs() {
    let noises = [1e-300, 1e-12, 1.0, 1e12, 1e300];
    let scales = [1e-12, 1.0, 1e12];
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    // a short wall-clock budget: every point ends within about 1 s
    let solver = TheorySolver::new(SolverOptions {
        time_limit: 1.0,
        ..SolverOptions::default()
    });
    let (mut solved, mut refused) = (0, 0);
    for model in [huber, Model::Logistic] {
        for &s2 in &scales {
            for &lambda in &scales {
                for &noise in &noises {
                    for algorithm in [
                        Algorithm::Objective { lambda, sigma: noise },
                        Algorithm::Output { lambda, tau: noise },
                    ] {
                        let p = Point::new(0.5, s2, model, algorithm).unwrap();
                        let t = std::time::Instant::now();
                        match solver.solve(&p, None) {
                            Ok(sol) => {
                                assert!(sol.report.converged, "{p:?}");
                                check_solution(&p, &sol.metrics).unwrap();
                                solved += 1;
                            }
                            Err(e) => {
                                assert!(
                                    !(s2 == 1.0 && lambda == 1.0 && noise <= 1.0),
                                    "an ordinary point must solve: {p:?}: {e}"
                                );
                                refused += 1
                            }
                        }
                        let el = t.elapsed().as_secs_f64();
                        if el > 0.5 {
                            eprintln!("slow {el:.2}s {p:?}");
                        }
                    }
                }
            }
        }
    }
    eprintln!("{solved} solved, {refused} refused (typed errors)");
}
