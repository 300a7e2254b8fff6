//! `okb make`: declares the steps a pipeline asks for ([`plan`]) and runs them.
//!
//! Data flows one way: sources → `parse:<source>` → `eco` → `tree` → `store` and
//! `export:<name>`. The steps themselves are declared in [`crate::steps`], one module per
//! rule; the scheduler in [`crate::dataflow`] keys them by content hash and runs them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::dataflow::mark::UnfinishedMark;
use crate::dataflow::{Build, BuildError, CorruptCache, Decl, Plan, Status, StepReport};
use crate::diagnostics::Warning;
use crate::files::temp;
use crate::pipeline::{Loaded, SourceKind};
use crate::release::{self, Manifest};
use crate::sources::{Origin, Resolver, Wanted};
use crate::steps::{
    self,
    planning::{GameFile, Planning, SourceFile},
};

mod repertoires;

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
    /// Wall time.
    pub elapsed: std::time::Duration,
    /// The step records and cache objects the run found, read or wrote.
    pub used: crate::dataflow::cache::Used,
}

/// Errors of a make run.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum MakeError {
    /// A source could not be had.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Source(#[from] crate::sources::SourceError),
    /// The build engine failed.
    #[error(transparent)]
    #[diagnostic(code(okb::build))]
    Build(#[from] BuildError),
    /// The store could not be written.
    #[error(transparent)]
    #[diagnostic(code(okb::store))]
    Store(#[from] crate::store::StoreError),
    /// An explorer crawl could not be had.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Crawl(#[from] crate::crawl::CrawlError),
    /// The engine could not be used at all (missing, unstartable, bad settings).
    #[error(transparent)]
    #[diagnostic(
        code(okb::engine),
        help(
            "install Stockfish (`apt-get install stockfish`) or set `path` in [engine] of pipeline.toml; remove [engine] to skip annotation"
        )
    )]
    Engine(#[from] crate::engine::EngineError),
    /// A game source's paths and globs matched no file, and it does not allow that.
    #[error("game source {source_name}: no file matches {}", patterns.join(", "))]
    #[diagnostic(
        code(okb::games),
        help(
            "check the paths (a typo? a disk not mounted?); a source that may be empty says `allow_empty = true` in [sources.{source_name}]"
        )
    )]
    NoGameFiles {
        /// The source.
        source_name: String,
        /// Its paths and globs, as written.
        patterns: Vec<String>,
    },
    /// The pipeline asks for something no step provides.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Pipeline(Box<crate::pipeline::PipelineError>),
    /// A game source could not be read as a whole.
    #[error("game source {source_name}: {error}")]
    #[diagnostic(code(okb::games))]
    Games {
        /// The source.
        source_name: String,
        /// What failed.
        error: crate::games::GamesError,
    },
}

/// The project's cache folder.
pub fn cache_dir(loaded: &Loaded) -> PathBuf {
    loaded.cache.clone()
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
        let cache = cache_dir(loaded);
        let io = |source| BuildError::Io {
            what: format!("marking the make under way in {}", cache.display()),
            source,
        };
        let (mark, interrupted) = UnfinishedMark::set(&cache).map_err(io)?;
        if interrupted {
            sweep_temporaries(loaded);
        }
        Some(mark)
    };
    let mut attempt = 0;
    let summary = loop {
        match make_once(loaded, options, Box::new(on_report.clone()), adapt) {
            Err(MakeError::Build(BuildError::Corrupt(corrupt))) if attempt < MAX_RETRIES => {
                eprintln!("{:>12} {corrupt}", "Warning");
                discard(loaded, &corrupt);
                attempt += 1;
            }
            Err(error) => {
                if mark.is_some() {
                    sweep_own_temporaries(loaded);
                }
                return Err(error);
            }
            Ok(summary) => break summary,
        }
    };
    if let Some(mark) = mark {
        let what = format!("clearing the make-under-way mark in {}", cache_dir(loaded).display());
        mark.clear().map_err(|source| BuildError::Io { what, source })?;
    }
    Ok(summary)
}

/// Removes the temporary files of an interrupted okb from the folders okb writes: the
/// cache, the source store and the output folders.
fn sweep_temporaries(loaded: &Loaded) {
    let removed = sweep_written_folders(loaded, temp::sweep);
    if !removed.is_empty() {
        let first = removed[0].display();
        let more = if removed.len() > 1 {
            format!(" and {} more", removed.len() - 1)
        } else {
            String::new()
        };
        crate::progress::note(
            "Removed",
            &format!("temporary files of an interrupted make: {first}{more}"),
        );
    }
}

