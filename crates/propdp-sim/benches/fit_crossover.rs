//! Newton against L-BFGS on the same objective fits (one thread, best of 3),
//! for the size at which `Objective::minimize` switches
//! ([`propdp_sim::objective::LBFGS_MIN_D`]), and the hard logistic region
//! (λ = 1e-3, δ = 2, s² = 4).
//! Run: RAYON_NUM_THREADS=1 cargo bench -p propdp-sim --bench fit_crossover
use std::time::Instant;

use propdp_core::loss::Loss;
use propdp_core::{Design, Model, NoiseLaw, Prior};
use propdp_sim::data::{draw_dataset, draw_gaussian_vector};
use propdp_sim::objective::Objective;
use propdp_sim::rng::stream;

fn best<T>(f: impl Fn() -> T) -> (f64, T) {
    let mut out = None;
    let mut t_best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let r = f();
        t_best = t_best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (t_best, out.expect("three runs"))
}

fn main() {
    let huber = Model::Huber {
        huber_m: 1.0,
        noise: NoiseLaw::Gaussian { sd: 0.5 },
    };
    let cases: Vec<(&str, Model, f64, f64, usize, usize)> = [10, 25, 50, 100, 200, 400, 1000]
        .iter()
        .flat_map(|&d| {
            [
                ("huber", huber, 1.0, 1.0, 2 * d, d),
                ("logistic", Model::Logistic, 1.0, 1.0, 2 * d, d),
            ]
        })
        .chain([
            ("logistic hard", Model::Logistic, 1e-3, 4.0, 250, 500),
            ("logistic hard", Model::Logistic, 1e-3, 4.0, 500, 1000),
        ])
        .collect();
    for (name, model, lambda, s2, n, d) in cases {
        let mut rng = stream(1, &[0]);
        let data = draw_dataset(&model, n, d, s2, Design::Gaussian, Prior::Gaussian, &mut rng);
        let b = draw_gaussian_vector(d, &mut rng);
        let obj = Objective {
            xt: &data.xt,
            y: &data.y,
            loss: Loss::of(&model),
            lambda,
            sigma: 1.0,
            b: &b,
        };
        let (tn, rn) = best(|| obj.newton(1e-9, 100));
        let (tl, rl) = best(|| obj.lbfgs(1e-9, 5000));
        let it = |r: &Result<(_, propdp_sim::objective::FitReport), _>| match r {
            Ok((_, rep)) => format!("{} it", rep.iterations),
            Err(e) => format!("{e}"),
        };
        println!(
            "{name:14} λ={lambda:<6} (n, d) = ({n:5}, {d:5}): Newton {tn:.4} s ({}), L-BFGS {tl:.4} s ({}), ratio {:.2}",
            it(&rn),
            it(&rl),
            tn / tl
        );
    }
}
