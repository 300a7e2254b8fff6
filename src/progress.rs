//! Progress bars on long phases, drawn on stderr only when it is a terminal.
//!
//! One bar at a time; while it is shown, status lines go through [`println()`] so they
//! print above the bar instead of through it.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Removes the bar when dropped.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// Moves the bar to `position`.
    pub fn set(&self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    /// Changes the bar's length (when the work turns out smaller, e.g. cache hits).
    pub fn set_length(&self, len: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(len);
        }
    }

    /// Changes the text after the counts.
    pub fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// Advances the bar by `n`.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
            *ACTIVE.lock().expect("progress poisoned") = None;
        }
    }
}

/// Starts a bar of `len` units labelled `what` (e.g. "game files"); a no-op when stderr
/// is not a terminal or `len` is small.
pub fn start(len: u64, what: &str) -> Bar {
    if len < 2 || !std::io::stderr().is_terminal() {
        return Bar { bar: None };
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12.cyan.bold} [{bar:30}] {pos}/{len} {msg} ({per_sec}, ETA {eta})")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_prefix("Building");
    bar.set_message(what.to_string());
    *ACTIVE.lock().expect("progress poisoned") = Some(bar.clone());
    Bar { bar: Some(bar) }
}

/// Prints a status line on stderr, above the active bar if there is one.
pub fn println(line: &str) {
    match ACTIVE.lock().expect("progress poisoned").as_ref() {
        Some(bar) => bar.println(line),
        None => eprintln!("{line}"),
    }
}