/// Removes the temporary files this make wrote, on its error path (the steps have ended):
/// a make that fails part-way, on a full disk say, gives the space back at once. The
/// outputs it finished stay (see `okb verify`).
fn sweep_own_temporaries(loaded: &Loaded) {
    sweep_written_folders(loaded, temp::sweep_own);
}

/// Runs `sweep` over the folders okb writes: the cache (with its subfolders), the source
/// store and the output folders. Returns what it removed.
fn sweep_written_folders(loaded: &Loaded, sweep: fn(&Path, bool) -> Vec<PathBuf>) -> Vec<PathBuf> {
    let mut removed = sweep(&cache_dir(loaded), true);
    let mut folders = vec![loaded.path("sources")];
    let outputs = std::iter::once(&loaded.pipeline.store.path)
        .chain(loaded.pipeline.exports.values().map(|e| &e.output));
    for output in outputs.map(|o| loaded.path(o)) {
        // An export may be a folder of files (eco.json) or one file.
        folders.extend(output.parent().map(Path::to_path_buf));
        folders.push(output);
    }
    folders.sort();
    folders.dedup();
    for folder in folders {
        removed.extend(sweep(&folder, false));
    }
    removed
}

fn discard(loaded: &Loaded, corrupt: &CorruptCache) {
    let b = Build::new(cache_dir(loaded), true, Box::new(|_| {}));
    b.discard(corrupt);
}

fn make_once(
    loaded: &Loaded,
    options: &MakeOptions,
    on_report: crate::dataflow::OnReport,
    adapt: &Adapt,
) -> Result<MakeSummary, MakeError> {
    let start = Instant::now();
    let build = Build::new(cache_dir(loaded), options.dry_run, on_report);
    let mut summary = MakeSummary::default();
    let planning = planning(loaded, options, &build, &mut summary.fetched)?;
    let plan = adapt(&planning, plan_of(&planning)?)?;
    let mut warnings = plan.run(&build)?;
    build.save()?;
    summary.steps = std::mem::take(&mut *build.reports.lock().expect("reports poisoned"));
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
    summary.elapsed = start.elapsed();
    Ok(summary)
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
        let declared = (planner.plan)(planning, &steps)?;
        steps.extend(declared);
    }
    unplanned_exports(planning.loaded, &steps)?;
    Ok(Plan { steps, params: planning.params.clone() })
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

/// What the step modules plan from: the pipeline's sources resolved (found, fetched or
/// copied from a mirror; notes about fetched sources go to `fetched`), its game files
/// listed, its crawls made available, its engine found, and the manifest's facts about
/// them. Nothing is computed.
pub fn planning<'a>(
    loaded: &'a Loaded,
    options: &MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
) -> Result<Planning<'a>, MakeError> {
    let pipeline = &loaded.pipeline;
    let mut facts = Manifest {
        manifest: release::manifest::FORMAT,
        okb: release::manifest::Tool::this(),
        ..Default::default()
    };
    let files = resolve_files(loaded, options, build, fetched)?;
    for file in &files {
        facts.sources.insert(
            file.name.clone(),
            source_facts(&pipeline.sources[&file.name], file.hash.clone()),
        );
    }
    let game_files = list_game_files(loaded, options, build, fetched, &mut facts)?;
    let crawls = crawl_sources(loaded, options, &mut facts)?;
    let engine = engine_setup(loaded, build)?;
    let mut clouds = Vec::new();
    if let Some((config, hash)) = &engine {
        let settings = serde_json::to_value(&pipeline.engine).unwrap_or_default();
        facts.engine = Some(release::manifest::EngineFacts {
            binary_blake3: hash.clone(),
            settings,
            ..Default::default()
        });
        clouds = cloud_sources(loaded, config, &mut facts);
    }
    let repertoires = repertoires::files(loaded, options, build, fetched, &mut facts)?;
    let params = serde_json::to_value(pipeline)
        .map_err(|e| BuildError::Step { step: "pipeline".into(), message: e.to_string() })?;
    facts.pipeline = release::manifest::PipelineFacts {
        file: release::manifest::relative(&loaded.root, &loaded.file),
        parameters: params.clone(),
    };
    facts.game_files = game_files
        .iter()
        .map(|g| release::manifest::GameFileFacts {
            source: g.source.clone(),
            path: g.shown.clone(),
            blake3: g.hash.clone(),
        })
        .collect();
    let (mirrors, offline, dry_run) = (options.mirrors.clone(), options.offline, options.dry_run);
    Ok(Planning {
        loaded,
        params,
        mirrors,
        offline,
        dry_run,
        files,
        game_files,
        crawls,
        clouds,
        engine,
        repertoires,
        facts,
    })
}

