//! One step's exact δ(ε) in logs: each direction's curve is a signed sum
//! of two or three terms, q·Φ(·), e^ε·Φ(·), …, and each term is carried as
//! its logarithm, so that neither e^ε (which overflows beyond ε ≈ 709.78)
//! nor a tail Φ(·) far below f64's smallest number is ever formed alone.
//! The difference is taken relative to the largest term, so δ keeps its
//! relative accuracy at every ε (1398.95 at z = 0.02, q = 0.01 under
//! replace-one, where the linear form read δ = 0 beyond 709.78 and the
//! bracket stopped there).
//!
//! With a = x*/z the threshold in units of σ (module docs of [`crate::pld`]):
//!
//! - remove: δ = q·Φ̄(a − 1/z) − r·Φ̄(a), r = e^ε − 1 + q,
//!   a = z·log(r/q) + 1/(2z); δ = 1 − e^ε where r ≤ 0;
//! - add: δ = (1 − e^ε(1 − q))·Φ(b) − e^ε q·Φ(b − 1/z),
//!   b = z·log((e^{−ε} − 1 + q)/q) + 1/(2z); δ = 0 where e^{−ε} ≤ 1 − q;
//! - replace: δ = qΦ((x* + 1)/z) − q e^ε Φ((x* − 1)/z) − (1 − q)(e^ε − 1)Φ(x*/z).
//!
//! Each term's logarithm is a sum of a few parts (log q, ε, log Φ(y), …),
//! each within a few ulp of itself, so the term is within
//! 32u·Σ|parts| relative, plus the far-tail series' 1.6·10⁻¹² of
//! [`crate::log_norm_cdf`] (an error in the argument y moves log Φ by about
//! y·Δy ≈ u·y², which is u·2|log Φ(y)|; an error in the threshold moves δ
//! only at second order, as the integrand vanishes there).

use super::pairs::{Direction, SubsampledGaussian};
use crate::gaussian::log_norm_cdf;

/// Unit round-off of f64.
const U: f64 = f64::EPSILON / 2.0;

/// A term's relative error beyond its parts' rounding: the far-tail
/// series of log Φ (1.6·10⁻¹², [`crate::log_norm_cdf`]) and libm's erfc.
const TERM_FLOOR: f64 = 4e-12;

/// A signed sum Σ sᵢ e^{lᵢ} of at most three terms, each with a bound
/// on its relative error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LogTerms {
    /// (sign, log |term|, relative error bound); unused slots are (0, −∞, 0).
    terms: [(f64, f64, f64); 3],
}

impl LogTerms {
    /// The sum of `terms` (at most three).
    fn new(terms: &[(f64, f64, f64)]) -> LogTerms {
        let mut t = [(0.0, f64::NEG_INFINITY, 0.0); 3];
        t[..terms.len()].copy_from_slice(terms);
        LogTerms { terms: t }
    }

    /// The largest log |term| (−∞ if every term is 0; NaN if a term is not
    /// a number), and the sum and the error bound relative to its exponential.
    fn scaled(&self) -> (f64, f64, f64) {
        if self.terms.iter().any(|t| t.1.is_nan()) {
            return (f64::NAN, 0.0, 0.0);
        }
        let m = self.terms.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
        if m == f64::NEG_INFINITY {
            return (m, 0.0, 0.0);
        }
        let (mut sum, mut err) = (0.0, 0.0);
        for &(sign, log, rel) in &self.terms {
            let w = (log - m).exp();
            sum += sign * w;
            err += rel * w;
        }
        // the sum of three scaled terms, itself within 4u of the largest
        (m, sum, err + 4.0 * U)
    }

    /// log of the sum (−∞ where it is ≤ 0: δ = 0; NaN where a term is not
    /// a number, which no caller may read as small).
    pub(crate) fn log_value(&self) -> f64 {
        let (m, sum, _) = self.scaled();
        if m.is_nan() {
            return f64::NAN;
        }
        if sum > 0.0 { m + sum.ln() } else { f64::NEG_INFINITY }
    }

