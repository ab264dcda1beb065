//! Configs from Python: TOML text, a dict of tables, or keyword arguments
//! (`propdp.solve(delta=…, lambda_=…)`), validated as `propdp run` validates
//! them; the parameters' table, and what `propdp check` prints.

use propdp::core::Config;
use propdp::core::config::{RawAlgorithm, RawConfig, RawProblem};
use propdp::core::parameters;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::{config_err, config_error, shown, to_py};

/// The parameters' table ([`parameters::PARAMETERS`]): one dict per
/// parameter with its name, Python keyword, TOML table, symbol, axis label,
/// allowed values in words and the algorithms that take it (empty: all).
#[pyfunction]
#[pyo3(name = "parameters")]
pub(crate) fn parameters_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = PyList::empty(py);
    for p in &parameters::PARAMETERS {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("keyword", parameters::python_keyword(p.name))?;
        d.set_item("table", p.table)?;
        d.set_item("symbol", p.symbol)?;
        d.set_item("label", p.label)?;
        d.set_item("allowed", p.domain.allowed(p.name))?;
        d.set_item("algorithms", p.algorithms.iter().map(|k| k.name()).collect::<Vec<_>>())?;
        rows.append(d)?;
    }
    Ok(rows)
}

/// A config from TOML text or a dict of tables, validated; `label` is the
/// file it was read from, if any (its directory holds the files it names,
/// as for the command line), else files are relative to the current directory.
pub(crate) fn config(py: Python<'_>, config: &Bound<'_, PyAny>, label: &str) -> PyResult<Config> {
    let file = std::path::Path::new(label);
    let dir = file.is_file().then(|| file.parent()).flatten();
    Config::from_toml_str_in(&rendered(py, config)?, dir).map_err(|e| config_err(py, e))
}

/// A config's TOML text: the string itself, or a dict rendered as the CLI would read it.
pub(crate) fn rendered(py: Python<'_>, config: &Bound<'_, PyAny>) -> PyResult<String> {
    match config.extract::<String>() {
        Ok(text) => Ok(text),
        Err(_) => {
            let table: toml::Table = pythonize::depythonize(config)
                .map_err(|e| config_error(py, format!("config is not valid: {e}"), None))?;
            Ok(propdp::core::config::text::render(&table))
        }
    }
}

/// A config from keyword arguments: each of `params` goes to the table that
/// takes it ([`propdp::core::config::flat_keys`]; `lambda_` is `lambda`),
/// `solver` and `simulation` are whole tables. No TOML text is parsed (the
/// text recorded for provenance is rendered from the tables), so a one-point
/// solve costs little more than the solver.
pub(crate) fn keyword_config(
    py: Python<'_>,
    model: &str,
    algorithm: &str,
    params: &Bound<'_, PyDict>,
    solver: Option<&Bound<'_, PyAny>>,
    simulation: Option<&Bound<'_, PyAny>>,
) -> PyResult<Config> {
    // the key lists, built once (this is on the path of every solve)
    static KEYS: std::sync::OnceLock<[(&str, Vec<&str>); 2]> = std::sync::OnceLock::new();
    let [(_, problem_keys), (_, algorithm_keys)] = KEYS.get_or_init(propdp::core::config::flat_keys);
    let mut problem = toml::Table::new();
    let mut alg = toml::Table::new();
    problem.insert("model".into(), model.into());
    alg.insert("kind".into(), algorithm.into());
    for (key, v) in params.iter() {
        let key: String = key.extract()?;
        // a keyword is a parameter's name, or its Python spelling (lambda_)
        let key = parameters::PARAMETERS
            .iter()
            .find(|p| parameters::python_keyword(p.name) == key)
            .map_or(key, |p| p.name.to_string());
        let table = if key == "model" || key == "kind" {
            None
        } else if problem_keys.contains(&key.as_str()) {
            Some(&mut problem)
        } else if algorithm_keys.contains(&key.as_str()) {
            Some(&mut alg)
        } else {
            None
        };
        let Some(table) = table else {
            let allowed: Vec<String> = problem_keys
                .iter()
                .chain(algorithm_keys)
                .filter(|k| !["model", "kind"].contains(k))
                .map(|k| parameters::python_keyword(k))
                .collect();
            return Err(config_error(
                py,
                format!("`{key}` is not a parameter here: allowed {}", allowed.join(", ")),
                Some(key),
            ));
        };
        let v = value(py, &v, &key)?;
        table.insert(key, v);
    }
    let mut all = toml::Table::new();
    let solver = match solver {
        Some(t) => table_of::<propdp::core::config::SolverOptions>(py, t, "solver", &mut all)?,
        None => Default::default(),
    };
    let simulation = match simulation {
        Some(t) => Some(table_of(py, t, "simulation", &mut all)?),
        None => None,
    };
    // the text recorded for provenance, then the tables move into serde
    all.insert("problem".into(), problem.into());
    all.insert("algorithm".into(), alg.into());
    let text = propdp::core::config::text::render(&all);
    let mut table = |name: &str| match all.remove(name) {
        Some(toml::Value::Table(t)) => t,
        _ => unreachable!("[{name}] was inserted as a table above"),
    };
    let raw = RawConfig {
        name: None,
        description: None,
        problem: RawProblem::from_table(table("problem")).map_err(|e| config_err(py, e))?,
        algorithm: RawAlgorithm::from_table(table("algorithm")).map_err(|e| config_err(py, e))?,
        solver,
        simulation,
        plot: Default::default(),
    };
    Config::from_raw(raw, text).map_err(|e| config_err(py, e))
}

