//! `okb make`: build what is stale.

use std::path::PathBuf;
use std::process::ExitCode;

use miette::{IntoDiagnostic, WrapErr};
use serde_json::json;

use super::output::{
    is_file_step, paint, print_json, print_step, print_warnings, quiet, step_json,
};
use crate::dataflow::Status;
use crate::diagnostics::Warning;
use crate::make::{self, MakeOptions, MakeSummary};
use crate::pipeline::Loaded;

/// Arguments of `okb make`.
#[derive(Debug, Clone, clap::Args)]
pub struct MakeArgs {
    /// A folder holding source files (matched by content hash); repeatable.
    /// Also read from OKB_MIRROR (colon-separated).
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Never download sources.
    #[arg(long)]
    pub offline: bool,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Say for every step why it ran.
    #[arg(long)]
    pub explain: bool,
    /// Fail (exit status 3) on any warning — unreadable rows, duplicate names, skipped
    /// games, engine failures — that `[strict] allow` in pipeline.toml does not name.
    /// Notes (orphan lines) never fail. The build itself still completes.
    #[arg(long)]
    pub strict: bool,
    /// Print a JSON report on stdout (steps, warnings, outcome) when done.
    #[arg(long)]
    pub json: bool,
    /// After building, print what changed in the knowledge base (as `okb diff`, whose exit
    /// status it takes: 0 same, 1 different, 2 trouble).
    #[arg(long, conflicts_with = "json")]
    pub diff: bool,
    /// Release builds: fail unless every source is pinned and already here (in sources/
    /// or a mirror); nothing is downloaded. Implies --offline.
    #[arg(long)]
    pub locked: bool,
}

/// Runs `okb make`: 0 when built, 3 when `--strict` and warnings were reported. With
/// `--diff` the status is `okb diff`'s: 1 when the knowledge base changed, 2 when the build
/// or the comparison failed (the error is printed here, as `okb diff` prints its own).
pub fn run(args: &MakeArgs, load: impl Fn() -> miette::Result<Loaded>) -> miette::Result<ExitCode> {
    if !args.diff {
        return build_and_print(args, load);
    }
    match build_and_print(args, load) {
        Ok(code) => Ok(code),
        Err(report) => {
            eprintln!("{report:?}");
            Ok(ExitCode::from(2))
        }
    }
}

