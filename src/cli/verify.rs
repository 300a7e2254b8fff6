//! `okb verify`: does this build match a release manifest? Checks the files on disk,
//! then builds from the pins (offline) and compares what the build says it was made
//! from and made.

use std::path::PathBuf;
use std::process::ExitCode;

use miette::miette;

use super::output::{paint, print_json};
use crate::pipeline::Loaded;
use crate::release::Manifest;
use crate::release::verify::{Checked, FileState, check_files, differences};

/// Arguments of `okb verify`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// The manifest to check against (default: the one `okb make` writes beside the store).
    #[arg(value_name = "MANIFEST")]
    pub manifest: Option<PathBuf>,
    /// Build with an empty cache in a temporary folder, so that every step runs again
    /// (the engine too): proves the pins reproduce the outputs, not only the cache.
    #[arg(long)]
    pub fresh: bool,
    /// Only compare the files on disk; do not build.
    #[arg(long, conflicts_with = "fresh")]
    pub no_build: bool,
    /// Mirror folders for pinned sources, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `okb verify`: 0 when everything matches, 1 when anything differs.
pub fn run(
    args: &VerifyArgs,
    load: impl Fn() -> miette::Result<Loaded>,
) -> miette::Result<ExitCode> {
    let mut loaded = load()?;
    let path = args.manifest.clone().unwrap_or_else(|| loaded.layout().manifest);
    let expected = Manifest::load(&path)
        .map_err(|e| miette!(help = "`okb make` writes one beside the store", "{e}"))?;
    let files = check_files(&expected, &loaded.root);
    let changed: Vec<&Checked> = files.iter().filter(|c| c.state != FileState::Same).collect();
    // Read before the rebuild, which finishes a make and clears the mark.
    let unfinished = crate::dataflow::mark::UnfinishedMark::is_set(&loaded.layout().cache);
    let rebuilt = if args.no_build { None } else { Some(rebuild(&mut loaded, args)?) };
    // The store carries its build history (build number, change log): only its bytes on
    // disk are checked, not a rebuild's.
    let diffs: Vec<String> = rebuilt
        .as_ref()
        .map(|actual| {
            differences(&expected, actual)
                .into_iter()
                .filter(|d| !d.starts_with("store."))
                .collect()
        })
        .unwrap_or_default();
    let same = changed.is_empty() && diffs.is_empty();
    if args.json {
        print_json(&serde_json::json!({
            "manifest": path.display().to_string(),
            "outcome": if same { "same" } else { "different" },
            "files": files,
            "rebuilt": rebuilt.is_some(),
            "differences": diffs,
            "last_make_unfinished": unfinished,
        }));
    } else {
        report(&path, &files, &changed, rebuilt.is_some(), &diffs);
        if unfinished && !changed.is_empty() {
            eprintln!("{} {UNFINISHED}", paint("Note", "33"));
        }
    }
    Ok(if same { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// What a make that did not finish leaves, said when the files on disk differ after one.
const UNFINISHED: &str = "the last make here did not finish (it failed or was killed): the outputs it had finished \
(exports, reports, perhaps the store) are new, the others and manifest.json, written last, are the previous make's \
(a make replaces its outputs file by file, each file whole); `okb make` finishes the build";

/// `okb make --locked` (offline), with an empty temporary cache when `--fresh`; returns
/// the manifest that build wrote.
fn rebuild(loaded: &mut Loaded, args: &VerifyArgs) -> miette::Result<Manifest> {
    // Named so that a later okb sweeps it when this one is killed before its drop.
    let scratch = match args.fresh {
        true => Some(Scratch(crate::files::temp::scratch_dir("okb-verify").map_err(|e| {
            miette!("creating a scratch folder in {}: {e}", std::env::temp_dir().display())
        })?)),
        false => None,
    };
    if let Some(dir) = &scratch {
        loaded.cache = dir.0.join("cache");
    }
    let sources = super::make::Sources { mirror: &args.mirror, offline: true, locked: true };
    let (_lock, summary) = super::make::build(loaded, &sources, false, |_| {})?;
    // A file edited since the build is put back from the cache by the make: say so, as
    // the files on disk were already compared before it.
    for step in summary.steps.iter().filter(|s| s.status == crate::dataflow::Status::Restored) {
        let files = step
            .reason
            .as_deref()
            .and_then(|r| r.split_once("restored: ").or_else(|| r.split_once(": ")))
            .map_or("", |(_, files)| files);
        eprintln!("{} {files} from the cache (step {})", paint("Restored", "33"), step.id);
    }
    let built = summary.steps.iter().filter(|s| s.status != crate::dataflow::Status::Fresh).count();
    eprintln!(
        "{} {built} of {} steps {}",
        paint("Built", "32"),
        summary.steps.len(),
        if args.fresh { "with an empty cache" } else { "(the rest fresh in the cache)" }
    );
    Manifest::load(&loaded.layout().manifest).map_err(|e| miette!("{e}"))
}

fn report(
    path: &std::path::Path,
    files: &[Checked],
    changed: &[&Checked],
    rebuilt: bool,
    diffs: &[String],
) {
    for c in changed {
        let was = format!("{}… ({} bytes)", &c.file.blake3[..12], c.file.bytes);
        match &c.state {
            FileState::Modified { now_blake3, now_bytes } => {
                eprintln!(
                    "{} {}: the manifest says {was}, the file is {}… ({now_bytes} bytes)",
                    paint("Modified", "31"),
                    c.file.path,
                    &now_blake3[..12]
                )
            }
            FileState::Missing => eprintln!(
                "{} {}: the manifest lists it ({was})",
                paint("Missing", "31"),
                c.file.path
            ),
            FileState::Same => {}
        }
    }
    for d in diffs.iter().take(40) {
        eprintln!("{} {d}", paint("Differs", "31"));
    }
    if diffs.len() > 40 {
        eprintln!("{} {} more differences", paint("Differs", "31"), diffs.len() - 40);
    }
    let checked = format!("{} files on disk", files.len());
    let built = if rebuilt { ", and a build from the pins reproduces it" } else { "" };
    if changed.is_empty() && diffs.is_empty() {
        eprintln!("{} {} matches {checked}{built}", paint("Verified", "32"), path.display());
    } else {
        let after = if rebuilt {
            format!(", {} differences after building", diffs.len())
        } else {
            String::new()
        };
        eprintln!(
            "{} {}: {} files on disk differ{after}",
            paint("error", "31"),
            path.display(),
            changed.len()
        );
    }
}

/// A temporary folder removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
