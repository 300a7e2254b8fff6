//! `okb make`: the pipeline as a sequence of memoized steps.
//!
//! Data flows one way: sources → `parse:<source>` → `eco` → `tree` → `store` and
//! `export:<name>`. Each arrow is a step input keyed by content hash (see [`crate::dataflow`]).

use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use std::time::Instant;

use crate::dataflow::temp::{self, UnfinishedMark};
use crate::dataflow::{Build, BuildError, CorruptCache, Output, Status, Step, StepReport};
use crate::diagnostics::Warning;
use crate::eco::{self, EcoFormat, EcoSkeleton, ParsedSource, merge::MergeInput};
use crate::export::{self, ExportFile};
use crate::pipeline::{ExportFormat, ExportSpec, Loaded, SourceKind};
use crate::record::NodeRecord;
use crate::sources::{Origin, Resolver, Wanted};
use crate::engine::Annotations;
use crate::games::aggregate::{AggregateOptions, FileAggregate, Format};
use crate::structure::StructureTags;
use crate::tree::{self, Tree};
use crate::validate::report::ValidationReport;

/// Code versions: bump when a step's code changes what it produces.
mod versions {
    pub const PARSE: u32 = 1;
    pub const ECO: u32 = 2;
    pub const GAMES_FILE: u32 = 2;
    pub const GAMES: u32 = 2;
    pub const TREE: u32 = 3;
    pub const EXPORT_POLYGLOT: u32 = 1;
    pub const STORE: u32 = 5 + crate::store::schema::SCHEMA_VERSION * 100;
    pub const STORE_ENTRIES: u32 = 1 + crate::store::schema::SCHEMA_VERSION * 100;
    pub const EXPORT_ECO_JSON: u32 = 1;
    pub const EXPORT_CSV: u32 = 3;
    pub const ENGINE: u32 = 1;
    pub const STRUCTURES: u32 = 1;
    pub const STRUCTURE_REVIEW: u32 = 1;
    pub const VALIDATE: u32 = 2;
    pub const VALIDATION_REPORT: u32 = 1;
    pub const EXPORT_CLASSIFIED_PGN: u32 = 1;
    pub const EXPORT_CLASSIFIED_BGN: u32 = 1;
    pub const EXPORT_OPENINGIQ: u32 = 1;
    pub const EXPORT_PGN: u32 = 1;
    pub const EXPORT_PACKED: u32 = 1;
}

/// Options of one `okb make` (or `okb status`) run.
#[derive(Clone, Debug, Default)]
pub struct MakeOptions {
    /// Mirror folders for pinned sources.
    pub mirrors: Vec<PathBuf>,
    /// Never download.
    pub offline: bool,
    /// Only report what would run.
    pub dry_run: bool,
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
}

/// Errors of a make run.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum MakeError {
    /// A source could not be had.
    #[error(transparent)]
    #[diagnostic(code(okb::source), help("put the file in a mirror folder (--mirror DIR or OKB_MIRROR), or allow downloads"))]
    Source(#[from] crate::sources::SourceError),
    /// The build engine failed.
    #[error(transparent)]
    #[diagnostic(code(okb::build))]
    Build(#[from] BuildError),
    /// The store could not be written.
    #[error(transparent)]
    #[diagnostic(code(okb::store))]
    Store(#[from] crate::store::StoreError),
    /// The engine could not be used at all (missing, unstartable, bad settings).
    #[error(transparent)]
    #[diagnostic(
        code(okb::engine),
        help("install Stockfish (`apt-get install stockfish`) or set `path` in [engine] of pipeline.toml; remove [engine] to skip annotation")
    )]
    Engine(#[from] crate::engine::EngineError),
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
        SourceKind::Pgn | SourceKind::Bgn => None,
    }
}

/// The project's cache folder.
pub fn cache_dir(loaded: &Loaded) -> PathBuf {
    loaded.path("cache")
}