/// The pipeline's cloud-eval sources as the client asks them (`[engine] multipv` unless
/// the source says otherwise), their facts recorded (`unpinned` for a source without
/// `blake3`).
fn cloud_sources(
    loaded: &Loaded,
    engine: &crate::engine::EngineConfig,
    facts: &mut Manifest,
) -> Vec<crate::evals::cloud::CloudSource> {
    let mut found = Vec::new();
    for (name, spec, source) in loaded
        .pipeline
        .sources
        .iter()
        .filter_map(|(n, s)| Some((n, s, s.cloud_eval(n, engine.multipv)?)))
    {
        let pin = spec.blake3().unwrap_or("unpinned").to_string();
        facts.sources.insert(name.clone(), source_facts(spec, pin));
        found.push(source);
    }
    found
}

/// The pipeline's explorer crawls, each made available (walked, resumed, or its missing
/// answers fetched), as (source name, manifest BLAKE3). A dry run never asks a server: a
/// crawl it cannot replay is declared unfinished, so the steps after it show as stale.
fn crawl_sources(
    loaded: &Loaded,
    options: &MakeOptions,
    facts: &mut Manifest,
) -> Result<Vec<(String, String)>, MakeError> {
    let pipeline = &loaded.pipeline;
    let mut crawls = Vec::new();
    for (name, spec) in
        pipeline.sources.iter().filter(|(_, s)| s.kind() == SourceKind::LichessExplorer)
    {
        let source = spec
            .crawl(name, &pipeline.tree)
            .map_err(|why| crate::crawl::CrawlError::Settings { source_name: name.clone(), why })?;
        let archive =
            crate::crawl::archive::Archive::new(&loaded.path("sources"), &options.mirrors);
        let how = crate::crawl::source::How {
            offline: options.offline || options.dry_run,
            refresh: false,
        };
        let hash = match source.make_available(&archive, how) {
            Ok(available) => {
                report_crawl(&source, &available);
                available.hash
            }
            // A dry run (`okb status`, `okb graph`) shows a crawl it cannot read as stale.
            Err(
                crate::crawl::CrawlError::Offline { .. }
                | crate::crawl::CrawlError::MissingManifest { .. },
            ) if options.dry_run => "unfinished-crawl".to_string(),
            Err(e) => return Err(e.into()),
        };
        facts.sources.insert(name.clone(), source_facts(spec, hash.clone()));
        crawls.push((name.clone(), hash));
    }
    Ok(crawls)
}

/// Says what a crawl asked the server, and what an unpinned one would pin.
fn report_crawl(
    source: &crate::crawl::source::CrawlSource,
    available: &crate::crawl::source::Available,
) {
    let c = &available.counters;
    if c.answered > 0 {
        let (answered, positions, retried) =
            (c.answered, available.manifest.positions.len(), c.retried);
        crate::progress::note(
            "Crawled",
            &format!(
                "{}: {answered} answers from {} ({positions} positions in the crawl, {retried} retries)",
                source.name, source.server
            ),
        );
    }
    if source.pin.is_none() {
        crate::progress::note(
            "Note",
            &format!(
                "crawl {} is not pinned: `okb pin {}` records blake3 {}",
                source.name, source.name, available.hash
            ),
        );
    }
}

/// The pipeline's `[engine]` with its binary found (`None` without `[engine]`): a
/// relative `path` is relative to the pipeline file, like every other path in it.
pub fn engine_config(loaded: &Loaded) -> Result<Option<crate::engine::EngineConfig>, MakeError> {
    let Some(config) = &loaded.pipeline.engine else { return Ok(None) };
    let configured = config
        .path
        .as_ref()
        .map(|p| if p.components().count() > 1 { loaded.root.join(p) } else { p.clone() });
    let binary = crate::engine::resolve_engine(configured.as_deref())?;
    Ok(Some(crate::engine::EngineConfig { path: Some(binary), ..config.clone() }))
}

