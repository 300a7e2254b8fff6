//! What every command prints: cargo-style status words, step lines and warnings, and
//! the `--json` reports; `--color`, `NO_COLOR`, `--quiet` and `--verbose` apply here.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use crate::dataflow::{Status, StepReport};

static QUIET: AtomicBool = AtomicBool::new(false);
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// When to colour the output (`--color`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (or `CLICOLOR_FORCE` forces it).
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Sets the output options for the rest of the process.
pub fn configure(color: ColorWhen, quiet: bool, verbose: bool) {
    let choice = match color {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    QUIET.store(quiet, Ordering::Relaxed);
    crate::progress::set_quiet(quiet);
    VERBOSE.store(verbose, Ordering::Relaxed);
}

/// `--quiet`: only warnings, errors and what was asked for.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `--verbose`: every step with the reason it ran.
pub fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

pub use crate::progress::paint;

/// Whether a step is one game file's parse: many of them, so fresh ones are counted
/// instead of listed.
pub fn is_file_step(id: &str) -> bool {
    id.starts_with("games:") && id.matches(':').count() >= 2
}

/// Prints one step line (and, when explaining or stale, why it ran).
pub fn print_step(report: &StepReport, explain: bool) {
    let explain = explain || verbose();
    if quiet() || (report.status == Status::Fresh && is_file_step(&report.id) && !explain) {
        return;
    }
    let (word, color) = match report.status {
        Status::Fresh => ("Fresh", "32"),
        Status::Built => ("Building", "32"),
        Status::Restored => ("Restored", "36"),
        Status::Stale => ("Stale", "33"),
    };
    let mut line = format!("{} {}", paint(word, color), report.id);
    if !report.summary.is_empty() {
        line.push_str(&format!(" ({})", report.summary));
    }
    if report.warnings > 0 {
        line.push_str(&format!(", {} warnings", report.warnings));
    }
    if report.status == Status::Built {
        line.push_str(&format!(" in {:.2}s", report.elapsed.as_secs_f64()));
    }
    crate::progress::println(&line);
    if let Some(reason) = &report.reason
        && (explain || report.status == Status::Stale)
    {
        crate::progress::println(&format!("{:>12} because {reason}", ""));
    }
}

/// Prints warnings grouped by kind: the first few of each in full, then a count.
pub fn print_warnings(warnings: &[crate::diagnostics::Warning]) {
    const SHOWN: usize = 5;
    let mut kinds: Vec<&str> = warnings.iter().map(|w| w.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let of_kind: Vec<_> = warnings.iter().filter(|w| w.kind == kind).collect();
        if of_kind[0].is_note() {
            if quiet() {
                continue;
            }
            eprintln!(
                "{} [{kind}] {} lines (first: {})",
                paint("note", "36"),
                of_kind.len(),
                of_kind[0]
            );
            continue;
        }
        for w in of_kind.iter().take(SHOWN) {
            eprintln!("{} [{kind}] {w}", paint("warning", "33"));
        }
        if of_kind.len() > SHOWN {
            eprintln!("{} [{kind}] … and {} more", paint("warning", "33"), of_kind.len() - SHOWN);
        }
    }
}

/// A step report as JSON (for `--json`).
pub fn step_json(report: &StepReport) -> serde_json::Value {
    let status = match report.status {
        Status::Fresh => "fresh",
        Status::Built => "built",
        Status::Restored => "restored",
        Status::Stale => "stale",
    };
    json!({
        "id": report.id,
        "status": status,
        "summary": report.summary,
        "warnings": report.warnings,
        "elapsed_ms": report.elapsed.as_secs_f64() * 1000.0,
        "reason": report.reason,
    })
}

/// Prints `value` on stdout, pretty.
pub fn print_json(value: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON values serialize"));
}

/// Makes a closed stdout (`okb query … | head`) end the process quietly with success,
/// as coreutils do, instead of a panic from `println!`: Rust ignores SIGPIPE, so the
/// write fails with `BrokenPipe` and `println!` panics with that message.
pub fn end_quietly_on_closed_stdout() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied());
        if message
            .is_some_and(|m| m.contains("failed printing to stdout") && m.contains("Broken pipe"))
        {
            std::process::exit(0);
        }
        previous(info);
    }));
}

/// Whether an error is a write to a closed stdout (a reader such as `head` went away).
pub fn is_closed_stdout(report: &miette::Report) -> bool {
    report.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.to_string().contains("Broken pipe")
    })
}
