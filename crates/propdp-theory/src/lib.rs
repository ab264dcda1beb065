//! propdp's theory engine: the proportional-regime fixed-point systems of
//! docs/theory.md §2 for objective and output perturbation, with Huber and
//! logistic losses.

#![warn(missing_docs)]

mod covariance_spectrum;
pub mod dmft;
mod dyadic;
#[rustfmt::skip]
mod erfcx_table;
pub mod gauss_hermite;
pub mod gaussian;
pub mod huber;
pub mod least_squares;
pub mod logistic;
pub mod long_horizon;
mod modes;
pub mod noise;
pub use propdp_core::panels;
mod reverse_mode;
pub mod root;
pub mod solve;
pub mod spectral;
mod train_loss;