/// A Python number, string or container as a TOML value (`field` names it in
/// errors). Dispatches on the exact type (this is on the path of every
/// solve); numpy arrays and scalars go through `tolist()`.
pub(crate) fn value(py: Python<'_>, v: &Bound<'_, PyAny>, field: &str) -> PyResult<toml::Value> {
    let refuse = |what: String| config_error(py, format!("`{field}`: {what}"), Some(field.into()));
    if let Ok(b) = v.cast::<PyBool>() {
        Ok(b.is_true().into())
    } else if let Ok(x) = v.cast::<PyFloat>() {
        Ok(x.value().into())
    } else if let Ok(i) = v.cast::<PyInt>() {
        let i: i64 = i
            .extract()
            .map_err(|_| refuse(format!("{} does not fit in 64 bits", shown(i, false))))?;
        Ok(i.into())
    } else if let Ok(s) = v.cast::<PyString>() {
        Ok(s.to_cow()?.into_owned().into())
    } else if let Ok(d) = v.cast::<PyDict>() {
        let mut table = toml::Table::new();
        for (k, item) in d.iter() {
            let Ok(k) = k.cast::<PyString>() else {
                return Err(refuse(format!("keys must be strings, not {k}")));
            };
            let k = k.to_cow()?;
            table.insert(k.to_string(), value(py, &item, &format!("{field}.{k}"))?);
        }
        Ok(table.into())
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: PyResult<Vec<toml::Value>> = v.try_iter()?.map(|item| value(py, &item?, field)).collect();
        Ok(items?.into())
    } else if v.hasattr("tolist")? {
        value(py, &v.call_method0("tolist")?, field)
    } else if v.is_none() {
        Err(refuse("None is not a value; leave the argument out instead".into()))
    } else {
        Err(refuse(format!(
            "a {} is not a number, string, list or dict",
            v.get_type().name()?
        )))
    }
}

/// A whole table (`solver`, `simulation`) from a dict, read by serde, and kept for the text.
pub(crate) fn table_of<T: serde::de::DeserializeOwned>(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    name: &str,
    all: &mut toml::Table,
) -> PyResult<T> {
    let v = value(py, t, name)?;
    all.insert(name.into(), v.clone());
    T::deserialize(v).map_err(|e| {
        // toml names the key at fault on a last line "in `data.drop`": the field is then `simulation.data.drop`
        let text = e.to_string();
        let key = text
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("in `").and_then(|k| k.strip_suffix('`')));
        match key {
            Some(key) => {
                let field = format!("{name}.{key}");
                let why = text.lines().next().unwrap_or_default();
                config_error(py, format!("config is not valid: `{field}`: {why}"), Some(field))
            }
            None => config_error(py, format!("config is not valid: [{name}]: {e}"), Some(name.into())),
        }
    })
}

/// The one point of a config that must describe a single point.
pub(crate) fn single_point(py: Python<'_>, cfg: &Config, what: &str) -> PyResult<propdp::core::Point> {
    match cfg.sweep.points() {
        [p] => Ok(*p),
        ps => Err(config_error(
            py,
            format!(
                "{what} takes one point; these arguments give {} (lists or ranges in {}) — use propdp.sweep",
                ps.len(),
                cfg.sweep
                    .axes
                    .iter()
                    .filter(|a| a.values.len() > 1)
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            cfg.sweep
                .axes
                .iter()
                .find(|a| a.values.len() > 1)
                .map(|a| a.name.clone()),
        )),
    }
}

/// What `propdp check` prints: the config's points and axes, validated; a
/// tune config's search and its cost estimate.
#[pyfunction]
pub(crate) fn describe(py: Python<'_>, config_: &Bound<'_, PyAny>, label: &str) -> PyResult<String> {
    let text = rendered(py, config_)?;
    if propdp::tune::is_tune_config(&text) {
        let estimate = propdp::tune::estimate(&text, label, None).map_err(|e| to_py(py, e))?;
        return Ok(format!("{label}: a valid tune config\n{}\n", estimate.text()));
    }
    let cfg = config(py, config_, label)?;
    propdp::run::check(&cfg).map_err(|e| to_py(py, e))?;
    Ok(propdp::run::describe(label, &cfg))
}

/// The config as validated TOML text (a dict config rendered as the CLI
/// would read it): a sweep, or a search when it has a `[tune]` table.
#[pyfunction]
pub(crate) fn config_text(py: Python<'_>, config_: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = rendered(py, config_)?;
    if toml::from_str::<toml::Table>(&text).is_ok_and(|t| t.contains_key("tune")) {
        propdp::core::config::TuneConfig::from_toml_str(&text).map_err(|e| config_err(py, e))?;
        return Ok(text);
    }
    Ok(config(py, config_, "")?.text)
}
