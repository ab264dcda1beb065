//! `propdp tune`: for each algorithm, problem point and privacy budget, the
//! hyperparameters minimising the predicted metric once the noise is
//! calibrated to the budget — chosen from theory, with no privacy spent on
//! tuning. λ for objective and output perturbation ([`ridge`]); (T, η, λ) for
//! DP-GD and (q, T, η, λ) for DP-SGD through their DMFT ([`descent`]).
//!
//! One part per file; each names the others by their paths
//! (`super::plan::Plan`), never through this file, which only declares them
//! and states the public API:
//!
//! | file | what it is |
//! |---|---|
//! | `types.rs` | what a search finds ([`Optimum`]) and a cell's key: shared by the others, a leaf |
//! | `brent.rs` | the 1-D minimiser of the λ and η searches, a leaf |
//! | [`ridge`] | the λ search of objective and output perturbation |
//! | [`descent`] | the (q, T, η, C, λ) search of DP-GD and DP-SGD |
//! | `best.rs` | one optimum as written to `tune.jsonl` ([`Best`]) and its simulated check |
//! | `plan.rs` | a config parsed into its cells, and how each algorithm kind is searched |
//! | `cost.rs` | the estimated time of a search, its shards, and [`estimate`] |
//! | `search.rs` | the search itself: [`tune()`], [`tune_shard`] |
//! | `report.rs` | what a search reports: [`TuneOutcome`], its table and winner maps |
//! | `figures.rs` | the figures of a whole search |
//! | `merge.rs` | the directories of a sharded search merged into one ([`merge()`]) |

mod best;
mod brent;
mod cost;
pub mod descent;
mod figures;
mod merge;
mod plan;
mod report;
pub mod ridge;
mod search;
mod types;

pub use best::{Best, NonPrivate, SimCheck, TrainingRun};
pub use cost::{TuneEstimate, estimate};
pub use merge::merge;
pub use plan::is_tune_config;
pub use report::{Cell, TuneOutcome};
pub use search::{tune, tune_shard};
pub use types::Optimum;
