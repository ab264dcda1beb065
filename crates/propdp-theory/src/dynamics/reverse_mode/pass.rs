//! The reverse passes' common form (the module above, `reverse_mode`): a
//! pass over every path's events, Σ_paths ω_t·b_{t−m}, compiled a second
//! time for AVX2.
//!
//! # References
//! - Griewank, Walther (2008), *Evaluating Derivatives*, 2nd ed., ch. 3
//!   (the reverse mode).

/// A reverse pass over every path's events.
pub(super) trait Pass {
    /// Σ_paths ω_t·b_{t−m} into `acc` (zeroed by the caller); `now[s mod W]`
    /// = R_θ(t, s).
    fn run(&mut self, now: &[f64], omega: &[f64], acc: &mut [f64]);
}

/// `pass` compiled for AVX2 where the CPU has it: the same operations in the
/// same order (no contraction into fused multiply-adds), so the same bits,
/// four lanes per instruction.
pub(super) fn run<P: Pass>(pass: &mut P, now: &[f64], omega: &[f64], acc: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { run_avx2(pass, now, omega, acc) };
        return;
    }
    pass.run(now, omega, acc);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<P: Pass>(pass: &mut P, now: &[f64], omega: &[f64], acc: &mut [f64]) {
    pass.run(now, omega, acc);
}
