//! Progress of long work, reported to whoever called: the command line draws
//! a progress bar, the Python package a callback; the library draws none
//! (its only output of its own is the warning when resume drops a torn line).

/// Receives the progress of a run, a simulation or a search. Called from
/// several threads (simulation repetitions run in parallel).
pub trait Progress: Sync {
    /// A stage of `total` units begins (e.g. "theory", 120 points).
    fn begin(&self, stage: &str, total: u64);
    /// `n` more units are done.
    fn advance(&self, n: u64);
    /// A message for the user, e.g. a point that failed (the work goes on).
    fn message(&self, text: &str);
    /// What the current unit is doing, shown beside the stage's progress and
    /// replaced by the next (e.g. how far a long DP-SGD point's state
    /// evolution has come); nothing by default.
    fn detail(&self, _text: &str) {}
    /// The current stage is over.
    fn end(&self);
    /// True when the caller asks the work to stop (e.g. Ctrl-C in Python):
    /// runs and searches check it between points and stop, keeping what
    /// they wrote, with an error saying so.
    fn cancelled(&self) -> bool {
        false
    }
}

/// The error of work stopped because [`Progress::cancelled`] said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted; the records written so far are kept (resume to finish)")
    }
}

impl std::error::Error for Cancelled {}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn message(&self, _: &str) {}
    fn end(&self) {}
}
