//! `okb status`: which steps are stale and why, without building.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::output::{paint, print_json, print_step, step_json};
use crate::dataflow::Status;
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
            spec.lichess_db(name).map(|db| crate::sources::lichess_db::freshness(&db, &store)).unwrap_or_default()
        } else if let Some(manifest) = spec.manifest() {
            let entries = std::fs::read_to_string(loaded.path(manifest)).ok().and_then(|t| crate::sources::collection::parse(&t, manifest).ok()).unwrap_or_default();
            let records: Vec<_> = entries.iter().filter_map(|e| record(&e.blake3)).collect();
            match records.iter().max_by_key(|r| r.fetched_at) {
                Some(latest) => vec![format!("{} of {} files fetched; the latest {}", records.len(), entries.len(), latest.describe())],
                None => vec![format!("{} files, none fetched yet", entries.len())],
            }
        } else if let Some(pin) = spec.blake3().filter(|_| spec.kind().is_pinned_file()) {
            vec![record(pin).map_or_else(|| "no fetch record (a local file, or fetched by an older okb)".into(), |r| r.describe())]
        } else {
            continue;
        };
        all.push((name.clone(), lines));
    }
    all
}

/// Runs `okb status`: exit status 0 either way (a stale build is not an error).
pub fn run(args: &StatusArgs, loaded: &Loaded) -> miette::Result<ExitCode> {
    let options = MakeOptions { mirrors: crate::sources::mirrors(&args.mirror), offline: true, dry_run: true, replay_warnings: false };
    let json = args.json;
    let summary = make::make(loaded, &options, move |r| {
        if !json {
            print_step(r, true)
        }
    })?;
    let stale = summary.steps.iter().filter(|s| s.status == Status::Stale).count();
    let sources = freshness(loaded);
    if json {
        print_json(&json!({
            "up_to_date": stale == 0,
            "stale": stale,
            "steps": summary.steps.iter().map(step_json).collect::<Vec<_>>(),
            "sources": sources.iter().map(|(name, lines)| (name.clone(), json!(lines))).collect::<serde_json::Map<_, _>>(),
        }));
        return Ok(ExitCode::SUCCESS);
    }
    for (name, lines) in &sources {
        for line in lines {
            eprintln!("{:>12} {name} {line}", paint("Source", "36"));
        }
    }
    if stale == 0 {
        eprintln!("{} everything is up to date", paint("Fresh", "32"));
    } else {
        eprintln!("{} {stale} of {} steps would run; `okb make` builds them", paint("Stale", "33"), summary.steps.len());
    }
    Ok(ExitCode::SUCCESS)
}
