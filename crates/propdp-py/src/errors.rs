//! The Python exceptions of propdp's errors: a config or argument error is
//! `ConfigError` (a `ValueError`) naming the field or keyword, a refused
//! inference `InferenceRefused`, a cancelled call `KeyboardInterrupt`,
//! anything else `PropdpError`; messages spell a run's options as Python's
//! keywords ([`propdp::error::Spelling::Keywords`]).

use propdp::ErrorKind;
use propdp::core::ConfigError;
use propdp::error::Spelling;
use propdp::privacy::Argument;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

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
/// `KeyboardInterrupt`, an allocation that failed `MemoryError`, anything
/// else `PropdpError`.
pub(crate) fn to_py(py: Python<'_>, e: propdp::Error) -> PyErr {
    // a refusal's advice spelled with Python's keywords (resume=True, not --resume)
    let message = e.message(Spelling::Keywords);
    match e.kind() {
        ErrorKind::Config => config_error(py, message, e.field().map(str::to_string)),
        ErrorKind::Argument => match e.argument() {
            Some(a) => argument_error(py, a),
            None => config_error(py, message, e.field().map(str::to_string)),
        },
        ErrorKind::Cancelled => PyKeyboardInterrupt::new_err(message),
        ErrorKind::Memory => PyMemoryError::new_err(message),
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
    config_error(py, a.keyword(), Some(a.python_name()))
}

pub(crate) fn config_error(py: Python<'_>, message: String, field: Option<String>) -> PyErr {
    let err = PropdpConfigError::new_err(message);
    // the field as an attribute; setting it cannot fail on a fresh exception
    let _ = err.value(py).setattr("field", field);
    err
}

pub(crate) fn config_err(py: Python<'_>, e: ConfigError) -> PyErr {
    let field = e.field().map(str::to_string);
    config_error(py, e.to_string(), field)
}

/// At most [`EXCERPT`] characters of a value a message names: never a
/// whole array echoed back.
pub(crate) fn excerpt(text: &str) -> String {
    let count = text.chars().count();
    if count <= EXCERPT {
        return text.to_string();
    }
    let head: String = text.chars().take(EXCERPT - 20).collect();
    format!("{head}… ({count} characters)")
}

/// The longest value a message quotes whole.
const EXCERPT: usize = 80;

/// A Python value as a message quotes it: its `str` (`repr` with
/// `repr = true`) cut to an [`excerpt`], or its type where that fails (an
/// int beyond Python's 4300 printable digits) — never written to stderr as
/// an unraisable error, as `Display` of a Python object would.
pub(crate) fn shown(v: &Bound<'_, PyAny>, repr: bool) -> String {
    let text = if repr { v.repr() } else { v.str() };
    match text {
        Ok(t) => excerpt(&t.to_string()),
        Err(_) => {
            let kind = v
                .get_type()
                .name()
                .map_or_else(|_| "value".to_string(), |n| n.to_string());
            format!("a {kind} too long to print")
        }
    }
}
