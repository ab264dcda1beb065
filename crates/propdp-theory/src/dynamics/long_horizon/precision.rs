//! Precision as an input (`solver.precision`, docs/theory.md §3.3,
//! "Precision"): the long-horizon solver's RQMC paths chosen for a target
//! relative standard error r* of the metrics at the last step.
//!
//! A pilot solve on [`PILOT_POINTS`] paths per replicate measures the
//! relative standard error r₀ ([`relative_stderr`]); Monte Carlo error
//! falls at least as N^{−1/2} (RQMC at least as fast), so
//!
//!   N = N₀·(r₀/r*)²·[`SAFETY`], rounded up to a power of two, at most [`MAX_POINTS`],
//!
//! reaches r* (the safety factor covers the spread of a four-replicate
//! standard error). A pilot already within r* is the answer. The main solve
//! starts from the pilot's response window. The achieved r is recorded
//! beside the target, and the paths used.
//!
//! # References
//! - A. B. Owen, *Monte Carlo theory, methods and examples* (2013), §2.5
//!   (sample size from a pilot), §17 (randomised quasi-Monte Carlo).

use propdp_core::metrics;

use crate::dynamics::path::DmftPath;

/// Paths per replicate of the pilot solve, and the fewest a solve at a
/// precision uses: at 1024 the metrics of unclipped least squares at
/// t = 5–10 sat 3e-3 (0.4%, 3 standard errors of 32 replicates) above the
/// exact trajectory, an O(1/N) bias of the kernels' feedback; at 2048
/// within 1e-3.
pub const PILOT_POINTS: usize = 1 << 11;

/// Most paths per replicate the precision may ask for.
pub const MAX_POINTS: usize = 1 << 15;

/// Factor on the N^{−1/2} estimate of the paths needed.
pub const SAFETY: f64 = 1.5;

/// The metrics whose relative standard error the precision bounds (those a
/// path has): the errors, the norm, the training loss and the test error.
/// The overlap is left out: it crosses zero, where a relative error means
/// nothing (its standard error is reported beside it).
pub const MEASURED: [&str; 5] = [
    metrics::EST_ERR2,
    metrics::PRED_ERR2,
    metrics::NORM2,
    metrics::TRAIN_LOSS,
    metrics::TEST_CLASS_ERR,
];

/// The largest relative standard error at the last step over [`MEASURED`]
/// (a metric within 1e-12 of zero is skipped).
pub fn relative_stderr(path: &DmftPath) -> f64 {
    MEASURED
        .iter()
        .filter_map(|m| Some((path.mean.get(*m)?.last()?, path.stderr.get(*m)?.last()?)))
        .filter(|(v, _)| v.abs() > 1e-12)
        .map(|(v, s)| s / v.abs())
        .fold(0.0, f64::max)
}

/// Paths per replicate that reach relative error `target` from a pilot of
/// `pilot` paths that reached `achieved`: `pilot` itself when it is within
/// the target, else N₀(r₀/r*)²·[`SAFETY`] rounded up to a power of two, at
/// most [`MAX_POINTS`].
///
/// ```
/// use propdp_theory::dynamics::long_horizon::precision::points_for;
/// assert_eq!(points_for(2048, 0.002, 0.003), 2048);
/// assert_eq!(points_for(2048, 0.006, 0.003), 16384); // 2048·4·1.5 = 12288 → 16384
/// assert_eq!(points_for(2048, 0.1, 0.003), 1 << 15);
/// ```
pub fn points_for(pilot: usize, achieved: f64, target: f64) -> usize {
    if achieved <= target {
        return pilot;
    }
    let wanted = pilot as f64 * (achieved / target).powi(2) * SAFETY;
    (wanted.ceil() as usize).next_power_of_two().min(MAX_POINTS)
}
