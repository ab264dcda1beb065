//! One fit of each estimator at (n, d) = (2000, 1000) (L-BFGS), single-threaded.
//! (Output perturbation's fit is the σ = 0 objective fit plus τb.) And one
//! Gaussian design at (4000, 2000) drawn into a recycled buffer, from the
//! simulation's ChaCha8 streams and, as the baseline of the same run, from
//! ChaCha20 (the simulation's generator up to e742349).
//! The (8000, 4000) size and the parallel speed-up are measured by
//! `scripts/bench/bench_sim.sh` (one fit there takes about a minute).
//!
//! Run: cargo bench -p propdp-sim --bench fit

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use propdp_core::loss::Loss;
use propdp_core::{Design, Model, NoiseLaw, Prior};
use propdp_sim::data::{draw_dataset, draw_design, draw_gaussian_vector, recycle};
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

fn draw(c: &mut Criterion) {
    let (n, d) = (4000, 2000);
    let mut g = c.benchmark_group("draw_design_4000x2000");
    g.sample_size(20);
    g.bench_function("chacha8", |b| {
        let mut rng = stream(1, &[0]);
        b.iter(|| recycle(draw_design(n, d, Design::Gaussian, &mut rng)))
    });
    g.bench_function("chacha20", |b| {
        use rand::SeedableRng;
        let mut rng = chacha20::ChaCha20Rng::seed_from_u64(1);
        b.iter(|| recycle(draw_design(n, d, Design::Gaussian, &mut rng)))
    });
    g.finish();
}

criterion_group!(benches, bench, draw);
criterion_main!(benches);
