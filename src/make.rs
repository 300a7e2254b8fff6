//! `okb make`: declares the steps a pipeline asks for ([`plan`]) and runs them.
//!
//! Data flows one way: sources → `parse:<source>` → `eco` → `tree` → `store` and
//! `export:<name>`. The steps themselves are declared in [`crate::steps`], one module per
//! rule; the scheduler in [`crate::dataflow`] keys them by content hash and runs them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::dataflow::mark::UnfinishedMark;
use crate::files::temp;
use crate::diagnostics::Warning;
use crate::dataflow::{Build, BuildError, CorruptCache, Decl, Plan, Status, StepReport};
use crate::eco::EcoFormat;
use crate::pipeline::{ExportFormat, ExportSpec, Loaded, SourceKind};
use crate::release::{self, Manifest};
use crate::sources::{Origin, Resolver, Wanted};
use crate::steps::{self, game_file::GameFile};

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
        help("install Stockfish (`apt-get install stockfish`) or set `path` in [engine] of pipeline.toml; remove [engine] to skip annotation")
    )]
    Engine(#[from] crate::engine::EngineError),
    /// A game source's paths and globs matched no file, and it does not allow that.
    #[error("game source {source_name}: no file matches {}", patterns.join(", "))]
    #[diagnostic(
        code(okb::games),
        help("check the paths (a typo? a disk not mounted?); a source that may be empty says `allow_empty = true` in [sources.{source_name}]")
    )]
    NoGameFiles {
        /// The source.
        source_name: String,
        /// Its paths and globs, as written.
        patterns: Vec<String>,
    },
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

