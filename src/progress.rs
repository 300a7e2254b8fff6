//! Progress on long work: a bar with an ETA on a terminal; when stderr is not a terminal
//! (CI logs, `2> file`), a line every 10 seconds (`OKB_PROGRESS_SECS`) naming what is
//! running, with counts and an ETA where the work has them.
//!
//! One bar at a time; while it is shown, status lines go through [`println()`] so they
//! print above the bar instead of through it.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Style};
use indicatif::{ProgressBar, ProgressStyle};

static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// `--quiet`: no bars, no periodic lines, no notes (set once by the command line).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets `--quiet` for the rest of the process: progress and notes are not shown, so
/// that only warnings, errors and what was asked for print.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Prints a note on stderr (`Note`, `Fetched`, `Crawled`: what happened on the way, not
/// a warning), under the status word `word` in cyan; nothing under `--quiet`.
pub fn note(word: &str, text: &str) {
    if !quiet() {
        println(&format!("{} {text}", paint(word, "36")));
    }
}

/// Prints a warning on stderr under a yellow `Warning`, `--quiet` or not.
pub fn warn(text: &str) {
    println(&format!("{} {text}", paint("Warning", "33")));
}

/// A status word right-aligned in 12 columns, bold and coloured when stderr takes colour
/// (a terminal, `NO_COLOR` unset, or `--color always`). `color` is an ANSI code: 32
/// green, 33 yellow, 36 cyan, 31 red.
pub fn paint(status: &str, color: &str) -> String {
    if anstream::AutoStream::choice(&std::io::stderr()) == anstream::ColorChoice::Never {
        return format!("{status:>12}");
    }
    let ansi = match color {
        "31" => AnsiColor::Red,
        "33" => AnsiColor::Yellow,
        "36" => AnsiColor::Cyan,
        _ => AnsiColor::Green,
    };
    let style = Style::new().bold().fg_color(Some(ansi.into()));
    format!("{style}{status:>12}{style:#}")
}

/// Removes the bar when dropped.
pub struct Bar {
    bar: Option<ProgressBar>,
    /// Without a terminal: the task whose counts the periodic lines show.
    task: Option<Task>,
}

/// Work under way, shown by the periodic lines.
struct Running {
    id: u64,
    label: String,
    started: Instant,
    /// Done, total, and a note (`2 failed`).
    counts: Option<(u64, u64, String)>,
}

static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());
static TICKER: std::sync::Once = std::sync::Once::new();

/// A piece of work listed by the periodic lines while it lives.
pub struct Task(u64);

impl Drop for Task {
    fn drop(&mut self) {
        RUNNING.lock().expect("progress poisoned").retain(|r| r.id != self.0);
    }
}

/// Whether progress goes to periodic lines (stderr is not a terminal), where work done
/// side by side can each report its own counts; on a terminal, one bar at a time.
pub fn periodic_lines() -> bool {
    !std::io::stderr().is_terminal()
}

/// Registers work named `label` for the periodic lines (only when stderr is not a
/// terminal; on a terminal, bars and step lines say enough).
pub fn task(label: &str) -> Option<Task> {
    if !periodic_lines() || quiet() {
        return None;
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    RUNNING.lock().expect("progress poisoned").push(Running {
        id,
        label: label.to_string(),
        started: Instant::now(),
        counts: None,
    });
    TICKER.call_once(|| {
        std::thread::spawn(tick);
    });
    Some(Task(id))
}

fn update(task: &Option<Task>, f: impl FnOnce(&mut (u64, u64, String))) {
    let Some(Task(id)) = task else { return };
    if let Some(r) = RUNNING.lock().expect("progress poisoned").iter_mut().find(|r| r.id == *id) {
        f(r.counts.get_or_insert_with(|| (0, 0, String::new())));
    }
}

/// Every interval, one line per piece of work that has run for at least that long.
fn tick() {
    let every = std::env::var("OKB_PROGRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(10.0);
    let every = Duration::from_secs_f64(every);
    loop {
        std::thread::sleep(every);
        let lines: Vec<String> = RUNNING
            .lock()
            .expect("progress poisoned")
            .iter()
            .filter(|r| r.started.elapsed() >= every)
            .map(line)
            .collect();
        for line in lines {
            eprintln!("{:>12} {line}", "Running");
        }
    }
}

/// `engine positions 120/4521 (2 failed), 3.1/s, ETA 24 min` or `tree for 12 s`.
fn line(r: &Running) -> String {
    let elapsed = r.started.elapsed();
    match &r.counts {
        Some((done, total, note)) if *total > 0 => {
            let rate = *done as f64 / elapsed.as_secs_f64().max(1e-3);
            let eta = if *done > 0 && done < total {
                format!(", ETA {}", human((total - done) as f64 / rate))
            } else {
                String::new()
            };
            // The note may already say what the work is (a bar's message on a terminal).
            let what = if note.is_empty() {
                r.label.clone()
            } else if note.starts_with(&r.label) {
                note.clone()
            } else {
                format!("{} ({note})", r.label)
            };
            format!("{what}: {done}/{total}, {rate:.1}/s{eta}")
        }
        _ => format!("{} for {}", r.label, human(elapsed.as_secs_f64())),
    }
}

fn human(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

impl Bar {
    /// Moves the bar to `position`.
    pub fn set(&self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
        update(&self.task, |c| c.0 = position);
    }

    /// Changes the bar's length (when the work turns out smaller, e.g. cache hits).
    pub fn set_length(&self, len: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(len);
        }
        update(&self.task, |c| c.1 = len);
    }

    /// Changes the text after the counts.
    pub fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.clone());
        }
        update(&self.task, |c| c.2 = message);
    }

    /// Advances the bar by `n`.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
        update(&self.task, |c| c.0 += n);
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
    if quiet() {
        return Bar { bar: None, task: None };
    }
    if periodic_lines() {
        let task = task(what);
        update(&task, |c| c.1 = len);
        return Bar { bar: None, task };
    }
    if len < 2 {
        return Bar { bar: None, task: None };
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>12.cyan.bold} [{bar:30}] {pos}/{len} {msg} ({per_sec}, ETA {eta})",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    bar.set_prefix("Building");
    bar.set_message(what.to_string());
    *ACTIVE.lock().expect("progress poisoned") = Some(bar.clone());
    Bar { bar: Some(bar), task: None }
}

/// Prints a status line on stderr, above the active bar if there is one.
pub fn println(line: &str) {
    match ACTIVE.lock().expect("progress poisoned").as_ref() {
        Some(bar) => bar.println(line),
        None => eprintln!("{line}"),
    }
}
