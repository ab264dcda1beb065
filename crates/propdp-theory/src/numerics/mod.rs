//! Numerical building blocks of every solver: Gaussian quadrature
//! ([`gauss_hermite`]; composite Gauss–Legendre panels are
//! `propdp_core::panels`), the standard normal functions and closed-form
//! Gaussian moments ([`gaussian`]), bracketed root finding ([`roots`], `propdp_numerics`'), small
//! positive definite systems ([`cholesky`]), y += a·x (`axpy`) and dot products (`dot_lanes`, `dots`).

#[rustfmt::skip]
mod erfcx_table;
pub mod cholesky;
mod dot;
pub mod gauss_hermite;
pub mod gaussian;
pub(crate) use dot::{dot_lanes, dots};
pub use propdp_numerics::roots;

/// y += a·x.
pub(crate) fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}
