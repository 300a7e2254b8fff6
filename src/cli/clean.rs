//! `okb clean`: remove the store, exports, manifest and reports (and the cache), or only
//! what the cache holds that the current build does not use.

use miette::miette;
use serde_json::json;

use super::output::{paint, print_json};
use crate::dataflow::Status;
use crate::dataflow::gc::{self, Swept};
use crate::dataflow::lock::ProjectLock;
use crate::make::{self, MakeOptions};
use crate::pipeline::Loaded;

/// Arguments of `okb clean`.
#[derive(Debug, Clone, clap::Args)]
pub struct CleanArgs {
    /// Remove the cache as well.
    #[arg(long, conflicts_with = "unused")]
    pub cache: bool,
    /// Keep the store, the exports and what the current build uses; remove the cache's
    /// other step records and objects (those of earlier inputs and parameters, of other
    /// profiles and other pipeline files in this folder). Build first: it refuses while a
    /// step is stale. The engine's results always stay.
    #[arg(long)]
    pub unused: bool,
    /// With --unused: say what would be removed, remove nothing.
    #[arg(long, requires = "unused")]
    pub dry_run: bool,
    /// With --unused: print a JSON report on stdout.
    #[arg(long, requires = "unused")]
    pub json: bool,
}

/// `okb clean`: removes the store, the exports, the manifest and the review, validation
/// and repertoire reports (and the cache with `--cache`), or with `--unused` only the
/// cache entries the current build does not use. Either way under the project lock: a
/// make under way finishes first (its outputs are not pulled from under it).
pub fn run(loaded: &Loaded, args: &CleanArgs) -> miette::Result<()> {
    if args.unused {
        return unused(loaded, args);
    }
    let cache = loaded.layout().cache;
    let _lock = ProjectLock::acquire(&cache)
        .map_err(|e| miette!("taking the project lock in {}: {e}", cache.display()))?;
    let mut removed = Vec::new();
    let store = loaded.layout().store;
    let mut targets = vec![store];
    targets.extend(loaded.pipeline.exports.values().map(|e| loaded.path(&e.output)));
    targets.extend(make::side_outputs(loaded));
    for target in targets {
        let result = if target.is_dir() {
            std::fs::remove_dir_all(&target)
        } else {
            std::fs::remove_file(&target)
        };
        match result {
            Ok(()) => removed.push(target.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(miette!("removing {}: {e}", target.display())),
        }
    }
    if args.cache {
        // The lock file stays: a make waiting on it must take the same lock as the next.
        for entry in
            cache_entries(&cache).map_err(|e| miette!("listing {}: {e}", cache.display()))?
        {
            let result = if entry.is_dir() {
                std::fs::remove_dir_all(&entry)
            } else {
                std::fs::remove_file(&entry)
            };
            result.map_err(|e| miette!("removing {}: {e}", entry.display()))?;
        }
        removed.push(cache.display().to_string());
    }
    eprintln!("{:>12} {} ({})", "Removed", removed.len(), removed.join(", "));
    Ok(())
}

/// What the cache folder holds but its lock file, sorted.
fn cache_entries(cache: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(cache)? {
        let entry = entry?;
        if entry.file_name() != "lock" {
            entries.push(entry.path());
        }
    }
    entries.sort();
    Ok(entries)
}

/// `okb clean --unused`: a dry run of the plan finds what the build uses (every step
/// must be fresh, or what it will need is unknown), then the rest goes.
fn unused(loaded: &Loaded, args: &CleanArgs) -> miette::Result<()> {
    let cache = loaded.layout().cache;
    // No make may write records while they are being swept.
    let _lock = ProjectLock::acquire(&cache)
        .map_err(|e| miette!("taking the project lock in {}: {e}", cache.display()))?;
    let options =
        MakeOptions { mirrors: Vec::new(), offline: true, dry_run: true, replay_warnings: false };
    let summary = make::make(loaded, &options, |_| {})?;
    let stale: Vec<_> = summary.steps.iter().filter(|s| s.status == Status::Stale).collect();
    if let Some(first) = stale.first() {
        let why = first.reason.as_deref().unwrap_or("stale");
        return Err(miette!(
            help = "run `okb make` (with the same --pipeline and --profile), then clean",
            "{} of {} steps are stale (first: {}: {why}); what they will need is not known until they are built, so nothing was removed",
            stale.len(),
            summary.steps.len(),
            first.id
        ));
    }
    let swept = gc::sweep(&cache, &summary.used, args.dry_run)
        .map_err(|e| miette!("cleaning {}: {e}", cache.display()))?;
    if args.json {
        print_json(
            &json!({ "dry_run": args.dry_run, "cache": cache.display().to_string(), "swept": swept }),
        );
    } else {
        report(&swept, args.dry_run);
    }
    Ok(())
}

fn report(swept: &Swept, dry_run: bool) {
    let verb = if dry_run { "Would remove" } else { "Removed" };
    eprintln!(
        "{:>12} {} step records and {} objects ({}) the current build does not use",
        paint(verb, "32"),
        swept.records_removed,
        swept.objects_removed,
        megabytes(swept.bytes_removed)
    );
    eprintln!(
        "{:>12} {} step records and {} objects ({})",
        paint("Kept", "32"),
        swept.records_kept,
        swept.objects_kept,
        megabytes(swept.bytes_kept)
    );
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
