//! `okb status`: which steps are stale and why, without building.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::output::{paint, print_json, print_step, step_json};
use crate::dataflow::Status;
use crate::make::{self, MakeOptions};
use crate::pipeline::Loaded;

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
    if json {
        print_json(&json!({
            "up_to_date": stale == 0,
            "stale": stale,
            "steps": summary.steps.iter().map(step_json).collect::<Vec<_>>(),
        }));
    } else if stale == 0 {
        eprintln!("{} everything is up to date", paint("Fresh", "32"));
    } else {
        eprintln!("{} {stale} of {} steps would run; `okb make` builds them", paint("Stale", "33"), summary.steps.len());
    }
    Ok(ExitCode::SUCCESS)
}
