//! What every command prints: cargo-style status words, step lines and warnings.

use std::io::IsTerminal;

use crate::dataflow::{Status, StepReport};

/// A status word right-aligned in 12 columns, bold and coloured on a terminal.
pub fn paint(status: &str, color: &str) -> String {
    if std::io::stderr().is_terminal() {
        format!("\x1b[1;{color}m{status:>12}\x1b[0m")
    } else {
        format!("{status:>12}")
    }
}

/// Whether a step is one game file's parse: many of them, so fresh ones are counted
/// instead of listed.
pub fn is_file_step(id: &str) -> bool {
    id.starts_with("games:") && id.matches(':').count() >= 2
}

/// Prints one step line (and, when explaining or stale, why it ran).
pub fn print_step(report: &StepReport, explain: bool) {
    if report.status == Status::Fresh && is_file_step(&report.id) && !explain {
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
        && (explain || report.status == Status::Stale) {
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
            eprintln!("{} [{kind}] {} lines (first: {})", paint("note", "36"), of_kind.len(), of_kind[0]);
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
