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

mod bridge;
mod inference;
mod record;

use std::path::PathBuf;

use propdp::core::accountant::Neighbouring;
use propdp::core::config::{RawAlgorithm, RawConfig, RawProblem};
use propdp::core::parameters;
use propdp::core::{AlgorithmKind, Config, ConfigError, ModelKind};
use propdp::privacy::{Argument, QueryArgs};
use propdp::provenance::{CRATE_VERSION, GIT_COMMIT, provenance_of_config};
use propdp::rundir::Existing;
use propdp::sim::simulate_with_progress;
use propdp::theory::solve::TheorySolver;
use propdp::{ErrorKind, Progress};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

create_exception!(
    _native,
    PropdpConfigError,
    PyValueError,
    "A config or argument is invalid; `field` names it (e.g. `algorithm.sigma`)."
);
create_exception!(
    _native,
    PropdpError,
    PyRuntimeError,
    "A computation failed: a solver did not converge, a point has no solution, a file could not be written."
);
create_exception!(
    _native,
    PropdpInferenceRefused,
    PropdpError,
    "The data do not support a valid interval; `reason` says why (e.g. `near_separable`)."
);

/// The Python exception of a library error: a config error becomes
/// `ConfigError` (a `ValueError`) with its field, a privacy argument's the
/// same with the argument spelled as Python's keyword, a cancelled run
/// `KeyboardInterrupt`, anything else `PropdpError`.
pub(crate) fn to_py(py: Python<'_>, e: propdp::Error) -> PyErr {
    // the library's advice names the command line's flags; Python's keywords here
    let message = format!("{e:#}")
        .replace("--resume", "resume=True")
        .replace("--overwrite", "overwrite=True")
        .replace("another --out", "another out directory");
    match e.kind() {
        ErrorKind::Config => config_error(py, message, e.field().map(str::to_string)),
        ErrorKind::Argument => match e.argument() {
            Some(a) => argument_error(py, a),
            None => config_error(py, message, e.field().map(str::to_string)),
        },
        ErrorKind::Cancelled => PyKeyboardInterrupt::new_err(message),
        ErrorKind::Refused => {
            let err = PropdpInferenceRefused::new_err(message);
            let reason = e
                .refusal()
                .and_then(|r| serde_json::to_value(r.reason).ok())
                .and_then(|v| v.as_str().map(str::to_string));
            let _ = err.value(py).setattr("reason", reason);
            err
        }
        ErrorKind::Io | ErrorKind::Directory | ErrorKind::Compute => PropdpError::new_err(message),
    }
}

/// A privacy query's argument error, with the argument as Python spells it.
pub(crate) fn argument_error(py: Python<'_>, a: &Argument) -> PyErr {
    config_error(py, a.keyword(), Some(propdp::privacy::python_keyword(a.argument)))
}

fn config_error(py: Python<'_>, message: String, field: Option<String>) -> PyErr {
    let err = PropdpConfigError::new_err(message);
    // the field as an attribute; setting it cannot fail on a fresh exception
    let _ = err.value(py).setattr("field", field);
    err
}

/// The parameters' table ([`parameters::PARAMETERS`]): one dict per
/// parameter with its name, Python keyword, TOML table, symbol, axis label,
/// allowed values in words and the algorithms that take it (empty: all).
#[pyfunction]
#[pyo3(name = "parameters")]
fn parameters_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = PyList::empty(py);
    for p in &parameters::PARAMETERS {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("keyword", parameters::python_keyword(p.name))?;
        d.set_item("table", p.table)?;
        d.set_item("symbol", p.symbol)?;
        d.set_item("label", p.label)?;
        d.set_item("allowed", p.domain.allowed(p.name))?;
        d.set_item("algorithms", p.algorithms.to_vec())?;
        rows.append(d)?;
    }
    Ok(rows)
}

/// A config from TOML text or a dict of tables, validated; `label` is the
/// file it was read from, if any (its directory holds the files it names,
/// as for the command line), else files are relative to the current directory.
fn config(py: Python<'_>, config: &Bound<'_, PyAny>, label: &str) -> PyResult<Config> {
    let file = std::path::Path::new(label);
    let dir = file.is_file().then(|| file.parent()).flatten();
    Config::from_toml_str_in(&rendered(py, config)?, dir).map_err(|e| config_err(py, e))
}

