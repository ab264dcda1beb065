//! The accountant's one event type from Python (`propdp.accounting`):
//! `GaussianEvent`, `PoissonSampledEvent`, `SelfComposedEvent`,
//! `ComposedEvent` and `ObjectiveEvent`, subclasses of `Event`, each
//! wrapping the core's [`Event`]; the one `epsilon` of an event; and
//! `from_dp_event`, which reads Google dp_accounting's `DpEvent` tree by
//! its attributes into these events.
//!
//! Range checks are the core's ([`Event::parts`]); the core names a bad
//! part by its index among the parts (`segment[2].sample_rate`), and
//! [`located`](crate::event_paths::located) renames it by its path in the event tree as Python wrote it
//! (`events[2].sample_rate`, `event.event.noise_multiplier`).

use propdp::core::accountant::ObjectiveBound;
use propdp::core::accountant::events::Event;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBool, PyFloat, PyList};

use crate::errors::{PropdpError, config_error, shown};
use crate::event_paths::located;
use crate::privacy::{integer, number, parse_relation};

/// A privacy event (`Event`): the base of the event classes.
#[pyclass(name = "Event", module = "propdp._native", subclass, frozen)]
pub(crate) struct PyEvent {
    pub(crate) inner: Event,
    repr: String,
}

#[pymethods]
impl PyEvent {
    /// This event run on a Poisson sample of rate `sample_rate`.
    fn poisson<'py>(slf: &Bound<'py, Self>, sample_rate: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let q = required(slf.py(), sample_rate, "sample_rate")?;
        poisson_sampled(slf.py(), q, slf.clone())
    }

    /// This event composed with itself `count` times.
    fn repeat<'py>(slf: &Bound<'py, Self>, count: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let count = required_integer(slf.py(), count, "count")?;
        self_composed(slf.py(), slf.clone(), count)
    }

    fn __repr__(&self) -> String {
        self.repr.clone()
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Py<PyAny> {
        let py = other.py();
        let Ok(other) = other.cast::<PyEvent>() else {
            return py.NotImplemented();
        };
        let same = self.inner == other.get().inner;
        let answer = match op {
            CompareOp::Eq => same,
            CompareOp::Ne => !same,
            _ => return py.NotImplemented(),
        };
        PyBool::new(py, answer).to_owned().into_any().unbind()
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{:?}", self.inner).hash(&mut h);
        h.finish()
    }
}

/// One release of the Gaussian mechanism at noise multiplier σ/Δ.
#[pyclass(extends = PyEvent, module = "propdp._native", frozen)]
pub(crate) struct GaussianEvent {
    noise_multiplier: f64,
}

#[pymethods]
impl GaussianEvent {
    #[new]
    fn new(py: Python<'_>, noise_multiplier: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<Self>> {
        let z = required(py, noise_multiplier, "noise_multiplier")?;
        let repr = format!("GaussianEvent(noise_multiplier={})", float(py, z)?);
        Ok(PyClassInitializer::from(PyEvent {
            inner: Event::gaussian(z),
            repr,
        })
        .add_subclass(GaussianEvent { noise_multiplier: z }))
    }

    #[getter]
    fn noise_multiplier(&self) -> f64 {
        self.noise_multiplier
    }
}

/// A Gaussian event run on a Poisson sample of rate q (one DP-SGD step).
#[pyclass(extends = PyEvent, module = "propdp._native", frozen)]
pub(crate) struct PoissonSampledEvent {
    sample_rate: f64,
    event: Py<PyEvent>,
}

#[pymethods]
impl PoissonSampledEvent {
    #[new]
    fn new(
        py: Python<'_>,
        sample_rate: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let q = required(py, sample_rate, "sample_rate")?;
        let event = an_event(event, "event")?;
        let repr = format!(
            "PoissonSampledEvent(sample_rate={}, event={})",
            float(py, q)?,
            event.get().repr
        );
        let inner = Event::PoissonSampled {
            sample_rate: q,
            event: Box::new(event.get().inner.clone()),
        };
        Ok(
            PyClassInitializer::from(PyEvent { inner, repr }).add_subclass(PoissonSampledEvent {
                sample_rate: q,
                event: event.unbind(),
            }),
        )
    }

