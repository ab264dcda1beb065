//! The library's own causes: a refused argument ([`Argument`]), a refused
//! run directory ([`Refused`], with its [`Advice`] spelled per front end)
//! and a failed large allocation ([`OutOfMemory`]).

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
