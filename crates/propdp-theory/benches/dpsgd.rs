//! Wall-clock of the DMFT of mini-batch DP-SGD against DP-GD at the same T
//! and point budget (standard logistic, δ = 1, σ = 1, T = 100, the default
//! 4 scrambles × 16384 points): DP-GD, DP-SGD q = 0.2, and q = 0.2 clipped
//! at C = 0.5, interleaved over 3 rounds, the fastest of each.
//! Run: cargo bench -p propdp-theory --bench dpsgd [-- dpgd|dpsgd]
//! (one kind only, to read its peak memory with /usr/bin/time -v).
use std::time::Instant;

use propdp_core::loss::Loss;
use propdp_theory::dynamics::DmftParams;
use propdp_theory::dynamics::full_memory::solve;

fn params(sample_rate: f64, clip: f64) -> DmftParams {
    DmftParams {
        delta: 1.0,
        s2: 1.0,
        lambda: 0.5,
        sigma: 1.0,
        eta: 1.0,
        steps: 100,
        sample_rate,
        clip,
        loss: Loss::Logistic,
        noise_sd: 0.0,
        points: 16384,
        scrambles: 4,
        seed: 1,
        groups: 1,
        strategy: propdp_core::problem::Strategy::IDENTITY,
    }
}

fn main() {
    // the first argument not a flag (cargo bench passes --bench)
    let only = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let cases = [
        ("dpgd", params(1.0, f64::INFINITY)),
        ("dpsgd", params(0.2, f64::INFINITY)),
        ("dpsgd_clipped", params(0.2, 0.5)),
    ];
    let mut best = [f64::INFINITY; 3];
    for _ in 0..3 {
        for (i, (name, p)) in cases.iter().enumerate() {
            if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
                continue;
            }
            let t = Instant::now();
            std::hint::black_box(solve(p).unwrap());
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    for (i, (name, _)) in cases.iter().enumerate() {
        if best[i].is_finite() {
            println!("{name:>14}: {:.3} s  ({:.2}× DP-GD)", best[i], best[i] / best[0]);
        }
    }
}
