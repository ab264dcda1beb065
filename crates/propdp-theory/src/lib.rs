//! propdp's theory engine: the proportional-regime fixed-point systems of
//! docs/theory.md §2 for objective and output perturbation, with Huber and
//! logistic losses.

#![warn(missing_docs)]

pub mod dmft;
mod dyadic;
pub mod fixed_points;
pub mod least_squares;
pub mod long_horizon;
mod modes;
pub mod numerics;
mod reverse_mode;
pub mod solve;