/// Runs the pipeline. A corrupt cache object is discarded and the run retried, so the
/// steps that produced it run again (each retry discards one object).
///
/// The caller holds the project lock. A make that finds the previous one unfinished
/// (killed, or failed) first removes the temporary files that one left behind.
pub fn make(loaded: &Loaded, options: &MakeOptions, on_report: impl FnMut(&StepReport) + Clone + Send + 'static) -> Result<MakeSummary, MakeError> {
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
        match make_once(loaded, options, Box::new(on_report.clone())) {
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

fn make_once(loaded: &Loaded, options: &MakeOptions, on_report: crate::dataflow::OnReport) -> Result<MakeSummary, MakeError> {
    let start = Instant::now();
    let pipeline = &loaded.pipeline;
    let build = Build::new(cache_dir(loaded), options.dry_run, on_report);
    let resolver = Resolver { store: loaded.path("sources"), mirrors: options.mirrors.clone(), offline: options.offline };
    let mut summary = MakeSummary::default();
    // Warnings of the steps that run now; fresh steps only report their count.
    let new_warnings: std::sync::Arc<std::sync::Mutex<Vec<Warning>>> = Default::default();

    // Phase 1: parse each taxonomy file, then merge.
    let mut taxonomy = Vec::new();
    for (name, spec) in &pipeline.sources {
        let Some(format) = format_of(spec.kind) else { continue };
        let wanted = Wanted {
            name,
            blake3: spec.blake3.as_deref(),
            path: spec.path.as_deref().map(|p| loaded.path(p)),
            url: spec.url.as_deref(),
        };
        let resolved = resolver.resolve(&wanted, &mut build.files.lock().expect("file states poisoned"))?;
        let note = match &resolved.origin {
            Origin::Mirror(from) => Some(format!("{name} from mirror {}", from.display())),
            Origin::Download(url) => Some(format!("{name} from {url}")),
            Origin::Store | Origin::Local => None,
        };
        if let Some(note) = note {
            eprintln!("{:>12} {note}", "Fetched");
            summary.fetched.push(note);
        }
        taxonomy.push((name.clone(), format, resolved));
    }
    // Largest file first, one file per job: the merge waits for the last parse, and
    // scid.eco alone takes as long as the other six files together.
    let mut by_size: Vec<(u64, usize)> = taxonomy
        .iter()
        .enumerate()
        .map(|(i, (_, _, resolved))| (std::fs::metadata(&resolved.path).map_or(0, |m| m.len()), i))
        .collect();
    by_size.sort_by(|a, b| b.cmp(a));
    let mut parsed: Vec<(usize, (String, EcoFormat, Output))> = by_size
        .par_iter()
        .with_max_len(1)
        .map(|&(_, index)| {
            let (name, format, resolved) = &taxonomy[index];
            let format = *format;
            let step = Step::new(format!("parse:{name}"), versions::PARSE, &format).input(name.clone(), &resolved.hash);
            let sink = new_warnings.clone();
            let output = build.value(step, move |_| {
                let path = &resolved.path;
                let bytes = std::fs::read(path)
                    .map_err(|e| BuildError::Io { what: format!("reading {}", path.display()), source: e })?;
                let p = eco::parse(format, name, &bytes);
                let text = format!("{} rows", p.rows.len());
                let warnings = p.warnings.len();
                sink.lock().expect("warnings poisoned").extend(p.warnings.iter().cloned());
                Ok((p, text, warnings))
            })?;
            Ok((index, (name.clone(), format, output)))
        })
        .collect::<Result<_, MakeError>>()?;
    parsed.sort_by_key(|(index, _)| *index);
    let parsed: Vec<(String, EcoFormat, Output)> = parsed.into_iter().map(|(_, p)| p).collect();

    let mut eco_step = Step::new("eco", versions::ECO, &pipeline.eco);
    for (name, _, output) in &parsed {
        eco_step = eco_step.input(format!("parse:{name}"), &output.hash);
    }
    let interpolate = pipeline.eco.interpolate;
    let parsed_for_eco = parsed.clone();
    let sink = new_warnings.clone();
    let merge_taxonomies = || build.value_encoded(eco_step, move |b| {
        let mut sources: Vec<(String, EcoFormat, Arc<ParsedSource>)> = Vec::new();
        for (name, format, output) in &parsed_for_eco {
            sources.push((name.clone(), *format, b.load(&format!("parse:{name}"), output)?));
        }
        let inputs: Vec<MergeInput<'_>> =
            sources.iter().map(|(name, format, parsed)| MergeInput { format: *format, file: name, parsed }).collect();
        let skeleton = eco::merge(&inputs, interpolate);
        let interpolated = skeleton.entries.iter().filter(|e| e.src == "interpolated").count();
        let orphans = skeleton.warnings.iter().filter(|w| w.is_note()).count();
        let text = format!(
            "{} named positions, {} interpolated, {} orphan lines",
            skeleton.named_positions, interpolated, orphans
        );
        let warnings = skeleton.warnings.len() - orphans;
        sink.lock().expect("warnings poisoned").extend(skeleton.warnings.iter().cloned());
        Ok((skeleton, text, warnings))
    }, encode_skeleton);

    // Phase 2: every game file is its own step, so adding a file parses only that file.
    let mut game_files = Vec::new();
    for (name, spec) in pipeline.sources.iter().filter(|(_, s)| !s.kind.is_taxonomy()) {
        let mut files = Vec::new();
        for pattern in spec.game_paths() {
            let full = loaded.path(&pattern).display().to_string();
            match crate::games::input::expand_paths(&[&full]) {
                Ok(found) => files.extend(found),
                // An empty drop folder (`games/*.pgn`) is a tree with the skeleton only;
                // a plain path that does not exist is an error.
                Err(crate::games::GamesError::NoMatch { .. }) if pattern.contains(['*', '?', '[']) => {
                    if !options.dry_run {
                        eprintln!("{:>12} {name}: no files match {pattern} yet", "Note");
                    }
                }
                Err(error) => return Err(MakeError::Games { source_name: name.clone(), error }),
            }
        }
        files.sort();
        files.dedup();
        let filter = spec.game_filter().map_err(|message| BuildError::Step { step: format!("games:{name}"), message })?;
        for file in files {
            let hash = build.hash_file(&file)?;
            let shown = file.strip_prefix(&loaded.root).unwrap_or(&file).display().to_string();
            game_files.push((name.clone(), spec.kind, filter.clone(), file, shown, hash));
        }
    }
    let max_ply = pipeline.tree.max_ply as usize;
    let budget = pipeline.games.memory_budget_mb;
    let spill_dir = cache_dir(loaded).join("spill");
    // The game files do not need the taxonomies: they are counted while the merge runs.
    let count_games = || -> Result<Option<Output>, MakeError> {
        let bar = crate::progress::start(game_files.len() as u64, "game files");
        let file_outputs: Vec<(String, Output)> = game_files
            .par_iter()
            .map(|(name, kind, filter, file, shown, hash)| {
                let id = format!("games:{name}:{shown}");
                let format = if *kind == SourceKind::Bgn { Format::Bgn } else { Format::Pgn };
                let params = (filter, max_ply, format == Format::Bgn);
                let step = Step::new(id.clone(), versions::GAMES_FILE, &params).input("file", hash);
                let output = build.value(step, |_| {
                    let options = AggregateOptions {
                        max_ply,
                        memory_budget_mb: budget,
                        spill_dir: Some(spill_dir.clone()),
                        format,
                        ..Default::default()
                    };
                    let aggregate = crate::games::aggregate::aggregate_file_with(file, filter, &options)
                        .map_err(|error| MakeError::Games { source_name: name.clone(), error })
                        .map_err(|e| BuildError::Step { step: id.clone(), message: e.to_string() })?;
                    let c = &aggregate.counters;
                    let text = format!("{} games, {} counted", c.games_read, c.games_counted);
                    Ok((aggregate, text, 0))
                })?;
                bar.inc(1);
                Ok((id, output))
            })
            .collect::<Result<_, MakeError>>()?;
        drop(bar);
        Ok(if file_outputs.is_empty() {
            None
        } else {
            let mut step = Step::new("games", versions::GAMES, &());
            for (id, output) in &file_outputs {
                step = step.input(id.clone(), &output.hash);
            }
            Some(build.value(step, |b| {
                let parts: Vec<Arc<FileAggregate>> =
                    file_outputs.iter().map(|(id, o)| b.load(id, o)).collect::<Result<_, _>>()?;
                let refs: Vec<&FileAggregate> = parts.iter().map(|a| a.as_ref()).collect();
                let stats = crate::games::aggregate::merge(&refs);
                let (bad, counters) = crate::games::aggregate::merge_reports(&refs);
                if counters.games_bad > 0 {
                    eprintln!("{}", bad.render_table().trim_end());
                }
                let text = format!(
                    "{} games counted of {}, {} positions, {} moves, {} bad, {} filtered out",
                    counters.games_counted,
                    counters.games_read,
                    stats.positions.len(),
                    stats.moves.len(),
                    counters.games_bad,
                    counters.filtered.values().sum::<u64>()
                );
                Ok((GamesMerged { stats, bad, counters }, text, 0))
            })?)
        })
    };
    let (eco_output, games_output) = rayon::join(merge_taxonomies, count_games);
    let (eco_output, games_output) = (eco_output?, games_output?);

    // The game files of named sources, with their hashes (for validation, classification).
    let files_of = |sources: &[String]| -> (Vec<PathBuf>, Vec<(String, String)>) {
        let chosen: Vec<_> = game_files.iter().filter(|g| sources.contains(&g.0)).collect();
        (chosen.iter().map(|g| g.3.clone()).collect(), chosen.iter().map(|g| (g.4.clone(), g.5.clone())).collect())
    };

    // What follows the merge: the tree and the phases that read it, one after the other.
    let tree_chain = || -> Result<_, MakeError> {
        // Tree assembly.
        let mut tree_step = Step::new("tree", versions::TREE, &pipeline.tree).input("eco", &eco_output.hash);
        if let Some(games) = &games_output {
            tree_step = tree_step.input("games", &games.hash);
        }
        let tree_params = pipeline.tree.clone();
        let tree_output = build.value_encoded(tree_step, |b| {
            let skeleton: Arc<EcoSkeleton> = b.load("eco", &eco_output)?;
            let games: Option<Arc<GamesMerged>> = games_output.as_ref().map(|g| b.load("games", g)).transpose()?;
            let tree = tree::build(&skeleton, games.as_ref().map(|g| &g.stats), &tree_params);
            let text = format!("{} nodes, {} edges", tree.nodes.len(), tree.edge_count());
            Ok((tree, text, 0))
        }, encode_tree)?;

        // Phase 4: engine annotation of the tree's nodes, each result cached per position.
        let engine_output = match &pipeline.engine {
            None => None,
            Some(config) => Some(annotate_step(loaded, &build, config, &tree_output, &new_warnings)?),
        };

        // Phase 5: the pawn structure of every terminal node, and the review of the Unknown ones.
        let structures_output = structures_step(&build, &tree_output)?;

        // Phase 3: validation against a corpus; its stubs (if asked for) go into the store.
        let validate_output = match &pipeline.validate {
            None => None,
            Some(params) => {
                let (paths, hashes) = files_of(&params.sources);
                Some(validate_step(&build, params, &paths, &hashes, &tree_output, &eco_output)?)
            }
        };
        Ok((tree_output, engine_output, structures_output, validate_output))
    };
    // Meanwhile, the store's entry table, which needs the skeleton only, and then the
    // exports that need no more than the skeleton either (eco.json). Those are spawned
    // once the entries are written, so they fill the core the tree leaves idle without
    // holding up the store, which starts as soon as the tree chain and the entries are done.
    let entries_path = cache_dir(loaded).join("store-entries.sqlite");
    let (skeleton_exports, tree_exports): (Vec<(&String, &ExportSpec)>, Vec<_>) =
        pipeline.exports.iter().partition(|(_, spec)| spec.format == ExportFormat::EcoJson);
    let skeleton_export_error: Mutex<Option<MakeError>> = Mutex::new(None);
    rayon::scope(|scope| -> Result<(), MakeError> {
        let (chain, entries_output) = rayon::join(tree_chain, || {
            let entries = entries_step(&build, &eco_output, &entries_path);
            for &(name, spec) in &skeleton_exports {
                let (build, eco_output, failed) = (&build, &eco_output, &skeleton_export_error);
                scope.spawn(move |_| {
                    if let Err(error) = eco_json_export(build, name, spec, &loaded.path(&spec.output), eco_output) {
                        failed.lock().expect("export error poisoned").get_or_insert(error);
                    }
                });
            }
            entries
        });
        let (tree_output, engine_output, structures_output, validate_output) = chain?;
        let entries_output = entries_output?;
        let (engine_output, structures_output, validate_output) = (&engine_output, &structures_output, &validate_output);
        let stubs_output = validate_output.as_ref().filter(|_| pipeline.validate.as_ref().is_some_and(|p| p.stubs));

        // The node records that the store and the CSV exports write, built by the first of
        // them that asks (see the order of the final steps below). Not under the lock:
        // building them runs on rayon, and a worker that waits on a lock may be handed a
        // job that takes the same lock.
        let shared_records: Mutex<Option<Arc<Vec<NodeRecord>>>> = Mutex::new(None);
        let node_records = |b: &Build, tree: &Tree, annotations: Option<&Annotations>| {
            if let Some(records) = shared_records.lock().expect("records poisoned").as_ref() {
                return Ok::<_, BuildError>(records.clone());
            }
            let structures: Arc<StructureTags> = b.load("structures", structures_output)?;
            let records = Arc::new(NodeRecord::tagged(tree, annotations, Some(&structures)));
            Ok(shared_records.lock().expect("records poisoned").get_or_insert(records).clone())
        };
        let node_records = &node_records;
        // The store and the exports only read their inputs: run them side by side.
        let mut finals: Vec<Box<dyn FnOnce() -> Result<(), MakeError> + Send + '_>> = Vec::new();
        let (build, tree_output, eco_output, entries_path) = (&build, &tree_output, &eco_output, &entries_path);
        let store_path = loaded.path(&pipeline.store.path);
        let review_dir = store_path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        finals.push(Box::new(move || {
            let mut store_step = Step::new("store", versions::STORE, &())
                .input("tree", &tree_output.hash)
                .input("store:entries", &entries_output.hash);
            if let Some(engine) = engine_output {
                store_step = store_step.input("engine", &engine.hash);
            }
            store_step = store_step.input("structures", &structures_output.hash);
            if let Some(stubs) = stubs_output {
                store_step = store_step.input("stubs", &stubs.hash);
            }
            build.external(store_step, &store_path, |b| {
                let tree: Arc<Tree> = b.load("tree", tree_output)?;
                let annotations: Option<Arc<Annotations>> = engine_output.as_ref().map(|e| b.load("engine", e)).transpose()?;
                let records = node_records(b, &tree, annotations.as_deref())?;
                let stubs = match stubs_output {
                    Some(output) => b.load::<ValidationReport>("validate", output)?.stub_nodes(),
                    None => Vec::new(),
                };
                let written = crate::store::write::write_records(
                    &tree,
                    &records,
                    entries_path,
                    annotations.as_deref(),
                    &stubs,
                    &store_path,
                )
                .map_err(|e| BuildError::Step { step: "store".into(), message: e.to_string() })?;
                let stubs = if written.stubs > 0 { format!(" ({} validation stubs)", written.stubs) } else { String::new() };
                Ok(format!(
                    "{} nodes{stubs}, {} edges, {} transpositions, {} changes logged",
                    written.nodes, written.edges, written.transpositions, written.changes
                ))
            })?;
            Ok(())
        }));
        let review_target = review_dir.clone();
        finals.push(Box::new(move || {
            let step = Step::new("structure-review", versions::STRUCTURE_REVIEW, &())
                .input("tree", &tree_output.hash)
                .input("structures", &structures_output.hash);
            build.files(step, &review_target, |b| {
                let tree: Arc<Tree> = b.load("tree", tree_output)?;
                let tags: Arc<StructureTags> = b.load("structures", structures_output)?;
                let review = crate::structure::review::review(&tree, &tags);
                let text = format!("{} Unknown terminal positions", review.unknown.len());
                let files = vec![
                    ExportFile { name: "structures-review.json".into(), bytes: review.to_json() },
                    ExportFile { name: "structures-review.txt".into(), bytes: review.to_table() },
                ];
                Ok((files, text))
            })?;
            Ok(())
        }));
        if let (Some(params), Some(validate_output)) = (&pipeline.validate, validate_output) {
            let review_dir = review_dir.clone();
            finals.push(Box::new(move || {
                let step = Step::new("validation-report", versions::VALIDATION_REPORT, &()).input("validate", &validate_output.hash);
                build.files(step, &review_dir, |b| {
                    let report: Arc<ValidationReport> = b.load("validate", validate_output)?;
                    let mut files = vec![
                        ExportFile { name: "validation.json".into(), bytes: report.to_json() },
                        ExportFile { name: "validation.txt".into(), bytes: report.to_table() },
                    ];
                    if params.stubs {
                        files.push(ExportFile { name: "validation-stubs.tsv".into(), bytes: report.to_stub_tsv() });
                    }
                    Ok((files, format!("{} variations reported", report.missing.len())))
                })?;
                Ok(())
            }));
        }
        for (name, spec) in tree_exports {
            let target = loaded.path(&spec.output);
            let (classify_paths, classify_hashes) = files_of(&spec.sources);
            let id = format!("export:{name}");
            finals.push(Box::new(move || {
                // The classified exports: the games of `sources`, named from the tree.
                let classified_step = |version| {
                    let mut step = Step::new(id.clone(), version, spec).input("tree", &tree_output.hash);
                    for (shown, hash) in &classify_hashes {
                        step = step.input(shown.clone(), hash);
                    }
                    step
                };
                let classifier_of = |b: &Build| -> Result<crate::classify::Classifier, BuildError> {
                    Ok(crate::classify::Classifier::from_tree(&*b.load::<Tree>("tree", tree_output)?))
                };
                match spec.format {
                    ExportFormat::EcoJson => unreachable!("eco.json exports are spawned beside the tree"),
                    ExportFormat::Polyglot => {
                        let step = Step::new(id, versions::EXPORT_POLYGLOT, spec).input("tree", &tree_output.hash);
                        build.files(step, &target, |b| {
                            let tree: Arc<Tree> = b.load("tree", tree_output)?;
                            let entries = polyglot_entries(&tree, spec.weights);
                            let text = format!("{} entries", entries.len());
                            let bytes = export::polyglot::to_bytes(&entries);
                            Ok((vec![ExportFile { name: String::new(), bytes }], text))
                        })?;
                    }
                    ExportFormat::ClassifiedPgn => {
                        let step = classified_step(versions::EXPORT_CLASSIFIED_PGN);
                        build.external(step, &target, |b| {
                            let classifier = classifier_of(b)?;
                            let failed = |message: String| BuildError::Step { step: format!("export:{name}"), message };
                            if let Some(dir) = target.parent() {
                                std::fs::create_dir_all(dir).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
                            }
                            let tmp = target.with_extension("okb-tmp");
                            let file = std::fs::File::create(&tmp).map_err(|e| failed(format!("{}: {e}", tmp.display())))?;
                            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
                            let report = crate::classify::files::classify_files(&classifier, &classify_paths, &mut out)
                                .map_err(|e| failed(e.to_string()))?;
                            drop(out);
                            std::fs::rename(&tmp, &target).map_err(|e| failed(format!("{}: {e}", target.display())))?;
                            Ok(format!(
                                "{} games, {} classified, {} without a known position, {} unreadable",
                                report.games,
                                report.classified,
                                report.unclassified,
                                report.bad.skipped()
                            ))
                        })?;
                    }
                    ExportFormat::ClassifiedBgn => {
                        let step = classified_step(versions::EXPORT_CLASSIFIED_BGN);
                        build.external(step, &target, |b| {
                            let classifier = classifier_of(b)?;
                            let lookup = crate::convert::FromKnowledgeBase::new(&classifier);
                            let sink = crate::convert::SplitWriter::single(&target);
                            let converted = crate::convert::pgn_to_bgn(&classify_paths, &lookup, sink)
                                .map_err(|e| BuildError::Step {
                                    step: format!("export:{name}"),
                                    message: e.chain().map(ToString::to_string).collect::<Vec<_>>().join(": "),
                                })?;
                            let (named, from_tags) = lookup.counts();
                            Ok(format!(
                                "{} games, {named} classified, {from_tags} named by their tags, {} unreadable",
                                converted.games,
                                converted.bad.skipped()
                            ))
                        })?;
                    }
                    ExportFormat::Pgn => {
                        let mut step = Step::new(id, versions::EXPORT_PGN, spec).input("tree", &tree_output.hash);
                        if let Some(engine) = engine_output {
                            step = step.input("engine", &engine.hash);
                        }
                        build.files(step, &target, |b| {
                            let tree: Arc<Tree> = b.load("tree", tree_output)?;
                            let annotations: Option<Arc<Annotations>> =
                                engine_output.as_ref().map(|e| b.load("engine", e)).transpose()?;
                            let files = export::pgn::render_all(&tree, annotations.as_deref(), spec.max_depth);
                            let text = format!("{} openings", files.len());
                            Ok((files, text))
                        })?;
                    }
                    ExportFormat::Packed => {
                        let step = Step::new(id, versions::EXPORT_PACKED, spec).input("tree", &tree_output.hash);
                        build.files(step, &target, |b| {
                            let tree: Arc<Tree> = b.load("tree", tree_output)?;
                            let (file, count) = export::packed::render(&tree);
                            Ok((vec![file], format!("{count} move records")))
                        })?;
                    }
                    ExportFormat::Csv => {
                        let mut step = Step::new(id, versions::EXPORT_CSV, spec).input("tree", &tree_output.hash);
                        if let Some(engine) = engine_output {
                            step = step.input("engine", &engine.hash);
                        }
                        step = step.input("structures", &structures_output.hash);
                        let delimiter = spec.delimiter.as_bytes()[0];
                        build.files(step, &target, |b| {
                            let tree: Arc<Tree> = b.load("tree", tree_output)?;
                            let annotations: Option<Arc<Annotations>> =
                                engine_output.as_ref().map(|e| b.load("engine", e)).transpose()?;
                            let records = node_records(b, &tree, annotations.as_deref())?;
                            let bytes = export::csv::render_records(&records, delimiter);
                            Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} rows", records.len())))
                        })?;
                    }
                    ExportFormat::OpeningIq => {
                        let mut step = Step::new(id, versions::EXPORT_OPENINGIQ, spec)
                            .input("tree", &tree_output.hash)
                            .input("eco", &eco_output.hash);
                        if let Some(engine) = engine_output {
                            step = step.input("engine", &engine.hash);
                        }
                        build.files(step, &target, |b| {
                            let tree: Arc<Tree> = b.load("tree", tree_output)?;
                            let skeleton: Arc<EcoSkeleton> = b.load("eco", eco_output)?;
                            let annotations: Option<Arc<Annotations>> =
                                engine_output.as_ref().map(|e| b.load("engine", e)).transpose()?;
                            let files = export::openingiq::render_build(&tree, &skeleton, annotations.as_deref(), u32::from(spec.max_depth), spec.pretty);
                            let text = format!("{} files", files.len());
                            Ok((files, text))
                        })?;
                    }
                }
                Ok(())
            }));
        }
        // The store (the longest) on this worker, the rest side by side on the others with
        // the structure review first: by the time a CSV export asks for the node records,
        // the store has usually built them, where two steps starting together built them twice.
        let mut finals = finals.into_iter();
        let store = finals.next().expect("the store is the first final step");
        let rest: Vec<_> = finals.collect();
        let (stored, rest) =
            rayon::join(store, || rest.into_par_iter().map(|run| run()).collect::<Result<Vec<()>, MakeError>>());
        stored?;
        rest?;
        Ok(())
    })?;
    if let Some(error) = skeleton_export_error.into_inner().expect("export error poisoned") {
        return Err(error);
    }
    build.save()?;

    summary.warnings = std::mem::take(&mut *new_warnings.lock().expect("warnings poisoned"));
    // Steps that run side by side report in the order they finish; the list is shown in
    // file and line order, the same in every run (stable: one line keeps its order).
    summary.warnings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    summary.steps = std::mem::take(&mut *build.reports.lock().expect("reports poisoned"));
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// The skeleton's postcard bytes, its entries encoded on all cores: the merge's dependents
/// wait for the hash of these 4–5 MB, and nothing else runs meanwhile.
fn encode_skeleton(skeleton: &EcoSkeleton) -> Vec<u8> {
    // Field by field, in declaration order (postcard writes a struct as its fields);
    // `encodings_are_postcards` checks the result against postcard's own.
    let EcoSkeleton { entries, from_to, sources, named_positions, warnings } = skeleton;
    let mut out = Vec::new();
    crate::dataflow::cache::encode_seq_in_parallel(entries, &mut out);
    postcard::to_extend(&(from_to, sources, named_positions, warnings), out).expect("serializing to memory does not fail")
}

/// The tree's postcard bytes, its nodes encoded on all cores (see [`encode_skeleton`]).
fn encode_tree(tree: &Tree) -> Vec<u8> {
    let Tree { nodes, root } = tree;
    let mut out = Vec::new();
    crate::dataflow::cache::encode_seq_in_parallel(nodes, &mut out);
    postcard::to_extend(root, out).expect("serializing to memory does not fail")
}

/// An eco.json export: the skeleton's entries as eco.json-compatible files.
fn eco_json_export(
    build: &Build,
    name: &str,
    spec: &ExportSpec,
    target: &std::path::Path,
    eco_output: &Output,
) -> Result<(), MakeError> {
    let step = Step::new(format!("export:{name}"), versions::EXPORT_ECO_JSON, spec).input("eco", &eco_output.hash);
    build.files(step, target, |b| {
        let skeleton: Arc<EcoSkeleton> = b.load("eco", eco_output)?;
        let files = export::eco_json::render_all(&skeleton, spec.pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    })?;
    Ok(())
}

/// The `store:entries` step: the store's entry table in a part database under `cache/`,
/// written while the tree is built and copied into every store written from this skeleton.
fn entries_step(build: &Build, eco_output: &Output, path: &std::path::Path) -> Result<Output, MakeError> {
    let step = Step::new("store:entries", versions::STORE_ENTRIES, &()).input("eco", &eco_output.hash);
    Ok(build.external(step, path, |b| {
        let skeleton: Arc<EcoSkeleton> = b.load("eco", eco_output)?;
        let rows = crate::store::write::write_entries(&skeleton, path)
            .map_err(|e| BuildError::Step { step: "store:entries".into(), message: e.to_string() })?;
        Ok(format!("{rows} entries"))
    })?)
}

/// The `engine` step: annotates the tree's nodes (those with at least `min_games` games),
/// most played first. Every result goes to the engine cache as it arrives, so a run that
/// stops at its budget (or is killed) loses nothing: the step is then left unrecorded
/// and the next `okb make` continues from the cache.
fn annotate_step(
    loaded: &Loaded,
    build: &Build,
    config: &crate::engine::EngineConfig,
    tree_output: &Output,
    warnings: &std::sync::Mutex<Vec<Warning>>,
) -> Result<Output, MakeError> {
    let binary = crate::engine::resolve_engine(config.path.as_deref())?;
    let binary_hash = build.hash_file(&binary)?;
    let step = Step::new("engine", versions::ENGINE, config).input("tree", &tree_output.hash).input("engine-binary", &binary_hash);
    let cache_path = cache_dir(loaded).join("engine.sqlite");
    let output = build.resumable(step, |b| {
        let tree: Arc<Tree> = b.load("tree", tree_output)?;
        let jobs: Vec<crate::engine::Job> = tree
            .nodes
            .iter()
            .filter(|n| n.game_count() >= config.min_games)
            .map(|n| crate::engine::Job::for_node(n.fen.clone(), n.is_branching(), n.game_count(), n.movetext.clone(), config))
            .collect();
        let failed = |e: crate::engine::EngineError| BuildError::Step { step: "engine".into(), message: e.to_string() };
        let cache = crate::engine::EngineCache::open(&cache_path).map_err(failed)?;
        let bar = crate::progress::start(jobs.len() as u64, "engine positions");
        // The bar counts engine searches only: cache hits are instant and would make the
        // rate and the ETA meaningless.
        let report = crate::engine::annotate(jobs, config, &cache, &|p| {
            bar.set_length(p.to_analyse as u64);
            bar.set((p.analysed + p.failed) as u64);
            bar.set_message(format!("engine positions ({} cached, {} failed)", p.cached, p.failed));
        })
        .map_err(failed)?;
        drop(bar);
        let mut summary = format!(
            "{} positions: {} cached, {} analysed, {} failed, {} engines started",
            report.results.len() + report.failures.len(),
            report.cached,
            report.analysed,
            report.failed,
            report.engines_started
        );
        if let Some(why) = &report.stopped {
            summary.push_str(&format!("; stopped ({why}), {} left for the next make", report.left));
        }
        let mut sink = warnings.lock().expect("warnings poisoned");
        for (epd, failure) in &report.failures {
            sink.push(Warning {
                kind: "engine-failure".into(),
                file: "engine".into(),
                line: None,
                message: failure.reason.clone(),
                text: Some(epd.clone()),
            });
        }
        let annotations = Annotations {
            engine_name: report.engine_name.clone(),
            results: report.results,
            failures: report.failures,
        };
        let complete = report.left == 0;
        Ok((annotations, summary, report.failed, complete))
    })?;
    Ok(output)
}

/// Phase 3: the games of `paths` against the tree's names (a value step: the report
/// feeds the `validation-report` files and, with stubs on, the store).
fn validate_step(
    build: &Build,
    params: &crate::validate::ValidateParams,
    paths: &[PathBuf],
    hashes: &[(String, String)],
    tree_output: &Output,
    eco_output: &Output,
) -> Result<Output, MakeError> {
    let mut step = Step::new("validate", versions::VALIDATE, params).input("tree", &tree_output.hash).input("eco", &eco_output.hash);
    for (shown, hash) in hashes {
        step = step.input(shown.clone(), hash);
    }
    Ok(build.value(step, |b| {
        let tree: Arc<Tree> = b.load("tree", tree_output)?;
        let skeleton: Arc<EcoSkeleton> = b.load("eco", eco_output)?;
        let names = crate::validate::TreeNames::new(&tree, &skeleton);
        let validation = crate::validate::validate_files(&names, paths, params.max_ply)
            .map_err(|e| BuildError::Step { step: "validate".into(), message: e.to_string() })?;
        let report = crate::validate::report::build(&validation, &tree, &names, params);
        let c = &report.counts;
        let text = format!(
            "{} tagged games, {} known, {} renamed, {} reach names the tree lacks; {} variations reported, {} corrupt games",
            c.games_tagged, c.games_known, c.games_renamed, c.games_missing, report.missing.len(), report.corrupt_games
        );
        Ok((report, text, 0))
    })?)
}

/// The `structures` step (Phase 5): the pawn structure of every terminal node.
fn structures_step(build: &Build, tree_output: &Output) -> Result<Output, MakeError> {
    let step = Step::new("structures", versions::STRUCTURES, &()).input("tree", &tree_output.hash);
    Ok(build.value(step, |b| {
        let tree: Arc<Tree> = b.load("tree", tree_output)?;
        let tags = crate::structure::tag_tree(&tree);
        let unknown = tags.terminal.iter().filter(|(_, name)| name == crate::structure::UNKNOWN.name).count();
        let text = format!("{} terminal nodes, {} named, {} Unknown", tags.terminal.len(), tags.terminal.len() - unknown, unknown);
        Ok((tags, text, 0))
    })?)
}

/// The merged statistics of all game files, with what was skipped.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct GamesMerged {
    /// Counts per position and move.
    pub stats: crate::games::stats::GameStats,
    /// Bad games by reason.
    pub bad: crate::games::report::BadGames,
    /// Games read, counted, filtered.
    pub counters: crate::games::report::Counters,
}

/// Book entries for every tree edge that games played.
fn polyglot_entries(tree: &Tree, weights: export::polyglot::WeightMode) -> Vec<export::polyglot::BookEntry> {
    let positions: Vec<shakmaty::Chess> =
        tree.nodes.iter().map(|n| crate::position::parse_fen(&n.fen).expect("node FENs are written by okb")).collect();
    let items = tree.nodes.iter().zip(&positions).flat_map(|(node, pos)| {
        node.children.iter().filter_map(move |e| e.stats.map(|s| (pos, e.key, s)))
    });
    export::polyglot::entries_from_stats(items, weights)
}

/// Whether any step did work.
pub fn did_work(summary: &MakeSummary) -> bool {
    summary.steps.iter().any(|s| s.status != Status::Fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_postcards() {
        let tsv = "eco\tname\tpgn\nA00\tA\t1. e4\nA01\tB: x\t1. e4 e5 2. Nf3 Nc6\nA02\tC\t1. Nf3 Nc6 2. e4 e5\n";
        let parsed = eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let skeleton = eco::merge(&[MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed }], true);
        assert!(skeleton.entries.len() == 4 && skeleton.from_to.len() == 3 && skeleton.warnings.len() == 3);
        assert_eq!(encode_skeleton(&skeleton), postcard::to_allocvec(&skeleton).unwrap());
        let tree = tree::build(&skeleton, None, &Default::default());
        assert_eq!(encode_tree(&tree), postcard::to_allocvec(&tree).unwrap());
        // Past one chunk of items, and a length that takes two varint bytes.
        let many: Vec<String> = (0..1000).map(|i| format!("item {i}")).collect();
        let mut out = Vec::new();
        crate::dataflow::cache::encode_seq_in_parallel(&many, &mut out);
        assert_eq!(out, postcard::to_allocvec(&many).unwrap());
    }
}
