//! The standard normal distribution: Φ, log Φ accurate in the far left
//! tail, φ and Φ⁻¹.

use statrs::distribution::{ContinuousCDF, Normal};

/// Φ(x), the standard normal CDF (`libm::erfc`).
///
/// ```
/// assert!((propdp_numerics::normal::norm_cdf(0.0) - 0.5).abs() < 1e-16);
/// ```
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// log Φ(x), accurate in the far left tail where Φ underflows.
///
/// For x < −30 uses the asymptotic series
/// log Φ(x) = −x²/2 − log(−x√(2π)) + log(1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸)
/// (relative error below 1e-12 there); `libm::erfc` elsewhere. No crate offers
/// log Φ in the deep tail, which the Gaussian-mechanism curve needs at large ε/μ.
///
/// ```
/// use propdp_numerics::normal::log_norm_cdf;
/// assert!((log_norm_cdf(-1.0) - 0.15865525393145707f64.ln()).abs() < 1e-14);
/// assert!(log_norm_cdf(-100.0).is_finite() && log_norm_cdf(-100.0) < -5000.0);
/// ```
pub fn log_norm_cdf(x: f64) -> f64 {
    if x > -30.0 {
        return norm_cdf(x).ln();
    }
    let x2 = x * x;
    let series = 1.0 - 1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2) + 105.0 / (x2 * x2 * x2 * x2);
    -0.5 * x2 - (-x * (2.0 * std::f64::consts::PI).sqrt()).ln() + series.ln()
}

/// φ(x), the standard normal density.
///
/// ```
/// assert!((propdp_numerics::normal::norm_pdf(0.0) - 0.3989422804014327).abs() < 1e-16);
/// ```
pub fn norm_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Φ⁻¹(u), the standard normal quantile of u ∈ (0, 1) (`statrs`).
///
/// ```
/// use propdp_numerics::normal::{norm_cdf, quantile};
/// assert!((quantile(0.975) - 1.959963984540054).abs() < 1e-9);
/// assert!((norm_cdf(quantile(0.01)) - 0.01).abs() < 1e-12);
/// ```
pub fn quantile(u: f64) -> f64 {
    Normal::standard().inverse_cdf(u)
}