fn format_of(kind: SourceKind) -> Option<EcoFormat> {
    match kind {
        SourceKind::LichessTsv => Some(EcoFormat::LichessTsv),
        SourceKind::ScidEco => Some(EcoFormat::Scid),
        SourceKind::EcoPgn => Some(EcoFormat::PgnExtract),
        SourceKind::Pgn | SourceKind::Bgn | SourceKind::StructureLabels | SourceKind::Counts | SourceKind::LichessExplorer | SourceKind::LichessEvals | SourceKind::LichessCloudEval | SourceKind::LichessDb => None,
    }
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
pub fn make(loaded: &Loaded, options: &MakeOptions, on_report: impl FnMut(&StepReport) + Clone + Send + 'static) -> Result<MakeSummary, MakeError> {
    make_adapted(loaded, options, on_report, &|_, _, plan| Ok(plan))
}

/// Changes the plan of a pipeline before it runs: another command's steps (`okb engine
/// queue` runs the steps up to the tree, then its own).
pub type Adapt = dyn Fn(&Loaded, &Build, Plan<'static>) -> Result<Plan<'static>, MakeError> + Sync;

/// [`make`] with the plan changed by `adapt` first.
pub fn make_adapted(
    loaded: &Loaded,
    options: &MakeOptions,
    on_report: impl FnMut(&StepReport) + Clone + Send + 'static,
    adapt: &Adapt,
) -> Result<MakeSummary, MakeError> {
    const MAX_RETRIES: usize = 256;
    let mark = if options.dry_run {
        None
    } else {
        let cache = cache_dir(loaded);
        let io = |source| BuildError::Io { what: format!("marking the make under way in {}", cache.display()), source };
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
            other => break other?,
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
    let mut removed = temp::sweep(&cache_dir(loaded), true);
    let mut folders = vec![loaded.path("sources")];
    let outputs = std::iter::once(&loaded.pipeline.store.path).chain(loaded.pipeline.exports.values().map(|e| &e.output));
    for output in outputs.map(|o| loaded.path(o)) {
        // An export may be a folder of files (eco.json) or one file.
        folders.extend(output.parent().map(Path::to_path_buf));
        folders.push(output);
    }
    folders.sort();
    folders.dedup();
    for folder in folders {
        removed.extend(temp::sweep(&folder, false));
    }
    if !removed.is_empty() {
        let first = removed[0].display();
        let more = if removed.len() > 1 { format!(" and {} more", removed.len() - 1) } else { String::new() };
        eprintln!("{:>12} temporary files of an interrupted make: {first}{more}", "Removed");
    }
}

fn discard(loaded: &Loaded, corrupt: &CorruptCache) {
    let b = Build::new(cache_dir(loaded), true, Box::new(|_| {}));
    b.discard(corrupt);
}

fn make_once(loaded: &Loaded, options: &MakeOptions, on_report: crate::dataflow::OnReport, adapt: &Adapt) -> Result<MakeSummary, MakeError> {
    let start = Instant::now();
    let build = Build::new(cache_dir(loaded), options.dry_run, on_report);
    let mut summary = MakeSummary::default();
    let plan = adapt(loaded, &build, plan(loaded, options, &build, &mut summary.fetched)?)?;
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

/// The steps `loaded` asks for, in pipeline order. Sources are resolved and game files
/// listed here (notes about fetched sources go to `fetched`); nothing is computed.
pub fn plan(loaded: &Loaded, options: &MakeOptions, build: &Build, fetched: &mut Vec<String>) -> Result<Plan<'static>, MakeError> {
    let pipeline = &loaded.pipeline;
    let mut steps: Vec<Decl<'static>> = Vec::new();
    let mut facts = Manifest { manifest: release::manifest::FORMAT, okb: release::manifest::Tool::this(), ..Default::default() };
    let sources = source_steps(loaded, options, build, fetched, &mut steps, &mut facts)?;
    steps.push(steps::eco::declare(sources.taxonomies, pipeline.eco.interpolate));
    let game_files = list_game_files(loaded, options, build, fetched, &mut facts)?;
    let parts = phase2_steps(loaded, options, &game_files, sources.counts, &mut steps, &mut facts)?;
    steps.push(steps::tree::declare(!parts.is_empty(), pipeline.tree.clone()));
    if let Some((config, hash)) = engine_setup(loaded, build)? {
        let settings = serde_json::to_value(&pipeline.engine).unwrap_or_default();
        facts.engine = Some(release::manifest::EngineFacts { binary_blake3: hash.clone(), settings, ..Default::default() });
        let mut evals = sources.evals.clone();
        evals.extend(cloud_steps(loaded, options, &config, &mut steps, &mut facts));
        let sources = evals_refs(&config, &evals);
        steps.push(steps::engine::declare(config, hash, engine_cache(loaded), sources));
    }
    let store_path = loaded.path(&pipeline.store.path);
    let review_dir = store_path.parent().map(Path::to_path_buf).unwrap_or_default();
    steps.push(steps::structures::declare(sources.labels.clone()));
    steps.push(steps::structure_review::declare(review_dir.clone(), sources.labels));
    if let Some(params) = &pipeline.validate {
        steps.push(steps::validate::declare(params.clone(), files_of(&game_files, &params.sources)));
        steps.push(steps::validation_report::declare(review_dir, params.stubs));
    }
    steps.push(steps::coverage::declare(parts));
    store_steps(loaded, options, &game_files, &store_path, &mut steps)?;
    for (name, spec) in &pipeline.exports {
        steps.push(export_step(name, spec, loaded.path(&spec.output), &game_files, pipeline.engine.is_some()));
    }
    let build_dir = store_path.parent().map(Path::to_path_buf).unwrap_or_default();
    steps.extend(repertoires::steps(loaded, options, build, &build_dir, &game_files, fetched, &mut facts)?);
    let params = serde_json::to_value(pipeline).map_err(|e| BuildError::Step { step: "pipeline".into(), message: e.to_string() })?;
    facts.pipeline = release::manifest::PipelineFacts { file: release::manifest::relative(&loaded.root, &loaded.file), parameters: params.clone() };
    facts.game_files = game_files
        .iter()
        .map(|g| release::manifest::GameFileFacts { source: g.source.clone(), path: g.shown.clone(), blake3: g.hash.clone() })
        .collect();
    steps.push(manifest_step(loaded, facts, &steps, store_path));
    Ok(Plan { steps, params })
}

/// The sources' steps other than game files: taxonomies, counts files, structure labels.
struct SourceSteps {
    taxonomies: Vec<(String, EcoFormat)>,
    /// Counts sources: (name, step id).
    counts: Vec<(String, String)>,
    labels: Vec<String>,
    /// Evaluation sources: (name, step id, pin).
    evals: Vec<(String, String, String)>,
}

/// The steps of the pipeline's cloud-eval sources; returns their (name, step id, pin)
/// for the engine step (`unpinned` for a source without `blake3`).
fn cloud_steps(loaded: &Loaded, options: &MakeOptions, engine: &crate::engine::EngineConfig, steps: &mut Vec<Decl<'static>>, facts: &mut Manifest) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (name, spec) in loaded.pipeline.sources.iter().filter(|(_, s)| s.kind == SourceKind::LichessCloudEval) {
        let source = crate::evals::cloud::CloudSource {
            name: name.clone(),
            server: spec.url.clone().unwrap_or_default().trim_end_matches('/').to_string(),
            token_env: spec.token_env.clone(),
            politeness: spec.politeness.clone().unwrap_or_default(),
            multipv: spec.multipv.unwrap_or(engine.multipv),
            pin: spec.blake3.clone(),
        };
        let pin = spec.blake3.clone().unwrap_or_else(|| "unpinned".into());
        facts.sources.insert(name.clone(), source_facts(spec, pin.clone()));
        let offline = options.offline || options.dry_run;
        steps.push(steps::cloud_eval::declare(source, engine.clone(), loaded.path("sources"), options.mirrors.clone(), offline));
        found.push((name.clone(), steps::cloud_eval::id(name), pin));
    }
    found
}

/// The evaluation sources `config` names, as the engine step takes them.
pub fn evals_refs(config: &crate::engine::EngineConfig, evals: &[(String, String, String)]) -> Vec<steps::engine::SourceRef> {
    config
        .sources
        .iter()
        .filter_map(|name| evals.iter().find(|(n, _, _)| n == name))
        .map(|(name, step, pin)| steps::engine::SourceRef { name: name.clone(), step: step.clone(), label: format!("{name}@{}", &pin[..pin.len().min(12)]) })
        .collect()
}

/// Declares a step per taxonomy, counts file and structure-label file (each source
/// resolved: found, fetched or copied from a mirror), and records the sources' facts.
fn source_steps(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
    steps: &mut Vec<Decl<'static>>,
    facts: &mut Manifest,
) -> Result<SourceSteps, MakeError> {
    let mut found = SourceSteps { taxonomies: Vec::new(), counts: Vec::new(), labels: Vec::new(), evals: Vec::new() };
    for (name, kind, path, hash) in resolve_files(loaded, options, build, fetched)? {
        match format_of(kind) {
            Some(format) => {
                let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                steps.push(steps::parse::declare(&name, format, path, &hash, size));
                found.taxonomies.push((name.clone(), format));
            }
            None if kind == SourceKind::LichessEvals => {
                let shown = path.strip_prefix(&loaded.root).unwrap_or(&path).display().to_string();
                steps.push(steps::evals::declare(&name, path, shown, &hash));
                found.evals.push((name.clone(), steps::evals::id(&name), hash.clone()));
            }
            None if kind == SourceKind::Counts => {
                steps.push(steps::counts::declare(&name, path, &hash, loaded.pipeline.tree.max_ply as usize));
                found.counts.push((name.clone(), steps::counts::id(&name)));
            }
            None => {
                steps.push(steps::structure_labels::declare(&name, path, &hash));
                found.labels.push(steps::structure_labels::id(&name));
            }
        }
        facts.sources.insert(name.clone(), source_facts(&loaded.pipeline.sources[&name], hash));
    }
    Ok(found)
}

/// Phase 2's counting: a step per game file and per crawl, and the `games` merge of
/// them with the counts files' steps `counts`; returns every counting step as (source
/// name, step id), none when the tree has no games.
fn phase2_steps(
    loaded: &Loaded,
    options: &MakeOptions,
    game_files: &[GameFile],
    counts: Vec<(String, String)>,
    steps: &mut Vec<Decl<'static>>,
    facts: &mut Manifest,
) -> Result<Vec<(String, String)>, MakeError> {
    let pipeline = &loaded.pipeline;
    let spill_dir = cache_dir(loaded).join("spill");
    for file in game_files {
        steps.push(steps::game_file::declare(file.clone(), pipeline.tree.max_ply as usize, pipeline.games.memory_budget_mb, spill_dir.clone()));
    }
    let crawls = crawl_steps(loaded, options, facts)?;
    let files = game_files.iter().map(|g| (g.source.clone(), g.id()));
    let crawled = crawls.iter().map(|(name, d)| (name.clone(), d.id.clone()));
    let parts: Vec<(String, String)> = files.chain(counts).chain(crawled).collect();
    steps.extend(crawls.into_iter().map(|(_, d)| d));
    if !parts.is_empty() {
        steps.push(steps::games::declare(parts.iter().map(|(_, id)| id.clone()).collect(), pipeline.games.memory_budget_mb));
    }
    Ok(parts)
}

/// The store's steps: its entries, the node records, the explorer index (`[explorer]`),
/// the SQLite store and its PostgreSQL copy (`[store] url`).
fn store_steps(loaded: &Loaded, options: &MakeOptions, game_files: &[GameFile], store_path: &Path, steps: &mut Vec<Decl<'static>>) -> Result<(), MakeError> {
    let pipeline = &loaded.pipeline;
    let entries = cache_dir(loaded).join("store-entries.sqlite");
    let (with_engine, with_stubs) = (pipeline.engine.is_some(), pipeline.validate.as_ref().is_some_and(|v| v.stubs));
    steps.push(steps::store_entries::declare(entries.clone()));
    steps.push(steps::node_records::declare(with_engine));
    if let Some(params) = &pipeline.explorer {
        steps.push(explorer_step(loaded, options, game_files, params));
    }
    let with_explorer = pipeline.explorer.is_some();
    let collections = player_collection_files(loaded, game_files);
    let with_players = !collections.is_empty();
    if with_players {
        steps.push(steps::player_games::declare(collections));
    }
    let with = steps::store::With { engine: with_engine, stubs: with_stubs, explorer: with_explorer, players: with_players };
    steps.push(steps::store::declare(store_path.to_path_buf(), entries, previous_dir(loaded), with));
    if let Some(target) = pipeline.store.postgres() {
        // The pipeline's validation parsed it already; this cannot fail here.
        let target = target.map_err(|e| BuildError::Step { step: "store:postgres".into(), message: e.to_string() })?;
        steps.push(steps::store_postgres::declare(store_path.to_path_buf(), target));
    }
    Ok(())
}

/// The PGN files of the player collections (game sources with `players`), with their
/// BLAKE3s and sources, for `player-games`.
fn player_collection_files(loaded: &Loaded, game_files: &[GameFile]) -> Vec<(crate::repertoire::collection::CollectionFile, String, String)> {
    let players = |g: &&GameFile| loaded.pipeline.sources.get(&g.source).and_then(|s| s.players.clone()).filter(|_| !g.bgn);
    game_files
        .iter()
        .filter_map(|g| players(&g).map(|p| ((g.path.clone(), g.shown.clone(), p), g.hash.clone(), g.source.clone())))
        .collect()
}

/// The explorer index over the game files (`[explorer]`).
fn explorer_step(loaded: &Loaded, options: &MakeOptions, game_files: &[GameFile], params: &crate::explorer_index::ExplorerParams) -> Decl<'static> {
    let pipeline = &loaded.pipeline;
    // A counts file holds no games: the index (and so every filtered answer) leaves it out.
    if !options.dry_run
        && let Some(name) = pipeline.sources.iter().find(|(_, s)| s.kind == SourceKind::Counts).map(|(n, _)| n)
    {
        eprintln!("{:>12} [explorer] indexes game files only: filtered answers leave out counts source {name}", "Note");
    }
    let files = game_files
        .iter()
        .map(|g| {
            let spec = crate::explorer_index::FileSpec { path: g.path.clone(), bgn: g.bgn, filter: g.filter.clone() };
            (spec, g.hash.clone(), g.source.clone())
        })
        .collect();
    steps::explorer::declare(files, pipeline.tree.max_ply as usize, params.clone())
}

/// The release manifest: the facts and the outputs of `steps` the build delivers (files
/// outside the cache, whose own intermediates such as store:entries are no output; the
/// store apart).
fn manifest_step(loaded: &Loaded, facts: Manifest, steps: &[Decl<'static>], store_path: PathBuf) -> Decl<'static> {
    let cache = cache_dir(loaded);
    let delivered = |d: &&Decl<'_>| d.id != "store" && d.action.writes().1.is_some_and(|t| !t.starts_with(&cache));
    let outputs = steps.iter().filter(delivered).filter_map(|d| match d.action.writes() {
        ("files", Some(target)) => Some((d.id.clone(), target.clone(), true)),
        ("file", Some(target)) => Some((d.id.clone(), target.clone(), false)),
        _ => None,
    });
    let engine = facts.engine.is_some();
    let inputs = steps::manifest::Inputs { facts, root: loaded.root.clone(), outputs: outputs.collect(), store: Some(store_path), engine };
    steps::manifest::declare(inputs, manifest_path(loaded), previous_dir(loaded))
}

/// The steps of the pipeline's explorer crawls, each crawl made available first (walked,
/// resumed, or its missing answers fetched). Their counts are parts of the `games` merge,
/// added to the game files' and counts files'. A dry run never asks a server: a crawl it
/// cannot replay is declared unfinished, so the steps after it show as stale. Each step
/// comes with its source's name.
fn crawl_steps(loaded: &Loaded, options: &MakeOptions, facts: &mut Manifest) -> Result<Vec<(String, Decl<'static>)>, MakeError> {
    let pipeline = &loaded.pipeline;
    let mut steps = Vec::new();
    for (name, spec) in pipeline.sources.iter().filter(|(_, s)| s.kind == SourceKind::LichessExplorer) {
        let source = spec.crawl(name, &pipeline.tree).map_err(|why| crate::crawl::CrawlError::Settings { source_name: name.clone(), why })?;
        let archive = crate::crawl::archive::Archive::new(&loaded.path("sources"), &options.mirrors);
        let how = crate::crawl::source::How { offline: options.offline || options.dry_run, refresh: false };
        let hash = match source.make_available(&archive, how) {
            Ok(available) => {
                report_crawl(&source, &available);
                available.hash
            }
            // A dry run (`okb status`, `okb graph`) shows a crawl it cannot read as stale.
            Err(crate::crawl::CrawlError::Offline { .. } | crate::crawl::CrawlError::MissingManifest { .. }) if options.dry_run => "unfinished-crawl".to_string(),
            Err(e) => return Err(e.into()),
        };
        facts.sources.insert(name.clone(), source_facts(spec, hash.clone()));
        let archive = crate::crawl::archive::Archive::new(&loaded.path("sources"), &[]);
        steps.push((name.clone(), steps::crawl::declare(name, archive, &hash)));
    }
    Ok(steps)
}

/// Says what a crawl asked the server, and what an unpinned one would pin.
fn report_crawl(source: &crate::crawl::source::CrawlSource, available: &crate::crawl::source::Available) {
    let c = &available.counters;
    if c.answered > 0 {
        let (answered, positions, retried) = (c.answered, available.manifest.positions.len(), c.retried);
        eprintln!("{:>12} {}: {answered} answers from {} ({positions} positions in the crawl, {retried} retries)", "Crawled", source.name, source.server);
    }
    if source.pin.is_none() {
        eprintln!("{:>12} crawl {} is not pinned: `okb pin {}` records blake3 {}", "Note", source.name, source.name, available.hash);
    }
}

/// The pipeline's `[engine]` with its binary found (`None` without `[engine]`): a
/// relative `path` is relative to the pipeline file, like every other path in it.
pub fn engine_config(loaded: &Loaded) -> Result<Option<crate::engine::EngineConfig>, MakeError> {
    let Some(config) = &loaded.pipeline.engine else { return Ok(None) };
    let configured = config.path.as_ref().map(|p| if p.components().count() > 1 { loaded.root.join(p) } else { p.clone() });
    let binary = crate::engine::resolve_engine(configured.as_deref())?;
    Ok(Some(crate::engine::EngineConfig { path: Some(binary), ..config.clone() }))
}

/// [`engine_config`] and the BLAKE3 of the engine binary (from the stat cache). Without
/// an engine, a pipeline with evaluation sources still builds (`none` for the binary):
/// the engine step fails only if the sources leave positions to search.
pub fn engine_setup(loaded: &Loaded, build: &Build) -> Result<Option<(crate::engine::EngineConfig, String)>, MakeError> {
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
    let mut keep: std::collections::BTreeSet<String> = std::collections::BTreeSet::from([target.to_string()]);
    loop {
        let before = keep.len();
        let reads: Vec<String> = steps.iter().filter(|d| keep.contains(&d.id)).flat_map(|d| d.reads.iter().cloned()).collect();
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
    paths.extend(steps::structure_review::FILES.iter().chain(&steps::validation_report::FILES).map(|f| dir.join(f)));
    paths.extend(loaded.pipeline.repertoires.keys().map(|name| repertoires::report_dir(&dir, name)));
    paths
}

/// Where a make writes its manifest: `manifest.json` beside the store.
pub fn manifest_path(loaded: &Loaded) -> PathBuf {
    let store = loaded.path(&loaded.pipeline.store.path);
    store.parent().map_or_else(|| loaded.path("manifest.json"), |dir| dir.join("manifest.json"))
}

fn source_facts(spec: &crate::pipeline::SourceSpec, hash: String) -> release::manifest::SourceFacts {
    let kind = serde_json::to_value(spec.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    release::manifest::SourceFacts { kind, url: spec.url.clone(), path: spec.path.clone(), blake3: hash }
}

/// The step of one `[exports.<name>]` table.
fn export_step(name: &str, spec: &ExportSpec, target: PathBuf, game_files: &[GameFile], with_engine: bool) -> Decl<'static> {
    match spec.format {
        ExportFormat::EcoJson => steps::export_eco_json::declare(name, target, spec.pretty),
        ExportFormat::Polyglot => steps::export_polyglot::declare(name, target, spec.weights),
        ExportFormat::Csv => steps::export_csv::declare(name, target, spec.delimiter.as_bytes()[0]),
        ExportFormat::Pgn => steps::export_pgn::declare(name, target, spec.max_depth, with_engine),
        ExportFormat::Packed => steps::export_packed::declare(name, target),
        ExportFormat::Neo4j => steps::export_neo4j::declare(name, target),
        ExportFormat::LichessEvals => steps::export_lichess_evals::declare(name, target),
        ExportFormat::OpeningIq => steps::export_openingiq::declare(name, target, spec.max_depth, spec.pretty, with_engine),
        ExportFormat::ClassifiedPgn => steps::export_classified::declare(name, target, files_of(game_files, &spec.sources), false),
        ExportFormat::ClassifiedBgn => steps::export_classified::declare(name, target, files_of(game_files, &spec.sources), true),
    }
}

/// The game files of the named sources: (path, shown name, BLAKE3).
fn files_of(game_files: &[GameFile], sources: &[String]) -> Vec<(PathBuf, String, String)> {
    game_files.iter().filter(|g| sources.contains(&g.source)).map(|g| (g.path.clone(), g.shown.clone(), g.hash.clone())).collect()
}

/// Every pinned file source (taxonomies, counts, structure labels), found in the source store, a
/// mirror or downloaded: (name, kind, file, BLAKE3).
fn resolve_files(
    loaded: &Loaded,
    options: &MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
) -> Result<Vec<(String, SourceKind, PathBuf, String)>, MakeError> {
    let resolver = Resolver { store: loaded.path("sources"), mirrors: options.mirrors.clone(), offline: options.offline };
    let mut found = Vec::new();
    for (name, spec) in &loaded.pipeline.sources {
        if !spec.kind.is_pinned_file() {
            continue;
        }
        let wanted = Wanted { name, blake3: spec.blake3.as_deref(), path: spec.path.as_deref().map(|p| loaded.path(p)), url: spec.url.as_deref() };
        let resolved = resolver.resolve(&wanted, &mut build.files.lock().expect("file states poisoned"))?;
        let note = match &resolved.origin {
            Origin::Mirror(from) => Some(format!("{name} from mirror {}", from.display())),
            Origin::Download(url) => Some(format!("{name} from {url}")),
            Origin::Store | Origin::Local => None,
        };
        if let Some(note) = note {
            eprintln!("{:>12} {note}", "Fetched");
            fetched.push(note);
        }
        found.push((name.clone(), spec.kind, resolved.path, resolved.hash));
    }
    Ok(found)
}

/// The files of every game source, sorted, with their hashes (from the stat cache); a
/// collection's files in its manifest's order, found like pinned sources.
fn list_game_files(loaded: &Loaded, options: &MakeOptions, build: &Build, fetched: &mut Vec<String>, facts: &mut Manifest) -> Result<Vec<GameFile>, MakeError> {
    let mut game_files = Vec::new();
    for (name, spec) in loaded.pipeline.sources.iter().filter(|(_, s)| s.kind.is_games() || s.kind == SourceKind::LichessDb) {
        if spec.kind == SourceKind::LichessDb {
            let (files, manifest_hash) = lichess_db_files(loaded, options, build, name, fetched)?;
            game_files.extend(files);
            facts.sources.insert(name.clone(), source_facts(spec, manifest_hash));
            continue;
        }
        if let Some(manifest) = &spec.manifest {
            let manifest = loaded.path(manifest);
            let pin = match &spec.blake3 {
                Some(pin) => pin.clone(),
                None => unpinned_manifest(name, &manifest, build, options)?,
            };
            game_files.extend(collection_files(loaded, options, build, name, &manifest, &pin, fetched)?);
            facts.sources.insert(name.clone(), source_facts(spec, pin));
            continue;
        }
        let mut files = Vec::new();
        for pattern in spec.game_paths() {
            let full = loaded.path(&pattern).display().to_string();
            if let Some((link, target)) = broken_links(&full).first() {
                let message = broken_link_message(link, target);
                return Err(MakeError::Games { source_name: name.clone(), error: crate::games::GamesError::Open { path: link.clone(), source: std::io::Error::other(message) } });
            }
            match crate::games::input::expand_paths(&[&full]) {
                Ok(found) => files.extend(found),
                // A glob may match nothing (the source as a whole is judged below); a
                // plain path that does not exist is an error.
                Err(crate::games::GamesError::NoMatch { .. }) if pattern.contains(['*', '?', '[']) => {
                    if !options.dry_run {
                        eprintln!("{:>12} {name}: 0 files matched {pattern}", "Note");
                    }
                }
                Err(error) => return Err(MakeError::Games { source_name: name.clone(), error }),
            }
        }
        if files.is_empty() && spec.allow_empty != Some(true) {
            return Err(MakeError::NoGameFiles { source_name: name.clone(), patterns: spec.game_paths() });
        }
        files.sort();
        files.dedup();
        let filter = spec.game_filter().map_err(|message| BuildError::Step { step: format!("games:{name}"), message })?;
        for path in files {
            let hash = build.hash_file(&path)?;
            let shown = path.strip_prefix(&loaded.root).unwrap_or(&path).display().to_string();
            game_files.push(GameFile { source: name.clone(), bgn: spec.kind == SourceKind::Bgn, filter: filter.clone(), path, shown, hash });
        }
    }
    Ok(game_files)
}

/// The hash of collection `name`'s unpinned manifest, with a note saying how to pin it.
fn unpinned_manifest(name: &str, manifest: &Path, build: &Build, options: &MakeOptions) -> Result<String, MakeError> {
    let hash = build.hash_file(manifest)?;
    if !options.dry_run {
        eprintln!("{:>12} collection {name} is not pinned: `okb pin {name}` records blake3 {hash}", "Note");
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
    let filter = spec.game_filter().map_err(|message| BuildError::Step { step: format!("games:{name}"), message })?;
    let resolver = Resolver { store: loaded.path("sources"), mirrors: options.mirrors.clone(), offline: options.offline };
    let mut files = build.files.lock().expect("file states poisoned");
    let entries = crate::sources::collection::read(name, manifest, pin, &mut files)?;
    let resolved = resolver.resolve_collection(name, &entries, &mut files)?;
    let copied: Vec<&Origin> = resolved.iter().map(|(_, r)| &r.origin).filter(|o| !matches!(o, Origin::Store | Origin::Local)).collect();
    if let Some(first) = copied.first() {
        let from = match first {
            Origin::Mirror(path) => format!("mirror {}", path.parent().unwrap_or(path).display()),
            Origin::Download(url) => url.rsplit_once('/').map_or(url.clone(), |(base, _)| base.to_string()),
            Origin::Store | Origin::Local => unreachable!("filtered out"),
        };
        let note = format!("{name}: {} of {} files from {from}", copied.len(), entries.len());
        eprintln!("{:>12} {note}", "Fetched");
        fetched.push(note);
    }
    let bgn = spec.kind == SourceKind::Bgn;
    Ok(resolved
        .into_iter()
        .map(|(entry, r)| GameFile { source: name.into(), bgn, filter: filter.clone(), path: r.path, shown: entry.file_name().into(), hash: entry.blake3 })
        .collect())
}

/// The game files of Lichess database source `name`, one per month (from the store or
/// downloaded, resuming), and the hash of its months' manifest. A dry run downloads
/// nothing: a month never fetched shows as a stale step.
fn lichess_db_files(loaded: &Loaded, options: &MakeOptions, build: &Build, name: &str, fetched: &mut Vec<String>) -> Result<(Vec<GameFile>, String), MakeError> {
    let spec = &loaded.pipeline.sources[name];
    let step_error = |message| BuildError::Step { step: format!("games:{name}"), message };
    let db = spec.lichess_db(name).map_err(step_error)?;
    let filter = spec.game_filter().map_err(step_error)?;
    let resolver = Resolver { store: loaded.path("sources"), mirrors: options.mirrors.clone(), offline: options.offline || options.dry_run };
    let game_file = |file_name: String, path: PathBuf, hash: String| GameFile { source: name.into(), bgn: false, filter: filter.clone(), path, shown: file_name, hash };
    let months = match resolver.resolve_lichess_db(&db, spec.blake3.as_deref(), &mut build.files.lock().expect("file states poisoned")) {
        Ok(months) => months,
        Err(crate::sources::SourceError::NotFound { .. }) if options.dry_run => {
            let unfetched = db.months.iter().map(|m| game_file(db.file_name(m), loaded.path("sources"), "unfetched".into()));
            return Ok((unfetched.collect(), "unfetched".into()));
        }
        Err(e) => return Err(e.into()),
    };
    let now = months.iter().filter(|m| m.fetched_now).count();
    if now > 0 {
        let note = format!("{name}: {now} of {} months from {}", months.len(), db.url(""));
        eprintln!("{:>12} {note}", "Fetched");
        fetched.push(note);
    }
    let (_, hash) = crate::sources::lichess_db::LichessDb::manifest(&months);
    if spec.blake3.is_none() && !options.dry_run {
        eprintln!("{:>12} source {name} is not pinned: `okb pin {name}` records blake3 {hash}", "Note");
    }
    Ok((months.into_iter().map(|m| game_file(m.file_name, m.path, m.entry.blake3)).collect(), hash))
}

/// Why the link `link` (to `target`) leads nowhere: a loop, or a missing target.
fn broken_link_message(link: &Path, target: &Path) -> String {
    // ELOOP: following the links comes back to one of them.
    const ELOOP: i32 = 40;
    if std::fs::metadata(link).err().and_then(|e| e.raw_os_error()) == Some(ELOOP) {
        return format!("{} is a link to {}, which leads back to itself (a loop of symbolic links)", link.display(), target.display());
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