/// A config's TOML text: the string itself, or a dict rendered as the CLI would read it.
fn rendered(py: Python<'_>, config: &Bound<'_, PyAny>) -> PyResult<String> {
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
fn keyword_config(
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
fn value(py: Python<'_>, v: &Bound<'_, PyAny>, field: &str) -> PyResult<toml::Value> {
    let refuse = |what: String| config_error(py, format!("`{field}`: {what}"), Some(field.into()));
    if let Ok(b) = v.cast::<PyBool>() {
        Ok(b.is_true().into())
    } else if let Ok(x) = v.cast::<PyFloat>() {
        Ok(x.value().into())
    } else if let Ok(i) = v.cast::<PyInt>() {
        let i: i64 = i
            .extract()
            .map_err(|_| refuse(format!("{i} does not fit in 64 bits")))?;
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
fn table_of<T: serde::de::DeserializeOwned>(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    name: &str,
    all: &mut toml::Table,
) -> PyResult<T> {
    let v = value(py, t, name)?;
    all.insert(name.into(), v.clone());
    T::deserialize(v).map_err(|e| config_error(py, format!("config is not valid: [{name}]: {e}"), Some(name.into())))
}

fn config_err(py: Python<'_>, e: ConfigError) -> PyErr {
    let field = e.field().map(str::to_string);
    config_error(py, e.to_string(), field)
}

/// The one point of a config that must describe a single point.
fn single_point(py: Python<'_>, cfg: &Config, what: &str) -> PyResult<propdp::core::Point> {
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

/// The theory's prediction at one point, as `propdp.Result` (wrapping the
/// record `propdp run` writes for the same config). `propdp.solve` is this
/// function: it is called in loops, so it builds the Result itself rather
/// than through a Python wrapper.
///
/// `params` are the config's `[problem]` and `[algorithm]` keys as keywords:
/// `delta` (or `kappa`), `s2`, `huber_m`, `noise` (a dict, e.g.
/// `{"law": "student_t", "dof": 3, "scale": 1}`), `lambda_`, `sigma` / `tau`,
/// `eta`, `steps`, `loss_variant`, or a budget `epsilon` + `delta_priv`
/// [+ `neighbouring`] or `rho` instead of the noise. `solver` is the
/// `[solver]` table.
///
/// Returns a `Result` (DP-GD: `per_step` arrays, t = 0…T). Raises
/// `ConfigError` naming the field for a bad value, and `PropdpError` when the
/// solver does not converge or the point has no solution. The GIL is
/// released while solving.
#[pyfunction]
#[pyo3(signature = (model, algorithm, *, solver=None, **params))]
fn solve<'py>(
    py: Python<'py>,
    model: &str,
    algorithm: &str,
    solver: Option<&Bound<'py, PyAny>>,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let empty;
    let params = match params {
        Some(p) => p,
        None => {
            empty = PyDict::new(py);
            &empty
        }
    };
    let cfg = keyword_config(py, model, algorithm, params, solver, None)?;
    let point = single_point(py, &cfg, "solve")?;
    let provenance = provenance_of_config(&cfg);
    let solver = TheorySolver::new(cfg.raw.solver).with_covariance(cfg.covariance.clone());
    let failed =
        |e: propdp::theory::solve::TheoryError| PropdpError::new_err(format!("theory at {:?}: {e}", point.params()));
    let sol = if point.algorithm().gradient_steps().is_some() {
        // a DMFT solve can take minutes: on a worker thread, so that Ctrl-C
        // stops it within a step (KeyboardInterrupt)
        bridge::blocking(py, None, |b| {
            Ok(solver.solve_cancellable(&point, None, &|| b.cancelled()))
        })?
        .map_err(|e| to_py(py, e))?
        .map_err(failed)?
    } else {
        py.detach(|| solver.solve(&point, None)).map_err(failed)?
    };
    let (record, _) = propdp::run::theory_record(&point, 0, sol, &provenance);
    if let Some(path) = record.non_finite() {
        return Err(PropdpError::new_err(format!("{path} is not a finite number")));
    }
    static RESULT: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let result = RESULT.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("propdp._results")?.getattr("Result")?.unbind())
    })?;
    result.bind(py).call1((record::record_dict(py, &record)?,))
}

/// The simulation record of one point given by keyword arguments and a
/// `simulation` table of one `d` (what `propdp run` writes for it,
/// per-repetition values included).
#[pyfunction]
#[pyo3(signature = (model, algorithm, params, simulation, solver=None, progress=None))]
fn simulate<'py>(
    py: Python<'py>,
    model: &str,
    algorithm: &str,
    params: &Bound<'py, PyDict>,
    simulation: &Bound<'py, PyAny>,
    solver: Option<&Bound<'py, PyAny>>,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = keyword_config(py, model, algorithm, params, solver, Some(simulation))?;
    let point = single_point(py, &cfg, "simulate")?;
    let Some(sim) = &cfg.raw.simulation else {
        unreachable!("the simulation table was given")
    };
    let &[d] = sim.d.as_slice() else {
        return Err(config_error(
            py,
            "`simulation.d`: simulate takes one d; use propdp.sweep for several".into(),
            Some("simulation.d".into()),
        ));
    };
    let settings = propdp::run::sim_settings(sim, d, cfg.covariance.as_ref())
        .with_real(propdp::run::real_data(&cfg).map_err(|e| to_py(py, e))?);
    let provenance = provenance_of_config(&cfg);
    let record = bridge::blocking(py, progress, |p| {
        p.begin("simulation repetitions", settings.reps as u64);
        let s = simulate_with_progress(&point, &settings, 0, &|| p.advance(1)).map_err(anyhow::Error::from)?;
        p.end();
        Ok(propdp::run::simulation_record(&point, 0, s, &settings, &provenance))
    })?
    .map_err(|e| to_py(py, e))?;
    if let Some(path) = record.non_finite() {
        return Err(PropdpError::new_err(format!("{path} is not a finite number")));
    }
    Ok(record::record_dict(py, &record)?.into_any())
}

