//! `propdp._native.infer`: one private fit with its intervals
//! ([`propdp::inference`]), wrapped by `propdp.PrivateGLM` (python/propdp/inference.py).
//! The rows cross as little-endian float64 bytes (numpy's `tobytes()`),
//! without a per-element conversion, a chunk of rows at a time into
//! [`Rows`], whose one buffer (reserved up front: `MemoryError`, not an
//! abort, when it cannot be had) becomes the fit's matrix: X and one copy
//! at the peak.

use propdp::core::accountant::Neighbouring;
use propdp::core::{Algorithm, LossVariant};
use propdp::inference::{Glm, Inference, Spec};
use pyo3::prelude::*;

use crate::errors::{PropdpInferenceRefused, argument_error, excerpt, to_py};

/// A refusal of the argument `name` (Python's spelling).
fn refuse(py: Python<'_>, argument: &'static str, text: String) -> PyErr {
    argument_error(
        py,
        &propdp::privacy::Argument {
            argument,
            also: None,
            text,
        },
    )
}

/// The bytes of a float64 array as values, or the argument at fault.
fn floats(py: Python<'_>, name: &'static str, bytes: &[u8]) -> PyResult<Vec<f64>> {
    let mut v = Vec::new();
    append(py, name, &mut v, bytes, usize::MAX)?;
    Ok(v)
}

/// Appends the float64 values of `bytes` to `v`, never beyond `cap` values.
fn append(py: Python<'_>, name: &'static str, v: &mut Vec<f64>, bytes: &[u8], cap: usize) -> PyResult<()> {
    if !bytes.len().is_multiple_of(8) {
        return Err(refuse(py, name, " is not a float64 buffer".into()));
    }
    if bytes.len() / 8 > cap - v.len() {
        return Err(refuse(
            py,
            name,
            format!(" has more than the {cap} values its shape announced"),
        ));
    }
    v.extend(
        bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("eight bytes"))),
    );
    Ok(())
}

/// The n × d rows (row-major) and n labels of one fit, filled a chunk at a
/// time (`push`) into buffers reserved when made: a request the allocator
/// refuses raises `MemoryError` naming its size, before anything is
/// copied. [`infer`] takes the buffers over (a `Rows` serves one fit).
#[pyclass(module = "propdp._native")]
pub struct Rows {
    n: usize,
    d: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

#[pymethods]
impl Rows {
    #[new]
    fn new(py: Python<'_>, n: usize, d: usize) -> PyResult<Self> {
        let memory = |e: propdp::error::OutOfMemory| to_py(py, e.into());
        let x = match n.checked_mul(d) {
            Some(values) => propdp::error::reserve(values, "the rows X (n × d float64 values)").map_err(memory)?,
            None => {
                return Err(memory(propdp::error::OutOfMemory {
                    what: "the rows X (n × d float64 values)".into(),
                    bytes: n as u128 * d as u128 * 8,
                }));
            }
        };
        let y = propdp::error::reserve(n, "the labels y").map_err(memory)?;
        Ok(Rows { n, d, x, y })
    }

    /// Appends rows (row-major float64 bytes, d values each) and their labels.
    fn push(&mut self, py: Python<'_>, x: &[u8], y: &[u8]) -> PyResult<()> {
        append(py, "X", &mut self.x, x, self.n * self.d)?;
        append(py, "y", &mut self.y, y, self.n)
    }
}

/// A fitted private GLM: its estimate, nuisances and privacy, with the
/// intervals computed on demand.
#[pyclass(module = "propdp._native", frozen)]
pub struct Fitted {
    inner: Inference,
}

#[pymethods]
impl Fitted {
    /// θ̂, the released estimate.
    #[getter]
    fn params(&self) -> Vec<f64> {
        self.inner.params.clone()
    }

    /// θ̂/α̂.
    #[getter]
    fn params_debiased(&self) -> Vec<f64> {
        self.inner.debiased()
    }

    /// The standard errors of θ̂/α̂.
    #[getter]
    fn bse(&self) -> Vec<f64> {
        self.inner.standard_errors()
    }

    /// The classical interval's intercept at level 1 − alpha: (estimate, se,
    /// lower, upper), or None (the proportional interval has no intercept).
    fn intercept_int(&self, py: Python<'_>, alpha: f64) -> PyResult<Option<(f64, f64, f64, f64)>> {
        let c = self.inner.intercept_int(alpha).map_err(|a| argument_error(py, &a))?;
        Ok(c.map(|c| (c.estimate, c.se, c.lower, c.upper)))
    }

    /// (lower, upper) per coefficient at level 1 − alpha.
    fn conf_int(&self, py: Python<'_>, alpha: f64) -> PyResult<Vec<(f64, f64)>> {
        self.inner.conf_int(alpha).map_err(|a| argument_error(py, &a))
    }

    /// The interval of ⟨a, θ*⟩: (estimate, se, lower, upper).
    fn contrast(&self, py: Python<'_>, a: Vec<f64>, alpha: f64) -> PyResult<(f64, f64, f64, f64)> {
        let c = self.inner.contrast(&a, alpha).map_err(|a| argument_error(py, &a))?;
        Ok((c.estimate, c.se, c.lower, c.upper))
    }

    /// The interval of θ̂'s test error from the held-out rows: (estimate, se, lower, upper).
    fn test_error_int(&self, py: Python<'_>, alpha: f64) -> PyResult<(f64, f64, f64, f64)> {
        let c = self.inner.test_error_int(alpha).map_err(|a| argument_error(py, &a))?;
        Ok((c.estimate, c.se, c.lower, c.upper))
    }