/// [`run`] without `--diff`'s mapping of failures to status 2.
fn build_and_print(
    args: &MakeArgs,
    load: impl Fn() -> miette::Result<Loaded>,
) -> miette::Result<ExitCode> {
    super::alloc::keep_freed_memory();
    if let Some(n) = args.jobs {
        rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global().into_diagnostic()?;
    }
    let loaded = load()?;
    for note in loaded.notes.iter().filter(|_| !quiet()) {
        eprintln!("{} {note}", paint("Note", "36"));
    }
    let explain = args.explain;
    let sources = Sources { mirror: &args.mirror, offline: args.offline, locked: args.locked };
    let (_lock, summary) =
        build(&loaded, &sources, args.strict || args.json, move |r| print_step(r, explain))?;
    print_summary(&summary, explain);
    let different = args.diff && print_diff(&loaded, &summary)?;
    let failing: Vec<&Warning> = if args.strict {
        not_allowed(&summary.warnings, &loaded.pipeline.strict.allow)
    } else {
        Vec::new()
    };
    if args.json {
        print_json(&json!({
            "outcome": if failing.is_empty() { "ok" } else { "strict-failure" },
            "built": summary.steps.iter().filter(|s| s.status != Status::Fresh).count(),
            "fresh": summary.steps.iter().filter(|s| s.status == Status::Fresh).count(),
            "elapsed_ms": summary.elapsed.as_secs_f64() * 1000.0,
            "steps": summary.steps.iter().map(step_json).collect::<Vec<_>>(),
            "warnings": summary.warnings.iter().filter(|w| !w.is_note()).collect::<Vec<_>>(),
            "notes": summary.warnings.iter().filter(|w| w.is_note()).count(),
            "strict_failures": failing.iter().map(|w| w.name()).collect::<Vec<_>>(),
        }));
    }
    if !failing.is_empty() {
        report_strict_failure(&failing);
        return Ok(ExitCode::from(3));
    }
    // `okb diff`'s status: 1 when the builds differ.
    Ok(if different { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The warnings (not notes) that no `allow` entry names.
fn not_allowed<'w>(warnings: &'w [Warning], allow: &[String]) -> Vec<&'w Warning> {
    warnings.iter().filter(|w| !w.is_note() && !allow.iter().any(|a| w.is_allowed_by(a))).collect()
}

/// Says what failed `--strict`, by kind, and how to accept reviewed warnings.
fn report_strict_failure(failing: &[&Warning]) {
    let mut kinds: Vec<&str> = failing.iter().map(|w| w.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let counts: Vec<String> = kinds
        .iter()
        .map(|k| format!("{} {k}", failing.iter().filter(|w| w.kind == *k).count()))
        .collect();
    eprintln!(
        "{} --strict: {} warnings not allowed ({})",
        paint("error", "31"),
        failing.len(),
        counts.join(", ")
    );
    eprintln!(
        "{:>12} review them, then allow them by name in pipeline.toml:\n{:>12} [strict]\n{:>12} allow = [{:?}]",
        "help:",
        "",
        "",
        failing[0].name()
    );
}

/// Prints the fresh game files' count, the warnings and the `Finished` line.
fn print_summary(summary: &MakeSummary, explain: bool) {
    let fresh_files =
        summary.steps.iter().filter(|s| s.status == Status::Fresh && is_file_step(&s.id)).count();
    if fresh_files > 0 && !explain && !quiet() {
        eprintln!("{} {fresh_files} game files", paint("Fresh", "32"));
    }
    let warnings: usize = summary.steps.iter().map(|s| s.warnings).sum();
    print_warnings(&summary.warnings);
    if quiet() {
        return;
    }
    let built = summary.steps.iter().filter(|s| s.status != Status::Fresh).count();
    let secs = summary.elapsed.as_secs_f64();
    let timing = if secs < 1.0 { format!("{:.0}ms", secs * 1000.0) } else { format!("{secs:.2}s") };
    let plural =
        |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    let warned =
        if warnings > 0 { format!(", {}", plural(warnings, "warning")) } else { String::new() };
    let fresh = summary.steps.len() - built;
    if built == 0 {
        eprintln!(
            "{} nothing to do, {} fresh{warned} in {timing}",
            paint("Finished", "32"),
            plural(fresh, "step")
        );
    } else {
        eprintln!(
            "{} {} built, {fresh} fresh{warned} in {timing}",
            paint("Finished", "32"),
            plural(built, "step")
        );
    }
}

/// Where a build may get sources from: `--mirror`, `--offline`, `--locked`.
pub(crate) struct Sources<'a> {
    pub mirror: &'a [PathBuf],
    pub offline: bool,
    pub locked: bool,
}

/// Builds as [`build`] does, printing each step and cargo's `Finished` line: the build
/// a command runs before it reads the store (`check`, `review`).
pub(crate) fn build_and_report(loaded: &Loaded, sources: &Sources<'_>) -> miette::Result<()> {
    let (_lock, summary) = build(loaded, sources, false, |r| print_step(r, false))?;
    let built = summary.steps.iter().filter(|s| s.status != Status::Fresh).count();
    eprintln!(
        "{} {built} steps built, {} fresh",
        paint("Finished", "32"),
        summary.steps.len() - built
    );
    Ok(())
}

/// Builds under the project lock (returned, so the caller can read the build before
/// another make replaces it), after checking `--locked`: what `make`, `check` and
/// `verify` share.
pub(crate) fn build(
    loaded: &Loaded,
    sources: &Sources<'_>,
    replay_warnings: bool,
    on_report: impl FnMut(&crate::dataflow::StepReport) + Clone + Send + 'static,
) -> miette::Result<(crate::dataflow::lock::ProjectLock, MakeSummary)> {
    build_adapted(loaded, sources, replay_warnings, on_report, &|_, plan| Ok(plan))
}

/// [`build`] with the plan changed by `adapt` first (see [`make::make_adapted`]).
pub(crate) fn build_adapted(
    loaded: &Loaded,
    sources: &Sources<'_>,
    replay_warnings: bool,
    on_report: impl FnMut(&crate::dataflow::StepReport) + Clone + Send + 'static,
    adapt: &make::Adapt,
) -> miette::Result<(crate::dataflow::lock::ProjectLock, MakeSummary)> {
    let lock = crate::dataflow::lock::ProjectLock::acquire(&loaded.layout().cache)
        .into_diagnostic()
        .wrap_err("taking the project lock")?;
    if sources.locked {
        check_locked(loaded)?;
    }
    let options = MakeOptions {
        mirrors: crate::sources::mirrors(sources.mirror),
        offline: sources.offline || sources.locked,
        dry_run: false,
        replay_warnings,
    };
    Ok((lock, make::make_adapted(loaded, &options, on_report, adapt)?))
}

/// `--locked`: every source (taxonomies, counts, counts states, structure labels, explorer crawls,
/// evaluation sources, collections' manifests, Lichess database months) and every
/// repertoire has a pin, and every file a game source given by `path` or `paths`
/// matches has one in `[sources.<name>.pins]`.
fn check_locked(loaded: &Loaded) -> miette::Result<()> {
    let sources = &loaded.pipeline.sources;
    let mut unpinned: Vec<String> = sources
        .iter()
        .filter(|(_, s)| (!s.kind().is_games() || s.manifest().is_some()) && s.blake3().is_none())
        .map(|(n, _)| n.clone())
        .collect();
    unpinned.extend(
        loaded
            .pipeline
            .repertoires
            .iter()
            .filter(|(_, r)| r.blake3.is_none())
            .map(|(n, _)| format!("repertoires.{n}")),
    );
    let file = loaded.file.display();
    let mut said = match unpinned.as_slice() {
        [] => Vec::new(),
        [one] => vec![format!("{one} has no blake3 pin in {file}")],
        many => vec![format!(
            "{} sources have no blake3 pin in {file}: {}",
            many.len(),
            many.join(", ")
        )],
    };
    said.extend(sources.iter().filter_map(|(name, spec)| unpinned_files(loaded, name, spec)));
    if said.is_empty() {
        return Ok(());
    }
    Err(miette::miette!(
        code = "okb::locked",
        help = "run `okb pin` and commit pipeline.toml",
        "--locked: {}",
        said.join("; ")
    ))
}

/// What `--locked` says of game source `name` (given by `path` or `paths`) when files it
/// matches have no pin in `[sources.<name>.pins]`: the source and those files.
fn unpinned_files(
    loaded: &Loaded,
    name: &str,
    spec: &crate::pipeline::SourceSpec,
) -> Option<String> {
    if !spec.kind().is_games() || spec.manifest().is_some() {
        return None;
    }
    let pins = spec.file_pins();
    let files: Vec<String> = make::pinnable_game_files(loaded, spec)
        .into_iter()
        .map(|(_, shown)| shown)
        .filter(|shown| !pins.is_some_and(|p| p.contains_key(shown)))
        .collect();
    const SHOWN: usize = 10;
    let more = files.len().saturating_sub(SHOWN);
    let listed = files.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    let listed = if more > 0 { format!("{listed} and {more} more") } else { listed };
    match files.len() {
        0 => None,
        1 => Some(format!("game source {name}: file {listed} has no pin in [sources.{name}.pins]")),
        n => Some(format!(
            "game source {name}: {n} files have no pin in [sources.{name}.pins]: {listed}"
        )),
    }
}

/// `--diff`: the store before this make against the store after it (nothing when the
/// store did not change); true when they differ.
fn print_diff(loaded: &Loaded, summary: &MakeSummary) -> miette::Result<bool> {
    let store_built = summary.steps.iter().any(|s| s.id == "store" && s.status == Status::Built);
    if !store_built || !loaded.layout().previous.join("store.sqlite").exists() {
        eprintln!("{} the knowledge base did not change", paint("Same", "32"));
        return Ok(false);
    }
    use super::diff::{DEFAULT_LIMIT, DEFAULT_MIN_DELTA, DiffArgs, current_build, previous_build};
    let args = DiffArgs {
        old: None,
        new: None,
        min_delta: DEFAULT_MIN_DELTA,
        limit: DEFAULT_LIMIT,
        json: false,
    };
    super::diff::print(&previous_build(loaded)?, &current_build(loaded)?, &args)
}