fn existing(resume: bool, overwrite: bool) -> Existing {
    match (resume, overwrite) {
        (true, _) => Existing::Resume,
        (false, true) => Existing::Overwrite,
        _ => Existing::Refuse,
    }
}

/// Run a config into `out` as `propdp run` does (results.jsonl, errors.jsonl,
/// manifest.json, written incrementally); returns the summary. `shard =
/// (K, N)` runs shard K of N only (`propdp run --shard K/N`).
#[pyfunction]
#[pyo3(signature = (config_, label, out, resume=false, overwrite=false, theory=true, simulation=true, progress=None, shard=None))]
#[allow(clippy::too_many_arguments)] // one per keyword of the Python call
fn run<'py>(
    py: Python<'py>,
    config_: &Bound<'py, PyAny>,
    label: &str,
    out: PathBuf,
    resume: bool,
    overwrite: bool,
    theory: bool,
    simulation: bool,
    progress: Option<&Bound<'py, PyAny>>,
    shard: Option<(usize, usize)>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config(py, config_, label)?;
    let sources = propdp::run::Sources { theory, simulation };
    let existing = existing(resume, overwrite);
    let shard = shard_of(py, shard)?;
    let s = bridge::blocking(py, progress, |p| {
        propdp::run::run_shard(&cfg, label, &out, existing, sources, shard, p)
    })?
    .map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    d.set_item("results", s.results())?;
    d.set_item("errors", s.dir.join("errors.jsonl"))?;
    d.set_item("dir", s.dir)?;
    d.set_item("written", s.written)?;
    d.set_item("skipped", s.skipped)?;
    d.set_item("failed", s.failed)?;
    Ok(d)
}

/// A `shard=(k, n)` argument as a shard, or a ConfigError naming it.
fn shard_of(py: Python<'_>, shard: Option<(usize, usize)>) -> PyResult<Option<propdp::shard::Shard>> {
    shard
        .map(|(index, count)| {
            format!("{index}/{count}")
                .parse::<propdp::shard::Shard>()
                .map_err(|e| config_error(py, format!("shard: {e}"), None))
        })
        .transpose()
}

/// The records of a results.jsonl file this version wrote, as the dicts
/// `json.loads` gives for its lines (parsed by serde, built by
/// `record::record_dict`: about twice as fast as `json.loads` per line).
/// A torn last line (no newline: a run killed mid-write) is left out with a
/// warning; any other line that is not a record, a number that is not
/// finite, a record given twice or a file that is not UTF-8 is an error
/// naming the file and the line.
#[pyfunction]
fn records<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyList>> {
    let text = std::fs::read_to_string(&path)
        .map_err(|e| PropdpError::new_err(format!("cannot read {}: {e}", path.display())))?;
    let out = PyList::empty(py);
    let mut seen = std::collections::BTreeSet::new();
    let torn = !text.is_empty() && !text.ends_with('\n');
    let count = text.lines().count();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{}:{}", path.display(), i + 1);
        let r: propdp::core::record::Record = match serde_json::from_str(line) {
            Ok(r) => r,
            Err(e) if torn && i + 1 == count => {
                let warning = py.get_type::<pyo3::exceptions::PyUserWarning>();
                PyErr::warn(
                    py,
                    &warning,
                    &std::ffi::CString::new(format!("{}: a torn last line is left out ({e})", at()))?,
                    1,
                )?;
                break;
            }
            Err(e) => return Err(PropdpError::new_err(format!("{}: not a result record: {e}", at()))),
        };
        if let Some(field) = r.non_finite() {
            return Err(PropdpError::new_err(format!(
                "{}: {field} is not a finite number",
                at()
            )));
        }
        if !seen.insert(r.key()) {
            return Err(PropdpError::new_err(format!("{}: {} is given twice", at(), r.key())));
        }
        out.append(record::record_dict(py, &r)?)?;
    }
    Ok(out)
}

