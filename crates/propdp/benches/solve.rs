//! Baseline of the Python overhead benchmark (scripts/bench/bench_python.py): one
//! Huber point (δ = 0.5, s² = 1, M = 1, Gaussian noise sd 0.5, objective
//! perturbation λ = 1, σ = 1) solved from Rust, cold (no warm start), as
//! median ns per call over 2000 calls; and the same from TOML text, as the
//! Python package reads keyword arguments.
//! Run: cargo bench -p propdp --bench solve
use std::time::Instant;

use propdp::core::{Algorithm, Config, Model, NoiseLaw, Point};
use propdp::theory::solve::TheorySolver;

fn median_ns(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..2000)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() -> propdp::Result<()> {
    let model = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let point = Point::new(
        0.5,
        1.0,
        model,
        Algorithm::Objective {
            lambda: 1.0,
            sigma: 1.0,
        },
    )?;
    let solver = TheorySolver::default();
    let direct = median_ns(|| {
        std::hint::black_box(solver.solve(&point, None).unwrap());
    });
    let text = "[problem]\nmodel = \"huber\"\ndelta = 0.5\ns2 = 1.0\nhuber_m = 1.0\nnoise = { law = \"gaussian\", sd = 0.5 }\n\
                [algorithm]\nkind = \"objective\"\nlambda = 1.0\nsigma = 1.0\n";
    let from_text = median_ns(|| {
        let cfg = Config::from_toml_str(text).unwrap();
        let p = cfg.sweep.points()[0];
        std::hint::black_box(TheorySolver::new(cfg.raw.solver).solve(&p, None).unwrap());
    });
    println!("rust_solve_ns {direct:.0}");
    println!("rust_config_and_solve_ns {from_text:.0}");
    Ok(())
}
