//! `okb make`: declares the steps a pipeline asks for ([`plan`]) and runs them.
//!
//! Data flows one way: sources → `parse:<source>` → `eco` → `tree` → `store` and
//! `export:<name>`. The steps themselves are declared in [`crate::steps`], one module per
//! rule; the scheduler in [`crate::dataflow`] keys them by content hash and runs them.

use std::path::PathBuf;
use std::time::Instant;

use crate::dataflow::mark::UnfinishedMark;
use crate::dataflow::{Build, BuildError, CorruptCache, Decl, Plan, Status, StepReport};
use crate::diagnostics::Warning;
use crate::pipeline::Loaded;
use crate::steps::{self, planning::Planning};

mod error;
mod repertoires;
mod resolve;
mod sweep;

pub use error::MakeError;
pub use resolve::{engine_config, engine_setup, pinnable_game_files, planning, resolver};

/// Options of one `okb make` (or `okb status`) run.
#[derive(Clone, Debug, Default)]
pub struct MakeOptions {
    /// Mirror folders for pinned sources.
    pub mirrors: Vec<PathBuf>,
    /// Never download.
    pub offline: bool,
    /// Only report what would run.
    pub dry_run: bool,
    /// Also list the warnings of fresh steps (from their records), as `--strict` and
    /// `--json` need; otherwise only their count is known.
    pub replay_warnings: bool,
}

/// What a make run did.
#[derive(Debug, Default)]
pub struct MakeSummary {
    /// Per-step reports.
    pub steps: Vec<StepReport>,
    /// All warnings of the run (fresh steps' warnings included).
    pub warnings: Vec<Warning>,
    /// Notes about sources (copied from a mirror, downloaded).
    pub fetched: Vec<String>,
    /// What the run will cost beyond its steps' own reasons, said before them (a counts
    /// state built again from its first file: [`crate::steps::state::rebuild_note`]).
    pub notes: Vec<String>,
    /// Wall time.
    pub elapsed: std::time::Duration,
    /// The step records and cache objects the run found, read or wrote.
    pub used: crate::dataflow::cache::Used,
}

/// Runs the pipeline. A corrupt cache object is discarded and the run retried, so the
/// steps that produced it run again (each retry discards one object).
///
/// The caller holds the project lock. A make that finds the previous one unfinished
/// (killed, or failed) first removes the temporary files that one left behind.
pub fn make(
    loaded: &Loaded,
    options: &MakeOptions,
    on_report: impl FnMut(&StepReport) + Clone + Send + 'static,
) -> Result<MakeSummary, MakeError> {
    make_adapted(loaded, options, on_report, &|_, plan| Ok(plan))
}

/// Changes the plan of a pipeline before it runs: another command's steps (`okb engine
/// queue` runs the steps up to the tree, then its own).
pub type Adapt = dyn Fn(&Planning<'_>, Plan<'static>) -> Result<Plan<'static>, MakeError> + Sync;

/// [`make`] with the plan changed by `adapt` first.
pub fn make_adapted(
    loaded: &Loaded,
    options: &MakeOptions,
    on_report: impl FnMut(&StepReport) + Clone + Send + 'static,
    adapt: &Adapt,
) -> Result<MakeSummary, MakeError> {
    // Each retry discards one step's value; a counts state rebuilt from its first month
    // (a month removed from the middle) discards two a month, one after the other.
    const MAX_RETRIES: usize = 4096;
    let mark = if options.dry_run {
        None
    } else {
        let cache = loaded.layout().cache;
        let io = |source| BuildError::Io {
            what: format!("marking the make under way in {}", cache.display()),
            source,
        };
        let (mark, interrupted) = UnfinishedMark::set(&cache).map_err(io)?;
        if interrupted {
            sweep::sweep_temporaries(loaded);
        }
        Some(mark)
    };
    let started = Instant::now();
    let mut attempt = 0;
    let mut notes: Option<Vec<String>> = None;
    let mut summary = loop {
        match make_once(loaded, options, Box::new(on_report.clone()), adapt, &mut notes) {
            Err(MakeError::Build(BuildError::Corrupt(corrupt))) if attempt < MAX_RETRIES => {
                // A state chain built again from its first file finds each earlier state
                // and each file's counts gone, given to later merges as the note said:
                // that is no damage to warn of, step by step.
                let rebuilding = notes.as_ref().is_some_and(|n| !n.is_empty());
                if !(rebuilding && is_state_chain_step(loaded, &corrupt.step)) {
                    crate::progress::warn(&corrupt.to_string());
                }
                discard(loaded, &corrupt);
                attempt += 1;
            }
            Err(error) => {
                if mark.is_some() {
                    sweep::sweep_own_temporaries(loaded);
                }
                return Err(error);
            }
            Ok(summary) => break summary,
        }
    };
    summary.notes = notes.unwrap_or_default();
    // The whole make, retries included: the `Finished` line's time.
    summary.elapsed = started.elapsed();
    if let Some(mark) = mark {
        let what =
            format!("clearing the make-under-way mark in {}", loaded.layout().cache.display());
        mark.clear().map_err(|source| BuildError::Io { what, source })?;
    }
    Ok(summary)
}

/// Whether step `id` counts or merges a file of a source that keeps a counts state.
fn is_state_chain_step(loaded: &Loaded, id: &str) -> bool {
    let source = ["games:", "state:"].iter().find_map(|rule| id.strip_prefix(rule));
    source
        .and_then(|rest| rest.split_once(':'))
        .and_then(|(source, _)| loaded.pipeline.sources.get(source))
        .is_some_and(|spec| spec.keeps_state())
}

fn discard(loaded: &Loaded, corrupt: &CorruptCache) {
    let b = Build::new(loaded.layout().cache, true, Box::new(|_| {}));
    b.discard(corrupt);
}

