//! One fit of each estimator at (n, d) = (2000, 1000) (L-BFGS), single-threaded.
//! (Output perturbation's fit is the σ = 0 objective fit plus τb.)
//! The (8000, 4000) size and the parallel speed-up are measured by
//! `scripts/bench_sim.sh` (one fit there takes about a minute).
//!
//! Run: cargo bench -p propdp-sim --bench fit

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use propdp_core::loss::Loss;
use propdp_core::{Design, Model, NoiseLaw, Prior};
use propdp_sim::data::{draw_dataset, draw_gaussian_vector};
use propdp_sim::objective::Objective;
use propdp_sim::rng::stream;

fn bench(c: &mut Criterion) {
    let (n, d) = (2000, 1000);
    let mut g = c.benchmark_group("fit_2000x1000");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    let models = [
        (
            "huber",
            Model::Huber {
                huber_m: 1.0,
                noise: NoiseLaw::Gaussian { sd: 0.5 },
            },
        ),
        ("logistic", Model::Logistic),
    ];
    for (name, model) in models {
        let mut rng = stream(1, &[0]);
        let data = draw_dataset(&model, n, d, 1.0, Design::Gaussian, Prior::Gaussian, &mut rng);
        let b = draw_gaussian_vector(d, &mut rng);
        for (alg, sigma) in [("objective", 1.0), ("output", 0.0)] {
            let obj = Objective {
                xt: &data.xt,
                y: &data.y,
                loss: Loss::of(&model),
                lambda: 1.0,
                sigma,
                b: &b,
            };
            g.bench_function(format!("{name}_{alg}"), |bch| {
                bch.iter(|| obj.minimize(1e-9, 100).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
