//! The work of a config from Python: one point solved or simulated, a sweep
//! run into a directory, shards merged, a search tuned, figures drawn, a
//! data set's spectrum, and a results file read back.

use std::path::PathBuf;

use propdp::Progress;
use propdp::provenance::provenance_of_config;
use propdp::rundir::Existing;
use propdp::sim::simulate_with_progress;
use propdp::theory::solve::TheorySolver;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::config::{config, keyword_config, single_point};
use crate::errors::{PropdpError, config_error, to_py};
use crate::{bridge, record};

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
pub(crate) fn solve<'py>(
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
pub(crate) fn simulate<'py>(
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
        let s = simulate_with_progress(&point, &settings, 0, &|| p.advance(1))?;
        p.end();
        Ok(propdp::run::simulation_record(&point, 0, s, &settings, &provenance))
    })?
    .map_err(|e| to_py(py, e))?;
    if let Some(path) = record.non_finite() {
        return Err(PropdpError::new_err(format!("{path} is not a finite number")));
    }
    Ok(record::record_dict(py, &record)?.into_any())
}

pub(crate) fn existing(resume: bool, overwrite: bool) -> Existing {
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
pub(crate) fn run<'py>(
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
pub(crate) fn shard_of(py: Python<'_>, shard: Option<(usize, usize)>) -> PyResult<Option<propdp::shard::Shard>> {
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
pub(crate) fn records<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyList>> {
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
pub(crate) fn merge<'py>(py: Python<'py>, out: PathBuf, shards: Vec<PathBuf>) -> PyResult<Bound<'py, PyDict>> {
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
pub(crate) fn tune(
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
pub(crate) fn draw(
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

/// The spectrum of a data matrix `x` (rows × columns, named `names`) and,
/// if given, labels `y`, as `propdp spectrum` computes it: a dict of the
/// columns `eigenvalue`, `weight`, `teacher` and the facts behind them
/// (`rows`, `columns`, `constant`, `null_directions`; with regression labels
/// `s2`, `noise_sd`, `r2`, `label_sd`). With `model` ("logistic", "huber",
/// "least_squares"; columns standardised; `data_model` "auto", "teacher" or
/// "two_cluster" for logistic) also the effective model: `model`,
/// `s2`, `s2_interval`, `noise_sd`, `rho`, logistic's `data_model` (two
/// clusters: `balance`, `within`), `describes`, `summary` (the lines
/// the command prints) and `file_text` (the spectrum file with its
/// effective-model line, for `problem.covariance = { file = … }`).
#[pyfunction]
#[allow(clippy::too_many_arguments)] // a Python signature of keywords
#[pyo3(signature = (x, names, y=None, standardize=false, model=None, huber_m=1.0, data_model="auto".to_string()))]
pub(crate) fn spectrum<'py>(
    py: Python<'py>,
    x: Vec<Vec<f64>>,
    names: Vec<String>,
    y: Option<Vec<f64>>,
    standardize: bool,
    model: Option<String>,
    huber_m: f64,
    data_model: String,
) -> PyResult<Bound<'py, PyDict>> {
    use propdp::data_spectrum::ModelChoice;
    use propdp::effective_model::DataModelChoice;
    let p = names.len();
    if let Some((i, r)) = x.iter().enumerate().find(|(_, r)| r.len() != p) {
        return Err(config_error(
            py,
            format!("`X`: row {i} has {} values for {p} columns", r.len()),
            Some("X".into()),
        ));
    }
    let data = match data_model.as_str() {
        "auto" => DataModelChoice::Auto,
        "teacher" => DataModelChoice::Teacher,
        "two_cluster" => DataModelChoice::TwoCluster,
        other => {
            return Err(config_error(
                py,
                format!("`data_model` = {other:?} is invalid: allowed \"auto\", \"teacher\" or \"two_cluster\""),
                Some("data_model".into()),
            ));
        }
    };
    let choice = match model.as_deref() {
        None => None,
        Some("logistic") => Some(ModelChoice::Logistic { data }),
        Some("huber") => Some(ModelChoice::Huber { m: huber_m }),
        Some("least_squares") => Some(ModelChoice::LeastSquares),
        Some(other) => {
            return Err(config_error(
                py,
                format!("`model` = {other:?} is invalid: allowed \"logistic\", \"huber\" or \"least_squares\""),
                Some("model".into()),
            ));
        }
    };
    let s = py
        .detach(|| propdp::data_spectrum::of_rows(&x, &names, y.as_deref(), standardize, choice))
        .map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    let (eigenvalues, teacher) = s.atoms();
    let k = eigenvalues.len();
    d.set_item("eigenvalue", eigenvalues.to_vec())?;
    d.set_item("weight", vec![1.0 / k as f64; k])?;
    d.set_item("teacher", teacher.to_vec())?;
    d.set_item("rows", s.rows)?;
    d.set_item("columns", s.columns)?;
    d.set_item("constant", s.constant.clone())?;
    d.set_item("null_directions", s.null_directions)?;
    if let Some(f) = s.labels {
        d.set_item("s2", f.s2)?;
        d.set_item("noise_sd", f.noise_sd)?;
        d.set_item("r2", f.r2)?;
        d.set_item("label_sd", f.label_sd)?;
    }
    if let Some(e) = &s.effective {
        d.set_item("model", e.model.name())?;
        d.set_item("s2", e.s2)?;
        d.set_item("s2_interval", (e.s2_interval.0, e.s2_interval.1))?;
        d.set_item("noise_sd", e.noise_sd)?;
        d.set_item("rho", e.rho)?;
        if let propdp::effective_model::DataModel::TwoCluster { balance, within, .. } = &e.data {
            d.set_item("data_model", "two_cluster")?;
            d.set_item("balance", *balance)?;
            d.set_item("within", *within)?;
        } else if e.model == propdp::core::ModelKind::Logistic {
            d.set_item("data_model", "teacher")?;
        }
        d.set_item("describes", e.describes())?;
        d.set_item("summary", s.summary())?;
        d.set_item("file_text", s.to_csv("the rows given to propdp.spectrum"))?;
    }
    Ok(d)
}
