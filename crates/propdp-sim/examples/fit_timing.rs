//! One fit of the ridge objective F(θ) = Σᵢ ℓ(yᵢ, xᵢᵀθ) + (λ/2)‖θ‖² (σ = 0,
//! λ = 1, Gaussian design N(0, 1/d), s² = 1) with propdp's solver (best of 3)
//! — the propdp side of scripts/bench/bench_fit_sklearn.py, which fits the same
//! data (written to DIR as little-endian f64: x.bin row-major n×d, y.bin)
//! with scikit-learn / scipy.
//! TOL (default 1e-9) is the tolerance on ‖∇F‖₂/√d.
//! Run: cargo run --release -p propdp-sim --example fit_timing -- MODEL N D DIR [TOL]
use std::io::Write;
use std::time::Instant;

use propdp_core::loss::Loss;
use propdp_core::{Design, Model, NoiseLaw, Prior};
use propdp_sim::data::draw_dataset;
use propdp_sim::objective::Objective;
use propdp_sim::rng::stream;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (model, n, d, dir, tol) = match args.as_slice() {
        [m, n, d, dir] => (m, n, d, dir, 1e-9),
        [m, n, d, dir, tol] => (m, n, d, dir, tol.parse().expect("TOL")),
        _ => {
            eprintln!("usage: fit_timing huber|logistic N D DIR [TOL]");
            std::process::exit(2);
        }
    };
    let (n, d): (usize, usize) = (n.parse().expect("N"), d.parse().expect("D"));
    let model = match model.as_str() {
        "huber" => Model::Huber {
            huber_m: 1.0,
            noise: NoiseLaw::Gaussian { sd: 0.5 },
        },
        "logistic" => Model::Logistic,
        other => panic!("unknown model {other}"),
    };
    let data = draw_dataset(
        &model,
        n,
        d,
        1.0,
        Design::Gaussian,
        Prior::Gaussian,
        &mut stream(1, &[n as u64, d as u64]),
    );
    let write = |name: &str, values: &mut dyn Iterator<Item = f64>| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(format!("{dir}/{name}")).expect("output file"));
        for v in values {
            f.write_all(&v.to_le_bytes()).expect("write");
        }
    };
    // row-major n×d: exactly the storage of Xᵀ (d × n, column-major)
    write("x.bin", &mut data.xt.iter().copied());
    write("y.bin", &mut data.y.iter().copied());
    let b = nalgebra::DVector::zeros(d);
    let obj = Objective {
        xt: &data.xt,
        y: &data.y,
        loss: Loss::of(&model),
        lambda: 1.0,
        sigma: 0.0,
        b: &b,
    };
    let mut best = f64::INFINITY;
    let mut report = None;
    for _ in 0..3 {
        let t = Instant::now();
        let (_, r) = obj.minimize(tol, 100).expect("fit converges");
        best = best.min(t.elapsed().as_secs_f64());
        report = Some(r);
    }
    let r = report.expect("three fits");
    println!(
        "seconds {best:.6} iterations {} grad_norm_per_sqrt_d {:e}",
        r.iterations, r.grad_norm
    );
}
