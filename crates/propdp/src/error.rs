//! The library's one error: every capability of [`crate`] (run, validate,
//! tune, merge, privacy, figures) returns [`Error`], whose [`ErrorKind`]
//! says what went wrong and, for a bad config or argument, which field —
//! so the command line and the Python package report it without
//! inspecting its cause (OpenDP's and argmin's single error is the model).
//!
//! Inside the library, work is written with `anyhow` and its context
//! messages; the kind is read once, here, from the first typed cause in
//! the chain.

use crate::progress::Cancelled;
use propdp_core::ConfigError;
use propdp_core::record::ReadError;

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
    /// The data do not support a valid interval ([`crate::inference::Refusal`]
    /// says why, [`Error::refusal`] gives it).
    Refused,
    /// A computation could not deliver (no convergence, no solution, a
    /// damaged record): the message has the parameter values.
    Compute,
    /// A large allocation (the rows of a fit) failed ([`OutOfMemory`]):
    /// nothing was computed; Python raises `MemoryError`.
    Memory,
}

/// A library error: its kind, the field at fault (config and argument
/// errors) and the chain of messages.
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
    inner: anyhow::Error,
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The config field (`algorithm.sigma`) or query argument (`epsilon`)
    /// at fault, for [`ErrorKind::Config`] and [`ErrorKind::Argument`].
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// The privacy query's argument at fault, for a front end that spells
    /// arguments its own way ([`Argument::keyword`] for Python).
    pub fn argument(&self) -> Option<&Argument> {
        self.inner.chain().find_map(|c| c.downcast_ref::<Argument>())
    }

    /// Why an inference was refused, for [`ErrorKind::Refused`].
    pub fn refusal(&self) -> Option<&crate::inference::refusal::Refusal> {
        self.inner.chain().find_map(|c| c.downcast_ref())
    }

    /// The whole chain joined by ": " (as `{:#}`), with the options a
    /// refusal advises spelled as `spelling` spells them.
    pub fn message(&self, spelling: Spelling) -> String {
        let parts: Vec<String> = self
            .inner
            .chain()
            .map(|c| match c.downcast_ref::<Refused>() {
                Some(r) => r.render(spelling),
                None => c.to_string(),
            })
            .collect();
        parts.join(": ")
    }

    /// The messages from the outermost context to the root cause.
    pub fn messages(&self) -> impl Iterator<Item = String> + '_ {
        self.inner.chain().map(|c| c.to_string())
    }
}

impl From<anyhow::Error> for Error {
    fn from(inner: anyhow::Error) -> Self {
        let (kind, field) = classify(&inner);
        Error { kind, field, inner }
    }
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Self {
        anyhow::Error::new(r).into()
    }
}

impl From<crate::inference::refusal::Refusal> for Error {
    fn from(r: crate::inference::refusal::Refusal) -> Self {
        anyhow::Error::new(r).into()
    }
}

impl From<Argument> for Error {
    fn from(a: Argument) -> Self {
        anyhow::Error::new(a).into()
    }
}

/// The kind and field of the first typed cause in the chain.
fn classify(e: &anyhow::Error) -> (ErrorKind, Option<String>) {
    for cause in e.chain() {
        if let Some(c) = cause.downcast_ref::<ConfigError>() {
            return (ErrorKind::Config, c.field().map(str::to_string));
        }
        if let Some(a) = cause.downcast_ref::<Argument>() {
            return (ErrorKind::Argument, Some(a.argument.to_string()));
        }
        if cause.is::<crate::inference::refusal::Refusal>() {
            return (ErrorKind::Refused, None);
        }
        if cause.is::<Refused>() {
            return (ErrorKind::Directory, None);
        }
        if cause.is::<OutOfMemory>() {
            return (ErrorKind::Memory, None);
        }
        if cause.is::<Cancelled>() || is_cancelled(cause) {
            return (ErrorKind::Cancelled, None);
        }
        if cause.is::<std::io::Error>() || matches!(cause.downcast_ref(), Some(ReadError::Io { .. })) {
            return (ErrorKind::Io, None);
        }
    }
    (ErrorKind::Compute, None)
}

