//! The command line's [`Progress`]: on a terminal an indicatif bar per
//! stage, with the time left; off a terminal (a log file, a batch job) lines
//! on stderr — when a stage begins, as units finish (at most one per
//! [`UNIT_LINE`]), at least every [`HEARTBEAT`] while work goes on, and when
//! it ends. The time left comes from the library's cost model when the
//! stage tells its work ([`Progress::work`]), corrected by the measured pace
//! ([`propdp::progress::time_left`]); otherwise from the units done.

use std::io::IsTerminal;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use propdp::Progress;
use propdp::progress::{duration, time_left};

/// Off a terminal: the longest silence while a stage runs.
const HEARTBEAT: Duration = Duration::from_secs(30);
/// Off a terminal: the shortest gap between two lines of finished units
/// (a stage of many quick units prints a line per this, not per unit).
const UNIT_LINE: Duration = Duration::from_secs(5);
/// How often the ticker wakes (to refresh the bar's time left, or to see
/// whether the heartbeat is due).
const TICK: Duration = Duration::from_secs(1);

/// Progress on stderr: a bar on a terminal, lines otherwise.
pub struct Bar {
    state: Arc<Mutex<State>>,
    /// The ticker of the running stage, and the sender that stops it.
    ticker: Mutex<Option<(Sender<()>, JoinHandle<()>)>>,
}

impl Default for Bar {
    fn default() -> Self {
        Bar::new(std::io::stderr().is_terminal())
    }
}

/// What the bar knows of the running stage.
struct State {
    terminal: bool,
    bar: Option<ProgressBar>,
    stage: String,
    total: u64,
    pos: u64,
    start: Instant,
    /// Estimated seconds of work done and in all, when the stage tells them.
    work: Option<(f64, f64)>,
    detail: String,
    /// When the last line was printed (off a terminal).
    last_line: Instant,
    /// Off a terminal: the stage's first line is printed (it waits a tick
    /// for the stage's estimated work, which comes just after it begins).
    announced: bool,
    running: bool,
}

impl State {
    /// The time left, when there is anything to go on.
    fn left(&self) -> Option<f64> {
        let elapsed = self.start.elapsed().as_secs_f64();
        match self.work {
            Some((done, total)) => Some(time_left(done, total, elapsed)),
            None if self.pos > 0 => Some(elapsed * (self.total.saturating_sub(self.pos)) as f64 / self.pos as f64),
            None => None,
        }
    }

    /// The stage's line: "tune: 3/9 done, about 14 min left; cell 4: …".
    fn line(&self) -> String {
        let mut line = format!("{}: {}/{} done", self.stage, self.pos, self.total);
        if let Some(left) = self.left() {
            line += &format!(", about {} left", duration(left));
        }
        if !self.detail.is_empty() {
            line += &format!("; {}", self.detail);
        }
        line
    }

    /// Print the stage's line (off a terminal), or refresh the bar's time left.
    fn show(&mut self) {
        if let Some(b) = &self.bar {
            b.set_prefix(
                self.left()
                    .map_or("time left unknown".into(), |s| format!("about {} left", duration(s))),
            );
        } else if !self.terminal && self.running {
            eprintln!("{}", self.line());
            self.last_line = Instant::now();
            self.announced = true;
        }
    }
}

impl Bar {
    /// A bar drawn on a terminal (`terminal`), or printed as lines.
    pub fn new(terminal: bool) -> Self {
        let now = Instant::now();
        Bar {
            state: Arc::new(Mutex::new(State {
                terminal,
                bar: None,
                stage: String::new(),
                total: 0,
                pos: 0,
                start: now,
                work: None,
                detail: String::new(),
                last_line: now,
                announced: false,
                running: false,
            })),
            ticker: Mutex::new(None),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("progress state lock")
    }

    /// Stop the running stage's ticker, if any.
    fn stop_ticker(&self) {
        if let Some((stop, handle)) = self.ticker.lock().expect("ticker lock").take() {
            let _ = stop.send(());
            let _ = handle.join();
        }
    }
}

/// Wake every [`TICK`] until told to stop: refresh the bar, or print the
/// stage's line when nothing was printed for [`HEARTBEAT`].
fn tick(state: Arc<Mutex<State>>, stop: Receiver<()>) {
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(TICK) {
        let mut s = state.lock().expect("progress state lock");
        if s.bar.is_some() || !s.announced || s.last_line.elapsed() >= HEARTBEAT {
            s.show();
        }
    }
}

impl Progress for Bar {
    fn begin(&self, stage: &str, total: u64) {
        self.stop_ticker();
        {
            let mut s = self.state();
            let now = Instant::now();
            (s.stage, s.total, s.pos, s.start, s.work, s.running) = (stage.into(), total, 0, now, None, true);
            s.announced = false;
            s.detail.clear();
            if s.terminal {
                let bar = ProgressBar::new(total);
                bar.set_style(
                    ProgressStyle::with_template(&format!(
                        "{{spinner}} {stage} [{{bar:40}}] {{pos}}/{{len}} ({{prefix}}) {{msg}}"
                    ))
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                s.bar = Some(bar);
                s.show();
            }
        }
        let (tx, rx) = channel();
        let state = Arc::clone(&self.state);
        *self.ticker.lock().expect("ticker lock") = Some((tx, std::thread::spawn(move || tick(state, rx))));
    }

    fn advance(&self, n: u64) {
        let mut s = self.state();
        s.pos += n;
        if let Some(b) = &s.bar {
            b.inc(n);
        }
        if s.bar.is_some() || !s.announced || s.last_line.elapsed() >= UNIT_LINE || s.pos >= s.total {
            s.show();
        }
    }

    fn work(&self, done: f64, total: f64) {
        let mut s = self.state();
        s.work = Some((done, total));
        if s.bar.is_some() || !s.announced {
            s.show();
        }
    }

    fn message(&self, text: &str) {
        let s = self.state();
        match &s.bar {
            Some(b) => b.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    fn detail(&self, text: &str) {
        let mut s = self.state();
        s.detail = text.to_string();
        if let Some(b) = &s.bar {
            b.set_message(text.to_string());
        }
    }

    fn end(&self) {
        self.stop_ticker();
        let mut s = self.state();
        if let Some(b) = s.bar.take() {
            b.finish_and_clear();
        } else if !s.terminal && s.running {
            eprintln!(
                "{}: {}/{} done in {}",
                s.stage,
                s.pos,
                s.total,
                duration(s.start.elapsed().as_secs_f64())
            );
        }
        s.running = false;
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop_ticker();
    }
}
