//! Numerical building blocks of every solver: Gaussian quadrature
//! ([`gauss_hermite`]; composite Gauss–Legendre panels are
//! `propdp_core::panels`), the standard normal functions and closed-form
//! Gaussian moments ([`gaussian`]), and bracketed root finding ([`roots`]).

#[rustfmt::skip]
mod erfcx_table;
pub mod gauss_hermite;
pub mod gaussian;
pub mod roots;