/// [`engine_config`] and the BLAKE3 of the engine binary (from the stat cache). Without
/// an engine, a pipeline with evaluation sources still builds (`none` for the binary):
/// the engine step fails only if the sources leave positions to search.
pub fn engine_setup(
    loaded: &Loaded,
    build: &Build,
) -> Result<Option<(crate::engine::EngineConfig, String)>, MakeError> {
    let config = match engine_config(loaded) {
        Ok(Some(config)) => config,
        Ok(None) => return Ok(None),
        Err(MakeError::Engine(crate::engine::EngineError::NotFound { .. }))
            if loaded.pipeline.engine.as_ref().is_some_and(|c| !c.sources.is_empty()) =>
        {
            let config = loaded.pipeline.engine.clone().expect("checked above");
            return Ok(Some((config, "none".to_string())));
        }
        Err(e) => return Err(e),
    };
    let hash = build.hash_file(config.path.as_deref().expect("engine_config resolves the path"))?;
    Ok(Some((config, hash)))
}

/// The project's engine cache (shared by its makes; results keyed by engine identity).
pub fn engine_cache(loaded: &Loaded) -> PathBuf {
    cache_dir(loaded).join("engine.sqlite")
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

/// Where a make keeps the store and the manifest it replaced (for `okb diff`).
pub fn previous_dir(loaded: &Loaded) -> PathBuf {
    cache_dir(loaded).join("previous")
}

/// What a make writes beside the store besides exports: the manifest, the structure
/// review, the validation report and the repertoires' folders (`okb clean` removes them).
pub fn side_outputs(loaded: &Loaded) -> Vec<PathBuf> {
    let manifest = manifest_path(loaded);
    let dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut paths = vec![manifest];
    paths.extend(
        steps::structure_review::FILES
            .iter()
            .chain(&steps::validation_report::FILES)
            .map(|f| dir.join(f)),
    );
    paths
        .extend(loaded.pipeline.repertoires.keys().map(|name| repertoires::report_dir(&dir, name)));
    paths
}

/// Where a make writes its manifest: `manifest.json` beside the store.
pub fn manifest_path(loaded: &Loaded) -> PathBuf {
    let store = loaded.path(&loaded.pipeline.store.path);
    store.parent().map_or_else(|| loaded.path("manifest.json"), |dir| dir.join("manifest.json"))
}

fn source_facts(
    spec: &crate::pipeline::SourceSpec,
    hash: String,
) -> release::manifest::SourceFacts {
    let kind = spec.kind().name().to_string();
    release::manifest::SourceFacts {
        kind,
        url: spec.url().map(str::to_string),
        path: spec.path().map(str::to_string),
        blake3: hash,
    }
}

/// Every pinned file source (taxonomies, counts, structure labels), found in the source store, a
/// mirror or downloaded.
fn resolve_files(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
) -> Result<Vec<SourceFile>, MakeError> {
    let resolver = Resolver {
        store: loaded.path("sources"),
        mirrors: options.mirrors.clone(),
        offline: options.offline,
    };
    let mut found = Vec::new();
    for (name, spec) in &loaded.pipeline.sources {
        if !spec.kind().is_pinned_file() {
            continue;
        }
        let wanted = Wanted {
            name,
            blake3: spec.blake3(),
            path: spec.path().map(|p| loaded.path(p)),
            url: spec.url(),
        };
        let resolved =
            resolver.resolve(&wanted, &mut build.files.lock().expect("file states poisoned"))?;
        let note = match &resolved.origin {
            Origin::Mirror(from) => Some(format!("{name} from mirror {}", from.display())),
            Origin::Download(url) => Some(format!("{name} from {url}")),
            Origin::Store | Origin::Local => None,
        };
        if let Some(note) = note {
            crate::progress::note("Fetched", &note);
            fetched.push(note);
        }
        found.push(SourceFile {
            name: name.clone(),
            kind: spec.kind(),
            path: resolved.path,
            hash: resolved.hash,
        });
    }
    Ok(found)
}

/// The files of every game source, sorted, with their hashes (from the stat cache); a
/// collection's files in its manifest's order, found like pinned sources.
fn list_game_files(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
    facts: &mut Manifest,
) -> Result<Vec<GameFile>, MakeError> {
    let mut game_files = Vec::new();
    for (name, spec) in loaded
        .pipeline
        .sources
        .iter()
        .filter(|(_, s)| s.kind().is_games() || s.kind() == SourceKind::LichessDb)
    {
        if spec.kind() == SourceKind::LichessDb {
            let (files, manifest_hash) = lichess_db_files(loaded, options, build, name, fetched)?;
            game_files.extend(files);
            facts.sources.insert(name.clone(), source_facts(spec, manifest_hash));
            continue;
        }
        if let Some(manifest) = spec.manifest() {
            let manifest = loaded.path(manifest);
            let pin = match spec.blake3() {
                Some(pin) => pin.to_string(),
                None => unpinned_manifest(name, &manifest, build, options)?,
            };
            game_files
                .extend(collection_files(loaded, options, build, name, &manifest, &pin, fetched)?);
            facts.sources.insert(name.clone(), source_facts(spec, pin));
            continue;
        }
        let mut files = Vec::new();
        for pattern in spec.game_paths() {
            let full = loaded.path(&pattern).display().to_string();
            if let Some((link, target)) = broken_links(&full).first() {
                let message = broken_link_message(link, target);
                return Err(MakeError::Games {
                    source_name: name.clone(),
                    error: crate::games::GamesError::Open {
                        path: link.clone(),
                        source: std::io::Error::other(message),
                    },
                });
            }
            match crate::games::input::expand_paths(&[&full]) {
                Ok(found) => files.extend(found),
                // A glob may match nothing (the source as a whole is judged below); a
                // plain path that does not exist is an error.
                Err(crate::games::GamesError::NoMatch { .. })
                    if pattern.contains(['*', '?', '[']) =>
                {
                    if !options.dry_run {
                        crate::progress::note(
                            "Note",
                            &format!("{name}: 0 files matched {pattern}"),
                        );
                    }
                }
                Err(error) => return Err(MakeError::Games { source_name: name.clone(), error }),
            }
        }
        if files.is_empty() && !spec.allows_empty() {
            return Err(MakeError::NoGameFiles {
                source_name: name.clone(),
                patterns: spec.game_paths(),
            });
        }
        files.sort();
        files.dedup();
        let filter = spec
            .game_filter()
            .map_err(|message| BuildError::Step { step: format!("games:{name}"), message })?;
        for path in files {
            let hash = build.hash_file(&path)?;
            let shown = path.strip_prefix(&loaded.root).unwrap_or(&path).display().to_string();
            game_files.push(GameFile {
                source: name.clone(),
                bgn: spec.kind() == SourceKind::Bgn,
                filter: filter.clone(),
                path,
                shown,
                hash,
            });
        }
    }
    Ok(game_files)
}

/// The hash of collection `name`'s unpinned manifest, with a note saying how to pin it.
fn unpinned_manifest(
    name: &str,
    manifest: &Path,
    build: &Build,
    options: &MakeOptions,
) -> Result<String, MakeError> {
    let hash = build.hash_file(manifest)?;
    if !options.dry_run {
        crate::progress::note(
            "Note",
            &format!("collection {name} is not pinned: `okb pin {name}` records blake3 {hash}"),
        );
    }
    Ok(hash)
}

/// The game files of collection `name`: its manifest (at `manifest`, pinned by `pin`)
/// read, and each file it lists found in the store, a mirror or downloaded. A file's step
/// is keyed by its pin, so a compressed mirror copy and a download are the same input.
fn collection_files(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    name: &str,
    manifest: &Path,
    pin: &str,
    fetched: &mut Vec<String>,
) -> Result<Vec<GameFile>, MakeError> {
    let spec = &loaded.pipeline.sources[name];
    let filter = spec
        .game_filter()
        .map_err(|message| BuildError::Step { step: format!("games:{name}"), message })?;
    let resolver = Resolver {
        store: loaded.path("sources"),
        mirrors: options.mirrors.clone(),
        offline: options.offline,
    };
    let mut files = build.files.lock().expect("file states poisoned");
    let entries = crate::sources::collection::read(name, manifest, pin, &mut files)?;
    let resolved = resolver.resolve_collection(name, &entries, &mut files)?;
    let copied: Vec<&Origin> = resolved
        .iter()
        .map(|(_, r)| &r.origin)
        .filter(|o| !matches!(o, Origin::Store | Origin::Local))
        .collect();
    if let Some(first) = copied.first() {
        let from = match first {
            Origin::Mirror(path) => format!("mirror {}", path.parent().unwrap_or(path).display()),
            Origin::Download(url) => {
                url.rsplit_once('/').map_or(url.clone(), |(base, _)| base.to_string())
            }
            Origin::Store | Origin::Local => unreachable!("filtered out"),
        };
        let note = format!("{name}: {} of {} files from {from}", copied.len(), entries.len());
        crate::progress::note("Fetched", &note);
        fetched.push(note);
    }
    let bgn = spec.kind() == SourceKind::Bgn;
    Ok(resolved
        .into_iter()
        .map(|(entry, r)| GameFile {
            source: name.into(),
            bgn,
            filter: filter.clone(),
            path: r.path,
            shown: entry.file_name().into(),
            hash: entry.blake3,
        })
        .collect())
}

/// The game files of Lichess database source `name`, one per month (from the store or
/// downloaded, resuming), and the hash of its months' manifest. A dry run downloads
/// nothing: a month never fetched shows as a stale step.
fn lichess_db_files(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    name: &str,
    fetched: &mut Vec<String>,
) -> Result<(Vec<GameFile>, String), MakeError> {
    let spec = &loaded.pipeline.sources[name];
    let step_error = |message| BuildError::Step { step: format!("games:{name}"), message };
    let db = spec.lichess_db(name).map_err(step_error)?;
    let filter = spec.game_filter().map_err(step_error)?;
    let resolver = Resolver {
        store: loaded.path("sources"),
        mirrors: options.mirrors.clone(),
        offline: options.offline || options.dry_run,
    };
    let game_file = |file_name: String, path: PathBuf, hash: String| GameFile {
        source: name.into(),
        bgn: false,
        filter: filter.clone(),
        path,
        shown: file_name,
        hash,
    };
    let months = match resolver.resolve_lichess_db(
        &db,
        spec.blake3(),
        &mut build.files.lock().expect("file states poisoned"),
    ) {
        Ok(months) => months,
        Err(crate::sources::SourceError::NotFound { .. }) if options.dry_run => {
            let unfetched = db
                .months
                .iter()
                .map(|m| game_file(db.file_name(m), loaded.path("sources"), "unfetched".into()));
            return Ok((unfetched.collect(), "unfetched".into()));
        }
        Err(e) => return Err(e.into()),
    };
    let now = months.iter().filter(|m| m.fetched_now).count();
    if now > 0 {
        let note = format!("{name}: {now} of {} months from {}", months.len(), db.url(""));
        crate::progress::note("Fetched", &note);
        fetched.push(note);
    }
    let (_, hash) = crate::sources::lichess_db::LichessDb::manifest(&months);
    if spec.blake3().is_none() && !options.dry_run {
        crate::progress::note(
            "Note",
            &format!("source {name} is not pinned: `okb pin {name}` records blake3 {hash}"),
        );
    }
    Ok((months.into_iter().map(|m| game_file(m.file_name, m.path, m.entry.blake3)).collect(), hash))
}

/// Why the link `link` (to `target`) leads nowhere: a loop, or a missing target.
fn broken_link_message(link: &Path, target: &Path) -> String {
    // ELOOP: following the links comes back to one of them.
    const ELOOP: i32 = 40;
    if std::fs::metadata(link).err().and_then(|e| e.raw_os_error()) == Some(ELOOP) {
        return format!(
            "{} is a link to {}, which leads back to itself (a loop of symbolic links)",
            link.display(),
            target.display()
        );
    }
    format!(
        "{} is a link to {}, which does not exist (a relative link resolves from the link's own folder: link to an absolute path, e.g. `ln -s \"$PWD\"/../shared/…`)",
        link.display(),
        target.display()
    )
}

/// The symbolic links that `pattern` matches whose targets do not exist, with their targets.
fn broken_links(pattern: &str) -> Vec<(PathBuf, PathBuf)> {
    let Ok(paths) = glob::glob(pattern) else { return Vec::new() };
    paths
        .flatten()
        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) && !p.exists())
        .filter_map(|p| std::fs::read_link(&p).ok().map(|target| (p, target)))
        .collect()
}

/// Whether any step did work.
pub fn did_work(summary: &MakeSummary) -> bool {
    summary.steps.iter().any(|s| s.status != Status::Fresh)
}