/// Merge the directories of a sharded run into `out`, as `propdp merge`
/// does (without figures); returns the summary. Shards of a search
/// (`tune`, holding tune.jsonl) merge as `propdp merge` merges them, with
/// figures; the summary then names the merged tune.jsonl.
#[pyfunction]
fn merge<'py>(py: Python<'py>, out: PathBuf, shards: Vec<PathBuf>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if shards.first().is_some_and(|s| s.join("tune.jsonl").exists()) {
        let o = py
            .detach(|| propdp::tune::merge(&out, &shards, &propdp::Silent))
            .map_err(|e| to_py(py, e))?;
        d.set_item("tune", o.file())?;
        d.set_item("dir", o.dir)?;
        return Ok(d);
    }
    let m = py
        .detach(|| propdp::merge::merge(&out, &shards))
        .map_err(|e| to_py(py, e))?;
    d.set_item("results", m.dir.join("results.jsonl"))?;
    d.set_item("errors", m.dir.join("errors.jsonl"))?;
    d.set_item("dir", m.dir)?;
    d.set_item("records", m.records)?;
    d.set_item("failed", m.failed)?;
    Ok(d)
}

/// Search the best hyperparameters per algorithm and budget, as `propdp tune`
/// does, into `out` (tune.jsonl, non_private.json, figures); returns the
/// directory. `shard=(k, n)` searches only shard k of n of the cells.
#[pyfunction]
#[pyo3(signature = (text, label, out, resume=false, overwrite=false, progress=None, shard=None))]
#[allow(clippy::too_many_arguments)]
fn tune(
    py: Python<'_>,
    text: &str,
    label: &str,
    out: PathBuf,
    resume: bool,
    overwrite: bool,
    progress: Option<&Bound<'_, PyAny>>,
    shard: Option<(usize, usize)>,
) -> PyResult<PathBuf> {
    let existing = existing(resume, overwrite);
    let shard = shard_of(py, shard)?;
    let outcome = bridge::blocking(py, progress, |p| match shard {
        Some(s) => propdp::tune::tune_shard(text, label, &out, existing, s, p),
        None => propdp::tune::tune(text, label, &out, existing, p),
    })?
    .map_err(|e| to_py(py, e))?;
    Ok(outcome.dir)
}

/// Draw the figures of a results file (PNG and SVG, as `propdp plot`);
/// returns (files drawn, reason when none could be drawn).
#[pyfunction]
#[pyo3(signature = (results, out=None, *, x=None, series=None, metrics=None, y_log=None))]
fn draw(
    py: Python<'_>,
    results: PathBuf,
    out: Option<PathBuf>,
    x: Option<String>,
    series: Option<String>,
    metrics: Option<Vec<String>>,
    y_log: Option<bool>,
) -> PyResult<(Vec<PathBuf>, Option<String>)> {
    let layout = propdp::figures::Layout {
        x,
        series,
        metrics,
        y_log,
    };
    let drawn = py
        .detach(|| propdp::figures::draw_as(&results, out, &layout))
        .map_err(|e| to_py(py, e))?;
    Ok((drawn.files, drawn.skipped))
}

