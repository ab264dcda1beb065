//! `propdp._native`: the Python bindings of the propdp library, wrapped by
//! the pure-Python package `propdp` (crates/propdp-py/python/propdp), which
//! builds configs from keyword arguments and returns dataclasses and pandas
//! DataFrames.
//!
//! Every function takes a config as TOML text or as a dict of its tables —
//! the same keys and the same validation as `propdp run` — and returns the
//! records the command line writes (as dicts), so results from Python and
//! from the CLI are the same records. Long calls run on a worker thread with
//! the GIL released, report progress to a callback and stop on Ctrl-C
//! (the `bridge` module).

/// mimalloc for small blocks, the system allocator for large ones
/// (`propdp::allocator`).
#[global_allocator]
static ALLOCATOR: propdp::allocator::Allocator = propdp::allocator::Allocator;

mod bridge;
mod config;
mod dp_event;
mod errors;
mod event_paths;
mod events;
mod inference;
mod mechanism;
mod privacy;
mod record;
mod run;

use propdp::provenance::{CRATE_VERSION, GIT_COMMIT};
use pyo3::prelude::*;

use errors::{PropdpConfigError, PropdpError};

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", CRATE_VERSION)?;
    m.add("GIT_COMMIT", GIT_COMMIT)?;
    m.add("ConfigError", m.py().get_type::<PropdpConfigError>())?;
    m.add("PropdpError", m.py().get_type::<PropdpError>())?;
    m.add_function(wrap_pyfunction!(config::parameters_table, m)?)?;
    m.add_function(wrap_pyfunction!(run::solve, m)?)?;
    m.add_function(wrap_pyfunction!(run::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::records, m)?)?;
    m.add_function(wrap_pyfunction!(run::merge, m)?)?;
    m.add_function(wrap_pyfunction!(run::tune, m)?)?;
    m.add_function(wrap_pyfunction!(run::draw, m)?)?;
    m.add_function(wrap_pyfunction!(privacy::privacy, m)?)?;
    m.add_function(wrap_pyfunction!(mechanism::mechanism, m)?)?;
    m.add_class::<events::PyEvent>()?;
    m.add_class::<events::GaussianEvent>()?;
    m.add_class::<events::PoissonSampledEvent>()?;
    m.add_class::<events::SelfComposedEvent>()?;
    m.add_class::<events::ComposedEvent>()?;
    m.add_class::<events::ObjectiveEvent>()?;
    m.add_function(wrap_pyfunction!(events::epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(events::dpsgd_event, m)?)?;
    m.add_function(wrap_pyfunction!(events::admits, m)?)?;
    m.add_function(wrap_pyfunction!(dp_event::from_dp_event, m)?)?;
    m.add_function(wrap_pyfunction!(privacy::calibrate_run, m)?)?;
    m.add_function(wrap_pyfunction!(privacy::membership_run, m)?)?;
    m.add_function(wrap_pyfunction!(config::describe, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_text, m)?)?;
    m.add_function(wrap_pyfunction!(run::spectrum, m)?)?;
    inference::register(m)?;
    Ok(())
}
