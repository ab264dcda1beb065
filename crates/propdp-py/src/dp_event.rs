//! Google dp_accounting's `DpEvent` tree read into the accountant's events
//! (`propdp.accounting.from_dp_event`), by class name and attributes —
//! dp_accounting need not be installed: `GaussianDpEvent.noise_multiplier`,
//! `PoissonSampledDpEvent.sampling_probability` and `.event`,
//! `SelfComposedDpEvent.event` and `.count`, `ComposedDpEvent.events`.
//! Any other event is refused naming its type and its path. The values are
//! read, not checked: the ranges are the core's, checked once when the
//! event is accounted, a bad part named by the same path
//! (`events[2].sample_rate`, propdp's names of the fields).

use pyo3::prelude::*;

use crate::errors::config_error;
use crate::event_paths::{join, or_whole};
use crate::events::{ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent};
use crate::privacy::{integer, number};

/// The events `from_dp_event` reads.
const SUPPORTED: &str = "GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent and ComposedDpEvent";

/// The propdp event of a dp_accounting `DpEvent` (module docs); an
/// unsupported event raises ConfigError naming its type and its path.
#[pyfunction]
pub(crate) fn from_dp_event<'py>(py: Python<'py>, dp_event: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    read(py, dp_event, "")
}

fn read<'py>(py: Python<'py>, e: &Bound<'py, PyAny>, path: &str) -> PyResult<Bound<'py, PyAny>> {
    let kind = e.get_type().name()?.to_string();
    let attr = |name: &str| {
        e.getattr(name).map_err(|_| {
            let why = format!(
                "{}: {kind} has no attribute {name:?}: not a dp_accounting event",
                or_whole(path)
            );
            config_error(py, why, Some(or_whole(path)))
        })
    };
    let value = |attribute: &str, field: &str| -> PyResult<f64> {
        let field = join(path, field);
        number(py, Some(&attr(attribute)?), &field)?
            .ok_or_else(|| config_error(py, format!("{field} = None is invalid: allowed a number"), Some(field)))
    };
    match kind.as_str() {
        "GaussianDpEvent" => py
            .get_type::<GaussianEvent>()
            .call1((value("noise_multiplier", "noise_multiplier")?,)),
        "PoissonSampledDpEvent" => {
            let q = value("sampling_probability", "sample_rate")?;
            let inner = read(py, &attr("event")?, &join(path, "event"))?;
            py.get_type::<PoissonSampledEvent>().call1((q, inner))
        }
        "SelfComposedDpEvent" => {
            let inner = read(py, &attr("event")?, &join(path, "event"))?;
            let count = integer(py, Some(&attr("count")?), &join(path, "count"))?;
            py.get_type::<SelfComposedEvent>().call1((inner, count))
        }
        "ComposedDpEvent" => {
            let field = join(path, "events");
            let items = attr("events")?
                .try_iter()
                .map_err(|_| config_error(py, format!("{field}: not a list of events"), Some(field.clone())))?;
            let mut events = Vec::new();
            for (i, item) in items.enumerate() {
                events.push(read(py, &item?, &join(path, &format!("events[{i}]")))?);
            }
            py.get_type::<ComposedEvent>().call1((events,))
        }
        other => {
            let advice = match other {
                "NoOpDpEvent" => "; a release that uses no data adds nothing: leave it out",
                "NonPrivateDpEvent" => "; a release without noise has no finite ε",
                "SampledWithoutReplacementDpEvent" => {
                    "; fixed-size batches: account the PoissonSampledEvent at rate sample_size/source_dataset_size \
                     with epsilon(..., sampling=\"fixed_size\")"
                }
                _ => "",
            };
            let why = format!(
                "{}: {other} is not supported: propdp's accountant reads {SUPPORTED}{advice}",
                or_whole(path)
            );
            Err(config_error(py, why, Some(or_whole(path))))
        }
    }
}
