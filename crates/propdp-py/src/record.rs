//! A result record as a Python dict, built field by field with interned
//! keys: the same dict `json.loads` gives for the record's line in
//! results.jsonl (serde's layout: optional fields left out when absent, the
//! simulation's fields at the top level), at about half pythonize's cost —
//! this is on the path of every `propdp.solve`.

use propdp::core::record::Record;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::PropdpError;

/// The record as a dict.
pub(crate) fn record_dict<'py>(py: Python<'py>, r: &Record) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(intern!(py, "source"), r.source.name())?;
    d.set_item(intern!(py, "model"), r.model.name())?;
    d.set_item(intern!(py, "algorithm"), r.algorithm.name())?;
    d.set_item(intern!(py, "index"), r.index)?;
    d.set_item(intern!(py, "params"), &r.params)?;
    d.set_item(intern!(py, "metrics"), &r.metrics)?;
    let solver = PyDict::new(py);
    solver.set_item(intern!(py, "converged"), r.solver.converged)?;
    solver.set_item(intern!(py, "iterations"), r.solver.iterations)?;
    solver.set_item(intern!(py, "residual"), r.solver.residual)?;
    if let Some(m) = r.solver.method {
        solver.set_item(intern!(py, "method"), m.name())?;
    }
    if let Some(e) = r.solver.approx_error {
        solver.set_item(intern!(py, "approx_error"), e)?;
    }
    if let Some(w) = r.solver.window {
        solver.set_item(intern!(py, "window"), w)?;
    }
    if let Some(k) = r.solver.atoms {
        solver.set_item(intern!(py, "atoms"), k)?;
    }
    if let Some(q) = r.solver.rqmc {
        let rqmc = PyDict::new(py);
        rqmc.set_item(intern!(py, "points"), q.points)?;
        rqmc.set_item(intern!(py, "replicates"), q.replicates)?;
        if let Some(t) = q.target {
            rqmc.set_item(intern!(py, "target"), t)?;
        }
        rqmc.set_item(intern!(py, "precision"), q.precision)?;
        solver.set_item(intern!(py, "rqmc"), rqmc)?;
    }
    d.set_item(intern!(py, "solver"), solver)?;
    let provenance = PyDict::new(py);
    provenance.set_item(intern!(py, "config_sha256"), &r.provenance.config_sha256)?;
    provenance.set_item(intern!(py, "crate_version"), &r.provenance.crate_version)?;
    provenance.set_item(intern!(py, "git_commit"), &r.provenance.git_commit)?;
    d.set_item(intern!(py, "provenance"), provenance)?;
    if let Some(at) = &r.per_step_at {
        d.set_item(intern!(py, "per_step_at"), at)?;
    }
    if let Some(per_step) = &r.per_step {
        d.set_item(intern!(py, "per_step"), per_step)?;
    }
    if let Some(stderr) = &r.per_step_stderr {
        d.set_item(intern!(py, "per_step_stderr"), stderr)?;
    }
    if let Some(privacy) = &r.privacy {
        d.set_item(intern!(py, "privacy"), serialized(py, privacy)?)?;
    }
    if let Some(sim) = &r.simulation {
        d.update(serialized(py, sim)?.cast::<pyo3::types::PyMapping>()?)?;
    }
    if r.non_private_reference {
        d.set_item(intern!(py, "non_private_reference"), true)?;
    }
    Ok(d)
}

/// A nested value by serde (the rarer parts: privacy, simulation).
fn serialized<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PropdpError::new_err(e.to_string()))
}
