//! propdp as a library: every capability of the `propdp` command line,
//! callable from Rust (and from the Python package built on it).
//!
//! | capability | function | the command that prints it |
//! |---|---|---|
//! | solve or simulate a sweep, incrementally, with resume | [`run::run`] | `propdp run` |
//! | theory against simulation, point by point | [`validate::validate`] | `propdp validate` |
//! | the best hyperparameters per algorithm and budget | [`tune::tune`] | `propdp tune` |
//! | the guarantee of a noise level, or the noise of a budget | [`privacy::assess`] | `propdp privacy` |
//! | the certified ε of a DP-SGD schedule | [`privacy::schedule::assess`] | `propdp privacy --schedule` |
//! | figures of a results file | [`figures::draw`] | `propdp plot` |
//! | the covariance spectrum of a data set | [`data_spectrum::spectrum`] | `propdp spectrum` |
//! | a private fit with confidence intervals for θ* | [`inference::fit`] | `propdp infer` |
//!
//! Each returns [`Error`]: its [`ErrorKind`] (config, privacy argument, io,
//! run directory, cancelled, computation) and, for a config or argument,
//! the field at fault.
//!
//! One point at a time, use the engine crates directly, re-exported here:
//! [`core`] (problem description, configs, accountant), [`theory`] (the
//! fixed-point and DMFT solvers), [`sim`] (Monte Carlo of the real
//! algorithms) and [`plot`].
//!
//! The equations, their conventions and how each was validated are stated in
//! the repository's `docs/theory.md`.
//!
//! ```
//! use propdp::core::{Algorithm, Model, NoiseLaw, Point};
//! use propdp::theory::solve::TheorySolver;
//! let model = Model::Huber { huber_m: 1.0, noise: NoiseLaw::Gaussian { sd: 0.5 } };
//! let point = Point::new(0.5, 1.0, model, Algorithm::Objective { lambda: 1.0, sigma: 1.0 }).unwrap();
//! let sol = TheorySolver::default().solve(&point, None).unwrap();
//! assert!(sol.report.converged && sol.metrics["est_err2"] > 0.0);
//! ```
#![warn(missing_docs)]

pub mod allocator;
pub mod data_spectrum;
pub mod effective_model;
pub mod error;
mod figure_files;
pub mod figures;
mod file;
pub mod inference;
pub mod mechanism;
pub mod privacy;
pub mod progress;
pub mod run;
pub mod tune;
pub mod validate;

// the parts of a run (`run`'s modules), also named from the root
pub use run::{merge, provenance, rundir, shard, summary};

pub use error::{Error, ErrorKind, Result};
pub use progress::{Cancelled, Progress, Silent};
pub use propdp_core as core;
pub use propdp_plot as plot;
pub use propdp_sim as sim;
pub use propdp_theory as theory;