    #[getter]
    fn sample_rate(&self) -> f64 {
        self.sample_rate
    }

    #[getter]
    fn event(&self, py: Python<'_>) -> Py<PyEvent> {
        self.event.clone_ref(py)
    }
}

/// An event composed with itself `count` times.
#[pyclass(extends = PyEvent, module = "propdp._native", frozen)]
pub(crate) struct SelfComposedEvent {
    event: Py<PyEvent>,
    count: u64,
}

#[pymethods]
impl SelfComposedEvent {
    #[new]
    fn new(py: Python<'_>, event: &Bound<'_, PyAny>, count: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<Self>> {
        let event = an_event(event, "event")?;
        let count = required_integer(py, count, "count")?;
        let repr = format!("SelfComposedEvent(event={}, count={count})", event.get().repr);
        let inner = event.get().inner.clone().repeated(count);
        Ok(
            PyClassInitializer::from(PyEvent { inner, repr }).add_subclass(SelfComposedEvent {
                event: event.unbind(),
                count,
            }),
        )
    }

    #[getter]
    fn event(&self, py: Python<'_>) -> Py<PyEvent> {
        self.event.clone_ref(py)
    }

    #[getter]
    fn count(&self) -> u64 {
        self.count
    }
}

/// Events composed in order.
#[pyclass(extends = PyEvent, module = "propdp._native", frozen)]
pub(crate) struct ComposedEvent {
    events: Vec<Py<PyEvent>>,
}

#[pymethods]
impl ComposedEvent {
    #[new]
    fn new(py: Python<'_>, events: &Bound<'_, PyAny>) -> PyResult<PyClassInitializer<Self>> {
        let refuse = || {
            let why = format!("events = {} is invalid: allowed a list of events", shown(events, true));
            config_error(py, why, Some("events".into()))
        };
        if events.is_instance_of::<pyo3::types::PyString>() {
            return Err(refuse());
        }
        let items = events.try_iter().map_err(|_| refuse())?;
        let mut list = Vec::new();
        for (i, item) in items.enumerate() {
            list.push(an_event(&item?, &format!("events[{i}]"))?);
        }
        let reprs: Vec<&str> = list.iter().map(|e| e.get().repr.as_str()).collect();
        let repr = format!("ComposedEvent(events=[{}])", reprs.join(", "));
        let inner = Event::Composed(list.iter().map(|e| e.get().inner.clone()).collect());
        Ok(
            PyClassInitializer::from(PyEvent { inner, repr }).add_subclass(ComposedEvent {
                events: list.into_iter().map(Bound::unbind).collect(),
            }),
        )
    }

    #[getter]
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.events.iter().map(|e| e.clone_ref(py)))
    }
}

/// A model released by objective perturbation: the loss's Lipschitz
/// constant L and curvature β, ridge λ, noise σ and row norm bound R; its
/// privacy loss is at most c + A|Z| (`ObjectiveBound`).
#[pyclass(extends = PyEvent, module = "propdp._native", frozen)]
pub(crate) struct ObjectiveEvent {
    values: [f64; 5],
}

/// `ObjectiveEvent`'s arguments, in the order of its signature.
const OBJECTIVE: [&str; 5] = ["lipschitz", "curvature", "lambda_", "sigma", "radius"];

