//! What can go wrong in a theory solve ([`TheoryError`]) and the identities
//! every solution must satisfy before it is written ([`check_solution`]):
//! finite metrics, est_err2 ≥ 0, norm2 ≥ 0, Cauchy–Schwarz
//! overlap² ≤ norm2·s², est_err2 = norm2 − 2·overlap + s².
//!
//! # References
//! - docs/theory.md §5 (validation: a result is written only when it converged
//!   and is consistent).

use propdp_core::Point;
use propdp_core::metrics::Metrics;
use thiserror::Error;

use crate::dynamics::DmftError;
use crate::fixed_points::huber::HuberError;
use crate::fixed_points::logistic::LogisticError;

/// Any theory failure.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TheoryError {
    #[error(transparent)]
    /// The Huber system failed.
    Huber(#[from] HuberError),
    #[error(transparent)]
    /// The logistic system failed.
    Logistic(#[from] LogisticError),
    #[error(transparent)]
    /// The DP-GD state evolution failed.
    Dmft(#[from] DmftError),
    #[error(transparent)]
    /// The exact least-squares trajectory does not exist (divergence).
    LeastSquares(#[from] crate::dynamics::least_squares::LeastSquaresError),
    /// A solver returned a metric that is not a finite number (an overflow,
    /// e.g. σ² or τ² beyond the range of f64): never written as a result.
    #[error("{metric} = {value:e} is not finite at {params}: the point is beyond the range of f64 arithmetic")]
    NotFinite {
        /// The metric.
        metric: String,
        /// Its value.
        value: f64,
        /// The point's parameters, "k=v, …".
        params: String,
    },
    /// The point's solver does not take a feature covariance (yet).
    #[error("{what} (at {params})")]
    Covariance {
        /// What is missing.
        what: String,
        /// The point's parameters, "k=v, …".
        params: String,
    },
    /// The point's state evolution does not take its participation groups or
    /// its noise strategy (docs/theory.md §3.7): refused, never ignored.
    #[error("{field}: {what} (at {params})")]
    CorrelatedNoise {
        /// The config field the solver does not take (`algorithm.groups`, `algorithm.strategy`).
        field: String,
        /// Which solver, and what serves the point instead.
        what: String,
        /// The point's parameters, "k=v, …".
        params: String,
    },
    /// A solution violates an identity every estimator satisfies (precision
    /// lost to cancellation at extreme scales): never written as a result.
    #[error("precision lost at {params}: {what}")]
    Inconsistent {
        /// The violated identity, with the values.
        what: String,
        /// The point's parameters, "k=v, …".
        params: String,
    },
}

/// The parameters of a point as "k=v, …" for error messages.
pub(crate) fn describe(point: &Point) -> String {
    point
        .params()
        .iter()
        .map(|(k, v)| format!("{k}={v:e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every metric finite, and the identities of any estimator θ̂: est_err2 ≥ 0,
/// norm2 ≥ 0, Cauchy–Schwarz overlap² ≤ norm2·s² (to 1e-9 relative), and
/// est_err2 = norm2 − 2·overlap + s² (to 1e-6 of the terms' size). At extreme
/// scales (s² ≳ 1e16 against an O(1) estimate) the solvers' differences lose
/// every digit and break one of these: such a point is an error, not a result.
pub fn check_solution(point: &Point, metrics: &Metrics) -> Result<(), TheoryError> {
    use propdp_core::metrics::{EST_ERR2, NORM2, OVERLAP};
    if let Some((k, &v)) = metrics.iter().find(|(_, v)| !v.is_finite()) {
        return Err(TheoryError::NotFinite {
            metric: k.clone(),
            value: v,
            params: describe(point),
        });
    }
    let s2 = point.s2();
    let (Some(&e), Some(&q), Some(&m)) = (metrics.get(EST_ERR2), metrics.get(NORM2), metrics.get(OVERLAP)) else {
        return Ok(());
    };
    let fail = |what: String| {
        Err(TheoryError::Inconsistent {
            what,
            params: describe(point),
        })
    };
    if e < 0.0 || q < 0.0 {
        return fail(format!("est_err2 = {e:e} or norm2 = {q:e} is negative"));
    }
    if m * m > q * s2 * (1.0 + 1e-9) + f64::MIN_POSITIVE {
        return fail(format!(
            "overlap² = {:e} exceeds norm2·s² = {:e} (Cauchy–Schwarz)",
            m * m,
            q * s2
        ));
    }
    if (e - (q - 2.0 * m + s2)).abs() > 1e-6 * (e + q + 2.0 * m.abs() + s2) {
        return fail(format!(
            "est_err2 = {e:e} ≠ norm2 − 2·overlap + s² = {:e}",
            q - 2.0 * m + s2
        ));
    }
    Ok(())
}