    /// Everything but the vectors, as JSON (nuisances, privacy, settings).
    fn report(&self) -> String {
        let mut v = serde_json::to_value(&self.inner).expect("a report serialises");
        if let Some(o) = v.as_object_mut() {
            o.remove("params");
        }
        v.to_string()
    }
}

/// One private fit of `model` by `algorithm` to the rows and labels of
/// `rows` (which it empties).
#[pyfunction]
#[pyo3(signature = (rows, *, model, algorithm, lambda_, epsilon, delta_priv, neighbouring, row_norm, huber_m, seed, noise=None, holdout=0.0, test_clip=None, covariance=None, steps=None, eta=None, sample_rate=None, clip=None, extra_ridge="auto", standardize=false, intercept=None))]
#[allow(clippy::too_many_arguments)] // one per keyword of PrivateGLM
pub fn infer(
    py: Python<'_>,
    rows: &Bound<'_, Rows>,
    model: &str,
    algorithm: &str,
    lambda_: f64,
    epsilon: f64,
    delta_priv: f64,
    neighbouring: &str,
    row_norm: f64,
    huber_m: f64,
    seed: Option<u64>,
    noise: Option<&str>,
    holdout: f64,
    test_clip: Option<f64>,
    covariance: Option<&[u8]>,
    steps: Option<usize>,
    eta: Option<f64>,
    sample_rate: Option<f64>,
    clip: Option<f64>,
    extra_ridge: &str,
    standardize: bool,
    intercept: Option<bool>,
) -> PyResult<Fitted> {
    let bad = |argument: &'static str, text: String| refuse(py, argument, text);
    let model = match model {
        "logistic" => Glm::Logistic,
        "huber" => Glm::Huber { m: huber_m },
        other => {
            return Err(bad(
                "model",
                format!(" = {other:?} is invalid: allowed \"logistic\", \"huber\""),
            ));
        }
    };
    let lambda = lambda_;
    let descent_given = steps.is_some() || eta.is_some() || sample_rate.is_some() || clip.is_some();
    // the noise is 0 until the budget calibrates it
    let algorithm = match algorithm {
        "objective" | "output" if descent_given => {
            return Err(bad(
                "steps",
                " (and eta, sample_rate, clip) apply to algorithm=\"dpsgd\" only".into(),
            ));
        }
        "objective" => Algorithm::Objective { lambda, sigma: 0.0 },
        "output" => Algorithm::Output { lambda, tau: 0.0 },
        "dpsgd" => match (steps, eta) {
            (Some(steps), Some(eta)) => Algorithm::Dpsgd {
                lambda,
                sigma: 0.0,
                eta,
                steps,
                loss_variant: LossVariant::Standard,
                sample_rate: sample_rate.unwrap_or(1.0),
                clip,
                groups: 1,
                strategy: propdp::core::problem::Strategy::IDENTITY,
            },
            _ => return Err(bad("steps", " and eta are needed by algorithm=\"dpsgd\"".into())),
        },
        other => {
            return Err(bad(
                "algorithm",
                format!(" = {other:?} is invalid: allowed \"objective\", \"output\", \"dpsgd\""),
            ));
        }
    };
    let neighbouring = match neighbouring {
        "replace_one" | "replace-one" => Neighbouring::ReplaceOne,
        "add_remove_one" | "add-remove-one" | "add_remove" => Neighbouring::AddRemoveOne,
        other => {
            return Err(bad(
                "neighbouring",
                format!(" = {other:?} is invalid: allowed \"replace_one\", \"add_remove_one\""),
            ));
        }
    };
    let noise = match noise {
        None => None,
        Some(text) => Some(serde_json::from_str::<propdp::core::NoiseLaw>(text).map_err(|e| {
            bad(
                "noise",
                format!(
                    " = {} is not a noise law ({e}): e.g. {{\"law\": \"student_t\", \"dof\": 3, \"scale\": 0.5}}",
                    excerpt(text)
                ),
            )
        })?),
    };
    let Some(extra_ridge) = propdp::core::accountant::ExtraRidge::from_name(extra_ridge) else {
        return Err(bad(
            "extra_ridge",
            format!(" = {extra_ridge:?} is invalid: allowed \"auto\", \"refuse\""),
        ));
    };
    let spec = Spec {
        model,
        algorithm,
        epsilon,
        delta_priv,
        neighbouring,
        row_norm,
        noise,
        holdout,
        test_clip,
        extra_ridge,
        standardize,
        intercept: intercept.unwrap_or_else(|| Spec::default_intercept(model)),
    };
    let covariance = covariance.map(|c| floats(py, "covariance", c)).transpose()?;
    let (x, y, n, d) = {
        let mut r = rows.borrow_mut();
        (std::mem::take(&mut r.x), std::mem::take(&mut r.y), r.n, r.d)
    };
    let fitted = py
        .detach(|| match &covariance {
            Some(c) => propdp::inference::fit_whitened_owned(x, n, d, &y, c, &spec, seed),
            None => propdp::inference::fit_owned(x, n, d, &y, &spec, seed),
        })
        .map_err(|e| to_py(py, e))?;
    Ok(Fitted { inner: fitted })
}

/// Registers the inference functions and types.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Fitted>()?;
    m.add_class::<Rows>()?;
    m.add_function(wrap_pyfunction!(infer, m)?)?;
    m.add("InferenceRefused", m.py().get_type::<PropdpInferenceRefused>())?;
    Ok(())
}
