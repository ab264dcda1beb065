//! The library's one error: every capability of [`crate`] (run, validate,
//! tune, merge, privacy, figures, inference) returns [`Error`], whose
//! [`ErrorKind`] says what went wrong and, for a bad config or argument,
//! which field — so the command line and the Python package report it
//! without inspecting its cause (OpenDP's and argmin's single error is the
//! model).
//!
//! The kind is fixed where the error arises: each typed cause converts into
//! [`Error`] with its kind (`From` impls here for the lower crates' errors
//! and the library's own causes, and beside each capability's own error
//! enum). Work adds context messages on the way up with [`Context`]; the
//! kind never changes and is never guessed from the messages.

mod causes;
mod from;

pub use causes::{Advice, Argument, OutOfMemory, Refused, Spelling, reserve};

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A config value, file or key is invalid; [`Error::field`] names it.
    Config,
    /// A privacy query's argument is invalid or unreachable; [`Error::field`]
    /// names it and [`Error::argument`] gives it for re-rendering.
    Argument,
    /// Reading or writing a file failed.
    Io,
    /// A run directory (or the shards given to merge) cannot be used as
    /// asked ([`Refused`]): the message says what to do.
    Directory,
    /// The caller asked the work to stop ([`crate::Progress::cancelled`]);
    /// what was written is kept.
    Cancelled,
    /// The data do not support a valid interval (the inference's refusal
    /// says why; `Error::refusal` gives it).
    Refused,
    /// A computation could not deliver (no convergence, no solution, a
    /// damaged record): the message has the parameter values.
    Compute,
    /// A large allocation (the rows of a fit) failed ([`OutOfMemory`]):
    /// nothing was computed; Python raises `MemoryError`.
    Memory,
}

/// The error a cause of no other kind makes: a computation that could not
/// deliver, in words (with the parameter values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

/// A library error: its kind, the field at fault (config and argument
/// errors), its typed cause and the context messages added on the way up.
///
/// ```
/// use propdp::{Error, ErrorKind};
/// let e = propdp::run::load(std::path::Path::new("no/such/config.toml")).unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::Io);
/// assert!(e.to_string().contains("no/such/config.toml"), "{e}");
/// ```
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    field: Option<String>,
    cause: Box<dyn std::error::Error + Send + Sync + 'static>,
    /// Context messages, innermost first.
    context: Vec<String>,
}

impl Error {
    /// An error of `kind` (with the `field` at fault) caused by `cause`:
    /// the one constructor every conversion goes through.
    pub fn new(kind: ErrorKind, field: Option<String>, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error {
            kind,
            field,
            cause: Box::new(cause),
            context: Vec::new(),
        }
    }

    /// A computation that could not deliver, in words.
    pub fn compute(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Compute, None, Failure(message.into()))
    }

    /// The same error under one more context message.
    pub fn context(mut self, message: impl std::fmt::Display) -> Self {
        self.context.push(message.to_string());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The config field (`algorithm.sigma`) or query argument (`epsilon`)
    /// at fault, for [`ErrorKind::Config`] and [`ErrorKind::Argument`].
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// The typed cause, for a capability that reads its own back.
    pub(crate) fn cause<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.cause.downcast_ref()
    }

    /// The privacy query's argument at fault, for a front end that spells
    /// arguments its own way ([`Argument::keyword`] for Python).
    pub fn argument(&self) -> Option<&Argument> {
        self.cause()
    }

    /// The whole chain joined by ": " (as `{:#}`), with the options a
    /// refusal advises spelled as `spelling` spells them.
    pub fn message(&self, spelling: Spelling) -> String {
        let root = match self.cause::<Refused>() {
            Some(r) => vec![r.render(spelling)],
            None => self.causes(),
        };
        self.context
            .iter()
            .rev()
            .cloned()
            .chain(root)
            .collect::<Vec<_>>()
            .join(": ")
    }

    /// The messages from the outermost context to the root cause.
    pub fn messages(&self) -> impl Iterator<Item = String> + '_ {
        self.context.iter().rev().cloned().chain(self.causes())
    }

    /// The cause's message and its sources'.
    fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&*self.cause);
        while let Some(e) = next {
            out.push(e.to_string());
            next = e.source();
        }
        out
    }
}

impl std::fmt::Display for Error {
    /// The outermost message; `{:#}` gives the whole chain joined by ": ".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            f.write_str(&self.messages().collect::<Vec<_>>().join(": "))
        } else {
            match self.context.last() {
                Some(c) => f.write_str(c),
                None => write!(f, "{}", self.cause),
            }
        }
    }
}

impl std::error::Error for Error {
    /// The typed cause (the context messages are not errors of their own).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.context.is_empty() {
            true => self.cause.source(),
            false => Some(&*self.cause),
        }
    }
}

/// Context messages on a result or an option, as the work climbs: the
/// error keeps its kind; `None` becomes a [`ErrorKind::Compute`] error.
pub trait Context<T> {
    /// Adds `message` to the error.
    fn context(self, message: impl std::fmt::Display) -> Result<T>;
    /// Adds the message `f` makes, only on error.
    fn with_context<M: std::fmt::Display>(self, f: impl FnOnce() -> M) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, message: impl std::fmt::Display) -> Result<T> {
        self.map_err(|e| e.into().context(message))
    }

    fn with_context<M: std::fmt::Display>(self, f: impl FnOnce() -> M) -> Result<T> {
        self.map_err(|e| e.into().context(f()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, message: impl std::fmt::Display) -> Result<T> {
        self.ok_or_else(|| Error::compute(message.to_string()))
    }

    fn with_context<M: std::fmt::Display>(self, f: impl FnOnce() -> M) -> Result<T> {
        self.ok_or_else(|| Error::compute(f().to_string()))
    }
}

/// A library result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
