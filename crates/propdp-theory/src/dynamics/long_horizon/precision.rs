//! Precision as an input (`solver.precision`, docs/theory.md §3.3,
//! "Precision"): the long-horizon solver's RQMC paths chosen for a target
//! relative standard error r* of the metrics at the last step.
//!
//! A pilot solve of R replicates on [`PILOT_POINTS`] paths each measures the
//! relative standard error r₀ ([`relative_stderr`]: from the replicates'
//! spread over the horizon's last tenth, not its last step alone); Monte
//! Carlo error falls at least as N^{−1/2} in the paths N·R (RQMC at least
//! as fast in N). A pilot within r* is the answer. Within
//! [`POOLED_REACH`]·r*, batches of R more replicates at the pilot's paths
//! and window are pooled with it until the pooled replicates reach r* (at
//! most [`MAX_POOLED`] batches): the pilot's work is kept. Further off, one
//! solve on
//!
//!   N = N₀·(r₀/r*)²·[`SAFETY`], rounded up to a power of two, at most [`MAX_POINTS`],
//!
//! paths per replicate (the safety factor covers the estimate's spread),
//! starting from the pilot's response window. The achieved r is recorded
//! beside the target, with the paths per replicate and the replicates.
//!
//! # References
//! - A. B. Owen, *Monte Carlo theory, methods and examples* (2013), §2.5
//!   (sample size from a pilot), §17 (randomised quasi-Monte Carlo).

use propdp_core::metrics;

use crate::dynamics::path::DmftPath;

/// Paths per replicate of the pilot solve, and the fewest a solve at a
/// precision uses. Unclipped least squares against its exact trajectory
/// (δ = 0.5, q = 0.05, T = 400; 128 to 2048 paths, 32 to 256 replicates,
/// seven seeds) sits within +0.1–0.5% of it at every path count alike — the
/// solver's approximation, not an O(1/N) bias of the paths (docs/theory.md
/// §3.3, "Precision").
pub const PILOT_POINTS: usize = 1 << 10;

/// How far above the target a pilot may be for further batches of
/// replicates at its paths, pooled with it, to serve ([`POOLED_REACH`]² ≤
/// [`MAX_POOLED`]: the N^{−1/2} law's replicates within the limit): each
/// batch reuses the pilot's work where a solve on more paths would
/// discard it.
pub const POOLED_REACH: f64 = 2.0;

/// Most batches of replicates pooled, the pilot's included.
pub const MAX_POOLED: usize = 4;

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

/// Share of the horizon whose steps estimate the relative standard error
/// at the last step ([`relative_stderr`]).
pub const LATE_SHARE: usize = 10;

/// The relative standard error at the last step, the largest over
/// [`MEASURED`], each estimated from the last ⌈T/[`LATE_SHARE`]⌉ steps:
/// √(mean over them of (s_t/m_t)²), steps with |m_t| ≤ 1e-12 skipped.
///
/// One step's spread over R replicates has R − 1 degrees of freedom (3 at
/// the default four): its estimate of the last step's error strays by
/// ±40%, and the largest over five metrics is what decides a pilot. The
/// late steps' relative variances, each unbiased for its own step's, are
/// near one level where the metrics have settled: over the 21 points of
/// `scripts/studies/long_horizon_precision.py` the last step's own
/// estimate was 0.44–1.58× this one, and the five last tenths of each
/// horizon's second half were within a factor 1.18–1.51 of each other
/// (docs/theory.md §3.3, "Precision").
///
/// ```
/// use propdp_core::metrics;
/// use propdp_theory::dynamics::long_horizon::precision::relative_stderr;
/// use propdp_theory::dynamics::DmftPath;
/// use std::collections::BTreeMap;
/// // t = 0..=20: the last 2 steps count, at relative errors 0.03 and 0.04
/// let mut se = vec![0.0; 21];
/// (se[19], se[20]) = (0.03, 0.04);
/// let path = DmftPath {
///     mean: BTreeMap::from([(metrics::EST_ERR2.to_string(), vec![1.0; 21])]),
///     stderr: BTreeMap::from([(metrics::EST_ERR2.to_string(), se)]),
/// };
/// assert!((relative_stderr(&path) - ((0.03_f64.powi(2) + 0.04_f64.powi(2)) / 2.0).sqrt()).abs() < 1e-12);
/// ```
pub fn relative_stderr(path: &DmftPath) -> f64 {
    MEASURED
        .iter()
        .filter_map(|m| {
            let (mean, se) = (path.mean.get(*m)?, path.stderr.get(*m)?);
            let len = mean.len().min(se.len());
            let from = len - len.checked_sub(1)?.div_ceil(LATE_SHARE).max(1);
            let relvar: Vec<f64> = mean[from..len]
                .iter()
                .zip(&se[from..len])
                .filter(|(v, _)| v.abs() > 1e-12)
                .map(|(v, s)| (s / v).powi(2))
                .collect();
            (!relvar.is_empty()).then(|| (relvar.iter().sum::<f64>() / relvar.len() as f64).sqrt())
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn path(metrics: &[(&str, Vec<f64>, Vec<f64>)]) -> DmftPath {
        DmftPath {
            mean: metrics.iter().map(|(m, v, _)| (m.to_string(), v.clone())).collect(),
            stderr: metrics.iter().map(|(m, _, s)| (m.to_string(), s.clone())).collect(),
        }
    }

    /// The largest metric's late estimate counts; a metric at zero, the
    /// overlap and steps before the last tenth do not; one step is its own.
    #[test]
    fn the_largest_late_relative_error_over_the_measured_metrics() {
        // t = 0..=100: the last 10 steps count
        let early_spike = |late: f64| (0..=100).map(|t| if t < 91 { 9.0 } else { late }).collect::<Vec<_>>();
        let p = path(&[
            (metrics::EST_ERR2, vec![2.0; 101], early_spike(0.02)),
            (metrics::NORM2, vec![1.0; 101], early_spike(0.03)),
            (metrics::TRAIN_LOSS, vec![0.0; 101], vec![1.0; 101]),
            (metrics::OVERLAP, vec![0.1; 101], vec![1.0; 101]),
        ]);
        assert!((relative_stderr(&p) - 0.03).abs() < 1e-15, "{}", relative_stderr(&p));
        let one = path(&[(metrics::PRED_ERR2, vec![4.0], vec![0.2])]);
        assert!((relative_stderr(&one) - 0.05).abs() < 1e-15);
        assert_eq!(relative_stderr(&path(&[])), 0.0);
    }
}
