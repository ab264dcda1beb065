//! Time per solved point and per 30×5 δ×σ sweep (warm-started along δ, as
//! `propdp run` does), for Huber with Gaussian, Student-t (ν = 3), Laplace
//! and Cauchy (ν = 1) noise and for logistic regression; and unclipped
//! least-squares DP-GD/DP-SGD with a power-law covariance of 10 and 20
//! atoms over T = 10⁵ steps (the exact spectral route, docs/theory.md §3.2).
//! Single-threaded.
//!
//! Run: cargo bench -p propdp-theory --bench solvers

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use propdp_core::covariance::{Covariance, TeacherShape};
use propdp_core::{Algorithm, LossVariant, Model, NoiseLaw, Point, config::SolverOptions};
use propdp_theory::solve::{State, TheorySolver};

fn models() -> [(&'static str, Model); 5] {
    [
        (
            "huber_gaussian",
            Model::Huber {
                huber_m: 1.0,
                noise: NoiseLaw::Gaussian { sd: 0.5 },
            },
        ),
        (
            "huber_student_t",
            Model::Huber {
                huber_m: 1.0,
                noise: NoiseLaw::StudentT { dof: 3.0, scale: 0.5 },
            },
        ),
        (
            "huber_laplace",
            Model::Huber {
                huber_m: 1.0,
                noise: NoiseLaw::Laplace { scale: 0.5 },
            },
        ),
        (
            "huber_cauchy",
            Model::Huber {
                huber_m: 1.0,
                noise: NoiseLaw::StudentT { dof: 1.0, scale: 0.5 },
            },
        ),
        ("logistic", Model::Logistic),
    ]
}

fn sweep(solver: &TheorySolver, model: Model) -> f64 {
    let mut acc = 0.0;
    for i in 0..5 {
        let sigma = [0.0, 0.5, 1.0, 2.0, 5.0][i];
        let mut warm: Option<State> = None;
        for j in 0..30 {
            let delta = 0.05 * 100f64.powf(j as f64 / 29.0);
            let p = Point::new(delta, 1.0, model, Algorithm::Objective { lambda: 1.0, sigma }).unwrap();
            let s = solver.solve(&p, warm).unwrap();
            acc += s.metrics["est_err2"];
            warm = Some(s.state);
        }
    }
    acc
}

fn bench(c: &mut Criterion) {
    let solver = TheorySolver::new(SolverOptions::default());
    for (name, model) in models() {
        let p = Point::new(
            0.5,
            1.0,
            model,
            Algorithm::Objective {
                lambda: 1.0,
                sigma: 1.0,
            },
        )
        .unwrap();
        c.bench_function(&format!("point/{name}"), |b| {
            b.iter(|| solver.solve(black_box(&p), None).unwrap())
        });
    }
    let mut g = c.benchmark_group("sweep_30x5");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, model) in models() {
        g.bench_function(name, |b| b.iter(|| sweep(&solver, black_box(model))));
    }
    g.finish();
    let mut g = c.benchmark_group("least_squares_covariance_T1e5");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for atoms in [10, 20] {
        let cov = Covariance::power_law(1.0, 30.0, atoms, TeacherShape::Aligned)
            .unwrap()
            .unwrap();
        let solver = TheorySolver::new(SolverOptions::default()).with_covariance(Some(cov.clone()));
        for q in [1.0, 0.01] {
            let eta = 1.2 / (q * cov.right_edge(0.5) + 0.1);
            let p = Point::new(
                0.5,
                1.0,
                Model::LeastSquares {
                    noise: NoiseLaw::Gaussian { sd: 0.5 },
                },
                Algorithm::Dpsgd {
                    lambda: 0.1,
                    sigma: 0.5,
                    eta: eta.min(1.5),
                    steps: 100_000,
                    loss_variant: LossVariant::Standard,
                    sample_rate: q,
                    clip: None,
                    groups: 1,
                    strategy: propdp_core::problem::Strategy::IDENTITY,
                },
            )
            .unwrap();
            g.bench_function(format!("atoms{atoms}_q{q}"), |b| {
                b.iter(|| solver.solve(black_box(&p), None).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