/// A DMFT solve stopped by the caller.
fn is_cancelled(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        cause.downcast_ref::<propdp_theory::dynamics::DmftError>(),
        Some(propdp_theory::dynamics::DmftError::Cancelled { .. })
    )
}

impl std::fmt::Display for Error {
    /// The outermost message; `{:#}` gives the whole chain joined by ": ".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            write!(f, "{:#}", self.inner)
        } else {
            write!(f, "{}", self.inner)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.chain().nth(1)
    }
}

/// A refused query, naming its argument (and another it conflicts with):
/// `argument` is the key (`huber_m`, `delta_priv`), shown as the command
/// line's flag (`--huber-m`, [`Argument`]'s `Display`) or the Python keyword
/// ([`Argument::keyword`]); `text` follows it (`" = 2 is invalid: allowed
/// 0 < δ < 1"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    /// The argument's key, snake_case.
    pub argument: &'static str,
    /// A second argument the first conflicts with.
    pub also: Option<&'static str>,
    /// What is wrong, to follow the argument's name.
    pub text: String,
}

impl Argument {
    pub(crate) fn new(argument: &'static str, text: String) -> Self {
        Argument {
            argument,
            also: None,
            text,
        }
    }

    pub(crate) fn both(argument: &'static str, also: &'static str, text: String) -> Self {
        Argument {
            argument,
            also: Some(also),
            text,
        }
    }

    /// The message with the arguments spelled as `spell` spells a key.
    fn render(&self, spell: impl Fn(&str) -> String) -> String {
        match self.also {
            Some(also) => format!("{} and {}{}", spell(self.argument), spell(also), self.text),
            None => format!("{}{}", spell(self.argument), self.text),
        }
    }

    /// The message with Python's keyword spellings (`lambda_`, `huber_m`,
    /// and the data `X` and labels `y`).
    pub fn keyword(&self) -> String {
        self.render(python_name)
    }

    /// The argument as Python names it ([`Argument::keyword`]'s spelling):
    /// the field of the Python `ConfigError`.
    pub fn python_name(&self) -> String {
        python_name(self.argument)
    }
}

/// A key as Python spells it: the data's rows and labels are the arrays
/// `X` and `y` (the command line's `DATA` and `--label` column), the rest
/// keywords ([`propdp_core::parameters::python_keyword`]).
fn python_name(key: &str) -> String {
    match key {
        "data" => "X".into(),
        "label" => "y".into(),
        k => propdp_core::parameters::python_keyword(k),
    }
}

/// A key as the command line spells it: the data's rows and labels are
/// the file `DATA` and its `--label` column (Python's `X` and `y`), the
/// rest flags (`--huber-m`).
fn flag_name(key: &str) -> String {
    match key {
        "data" | "X" => "DATA".into(),
        "y" => "the --label column".into(),
        k => format!("--{}", k.replace('_', "-")),
    }
}

impl std::fmt::Display for Argument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(flag_name))
    }
}

impl std::error::Error for Argument {}

/// A run directory that cannot be used as asked — in use, not propdp's,
/// written by another config or shard, holding a record this run would not
/// write, or existing when neither resume nor overwrite was asked — with
/// what to do instead. Nothing was touched.
///
/// The advice names options of the run, which each front end spells its
/// own way ([`Spelling`]); `Display` gives the command line's.
///
/// ```
/// use propdp::error::{Advice, Refused, Spelling};
/// let r = Refused::new("out exists: ", Some(Advice::ResumeOrOverwrite));
/// assert_eq!(r.to_string(), "out exists: pass --resume to finish that run or --overwrite to start over");
/// assert_eq!(
///     r.render(Spelling::Keywords),
///     "out exists: pass resume=True to finish that run or overwrite=True to start over"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// What was found, up to the advice.
    pub what: String,
    /// What to do instead.
    pub advice: Option<Advice>,
}

