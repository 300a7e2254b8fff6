//! `okb status`: which steps are stale and why, without building.

use std::path::PathBuf;
use std::process::ExitCode;

use super::output::{paint, print_step};
use crate::dataflow::Status;
use crate::make::{self, MakeOptions};
use crate::pipeline::Loaded;

/// Arguments of `okb status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// Mirror folders, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
}

/// Runs `okb status`.
pub fn run(args: &StatusArgs, loaded: &Loaded) -> miette::Result<ExitCode> {
    let options = MakeOptions { mirrors: crate::sources::mirrors(&args.mirror), offline: true, dry_run: true };
    let summary = make::make(loaded, &options, |r| print_step(r, true))?;
    let stale = summary.steps.iter().filter(|s| s.status == Status::Stale).count();
    if stale == 0 {
        eprintln!("{} everything is up to date", paint("Fresh", "32"));
    } else {
        eprintln!("{} {stale} of {} steps would run", paint("Stale", "33"), summary.steps.len());
    }
    Ok(ExitCode::SUCCESS)
}