#[pymethods]
impl ObjectiveEvent {
    #[new]
    #[pyo3(signature = (lipschitz, curvature, lambda_, sigma, radius=None))]
    fn new(
        py: Python<'_>,
        lipschitz: &Bound<'_, PyAny>,
        curvature: &Bound<'_, PyAny>,
        lambda_: &Bound<'_, PyAny>,
        sigma: &Bound<'_, PyAny>,
        radius: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut values = [1.0; 5];
        let given = [Some(lipschitz), Some(curvature), Some(lambda_), Some(sigma), radius];
        for (i, (name, v)) in OBJECTIVE.iter().zip(given).enumerate() {
            let Some(v) = v else { continue };
            let x = required(py, v, name)?;
            // the constants of the bound, not parts of the accountant's event
            let (ok, allowed) = if *name == "curvature" {
                (x >= 0.0 && x.is_finite(), "0 ≤ curvature < ∞".to_string())
            } else {
                (x > 0.0 && x.is_finite(), format!("0 < {name} < ∞"))
            };
            if !ok {
                let why = format!("{name} = {} is invalid: allowed {allowed}", float(py, x)?);
                return Err(config_error(py, why, Some(name.to_string())));
            }
            values[i] = x;
        }
        let [l, beta, lambda, sigma, r] = values;
        let mut shown = Vec::new();
        for (name, x) in OBJECTIVE.iter().zip(values) {
            shown.push(format!("{name}={}", float(py, x)?));
        }
        let repr = format!("ObjectiveEvent({})", shown.join(", "));
        let inner = Event::Objective(ObjectiveBound::new(l, beta, r, lambda, sigma));
        Ok(PyClassInitializer::from(PyEvent { inner, repr }).add_subclass(ObjectiveEvent { values }))
    }

    /// The release as (lipschitz, curvature, radius, lambda_, sigma).
    #[getter]
    fn parameters(&self) -> (f64, f64, f64, f64, f64) {
        let [l, beta, lambda, sigma, r] = self.values;
        (l, beta, r, lambda, sigma)
    }
}

/// A number argument that must be given: `None` is refused naming `field`.
fn required(py: Python<'_>, v: &Bound<'_, PyAny>, field: &str) -> PyResult<f64> {
    number(py, Some(v), field)?
        .ok_or_else(|| config_error(py, format!("{field} is required: allowed a number"), Some(field.into())))
}

/// A count that must be given: `None` is refused naming `field`.
fn required_integer(py: Python<'_>, v: &Bound<'_, PyAny>, field: &str) -> PyResult<u64> {
    integer(py, Some(v), field)?.ok_or_else(|| {
        config_error(
            py,
            format!("{field} is required: allowed an integer"),
            Some(field.into()),
        )
    })
}

/// A float as Python writes it (`1e-05`, `0.5`).
fn float(py: Python<'_>, x: f64) -> PyResult<String> {
    Ok(PyFloat::new(py, x).repr()?.to_string())
}

/// An argument that must be one of the event classes, refused naming `field`.
fn an_event<'py>(v: &Bound<'py, PyAny>, field: &str) -> PyResult<Bound<'py, PyEvent>> {
    v.cast::<PyEvent>().cloned().map_err(|_| {
        let hint = if v.get_type().name().is_ok_and(|n| n.to_string().ends_with("DpEvent")) {
            " (a dp_accounting event: read it with from_dp_event)"
        } else {
            ""
        };
        let why = format!(
            "{field} = {} is invalid: allowed a propdp event (GaussianEvent, PoissonSampledEvent, SelfComposedEvent, \
             ComposedEvent, ObjectiveEvent){hint}",
            shown(v, true)
        );
        config_error(v.py(), why, Some(field.into()))
    })
}

fn poisson_sampled<'py>(py: Python<'py>, q: f64, event: Bound<'py, PyEvent>) -> PyResult<Bound<'py, PyAny>> {
    let args = (PyFloat::new(py, q), event);
    Ok(Bound::new(py, PoissonSampledEvent::new(py, &args.0, args.1.as_any())?)?.into_any())
}

fn self_composed<'py>(py: Python<'py>, event: Bound<'py, PyEvent>, count: u64) -> PyResult<Bound<'py, PyAny>> {
    let count = count.into_pyobject(py)?;
    Ok(Bound::new(py, SelfComposedEvent::new(py, event.as_any(), count.as_any())?)?.into_any())
}

