//! `propdp.mechanism`: which noise for one DP-SGD problem
//! ([`propdp::mechanism::choose`]), from a config or keywords.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::bridge;
use crate::config::{keyword_config, rendered};
use crate::errors::{config_error, to_py};

/// The choice as JSON text (the `propdp mechanism --json` object): from a
/// config (TOML text, a dict or a path's text) or from `model`, and the
/// `[problem]`/`[algorithm]` keys as keywords. `progress` as `propdp.run`'s.
#[pyfunction]
#[pyo3(signature = (config_, model, epsilon, delta_priv, metric=None, solver=None, progress=None, **params))]
#[allow(clippy::too_many_arguments)] // one per keyword of the Python call
pub(crate) fn mechanism<'py>(
    py: Python<'py>,
    config_: Option<&Bound<'py, PyAny>>,
    model: Option<&str>,
    epsilon: f64,
    delta_priv: f64,
    metric: Option<String>,
    solver: Option<&Bound<'py, PyAny>>,
    progress: Option<&Bound<'py, PyAny>>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<String> {
    let cfg = match (config_, model) {
        (Some(c), None) => {
            propdp::mechanism::load(&rendered(py, c)?, None, epsilon, delta_priv).map_err(|e| to_py(py, e))?
        }
        (None, Some(m)) => {
            // the noise gives way to the budget, as propdp::mechanism::load does a config's
            let keywords = match params {
                Some(p) => p.copy()?,
                None => PyDict::new(py),
            };
            for key in ["sigma", "rho"] {
                if keywords.contains(key)? {
                    keywords.del_item(key)?;
                }
            }
            keywords.set_item("epsilon", epsilon)?;
            keywords.set_item("delta_priv", delta_priv)?;
            if !keywords.contains("neighbouring")? {
                keywords.set_item("neighbouring", "add_remove_one")?;
            }
            keyword_config(py, m, "dpsgd", &keywords, solver, None)?
        }
        _ => {
            return Err(config_error(
                py,
                "give a config or a model and its keywords (not both)".into(),
                Some("config".into()),
            ));
        }
    };
    let choice = bridge::blocking(py, progress, |p| {
        propdp::mechanism::choose(&cfg, epsilon, delta_priv, metric.as_deref(), p)
    })?
    .map_err(|e| to_py(py, e))?;
    Ok(choice.json().to_string())
}
