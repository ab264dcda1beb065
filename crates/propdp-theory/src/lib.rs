//! propdp's theory engine: the proportional-regime fixed-point systems of
//! docs/theory.md §2 for objective and output perturbation, with Huber and
//! logistic losses.

#![warn(missing_docs)]

pub mod dynamics;
pub mod fixed_points;
pub mod numerics;
pub mod solve;
