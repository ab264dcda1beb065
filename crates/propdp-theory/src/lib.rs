//! propdp's theory engine: the proportional-regime fixed-point systems of
//! docs/theory.md §2 for objective and output perturbation, with Huber and
//! logistic losses, and the state evolutions of DP-GD and DP-SGD (§3).
//!
//! Laid out as docs/theory.md: [`numerics`] (quadrature, normal functions,
//! root finding), [`fixed_points`] (§2), [`dynamics`] (§3), and [`solve`],
//! which chooses the solver of a point and dispatches to it. Imports run one
//! way: `solve` → `dynamics` → `fixed_points` → `numerics`.

#![warn(missing_docs)]

pub mod dynamics;
pub mod fixed_points;
pub mod numerics;
pub mod solution_check;
pub mod solve;