    /// (log of a lower bound, log of an upper bound) on the exact sum, each
    /// −∞ where that bound is ≤ 0; (−∞, +∞) where a term is not a number
    /// (nothing is known).
    pub(crate) fn log_bounds(&self) -> (f64, f64) {
        let (m, sum, err) = self.scaled();
        if m.is_nan() {
            return (f64::NEG_INFINITY, f64::INFINITY);
        }
        let log = |x: f64| if x > 0.0 { m + x.ln() } else { f64::NEG_INFINITY };
        (log(sum - err), log(sum + err))
    }
}

/// A term sign·e^{Σ parts} with its relative error bound: 32u·Σ|parts|
/// and [`TERM_FLOOR`] (module docs). A part of −∞ makes the term 0.
fn term(sign: f64, parts: &[f64]) -> (f64, f64, f64) {
    let log: f64 = parts.iter().sum();
    if log == f64::NEG_INFINITY {
        return (0.0, f64::NEG_INFINITY, 0.0);
    }
    let size: f64 = parts.iter().map(|p| p.abs()).sum();
    (sign, log, TERM_FLOOR + 32.0 * U * (1.0 + size))
}

/// log(e^ε − 1 + q) for e^ε − 1 + q > 0: ε + log(1 − (1 − q)e^{−ε}) above
/// ε = 1 (no overflow), log(expm1(ε) + q) below.
fn log_remove_inner(eps: f64, q: f64) -> f64 {
    if eps > 1.0 {
        eps + (-(-q).ln_1p().exp() * (-eps).exp()).ln_1p()
    } else {
        (eps.exp_m1() + q).ln()
    }
}

/// log |e^ε − 1|: ε + log(1 − e^{−ε}) above ε = 1 (no overflow).
fn log_abs_expm1(eps: f64) -> f64 {
    if eps > 1.0 {
        eps + (-(-eps).exp()).ln_1p()
    } else {
        eps.exp_m1().abs().ln()
    }
}

impl SubsampledGaussian {
    /// One step's δ(ε) in `direction` as a signed sum of terms in logs
    /// (module docs): finite at every ε, whatever e^ε.
    pub(crate) fn log_terms(&self, direction: Direction, eps: f64) -> LogTerms {
        let (z, q) = (self.z, self.q);
        let (log_q, log_keep) = (q.ln(), (-q).ln_1p());
        match direction {
            Direction::Remove => {
                // no threshold below ε = log(1 − q): every loss exceeds ε
                if eps.exp_m1() + q <= 0.0 {
                    return LogTerms::new(&[term(1.0, &[(-eps.exp_m1()).ln()])]);
                }
                let log_r = log_remove_inner(eps, q);
                let a = z * (log_r - log_q) + 0.5 / z;
                let (l1, l2) = (log_norm_cdf(1.0 / z - a), log_norm_cdf(-a));
                LogTerms::new(&[term(1.0, &[log_q, l1]), term(-1.0, &[log_r, l2])])
            }
            Direction::Add => {
                // no threshold at ε ≥ −log(1 − q): every loss is below ε
                let log_inner = if q >= 1.0 {
                    -eps
                } else {
                    let inner = (-eps).exp_m1() + q;
                    if inner <= 0.0 {
                        return LogTerms::new(&[]);
                    }
                    inner.ln()
                };
                let b = z * (log_inner - log_q) + 0.5 / z;
                // log(1 − e^ε(1 − q)), with e^{ε + log(1 − q)} < 1 here
                let log_coef = (-(eps + log_keep).exp_m1()).ln();
                let (l1, l2) = (log_norm_cdf(b), log_norm_cdf(b - 1.0 / z));
                LogTerms::new(&[term(1.0, &[log_coef, l1]), term(-1.0, &[eps, log_q, l2])])
            }
            Direction::Replace => {
                let a = self.replace_threshold(eps) / z;
                let (l1, l2, l3) = (log_norm_cdf(a + 1.0 / z), log_norm_cdf(a - 1.0 / z), log_norm_cdf(a));
                LogTerms::new(&[
                    term(1.0, &[log_q, l1]),
                    term(-1.0, &[log_q, eps, l2]),
                    term(-eps.signum(), &[log_keep, log_abs_expm1(eps), l3]),
                ])
            }
        }
    }
}
