//! `propdp._native.infer`: one private fit with its intervals
//! ([`propdp::inference`]), wrapped by `propdp.PrivateGLM` (python/propdp/inference.py).
//! The rows cross as little-endian float64 bytes (numpy's `tobytes()`),
//! without a per-element conversion.

use propdp::core::accountant::Neighbouring;
use propdp::inference::{Glm, Inference, Release, Spec};
use pyo3::prelude::*;

use crate::errors::{PropdpInferenceRefused, argument_error, to_py};

/// The bytes of a float64 array as values, or the argument at fault.
fn floats(py: Python<'_>, name: &'static str, bytes: &[u8]) -> PyResult<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(argument_error(
            py,
            &propdp::privacy::Argument {
                argument: name,
                also: None,
                text: " is not a float64 buffer".into(),
            },
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("eight bytes")))
        .collect())
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

/// One private fit of `model` by `algorithm` to the n × d rows `x`
/// (row-major float64 bytes) and labels `y`.
#[pyfunction]
#[pyo3(signature = (x, n, d, y, *, model, algorithm, lambda_, epsilon, delta_priv, neighbouring, row_norm, huber_m, seed, noise=None, holdout=0.0, test_clip=None, covariance=None, steps=None, eta=None, sample_rate=None, clip=None, extra_ridge="auto"))]
#[allow(clippy::too_many_arguments)] // one per keyword of PrivateGLM
pub fn infer(
    py: Python<'_>,
    x: &[u8],
    n: usize,
    d: usize,
    y: &[u8],
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
) -> PyResult<Fitted> {
    let bad = |argument: &'static str, text: String| {
        argument_error(
            py,
            &propdp::privacy::Argument {
                argument,
                also: None,
                text,
            },
        )
    };
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
    let release = match algorithm {
        "objective" => Release::Objective,
        "output" => Release::Output,
        "dpsgd" => Release::Dpsgd,
        other => {
            return Err(bad(
                "algorithm",
                format!(" = {other:?} is invalid: allowed \"objective\", \"output\", \"dpsgd\""),
            ));
        }
    };
    let descent = match (release, steps, eta) {
        (Release::Dpsgd, Some(steps), Some(eta)) => Some(propdp::inference::Descent {
            steps,
            eta,
            sample_rate: sample_rate.unwrap_or(1.0),
            clip,
        }),
        (Release::Dpsgd, _, _) => {
            return Err(bad("steps", " and eta are needed by algorithm=\"dpsgd\"".into()));
        }
        _ if steps.is_some() || eta.is_some() || sample_rate.is_some() || clip.is_some() => {
            return Err(bad(
                "steps",
                " (and eta, sample_rate, clip) apply to algorithm=\"dpsgd\" only".into(),
            ));
        }
        _ => None,
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
                    " = {text} is not a noise law ({e}): e.g. {{\"law\": \"student_t\", \"dof\": 3, \"scale\": 0.5}}"
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
        release,
        lambda: lambda_,
        epsilon,
        delta_priv,
        neighbouring,
        row_norm,
        noise,
        holdout,
        test_clip,
        descent,
        extra_ridge,
    };
    let (x, y) = (floats(py, "X", x)?, floats(py, "y", y)?);
    let covariance = covariance.map(|c| floats(py, "covariance", c)).transpose()?;
    let fitted = py
        .detach(|| match &covariance {
            Some(c) => propdp::inference::fit_whitened(&x, n, d, &y, c, &spec, seed),
            None => propdp::inference::fit(&x, n, d, &y, &spec, seed),
        })
        .map_err(|e| to_py(py, e))?;
    Ok(Fitted { inner: fitted })
}

/// Registers the inference functions and types.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Fitted>()?;
    m.add_function(wrap_pyfunction!(infer, m)?)?;
    m.add("InferenceRefused", m.py().get_type::<PropdpInferenceRefused>())?;
    Ok(())
}
