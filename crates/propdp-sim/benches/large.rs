//! Wall-clock of one fit at (n, d) = (8000, 4000) for Huber and logistic
//! objective perturbation, and the speed-up of a simulated point (16
//! repetitions at d = 1000, δ = 0.5) on 2 threads over 1 thread (best of 3).
//! Run via scripts/bench/bench_sim.sh.
use std::time::Instant;

use propdp_core::loss::Loss;
use propdp_core::{Algorithm, Design, Model, NoiseLaw, Point, Prior};
use propdp_sim::data::{draw_dataset, draw_gaussian_vector};
use propdp_sim::objective::Objective;
use propdp_sim::rng::stream;
use propdp_sim::{SimSettings, simulate};

fn main() {
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let (n, d) = (8000, 4000);
    for (name, model) in [("huber", huber), ("logistic", Model::Logistic)] {
        let mut rng = stream(1, &[0]);
        let data = draw_dataset(&model, n, d, 1.0, Design::Gaussian, Prior::Gaussian, &mut rng);
        let b = draw_gaussian_vector(d, &mut rng);
        let obj = Objective {
            xt: &data.xt,
            y: &data.y,
            loss: Loss::of(&model),
            lambda: 1.0,
            sigma: 1.0,
            b: &b,
        };
        let t = Instant::now();
        let (_, rep) = obj.minimize(1e-9, 100).unwrap();
        println!(
            "fit {name} objective (n, d) = ({n}, {d}): {:.2} s, {} iterations",
            t.elapsed().as_secs_f64(),
            rep.iterations
        );
    }
    let p = Point::new(
        0.5,
        1.0,
        huber,
        Algorithm::Objective {
            lambda: 1.0,
            sigma: 1.0,
        },
    )
    .unwrap();
    let s = SimSettings::new(1000, 16, Design::Gaussian, Prior::Gaussian, 3);
    let mut secs = Vec::new();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            pool.install(|| simulate(&p, &s, 0).unwrap());
            best = best.min(t.elapsed().as_secs_f64());
        }
        secs.push(best);
        println!("simulated point, 16 reps at d = 1000, {threads} thread(s): {best:.2} s");
    }
    println!("parallel speed-up (1 thread / 2 threads): {:.2}×", secs[0] / secs[1]);
}