fn make_once(
    loaded: &Loaded,
    options: &MakeOptions,
    on_report: crate::dataflow::OnReport,
    adapt: &Adapt,
    notes: &mut Option<Vec<String>>,
) -> Result<MakeSummary, MakeError> {
    let build = Build::new(loaded.layout().cache, options.dry_run, on_report);
    let mut summary = MakeSummary::default();
    let planning = planning(loaded, options, &build, &mut summary.fetched)?;
    // Said once, before any step: a retry plans again over what the first attempt changed.
    if notes.is_none() {
        let said: Vec<String> = steps::state::rebuild_note(&planning).into_iter().collect();
        if !options.dry_run {
            said.iter().for_each(|note| crate::progress::note("Note", note));
        }
        *notes = Some(said);
    }
    let plan = adapt(&planning, plan_of(&planning)?)?;
    let mut warnings = plan.run(&build)?;
    build.save()?;
    summary.steps = std::mem::take(&mut *build.reports.lock().expect("reports poisoned"));
    if !options.dry_run {
        note_timings(&loaded.layout().cache, &summary.steps);
    }
    summary.used = build.cache.used();
    if options.replay_warnings {
        for report in summary.steps.iter().filter(|r| r.status != Status::Built) {
            warnings.extend(build.warnings_of(report));
        }
    }
    // Steps that run side by side report in the order they finish; the list is shown in
    // file and line order, the same in every run (stable: one line keeps its order).
    warnings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    summary.warnings = warnings;
    Ok(summary)
}

/// Keeps the times of the steps this make ran, for `okb status`'s estimate. Losing
/// them costs only the estimate, so a failure to write them is not the make's.
fn note_timings(cache: &std::path::Path, reports: &[StepReport]) {
    let mut timings = crate::dataflow::timings::Timings::load(cache);
    for report in reports.iter().filter(|r| r.status == Status::Built) {
        timings.note(&report.id, report.elapsed);
    }
    let _ = timings.save(cache);
}

/// The steps `loaded` asks for, in pipeline order: each step module of
/// [`steps::PLANNERS`] declares its own from one [`Planning`].
pub fn plan(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
) -> Result<Plan<'static>, MakeError> {
    plan_of(&planning(loaded, options, build, fetched)?)
}

/// The steps every step module declares from `planning`.
pub fn plan_of(planning: &Planning<'_>) -> Result<Plan<'static>, MakeError> {
    let mut steps: Vec<Decl<'static>> = Vec::new();
    for planner in steps::PLANNERS {
        let declared = (planner.plan)(planning, &steps).map_err(|e| located(planning.loaded, e))?;
        steps.extend(declared);
    }
    unplanned_exports(planning.loaded, &steps)?;
    Ok(Plan { steps, params: planning.params.clone() })
}

/// A parameter a step refused, said where pipeline.toml writes it: the key under its
/// table, or the table's header (`[exports.book]`).
fn located(loaded: &Loaded, error: BuildError) -> MakeError {
    let BuildError::Param { path, message, help, .. } = error else {
        return MakeError::Build(error);
    };
    let header = format!("[{}]", path.join("."));
    let located = match path.split_last() {
        Some((key, table)) if !loaded.text.contains(&header) => {
            loaded.error_at_key(&table.join("."), key, message, help)
        }
        _ => loaded.error_at(&header, message, help),
    };
    MakeError::Pipeline(Box::new(located))
}

/// An error for the first `[exports.<name>]` table no step module planned: its format is
/// none of the export rules'.
fn unplanned_exports(loaded: &Loaded, steps: &[Decl<'static>]) -> Result<(), MakeError> {
    let planned = |name: &str| steps.iter().any(|d| d.id.strip_prefix("export:") == Some(name));
    let Some((name, spec)) = loaded.pipeline.exports.iter().find(|(name, _)| !planned(name)) else {
        return Ok(());
    };
    let formats: Vec<&str> =
        steps::rules().filter_map(|rule| rule.name.strip_prefix("export:")).collect();
    let message = format!("export {name:?}: no export has format {:?}", spec.format);
    let help = format!("the formats are {}", formats.join(", "));
    Err(MakeError::Pipeline(Box::new(loaded.error_at(
        &format!("[exports.{name}]"),
        message,
        Some(help),
    ))))
}

/// `plan` cut down to the steps `target` reads, directly or not, and `target` itself.
pub fn upstream_of(plan: Plan<'static>, target: &str) -> Plan<'static> {
    let Plan { steps, params } = plan;
    let mut keep: std::collections::BTreeSet<String> =
        std::collections::BTreeSet::from([target.to_string()]);
    loop {
        let before = keep.len();
        let reads: Vec<String> = steps
            .iter()
            .filter(|d| keep.contains(&d.id))
            .flat_map(|d| d.reads.iter().cloned())
            .collect();
        keep.extend(reads);
        if keep.len() == before {
            break;
        }
    }
    Plan { steps: steps.into_iter().filter(|d| keep.contains(&d.id)).collect(), params }
}

/// What a make writes beside the store besides exports: the manifest, the structure
/// review, the validation report and the repertoires' folders (`okb clean` removes them).
pub fn side_outputs(loaded: &Loaded) -> Vec<PathBuf> {
    let layout = loaded.layout();
    let reports = steps::structure_review::FILES.iter().chain(&steps::validation_report::FILES);
    let mut paths = vec![layout.manifest.clone()];
    paths.extend(reports.map(|f| layout.build.join(f)));
    paths.extend(loaded.pipeline.repertoires.keys().map(|name| layout.repertoire_dir(name)));
    paths
}

/// Whether any step did work.
pub fn did_work(summary: &MakeSummary) -> bool {
    summary.steps.iter().any(|s| s.status != Status::Fresh)
}