impl Refused {
    /// A refusal: what was found, then the advice.
    pub fn new(what: impl Into<String>, advice: Option<Advice>) -> Self {
        Refused {
            what: what.into(),
            advice,
        }
    }

    /// The message with the run's options spelled as `spelling` spells them.
    pub fn render(&self, spelling: Spelling) -> String {
        match self.advice {
            Some(a) => format!("{}{}", self.what, a.render(spelling)),
            None => self.what.clone(),
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Spelling::Flags))
    }
}

impl std::error::Error for Refused {}

/// What a [`Refused`] run directory advises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// "use another --out".
    OtherOut,
    /// "choose another --out".
    ChooseOtherOut,
    /// "wait for it to finish or use another --out".
    WaitOrOtherOut,
    /// "create the target or use another --out".
    CreateTargetOrOtherOut,
    /// "pass --resume to finish that run or --overwrite to start over".
    ResumeOrOverwrite,
    /// "use --overwrite or another --out".
    OverwriteOrOtherOut,
    /// "finish it with --resume".
    FinishWithResume,
}

impl Advice {
    /// The advice with the run's options spelled as `spelling` spells them.
    pub fn render(self, spelling: Spelling) -> String {
        let (resume, overwrite, out) = match spelling {
            Spelling::Flags => ("--resume", "--overwrite", "another --out"),
            Spelling::Keywords => ("resume=True", "overwrite=True", "another out directory"),
        };
        match self {
            Advice::OtherOut => format!("use {out}"),
            Advice::ChooseOtherOut => format!("choose {out}"),
            Advice::WaitOrOtherOut => format!("wait for it to finish or use {out}"),
            Advice::CreateTargetOrOtherOut => format!("create the target or use {out}"),
            Advice::ResumeOrOverwrite => format!("pass {resume} to finish that run or {overwrite} to start over"),
            Advice::OverwriteOrOtherOut => format!("use {overwrite} or {out}"),
            Advice::FinishWithResume => format!("finish it with {resume}"),
        }
    }
}

/// A large allocation that failed — the copy of a fit's rows, asked for
/// with `try_reserve_exact` before any work — instead of an abort of the
/// process: `what` was to hold `values` float64 values.
///
/// ```
/// let e = propdp::error::reserve::<f64>(usize::MAX / 16, "the rows").unwrap_err();
/// assert!(e.to_string().starts_with("the rows need "), "{e}");
/// assert_eq!(propdp::Error::from(e).kind(), propdp::ErrorKind::Memory);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfMemory {
    /// What the allocation was for.
    pub what: String,
    /// Its size in bytes (beyond `usize` where it overflowed).
    pub bytes: u128,
}

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} need {} bytes ({:.3} GB), which could not be allocated: nothing was computed; free memory or \
             use fewer rows",
            self.what,
            self.bytes,
            self.bytes as f64 / 1e9
        )
    }
}

impl std::error::Error for OutOfMemory {}

impl From<OutOfMemory> for Error {
    fn from(e: OutOfMemory) -> Self {
        anyhow::Error::new(e).into()
    }
}

/// An empty vector with room for `len` values, or [`OutOfMemory`] naming
/// `what` when the allocator refuses (`Vec::try_reserve_exact`: no abort).
pub fn reserve<T>(len: usize, what: &str) -> std::result::Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| OutOfMemory {
        what: what.to_string(),
        bytes: len as u128 * std::mem::size_of::<T>() as u128,
    })?;
    Ok(v)
}

/// How a front end spells the options of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// The command line's flags: `--resume`, `--overwrite`, `--out`.
    Flags,
    /// Python's keyword arguments: `resume=True`, `overwrite=True`, `out`.
    Keywords,
}

/// A library result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
