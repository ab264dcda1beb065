//! `propdp run` and what a run is made of. Each file is one part:
//!
//! | file | what it is |
//! |---|---|
//! | `load.rs` | a config file read for a run: as written ([`load`]) or at a precision ([`load_at_precision`]) |
//! | `sweep.rs` | the run itself: every point of a config's sweep solved and simulated ([`run()`], [`run_shard`]), and the records it writes |
//! | [`rundir`] | the run directory: manifest, lock, resume, records appended |
//! | [`shard`] | the units of work of a run, their estimated cost, and their split into shards |
//! | [`merge`] | the shards of a sharded run combined into the records a single run writes |
//! | [`summary`] | the table `propdp run` prints |
//! | [`provenance`] | what produced a result: the manifest and each record's provenance |
//!
//! The sibling files name each other by their paths (`super::rundir::RunDir`),
//! never through this file; this file only declares them and states what the
//! rest of the crate may use: the public API below, and the crate-internal
//! items a tune search borrows (`crate::tune` names nothing else of `run/`).

mod load;
pub mod merge;
pub mod provenance;
pub mod rundir;
pub mod shard;
pub mod summary;
mod sweep;

pub use load::{load, load_at_precision};
pub use sweep::{
    RunSummary, Sources, check, default_dir, describe, real_data, run, run_shard, sim_settings, simulation_record,
    theory_record,
};

// What the rest of the crate borrows of a run: a tune search writes its
// optimums into a run directory (with its manifest and provenance), splits
// its cells into shards by the same cost model, merges shards after the
// same checks, and simulates its optimums with a run's settings and data
// rows; `validate` runs a config into a run directory, and the figures of
// a results file check its records as a run does.
pub(crate) use merge::check_shards;
pub(crate) use provenance::{Manifest, provenance_of};
pub(crate) use rundir::{Existing, Line, RunDir, TUNE, read_checked, read_manifest};
pub(crate) use shard::{Shard, Unit, assign, dmft_cost, owned, simulation_cost};
pub(crate) use sweep::{expected, load_rows};