/// The guarantee of a noise level in every notion, or the noise calibrated
/// to `epsilon` (at `delta_priv`) or `rho` (what `propdp privacy` prints).
#[pyfunction]
#[pyo3(signature = (algorithm, model, *, huber_m=None, lambda_=None, steps=None, neighbouring=None, delta_priv=None, noise=None, epsilon=None, rho=None, sample_rate=None, clip=None))]
#[allow(clippy::too_many_arguments)] // one per keyword of the Python call
fn privacy<'py>(
    py: Python<'py>,
    algorithm: &Bound<'py, PyAny>,
    model: &Bound<'py, PyAny>,
    huber_m: Option<&Bound<'py, PyAny>>,
    lambda_: Option<&Bound<'py, PyAny>>,
    steps: Option<&Bound<'py, PyAny>>,
    neighbouring: Option<&Bound<'py, PyAny>>,
    delta_priv: Option<&Bound<'py, PyAny>>,
    noise: Option<&Bound<'py, PyAny>>,
    epsilon: Option<&Bound<'py, PyAny>>,
    rho: Option<&Bound<'py, PyAny>>,
    sample_rate: Option<&Bound<'py, PyAny>>,
    clip: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let bad = |field: &str, why: String| config_error(py, format!("{field}{why}"), Some(field.into()));
    let name = |v: &Bound<'py, PyAny>, field: &str, allowed: &str| -> PyResult<String> {
        v.extract::<String>()
            .map_err(|_| bad(field, format!(" = {v} is invalid: allowed {allowed}")))
    };
    let algorithm: AlgorithmKind = name(algorithm, "algorithm", "\"objective\", \"output\", \"dpgd\", \"dpsgd\"")?
        .parse()
        .map_err(|e| bad("algorithm", format!(": {e}")))?;
    let model: ModelKind = name(model, "model", "\"huber\", \"logistic\", \"least_squares\"")?
        .parse()
        .map_err(|e| bad("model", format!(": {e}")))?;
    let neighbouring = match neighbouring.filter(|v| !v.is_none()) {
        None => Neighbouring::ReplaceOne,
        Some(v) => match name(v, "neighbouring", "\"replace_one\", \"add_remove_one\"")?.as_str() {
            "replace_one" | "replace-one" => Neighbouring::ReplaceOne,
            "add_remove_one" | "add-remove-one" => Neighbouring::AddRemoveOne,
            other => {
                return Err(bad(
                    "neighbouring",
                    format!(" = {other:?} is invalid: allowed \"replace_one\", \"add_remove_one\""),
                ));
            }
        },
    };
    let args = QueryArgs {
        huber_m: number(py, huber_m, "huber_m")?,
        lambda: number(py, lambda_, "lambda_")?,
        steps: integer(py, steps, "steps")?,
        sample_rate: number(py, sample_rate, "sample_rate")?,
        clip: number(py, clip, "clip")?,
        neighbouring,
        delta_priv: number(py, delta_priv, "delta_priv")?,
        noise: number(py, noise, "noise")?,
        epsilon: number(py, epsilon, "epsilon")?,
        rho: number(py, rho, "rho")?,
        ..QueryArgs::new(algorithm, model)
    };
    let q = args.query().map_err(|a| argument_error(py, &a))?;
    let r = py.detach(|| propdp::privacy::assess(&q)).map_err(|e| to_py(py, e))?;
    let mut json = r.json();
    json["text"] = r.text().into();
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// The certified ε bracket of a DP-SGD schedule of (noise_multiplier,
/// sample_rate, steps) segments at `delta` (`propdp.accounting`), composed
/// with objective-perturbation releases given as (lipschitz, curvature,
/// radius, lambda, sigma) when there are any: a dict with epsilon (upper),
/// epsilon_lower, bracket_grid, bracket_reached. Arguments out of range
/// raise ConfigError naming them (`segment[1].sample_rate`; a single
/// segment: `sample_rate`; `objective[0].a`).
#[pyfunction]
#[pyo3(signature = (segments, delta, neighbouring, objectives=Vec::new()))]
fn accounting<'py>(
    py: Python<'py>,
    segments: Vec<(f64, f64, i64)>,
    delta: f64,
    neighbouring: &str,
    objectives: Vec<(f64, f64, f64, f64, f64)>,
) -> PyResult<Bound<'py, PyAny>> {
    use propdp::core::accountant::ObjectiveBound;
    use propdp::core::accountant::bracket::BracketSettings;
    use propdp::core::accountant::epsilon;
    use propdp::core::accountant::events::Events;
    let bad = |field: String, why: String| config_error(py, format!("{field}{why}"), Some(field.clone()));
    let relation = parse_relation(py, neighbouring)?;
    let plan = parse_plan(py, &segments)?;
    let releases: Vec<ObjectiveBound> = objectives
        .iter()
        .map(|&(l, beta, r, lambda, sigma)| ObjectiveBound::new(l, beta, r, lambda, sigma))
        .collect();
    let settings = BracketSettings::default();
    let result = py.detach(|| {
        match plan.as_slice() {
            _ if !releases.is_empty() => Events::ledger(&plan, &releases),
            [one] => Events::run(*one),
            _ => Events::schedule(&plan),
        }
        .and_then(|events| epsilon(&events, delta, relation, settings))
    });
    let bracket = result.map_err(|e| bad(e.argument().to_string(), format!(": {e}")))?;
    let json = serde_json::json!({
        "epsilon": bracket.map(|b| b.upper),
        "epsilon_lower": bracket.map(|b| b.lower),
        "bracket_grid": bracket.map(|b| b.grid),
        "bracket_reached": bracket.map(|b| b.reached),
    });
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// The DP-SGD segments of (noise_multiplier, sample_rate, steps) triples;
/// a step count below 1 raises ConfigError naming it (`steps`, or
/// `segment[i].steps`). The other ranges are the accountant's to check.
fn parse_plan(
    py: Python<'_>,
    segments: &[(f64, f64, i64)],
) -> PyResult<Vec<propdp::core::accountant::events::Segment>> {
    use propdp::core::accountant::events::Segment;
    let bad = |field: String, why: String| config_error(py, format!("{field}{why}"), Some(field.clone()));
    let mut plan = Vec::with_capacity(segments.len());
    for (i, &(z, q, t)) in segments.iter().enumerate() {
        let field = if segments.len() == 1 {
            "steps".to_string()
        } else {
            format!("segment[{i}].steps")
        };
        let steps = u64::try_from(t)
            .ok()
            .filter(|&t| t >= 1)
            .ok_or_else(|| bad(field, format!(" = {t} is invalid: allowed steps ≥ 1")))?;
        plan.push(Segment {
            noise_multiplier: z,
            sample_rate: q,
            steps,
        });
    }
    Ok(plan)
}

