//! `okb diff`: what changed in the knowledge base between two builds.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::output::print_json;
use crate::diff::{Snapshot, Thresholds, compare, render};
use crate::pipeline::Loaded;

/// `--min-delta` when not given (also what `okb make --diff` uses).
pub const DEFAULT_MIN_DELTA: f64 = 0.05;
/// `--limit` when not given (also what `okb make --diff` uses).
pub const DEFAULT_LIMIT: usize = 20;

/// Arguments of `okb diff`.
#[derive(Debug, Clone, clap::Args)]
pub struct DiffArgs {
    /// The old store (default: the project's store before the last make that changed it).
    #[arg(value_name = "OLD")]
    pub old: Option<PathBuf>,
    /// The new store (default: the project's store).
    #[arg(value_name = "NEW")]
    pub new: Option<PathBuf>,
    /// Report game counts that moved by at least this fraction and win or draw rates that
    /// moved by at least this many hundredths (0.05: 5 % and 5 points).
    #[arg(long, value_name = "X", default_value_t = DEFAULT_MIN_DELTA)]
    pub min_delta: f64,
    /// Entries shown per section (the JSON report has them all).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT)]
    pub limit: usize,
    /// Print the whole diff as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `okb diff`: 0 same, 1 different, 2 trouble (as diff(1)).
pub fn run(args: &DiffArgs, load: impl Fn() -> miette::Result<Loaded>) -> ExitCode {
    match diff(args, load) {
        Ok(different) => ExitCode::from(u8::from(different)),
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}

fn diff(args: &DiffArgs, load: impl Fn() -> miette::Result<Loaded>) -> miette::Result<bool> {
    let (old, new) = match (&args.old, &args.new) {
        (Some(old), Some(new)) => (side(old, None)?, side(new, None)?),
        (old, new) => {
            let loaded = load()?;
            let old = match old {
                Some(old) => side(old, None)?,
                None => previous_build(&loaded).map_err(|e| {
                    miette::miette!(
                        help = "`okb diff OLD NEW` compares two stores",
                        "{e}: no earlier build to compare with (a make keeps the store it replaces)"
                    )
                })?,
            };
            let new = match new {
                Some(new) => side(new, None)?,
                None => current_build(&loaded)?,
            };
            (old, new)
        }
    };
    print(&old, &new, args)
}

/// Compares and prints; true when the builds differ.
pub fn print(old: &Snapshot, new: &Snapshot, args: &DiffArgs) -> miette::Result<bool> {
    let d = compare(old, new, Thresholds { min_delta: args.min_delta });
    if args.json {
        print_json(&serde_json::json!({ "different": !d.is_empty(), "diff": d }));
    } else if d.is_empty() {
        eprintln!("{} no difference", super::output::paint("Same", "32"));
    } else {
        print!("{}", render::text(&d, args.limit));
    }
    Ok(!d.is_empty())
}

/// The store and manifest a make replaced last (kept in `cache/previous/`).
pub fn previous_build(loaded: &Loaded) -> miette::Result<Snapshot> {
    let previous = loaded.layout().previous;
    side(&previous.join("store.sqlite"), Some(&previous.join("manifest.json")))
}

/// The project's store and manifest.
pub fn current_build(loaded: &Loaded) -> miette::Result<Snapshot> {
    side(&loaded.layout().store, Some(&loaded.layout().manifest))
}

fn side(store: &Path, manifest: Option<&Path>) -> miette::Result<Snapshot> {
    Snapshot::load(store, manifest).map_err(|e| miette::miette!("{e}"))
}
