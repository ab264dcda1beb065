//! Wall-clock of the state evolution of DP-GD (standard logistic, δ = 2,
//! σ = 1): the full-memory DMFT (`full_memory::solve`, O(N·T³)) against the
//! long-horizon solver (`long_horizon::solve`, O(N·T), docs/theory.md §3.3),
//! measured in the same run, for T ∈ {10, 25, 50, 100} at N = 2^16 and 2^18
//! sample points in total (4 scrambles or replicates in parallel on the
//! machine's cores).
//! Run: cargo bench -p propdp-theory --bench dmft
use std::time::Instant;

use propdp_core::loss::Loss;
use propdp_theory::dynamics::long_horizon;
use propdp_theory::dynamics::{DmftParams, DmftPath, full_memory};

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
                groups: 1,
                strategy: propdp_core::problem::Strategy::IDENTITY,
            };
            let show = |name: &str, seconds: f64, path: &DmftPath| {
                println!(
                    "N = 2^{}, T = {steps:>3}, {name:12}: {seconds:7.2} s  (est_err2 = {:.5} ± {:.1e})",
                    total.trailing_zeros(),
                    path.mean["est_err2"][steps],
                    path.stderr["est_err2"][steps]
                );
            };
            let t = Instant::now();
            let path = full_memory::solve(&p).unwrap();
            show("full memory", t.elapsed().as_secs_f64(), &path);
            let t = Instant::now();
            let long = long_horizon::solve(&p).unwrap();
            show("long horizon", t.elapsed().as_secs_f64(), &long.path);
        }
    }
}
