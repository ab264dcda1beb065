//! Long work off the Python thread: the work runs on a worker thread while
//! the calling thread, with the GIL released between polls, forwards progress
//! events to a Python callback and checks for signals (Ctrl-C). A signal sets
//! the [`Progress::cancelled`] flag; the library stops between points,
//! keeping what it wrote, and the signal's exception (KeyboardInterrupt) is
//! raised once the worker has returned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use propdp::Progress;
use pyo3::prelude::*;

/// A progress event, as the Python callback receives it: `(event, stage, n)`.
enum Event {
    Begin(String, u64),
    Advance(u64),
    Message(String),
    End,
    /// The worker returned (wakes the calling thread at once).
    Finished,
}

/// The [`Progress`] the library sees: events go to the calling thread.
pub struct Bridge {
    events: Sender<Event>,
    cancel: AtomicBool,
}

impl Progress for Bridge {
    fn begin(&self, stage: &str, total: u64) {
        let _ = self.events.send(Event::Begin(stage.into(), total));
    }
    fn advance(&self, n: u64) {
        let _ = self.events.send(Event::Advance(n));
    }
    fn message(&self, text: &str) {
        let _ = self.events.send(Event::Message(text.into()));
    }
    fn end(&self) {
        let _ = self.events.send(Event::End);
    }
    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// How often the calling thread wakes to check for signals.
const POLL: Duration = Duration::from_millis(50);

/// Run `work` on a worker thread; forward its progress to `callback`
/// (called as `callback(event, text, n)` with event "begin" (text = stage,
/// n = total), "advance" (n units), "message" (text) or "end"); raise the
/// pending exception if a signal arrived or the callback raised.
pub fn blocking<T: Send>(
    py: Python<'_>,
    callback: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Bridge) -> propdp::Result<T> + Send,
) -> PyResult<propdp::Result<T>> {
    let (tx, mut rx) = channel();
    let bridge = Bridge {
        events: tx,
        cancel: AtomicBool::new(false),
    };
    let mut pending: Option<PyErr> = None;
    let result = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let r = work(&bridge);
            let _ = bridge.events.send(Event::Finished);
            r
        });
        loop {
            let (event, back) = py.detach(move || wait(rx));
            rx = back;
            match event {
                Ok(Event::Finished) | Err(RecvTimeoutError::Disconnected) => break,
                Ok(e) => {
                    if pending.is_none()
                        && let Some(cb) = callback
                        && let Err(err) = forward(cb, e)
                    {
                        pending = Some(err);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if pending.is_none()
                && let Err(err) = py.check_signals()
            {
                pending = Some(err);
            }
            if pending.is_some() {
                bridge.cancel.store(true, Ordering::Relaxed);
            }
        }
        worker.join()
    });
    if let Some(err) = pending {
        return Err(err);
    }
    match result {
        Ok(r) => Ok(r),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// The next event within [`POLL`] (run without the GIL); the receiver is
/// handed back because it cannot be shared across threads.
fn wait(rx: Receiver<Event>) -> (Result<Event, RecvTimeoutError>, Receiver<Event>) {
    let e = rx.recv_timeout(POLL);
    (e, rx)
}

fn forward(cb: &Bound<'_, PyAny>, event: Event) -> PyResult<()> {
    match event {
        Event::Begin(stage, total) => cb.call1(("begin", stage, total)),
        Event::Advance(n) => cb.call1(("advance", "", n)),
        Event::Message(text) => cb.call1(("message", text, 0u64)),
        Event::End => cb.call1(("end", "", 0u64)),
        Event::Finished => return Ok(()),
    }
    .map(|_| ())
}
