//! The cost of a spectrum: a static point (Huber and logistic objective
//! perturbation) and a DP-GD point (logistic, T = 40, the full-memory state
//! evolution), isotropic against power-law spectra of K = 10, 100 and 1000
//! atoms, measured in the same run (best of `reps` after a warm-up).
//!
//! `cargo bench -p propdp-theory --bench covariance [-- reps]`

use std::time::Instant;

use propdp_core::covariance::{Covariance, TeacherShape};
use propdp_core::{Algorithm, LossVariant, Model, NoiseLaw, Point, config::SolverOptions};
use propdp_theory::solve::TheorySolver;

fn best(reps: usize, f: impl Fn()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // the first argument not a flag (cargo bench passes --bench)
    let reps: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let objective = Algorithm::Objective {
        lambda: 0.1,
        sigma: 1.0,
    };
    let dpgd = Algorithm::Dpgd {
        lambda: 0.1,
        sigma: 1.0,
        eta: 0.02,
        steps: 40,
        loss_variant: LossVariant::Standard,
    };
    let points = [
        ("huber objective", Point::new(1.0, 1.0, huber, objective).unwrap(), reps),
        (
            "logistic objective",
            Point::new(1.0, 4.0, Model::Logistic, objective).unwrap(),
            reps,
        ),
        (
            "logistic DP-GD T=40",
            Point::new(1.0, 4.0, Model::Logistic, dpgd).unwrap(),
            reps.min(3),
        ),
    ];
    println!(
        "{:<22} {:>12} {:>12} {:>12} {:>12}",
        "point", "isotropic", "K = 10", "K = 100", "K = 1000"
    );
    for (name, point, reps) in points {
        let iso = best(reps, || {
            TheorySolver::new(SolverOptions::default()).solve(&point, None).unwrap();
        });
        let mut row = format!("{name:<22} {:>10.3}ms", iso * 1e3);
        for k in [10, 100, 1000] {
            let cov = Covariance::power_law(1.0, 100.0, k, TeacherShape::Aligned).unwrap();
            let solver = TheorySolver::new(SolverOptions::default()).with_covariance(cov);
            let t = best(reps, || {
                solver.solve(&point, None).unwrap();
            });
            row += &format!(" {:>7.3}ms ×{:<3.1}", t * 1e3, t / iso);
        }
        println!("{row}");
    }
}
