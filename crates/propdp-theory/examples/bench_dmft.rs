//! Wall-clock of the DMFT of DP-GD (standard logistic, δ = 2, σ = 1) for
//! T ∈ {10, 25, 50, 100} at N = 2^16 and 2^18 sample points in total
//! (4 scrambles in parallel on the machine's cores).
//! Run: cargo run --release -p propdp-theory --example bench_dmft
use std::time::Instant;

use propdp_core::loss::Loss;
use propdp_theory::dmft::{DmftParams, solve};

fn main() {
    for total in [1usize << 16, 1 << 18] {
        for steps in [10, 25, 50, 100] {
            let p = DmftParams {
                delta: 2.0,
                sample_rate: 1.0,
                clip: f64::INFINITY,
                s2: 1.0,
                lambda: 0.1,
                sigma: 1.0,
                eta: 1.0,
                steps,
                loss: Loss::Logistic,
                noise_sd: 0.0,
                points: total / 4,
                scrambles: 4,
                seed: 1,
            };
            let t = Instant::now();
            let path = solve(&p).unwrap();
            let se = path.stderr["est_err2"][steps];
            println!(
                "N = 2^{}, T = {steps:>3}: {:7.2} s  (est_err2 = {:.5} ± {se:.1e})",
                total.trailing_zeros(),
                t.elapsed().as_secs_f64(),
                path.mean["est_err2"][steps]
            );
        }
    }
}
