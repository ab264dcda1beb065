//! The accountant from Python (`propdp.privacy`, `propdp.accounting`): the
//! guarantee of a noise level, a DP-SGD schedule's membership-inference
//! reading, and one knob calibrated to a target; the arguments read and
//! checked here (the ε of an event: the `events` module).

use propdp::core::accountant::Neighbouring;
use propdp::core::{AlgorithmKind, ModelKind};
use propdp::privacy::QueryArgs;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use crate::errors::{PropdpError, argument_error, config_error, shown, to_py};

/// The guarantee of a noise level in every notion, or the noise calibrated
/// to `epsilon` (at `delta_priv`) or `rho` (what `propdp privacy` prints).
#[pyfunction]
#[pyo3(signature = (algorithm, model, *, huber_m=None, lambda_=None, steps=None, neighbouring=None, delta_priv=None, noise=None, epsilon=None, rho=None, sample_rate=None, clip=None, extra_ridge=None, groups=None))]
#[allow(clippy::too_many_arguments)] // one per keyword of the Python call
pub(crate) fn privacy<'py>(
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
    extra_ridge: Option<&Bound<'py, PyAny>>,
    groups: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let bad = |field: &str, why: String| config_error(py, format!("{field}{why}"), Some(field.into()));
    let name = |v: &Bound<'py, PyAny>, field: &str, allowed: &str| -> PyResult<String> {
        v.extract::<String>()
            .map_err(|_| bad(field, format!(" = {} is invalid: allowed {allowed}", shown(v, false))))
    };
    let algorithm: AlgorithmKind = name(algorithm, "algorithm", &AlgorithmKind::allowed())?
        .parse()
        .map_err(|e| bad("algorithm", format!(": {e}")))?;
    let model: ModelKind = name(model, "model", "\"huber\", \"logistic\", \"least_squares\"")?
        .parse()
        .map_err(|e| bad("model", format!(": {e}")))?;
    let neighbouring = match neighbouring.filter(|v| !v.is_none()) {
        None => None,
        Some(v) => match name(v, "neighbouring", "\"replace_one\", \"add_remove_one\"")?.as_str() {
            "replace_one" | "replace-one" => Some(Neighbouring::ReplaceOne),
            "add_remove_one" | "add-remove-one" => Some(Neighbouring::AddRemoveOne),
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
        groups: integer(py, groups, "groups")?,
        neighbouring,
        delta_priv: number(py, delta_priv, "delta_priv")?,
        noise: number(py, noise, "noise")?,
        epsilon: number(py, epsilon, "epsilon")?,
        rho: number(py, rho, "rho")?,
        extra_ridge: match extra_ridge.filter(|v| !v.is_none()) {
            None => None,
            Some(v) => {
                let allowed = "\"auto\", \"refuse\"";
                let text = name(v, "extra_ridge", allowed)?;
                Some(
                    propdp::core::accountant::ExtraRidge::from_name(&text)
                        .ok_or_else(|| bad("extra_ridge", format!(" = {text:?} is invalid: allowed {allowed}")))?,
                )
            }
        },
        ..QueryArgs::new(algorithm, model)
    };
    let q = args.query().map_err(|a| argument_error(py, &a))?;
    let r = py.detach(|| propdp::privacy::assess(&q)).map_err(|e| to_py(py, e))?;
    let mut json = r.json();
    json["text"] = r.text().into();
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// The DP-SGD segments of (noise_multiplier, sample_rate, steps) triples;
/// a step count below 1 raises ConfigError naming it (`steps`, or
/// `segment[i].steps`). The other ranges are the accountant's to check.
pub(crate) fn parse_plan(
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
pub(crate) fn membership_run<'py>(
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
        .map_err(|e| {
            // one run's arguments bare, as `parse_plan` names its steps
            let field = match e.argument().strip_prefix("segment[0].") {
                Some(bare) if plan.len() == 1 => bare,
                _ => e.argument(),
            };
            config_error(py, format!("{field}: {e}"), Some(field.to_string()))
        })?;
    let mu = gdp_mu(&plan, relation);
    let json = serde_json::json!({
        "fpr": fprs,
        "tpr_upper": tpr,
        "mu": mu.map(|m| m.0),
        "mu_exact": mu.map(|m| m.1),
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
pub(crate) fn calibrate_run<'py>(
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
    use propdp::core::accountant::events::Event;
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
    let make_event = |v: f64| match knob {
        Knob::NoiseMultiplier => Event::dpsgd(v, sample_rate, steps),
        Knob::Steps => Event::dpsgd(noise_multiplier, sample_rate, v as u64),
        Knob::SampleRate => Event::dpsgd(noise_multiplier, v, steps),
    };
    let c = py
        .detach(|| calibrate(knob, make_event, target, relation, BracketSettings::default()))
        .map_err(|e| bad(e.argument().to_string(), format!(": {e}")))?;
    let b = c.epsilon;
    let run = c
        .event
        .parts()
        .map_err(|e| bad(e.argument().to_string(), format!(": {e}")))?
        .segments[0];
    let json = serde_json::json!({
        "noise_multiplier": run.noise_multiplier,
        "sample_rate": run.sample_rate,
        "steps": run.steps,
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
pub(crate) fn parse_relation(py: Python<'_>, name: &str) -> PyResult<Neighbouring> {
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
pub(crate) fn number(py: Python<'_>, v: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<f64>> {
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
            _ => Err(refuse(format!("{} is too large for a 64-bit float", shown(i, false)))),
        };
    }
    if v.hasattr("dtype")? && v.hasattr("item")? {
        return number(py, Some(&v.call_method0("item")?), field);
    }
    Err(refuse(format!(
        "{} (a {}) is invalid: allowed a number",
        shown(v, true),
        v.get_type().name()?
    )))
}

/// An integer argument (`None`: not given): a Python int or a numpy
/// integer; a bool, a float (even 29.0 or 0.29/0.01 = 28.999…, never
/// rounded) or a negative or huge int is refused naming `field`.
pub(crate) fn integer(py: Python<'_>, v: Option<&Bound<'_, PyAny>>, field: &str) -> PyResult<Option<u64>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let refuse = |why: String| config_error(py, format!("{field} = {why}"), Some(field.into()));
    if v.is_instance_of::<PyBool>() {
        return Err(refuse(format!("{v} is a bool: allowed an integer")));
    }
    if let Ok(i) = v.cast::<PyInt>() {
        return i.extract::<u64>().map(Some).map_err(|_| {
            refuse(format!(
                "{} is invalid: allowed an integer 1 ≤ T ≤ 1e9",
                shown(i, false)
            ))
        });
    }
    if v.hasattr("dtype")? && v.hasattr("item")? {
        return integer(py, Some(&v.call_method0("item")?), field);
    }
    Err(refuse(format!(
        "{} (a {}) is invalid: allowed an integer (a float is never rounded: pass round(x) or int(x))",
        shown(v, true),
        v.get_type().name()?
    )))
}