/// The membership-inference reading of a DP-SGD schedule
/// (`propdp.accounting.membership_inference`): a dict with fpr, tpr_upper
/// (the largest TPR any attack reaches at each FPR), mu and mu_exact (exact
/// μ-GDP at q = 1 throughout; else the central-limit μ of a single segment,
/// an approximation; None for a schedule).
#[pyfunction]
#[pyo3(signature = (segments, fprs, neighbouring))]
fn membership_run<'py>(
    py: Python<'py>,
    segments: Vec<(f64, f64, i64)>,
    fprs: Vec<f64>,
    neighbouring: &str,
) -> PyResult<Bound<'py, PyAny>> {
    use propdp::core::accountant::bracket::BracketSettings;
    use propdp::core::accountant::tradeoff::{gdp_mu, tpr_upper};
    let relation = parse_relation(py, neighbouring)?;
    let plan = parse_plan(py, &segments)?;
    let tpr = py
        .detach(|| tpr_upper(&plan, relation, &fprs, BracketSettings::default()))
        .map_err(|e| config_error(py, format!("{}: {e}", e.argument()), Some(e.argument().to_string())))?;
    let mu = gdp_mu(&plan, relation);
    let json = serde_json::json!({
        "fpr": fprs,
        "tpr_upper": tpr,
        "mu": mu.map(|m| m.0),
        "mu_exact": mu.map(|m| m.1),
    });
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// A DP-SGD run's or schedule's ε under a sampling scheme
/// (`propdp.accounting.sampled_epsilon`, `sampled_schedule_epsilon`): a dict
/// with sampling, neighbouring, sensitivity (1 or 2, in units of C),
/// epsilon / epsilon_lower (the guarantee), epsilon_if_poisson (shuffled
/// batches: the Poisson figure, valid only if they had been Poisson-sampled)
/// and assumption. `segments` are (noise_multiplier, sample_rate, steps);
/// one segment is a run (its arguments named bare), more a schedule
/// (`segment[i].…`). Refusals raise ConfigError naming the argument.
#[pyfunction]
#[pyo3(signature = (segments, delta, sampling, neighbouring))]
fn sampled_run<'py>(
    py: Python<'py>,
    segments: Vec<(f64, f64, i64)>,
    delta: f64,
    sampling: &str,
    neighbouring: &str,
) -> PyResult<Bound<'py, PyAny>> {
    use propdp::core::accountant::bracket::BracketSettings;
    use propdp::core::accountant::events::Events;
    use propdp::core::accountant::sampling::{Sampling, sampled_epsilon};
    let relation = parse_relation(py, neighbouring)?;
    let scheme = Sampling::parse(sampling).ok_or_else(|| {
        config_error(
            py,
            format!("sampling = {sampling:?} is invalid: allowed \"poisson\", \"fixed_size\", \"shuffled\""),
            Some("sampling".into()),
        )
    })?;
    let plan = parse_plan(py, &segments)?;
    let r = py
        .detach(|| {
            match plan.as_slice() {
                [run] => Events::run(*run),
                _ => Events::schedule(&plan),
            }
            .and_then(|events| sampled_epsilon(scheme, &events, delta, relation, BracketSettings::default()))
        })
        .map_err(|e| config_error(py, format!("{}: {e}", e.argument()), Some(e.argument().to_string())))?;
    let json = serde_json::json!({
        "sampling": r.sampling.name(),
        "neighbouring": r.neighbouring.label(),
        "sensitivity": r.sensitivity,
        "epsilon": r.epsilon.map(|b| b.upper),
        "epsilon_lower": r.epsilon.map(|b| b.lower),
        "epsilon_if_poisson": r.if_poisson.map(|b| b.upper),
        "assumption": r.assumption,
    });
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// Calibrates one knob of a DP-SGD run (`propdp.accounting.calibrate`):
/// `knob` is "noise_multiplier", "steps" or "sample_rate"; the other two
/// are given, the knob's own value ignored; the target is (epsilon, delta)
/// or rho. A dict with the run (noise_multiplier, sample_rate, steps), its
/// certified bracket (epsilon ≤ the target, epsilon_lower, bracket_grid,
/// bracket_reached; None for a ρ target), rho and evaluations.
#[pyfunction]
#[pyo3(signature = (knob, noise_multiplier, sample_rate, steps, epsilon, delta, rho, neighbouring))]
#[allow(clippy::too_many_arguments)]
fn calibrate_run<'py>(
    py: Python<'py>,
    knob: &str,
    noise_multiplier: f64,
    sample_rate: f64,
    steps: u64,
    epsilon: Option<f64>,
    delta: Option<f64>,
    rho: Option<f64>,
    neighbouring: &str,
) -> PyResult<Bound<'py, PyAny>> {
    use propdp::core::accountant::bracket::BracketSettings;
    use propdp::core::accountant::calibrate::{Knob, Target, calibrate};
    use propdp::core::accountant::events::Segment;
    let bad = |field: String, why: String| config_error(py, format!("{field}{why}"), Some(field.clone()));
    let relation = parse_relation(py, neighbouring)?;
    let knob = Knob::parse(knob).ok_or_else(|| {
        bad(
            "knob".into(),
            format!(" = {knob:?} is invalid: allowed \"noise_multiplier\", \"steps\", \"sample_rate\""),
        )
    })?;
    let target = match (epsilon, rho) {
        (Some(epsilon), None) => Target::Approx {
            epsilon,
            delta_priv: delta.ok_or_else(|| bad("delta".into(), " is required with epsilon".into()))?,
        },
        (None, Some(rho)) => Target::Zcdp { rho },
        _ => return Err(bad("epsilon".into(), " or rho (exactly one) is required".into())),
    };
    let run = Segment {
        noise_multiplier,
        sample_rate,
        steps,
    };
    let c = py
        .detach(|| calibrate(knob, run, target, relation, BracketSettings::default()))
        .map_err(|e| bad(e.argument().to_string(), format!(": {e}")))?;
    let b = c.epsilon;
    let json = serde_json::json!({
        "noise_multiplier": c.run.noise_multiplier,
        "sample_rate": c.run.sample_rate,
        "steps": c.run.steps,
        "epsilon": b.map(|b| b.upper),
        "epsilon_lower": b.map(|b| b.lower),
        "bracket_grid": b.map(|b| b.grid),
        "bracket_reached": b.map(|b| b.reached),
        "rho": c.rho,
        "evaluations": c.evaluations,
    });
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// The neighbouring relation of its Python name (either spelling); any
/// other name raises ConfigError naming `neighbouring`.
fn parse_relation(py: Python<'_>, name: &str) -> PyResult<Neighbouring> {
    match name {
        "replace_one" | "replace-one" => Ok(Neighbouring::ReplaceOne),
        "add_remove_one" | "add-remove-one" => Ok(Neighbouring::AddRemoveOne),
        _ => Err(config_error(
            py,
            format!("neighbouring = {name:?} is invalid: allowed \"add_remove_one\", \"replace_one\""),
            Some("neighbouring".into()),
        )),
    }
}

