//! The command line's [`Progress`]: an indicatif bar per stage on a
//! terminal (hidden otherwise), messages printed above it.

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use propdp::Progress;

/// Progress bars on stderr.
#[derive(Default)]
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress for Bar {
    fn begin(&self, stage: &str, total: u64) {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{spinner}} {stage} [{{bar:40}}] {{pos}}/{{len}} ({{eta}} left) {{msg}}"
            ))
            .expect("valid template")
            .progress_chars("=> "),
        );
        *self.bar.lock().expect("bar lock") = Some(bar);
    }

    fn advance(&self, n: u64) {
        if let Some(b) = self.bar.lock().expect("bar lock").as_ref() {
            b.inc(n);
        }
    }

    fn message(&self, text: &str) {
        match self.bar.lock().expect("bar lock").as_ref() {
            Some(b) => b.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    fn detail(&self, text: &str) {
        if let Some(b) = self.bar.lock().expect("bar lock").as_ref() {
            b.set_message(text.to_string());
        }
    }

    fn end(&self) {
        if let Some(b) = self.bar.lock().expect("bar lock").take() {
            b.finish_and_clear();
        }
    }
}
