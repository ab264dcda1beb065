//! Each typed cause's kind, fixed where it converts into [`Error`]: the
//! library's own causes and the lower crates' errors, by variant.

use super::{Argument, Error, ErrorKind, Failure, OutOfMemory, Refused};
use crate::progress::Cancelled;
use propdp_core::ConfigError;
use propdp_core::accountant::AccountantError;
use propdp_core::record::ReadError;
use propdp_plot::PlotError;
use propdp_sim::run::SimError;
use propdp_theory::dynamics::DmftError;
use propdp_theory::solution_check::TheoryError;

impl From<Failure> for Error {
    fn from(e: Failure) -> Self {
        Error::new(ErrorKind::Compute, None, e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        let field = e.field().map(str::to_string);
        Error::new(ErrorKind::Config, field, e)
    }
}

impl From<Argument> for Error {
    fn from(a: Argument) -> Self {
        Error::new(ErrorKind::Argument, Some(a.argument.to_string()), a)
    }
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Self {
        Error::new(ErrorKind::Directory, None, r)
    }
}

impl From<OutOfMemory> for Error {
    fn from(e: OutOfMemory) -> Self {
        Error::new(ErrorKind::Memory, None, e)
    }
}

impl From<Cancelled> for Error {
    fn from(e: Cancelled) -> Self {
        Error::new(ErrorKind::Cancelled, None, e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(ErrorKind::Io, None, e)
    }
}

impl From<ReadError> for Error {
    fn from(e: ReadError) -> Self {
        let kind = match e {
            ReadError::Io { .. } => ErrorKind::Io,
            ReadError::Malformed { .. } => ErrorKind::Compute,
        };
        Error::new(kind, None, e)
    }
}

impl From<DmftError> for Error {
    fn from(e: DmftError) -> Self {
        Error::new(dmft_kind(&e), None, e)
    }
}

/// A DMFT solve stopped by the caller is cancelled; any other failure is
/// a computation's.
fn dmft_kind(e: &DmftError) -> ErrorKind {
    match e {
        DmftError::Cancelled { .. } => ErrorKind::Cancelled,
        _ => ErrorKind::Compute,
    }
}

impl From<TheoryError> for Error {
    fn from(e: TheoryError) -> Self {
        let kind = match &e {
            // a pattern the point's solver does not take, named by its config field
            TheoryError::CorrelatedNoise { field, .. } => {
                let field = Some(field.clone());
                return Error::new(ErrorKind::Config, field, e);
            }
            TheoryError::Dmft(d) => dmft_kind(d),
            TheoryError::Huber(_)
            | TheoryError::Logistic(_)
            | TheoryError::LeastSquares(_)
            | TheoryError::NotFinite { .. }
            | TheoryError::Covariance { .. }
            | TheoryError::Inconsistent { .. } => ErrorKind::Compute,
        };
        Error::new(kind, None, e)
    }
}

impl From<SimError> for Error {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Invalid(c) => c.into(),
            e @ (SimError::Fit { .. } | SimError::Descent { .. }) => Error::new(ErrorKind::Compute, None, e),
        }
    }
}

impl From<AccountantError> for Error {
    fn from(e: AccountantError) -> Self {
        Error::new(ErrorKind::Compute, None, e)
    }
}

impl From<PlotError> for Error {
    fn from(e: PlotError) -> Self {
        let kind = match &e {
            PlotError::Io { .. } | PlotError::Read(ReadError::Io { .. }) => ErrorKind::Io,
            _ => ErrorKind::Compute,
        };
        Error::new(kind, None, e)
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        let kind = match e.classify() {
            serde_json::error::Category::Io => ErrorKind::Io,
            serde_json::error::Category::Syntax
            | serde_json::error::Category::Data
            | serde_json::error::Category::Eof => ErrorKind::Compute,
        };
        Error::new(kind, None, e)
    }
}