/// A number argument (`None`: not given): a Python int or float, or a numpy
/// scalar; a bool, a string or an int beyond f64 is refused naming `field`.
fn number(py: Python<'_>, v: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<f64>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let refuse = |why: String| config_error(py, format!("{field} = {why}"), Some(field.into()));
    if v.is_instance_of::<PyBool>() {
        return Err(refuse(format!("{v} is a bool: allowed a number")));
    }
    if let Ok(x) = v.cast::<PyFloat>() {
        return Ok(Some(x.value()));
    }
    if let Ok(i) = v.cast::<PyInt>() {
        return match i.extract::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(refuse(format!("{i} is too large for a 64-bit float"))),
        };
    }
    if v.hasattr("dtype")? && v.hasattr("item")? {
        return number(py, Some(&v.call_method0("item")?), field);
    }
    Err(refuse(format!(
        "{} (a {}) is invalid: allowed a number",
        v.repr()?,
        v.get_type().name()?
    )))
}

/// An integer argument (`None`: not given): a Python int or a numpy
/// integer; a bool, a float (even 29.0 or 0.29/0.01 = 28.999…, never
/// rounded) or a negative or huge int is refused naming `field`.
fn integer(py: Python<'_>, v: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<u64>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let refuse = |why: String| config_error(py, format!("{field} = {why}"), Some(field.into()));
    if v.is_instance_of::<PyBool>() {
        return Err(refuse(format!("{v} is a bool: allowed an integer")));
    }
    if let Ok(i) = v.cast::<PyInt>() {
        return i
            .extract::<u64>()
            .map(Some)
            .map_err(|_| refuse(format!("{i} is invalid: allowed an integer 1 ≤ T ≤ 1e9")));
    }
    if v.hasattr("dtype")? && v.hasattr("item")? {
        return integer(py, Some(&v.call_method0("item")?), field);
    }
    Err(refuse(format!(
        "{} (a {}) is invalid: allowed an integer (a float is never rounded: pass round(x) or int(x))",
        v.repr()?,
        v.get_type().name()?
    )))
}

