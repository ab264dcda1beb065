//! Monte Carlo simulation of the DP learners of docs/theory.md §1 on
//! synthetic proportional-regime data, reporting the same metrics as the
//! theory.
//!
//! One repetition: draw (X, θ*, y) and the privacy noise b from the RNG stream
//! of (config seed, sweep point, d, repetition) ([`rng::stream`]), fit the
//! estimator ([`objective`]: Newton's method or L-BFGS by size), then evaluate every metric
//! ([`evaluate`]): test metrics exactly from the population for a Gaussian
//! design, on held-out rows otherwise (other designs, real rows). Repetitions run in parallel
//! with rayon; results do not depend on the number of threads.

#![warn(missing_docs)]

pub mod data;
pub mod evaluate;
pub mod gd;
pub mod intercept;
pub mod intercept_objective;
pub mod lbfgs;
pub mod newton;
pub mod objective;
pub mod real;
pub mod rng;
mod rows;
pub mod run;
pub mod two_cluster;

pub use propdp_core::{Design, Prior};
pub use run::{
    Repetition, SimError, SimSettings, SimSummary, simulate, simulate_reps, simulate_with_progress, summarise,
};