/// `steps` steps of DP-SGD at noise multiplier σ/C and Poisson rate
/// `sample_rate`: `GaussianEvent(noise_multiplier).poisson(sample_rate).repeat(steps)`
/// (dp_accounting's `SelfComposedDpEvent(PoissonSampledDpEvent(q,
/// GaussianDpEvent(z)), T)`). A wrong kind raises ConfigError naming the
/// argument; the ranges are checked when the event is accounted.
#[pyfunction]
pub(crate) fn dpsgd_event<'py>(
    py: Python<'py>,
    noise_multiplier: &Bound<'py, PyAny>,
    sample_rate: &Bound<'py, PyAny>,
    steps: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let z = required(py, noise_multiplier, "noise_multiplier")?;
    let q = required(py, sample_rate, "sample_rate")?;
    let steps = required_integer(py, steps, "steps")?;
    let gaussian = Bound::new(py, GaussianEvent::new(py, &PyFloat::new(py, z))?)?;
    let sampled = poisson_sampled(py, q, gaussian.into_super())?;
    self_composed(py, sampled.cast_into::<PyEvent>()?, steps)
}

/// The certified ε bracket of `event` at `delta` under `neighbouring`,
/// its batches drawn by `sampling` ("poisson"; "fixed_size" or "shuffled",
/// `propdp_accountant::sampling`): a dict with epsilon (upper),
/// epsilon_lower, bracket_grid, bracket_reached. A part out of range
/// raises ConfigError naming its path (`events[1].sample_rate`).
#[pyfunction]
#[pyo3(signature = (event, delta, neighbouring, sampling))]
pub(crate) fn epsilon<'py>(
    py: Python<'py>,
    event: &Bound<'py, PyAny>,
    delta: &Bound<'py, PyAny>,
    neighbouring: &str,
    sampling: &str,
) -> PyResult<Bound<'py, PyAny>> {
    use propdp::core::accountant::bracket::BracketSettings;
    use propdp::core::accountant::sampling::{Sampling, sampled_epsilon};
    let event = an_event(event, "event")?;
    let delta = required(py, delta, "delta")?;
    let relation = parse_relation(py, neighbouring)?;
    let scheme = Sampling::parse(sampling).ok_or_else(|| {
        let why = format!("sampling = {sampling:?} is invalid: allowed \"poisson\", \"fixed_size\", \"shuffled\"");
        config_error(py, why, Some("sampling".into()))
    })?;
    let inner = &event.get().inner;
    let settings = BracketSettings::default();
    let result = py.detach(|| match scheme {
        Sampling::Poisson => propdp::core::accountant::epsilon(inner, delta, relation, settings),
        _ => sampled_epsilon(scheme, inner, delta, relation, settings).map(|r| r.epsilon),
    });
    let bracket = result.map_err(|e| accountant_error(py, inner, &e))?;
    let json = serde_json::json!({
        "epsilon": bracket.map(|b| b.upper),
        "epsilon_lower": bracket.map(|b| b.lower),
        "bracket_grid": bracket.map(|b| b.grid),
        "bracket_reached": bracket.map(|b| b.reached),
    });
    pythonize::pythonize(py, &json).map_err(|e| PropdpError::new_err(e.to_string()))
}

/// Whether `epsilon` takes `event` under `neighbouring` without composing
/// it (`propdp_accountant::admits`: the ranges and the first grid): None,
/// or ConfigError naming the part as `epsilon` would.
#[pyfunction]
pub(crate) fn admits(py: Python<'_>, event: &Bound<'_, PyAny>, neighbouring: &str) -> PyResult<()> {
    use propdp::core::accountant::bracket::BracketSettings;
    let event = an_event(event, "event")?;
    let relation = parse_relation(py, neighbouring)?;
    let inner = &event.get().inner;
    propdp::core::accountant::admits(inner, relation, BracketSettings::default())
        .map_err(|e| accountant_error(py, inner, &e))
}

/// The accountant's error as ConfigError, its argument renamed by its path
/// in `event` ([`located`]).
fn accountant_error(py: Python<'_>, event: &Event, e: &propdp::core::accountant::AccountantError) -> PyErr {
    use propdp::core::accountant::AccountantError;
    let path = located(event, e.argument());
    let message = match e {
        AccountantError::OutOfRange { value, allowed, .. } => {
            format!("{path} = {value} is out of range: allowed {allowed}")
        }
        AccountantError::Unattainable { detail, .. } => format!("{path}: {detail}"),
    };
    config_error(py, message, Some(path))
}
