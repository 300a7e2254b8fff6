//! `okb status`: which steps are stale and why, without building.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::output::{is_file_step, paint, print_json, print_step, step_json};
use crate::dataflow::timings::{Estimate, Timings, spoken};
use crate::dataflow::{Status, StepReport};
use crate::make::{self, MakeOptions};
use crate::pipeline::{Loaded, SourceKind};

/// Arguments of `okb status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// Mirror folders, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Print a JSON report on stdout instead of lines on stderr.
    #[arg(long)]
    pub json: bool,
}

/// Each source's freshness: when its bytes were fetched, from where, and what upstream
/// said (from the records beside the store; nothing is asked of the network).
fn freshness(loaded: &Loaded) -> Vec<(String, Vec<String>)> {
    let store = loaded.path("sources");
    let record = |hash: &str| crate::sources::fetched::read(&store, hash);
    let mut all = Vec::new();
    for (name, spec) in &loaded.pipeline.sources {
        let lines = if spec.kind() == SourceKind::LichessDb {
            spec.lichess_db(name)
                .map(|db| crate::sources::lichess_db::freshness(&db, &store))
                .unwrap_or_default()
        } else if let Some(manifest) = spec.manifest() {
            let entries = std::fs::read_to_string(loaded.path(manifest))
                .ok()
                .and_then(|t| crate::sources::collection::parse(&t, manifest).ok())
                .unwrap_or_default();
            let records: Vec<_> = entries.iter().filter_map(|e| record(&e.blake3)).collect();
            match records.iter().max_by_key(|r| r.fetched_at) {
                Some(latest) => vec![format!(
                    "{} of {} files fetched; the latest {}",
                    records.len(),
                    entries.len(),
                    latest.describe()
                )],
                None => vec![format!("{} files, none fetched yet", entries.len())],
            }
        } else if let Some(pin) = spec.blake3().filter(|_| spec.kind().is_pinned_file()) {
            vec![record(pin).map_or_else(
                || "no fetch record (a local file, or fetched by an older okb)".into(),
                |r| r.describe(),
            )]
        } else {
            continue;
        };
        all.push((name.clone(), lines));
    }
    all
}

/// Runs `okb status`: exit status 0 either way (a stale build is not an error).
pub fn run(args: &StatusArgs, loaded: &Loaded) -> miette::Result<ExitCode> {
    let options = MakeOptions {
        mirrors: crate::sources::mirrors(&args.mirror),
        offline: true,
        dry_run: true,
        replay_warnings: false,
    };
    // Nothing is printed while the steps are checked: the verdict comes first.
    let summary = make::make(loaded, &options, |_| {})?;
    let stale = summary.steps.iter().filter(|s| s.status == Status::Stale).count();
    let estimate = Timings::load(&loaded.layout().cache).estimate(
        summary.steps.iter().filter(|s| s.status == Status::Stale).map(|s| s.id.as_str()),
    );
    let sources = freshness(loaded);
    if args.json {
        print_json(&json!({
            "up_to_date": stale == 0,
            "stale": stale,
            "estimate": {
                "seconds": estimate.total.as_secs_f64(),
                "timed": estimate.timed,
                "inferred": estimate.inferred,
                "unknown": estimate.unknown,
            },
            "notes": summary.notes,
            "steps": summary.steps.iter().map(step_json).collect::<Vec<_>>(),
            "sources": sources.iter().map(|(name, lines)| (name.clone(), json!(lines))).collect::<serde_json::Map<_, _>>(),
        }));
        return Ok(ExitCode::SUCCESS);
    }
    if stale == 0 {
        eprintln!("{} everything is up to date", paint("Fresh", "32"));
    } else {
        eprintln!(
            "{} {stale} of {} steps would run; `okb make` builds them{}",
            paint("Stale", "33"),
            summary.steps.len(),
            said_estimate(&estimate)
        );
    }
    for note in &summary.notes {
        eprintln!("{:>12} {note}", paint("Note", "36"));
    }
    print_steps(&summary.steps);
    for (name, lines) in &sources {
        for line in lines {
            eprintln!("{:>12} {name} {line}", paint("Source", "36"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// ` (about 12 min by the last runs' times; …)`, or nothing when no step was timed.
fn said_estimate(estimate: &Estimate) -> String {
    if estimate.timed + estimate.inferred == 0 {
        return String::new();
    }
    let mut notes = Vec::new();
    if estimate.inferred > 0 {
        notes.push(format!("{} new, timed by their source's other files", estimate.inferred));
    }
    if estimate.unknown > 0 {
        notes.push(format!("{} never run, not counted", estimate.unknown));
    }
    let notes: String = notes.iter().map(|n| format!("; {n}")).collect();
    format!(" (about {} by the last runs' times{notes})", spoken(estimate.total))
}

/// Every step with why it would run, except fresh game files, which are counted per
/// source (a collection has hundreds: a line each would bury the stale ones).
fn print_steps(steps: &[StepReport]) {
    let mut fresh_files: BTreeMap<&str, usize> = BTreeMap::new();
    for step in steps {
        if step.status == Status::Fresh && is_file_step(&step.id) {
            let source = step.id.split(':').nth(1).unwrap_or_default();
            *fresh_files.entry(source).or_default() += 1;
        } else {
            print_step(step, true);
        }
    }
    for (source, files) in fresh_files.into_iter().filter(|_| !super::output::quiet()) {
        let noun = if files == 1 { "file" } else { "files" };
        eprintln!("{} games:{source} ({files} game {noun}, each fresh)", paint("Fresh", "32"));
    }
}
