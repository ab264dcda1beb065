//! Shared types of propdp: the validated problem description, the TOML config
//! schema with its validation, sweep expansion, metric names and result records.
//!
//! Data flow: TOML text → [`config::RawConfig`] (schema, unknown keys rejected)
//! → [`config::RawConfig::check`] (ranges, named errors) → [`sweep::Sweep`]
//! (Cartesian product of every listed or ranged parameter) → one
//! [`problem::Point`] per sweep point → solvers → [`record::Record`].
//!
//! Conventions follow docs/theory.md §1: losses are summed over samples,
//! features have variance 1/d, δ = d/n, and λ, σ, τ are O(1).

#![warn(missing_docs)]

pub mod config;
pub mod covariance;
pub mod effective_model;
pub mod error;
pub mod guarantee;
pub mod input;
pub mod loss;
pub mod metrics;
pub mod panels;
pub mod param;
pub mod parameters;
pub mod population;
pub mod problem;
pub mod record;
pub mod spectrum;
pub mod sweep;
pub mod validated;
pub mod validation;

/// The privacy accountant, its own crate ([`propdp_accountant`]): it takes
/// sensitivities and noise as numbers; [`Model::mechanism`] supplies a
/// model's.
pub use propdp_accountant as accountant;

pub use error::ConfigError;
pub use problem::{
    Algorithm, AlgorithmKind, DataModel, Design, GradientSteps, LossVariant, Model, ModelKind, NoiseLaw, Point, Prior,
    Shape,
};
pub use validated::Config;
