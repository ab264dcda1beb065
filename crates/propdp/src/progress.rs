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
    /// The stage's estimated work, in estimated seconds of wall time on this
    /// machine (the cost model of [`crate::shard`] and tune): `done` of
    /// `total`, told when it changes (cells finished, runs solved), so the
    /// caller can estimate the time left ([`time_left`]); nothing by
    /// default. A stage that never tells its work is counted in units.
    fn work(&self, _done: f64, _total: f64) {}
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

/// The time left of a stage, in seconds: the cost model's estimate of the
/// work remaining (`total − done`, estimated seconds), scaled by the pace
/// measured so far — `elapsed` seconds for `done` estimated ones — with the
/// model's own pace weighted as a quarter of the stage's estimated work, so
/// that the first, often unrepresentative, units cannot swing the estimate
/// by orders of magnitude, and the measured pace takes over as work is done.
///
/// ```
/// use propdp::progress::time_left;
/// // nothing done yet: the model's estimate
/// assert_eq!(time_left(0.0, 100.0, 0.0), 100.0);
/// // half done in half the estimated time: on schedule
/// assert!((time_left(50.0, 100.0, 50.0) - 50.0).abs() < 1e-9);
/// // half done in a fifth of the time: the model was pessimistic
/// assert!(time_left(50.0, 100.0, 10.0) < 25.0);
/// // a unit that finishes at once does not make the rest free
/// assert!(time_left(1.0, 100.0, 0.0) > 50.0);
/// ```
pub fn time_left(done: f64, total: f64, elapsed: f64) -> f64 {
    let (total, done, elapsed) = (total.max(0.0), done.clamp(0.0, total.max(0.0)), elapsed.max(0.0));
    let prior = 0.25 * total;
    if prior + done <= 0.0 {
        return 0.0;
    }
    (total - done) * (elapsed + prior) / (done + prior)
}

/// A duration for people: "40 s", "12 min", "3.4 h", "6 days".
///
/// ```
/// use propdp::progress::duration;
/// assert_eq!(duration(40.2), "40 s");
/// assert_eq!(duration(720.0), "12 min");
/// assert_eq!(duration(3.4 * 3600.0), "3.4 h");
/// assert_eq!(duration(6.0 * 86400.0), "6 days");
/// ```
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0);
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 90.0 * 60.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 48.0 * 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.0} days", s / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::time_left;

    /// Issue #59 item 5 (the bar read 0 s, 2 min, 17 h, 9 d, 80 y in one
    /// run): at a steady pace r (r seconds per estimated second) the time
    /// left lies between the model's remaining work and the remaining work
    /// at the measured pace, at every point of the stage — it can neither
    /// collapse to 0 after a quick first unit nor explode after a slow one.
    #[test]
    fn the_time_left_stays_between_the_model_and_the_measured_pace() {
        let total = 1000.0;
        for r in [0.01, 0.3, 1.0, 4.0, 100.0] {
            for k in 0..=100 {
                let done = total * k as f64 / 100.0;
                let left = time_left(done, total, r * done);
                let (model, measured) = (total - done, r * (total - done));
                assert!(
                    left >= model.min(measured) * (1.0 - 1e-12) && left <= model.max(measured) * (1.0 + 1e-12),
                    "r = {r}, done = {done}: {left} outside [{model}, {measured}]"
                );
            }
        }
        // a first unit that took no time leaves most of the model's estimate
        assert!(time_left(10.0, total, 0.0) > 0.9 * (total - 10.0) * 0.25 / 0.26);
        // a slow first unit (100× its estimate) does not multiply the rest by 100
        assert!(time_left(10.0, total, 1000.0) < 5.0 * total);
    }
}
