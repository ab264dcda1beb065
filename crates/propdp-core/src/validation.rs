//! The theory-vs-simulation acceptance rule of docs/theory.md §5.
//!
//! A prediction counts as verified when |theory − sim mean| ≤ 3·stderr + c/√d.
//! propdp takes c = 0.5·max(|theory|, 0.1): the finite-size allowance is
//! relative to the metric's own scale, floored so that metrics predicted to be
//! zero still get an absolute allowance.

/// Finite-size constant of the rule (relative to the metric's scale).
pub const FINITE_SIZE_C: f64 = 0.5;

/// Largest |theory − sim| accepted at dimension `d` with standard error `stderr`.
///
/// ```
/// use propdp_core::validation::allowed_gap;
/// assert!((allowed_gap(1.0, 0.01, 400) - (0.03 + 0.025)).abs() < 1e-15);
/// ```
pub fn allowed_gap(theory: f64, stderr: f64, d: usize) -> f64 {
    3.0 * stderr + FINITE_SIZE_C * theory.abs().max(0.1) / (d as f64).sqrt()
}

/// Whether a simulated mean agrees with the theory by the rule.
pub fn agrees(theory: f64, mean: f64, stderr: f64, d: usize) -> bool {
    (theory - mean).abs() <= allowed_gap(theory, stderr, d)
}