/// The spectrum of a data matrix `x` (rows × columns, named `names`) and,
/// if given, regression labels `y`, as `propdp spectrum` computes it: a dict
/// of the columns `eigenvalue`, `weight`, `teacher` and the facts behind
/// them (`rows`, `columns`, `constant`, `null_directions`, and with labels
/// `s2`, `noise_sd`, `r2`).
#[pyfunction]
#[pyo3(signature = (x, names, y=None, standardize=false))]
fn spectrum<'py>(
    py: Python<'py>,
    x: Vec<Vec<f64>>,
    names: Vec<String>,
    y: Option<Vec<f64>>,
    standardize: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let p = names.len();
    if let Some((i, r)) = x.iter().enumerate().find(|(_, r)| r.len() != p) {
        return Err(config_error(
            py,
            format!("`X`: row {i} has {} values for {p} columns", r.len()),
            Some("X".into()),
        ));
    }
    let s = py
        .detach(|| propdp::data_spectrum::of_rows(&x, &names, y.as_deref(), standardize))
        .map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    let k = s.eigenvalues.len();
    d.set_item("eigenvalue", s.eigenvalues.clone())?;
    d.set_item("weight", vec![1.0 / k as f64; k])?;
    d.set_item("teacher", s.teacher.clone())?;
    d.set_item("rows", s.rows)?;
    d.set_item("columns", s.columns)?;
    d.set_item("constant", s.constant.clone())?;
    d.set_item("null_directions", s.null_directions)?;
    if let Some(f) = s.labels {
        d.set_item("s2", f.s2)?;
        d.set_item("noise_sd", f.noise_sd)?;
        d.set_item("r2", f.r2)?;
    }
    Ok(d)
}

/// What `propdp check` prints: the config's points and axes, validated; a
/// tune config's search and its cost estimate.
#[pyfunction]
fn describe(py: Python<'_>, config_: &Bound<'_, PyAny>, label: &str) -> PyResult<String> {
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
fn config_text(py: Python<'_>, config_: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = rendered(py, config_)?;
    if toml::from_str::<toml::Table>(&text).is_ok_and(|t| t.contains_key("tune")) {
        propdp::core::config::TuneConfig::from_toml_str(&text).map_err(|e| config_err(py, e))?;
        return Ok(text);
    }
    Ok(config(py, config_, "")?.text)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", CRATE_VERSION)?;
    m.add("GIT_COMMIT", GIT_COMMIT)?;
    m.add("ConfigError", m.py().get_type::<PropdpConfigError>())?;
    m.add("PropdpError", m.py().get_type::<PropdpError>())?;
    m.add_function(wrap_pyfunction!(parameters_table, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(records, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(tune, m)?)?;
    m.add_function(wrap_pyfunction!(draw, m)?)?;
    m.add_function(wrap_pyfunction!(privacy, m)?)?;
    m.add_function(wrap_pyfunction!(accounting, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_run, m)?)?;
    m.add_function(wrap_pyfunction!(membership_run, m)?)?;
    m.add_function(wrap_pyfunction!(sampled_run, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(config_text, m)?)?;
    m.add_function(wrap_pyfunction!(spectrum, m)?)?;
    inference::register(m)?;
    Ok(())
}
