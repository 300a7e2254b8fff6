//! What a make plans from: the pipeline's sources resolved (found in the source store,
//! copied from a mirror or downloaded), its game files listed, its crawls made available,
//! its engine found, and the manifest's facts about all of them. `okb fetch`, `okb pin`,
//! `okb prep` and the repertoires resolve through the same [`crate::sources::Resolver`],
//! made by [`resolver`].

use std::path::{Path, PathBuf};

use super::{MakeError, MakeOptions, repertoires};
use crate::dataflow::{Build, BuildError};
use crate::pipeline::{Loaded, SourceKind};
use crate::release::{self, Manifest};
use crate::sources::{Origin, Resolver, Wanted};
use crate::steps::planning::{GameFile, Planning, SourceFile};

/// The project's source resolver: its source store, the mirrors and whether it may
/// download (a dry run never does).
pub fn resolver(loaded: &Loaded, mirrors: &[PathBuf], offline: bool) -> Resolver {
    Resolver::new(loaded.layout().sources, mirrors.to_vec(), offline)
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
            crate::crawl::archive::Archive::new(&loaded.layout().sources, &options.mirrors);
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

/// The files game source `spec` (given by `path` or `paths`) matches now, sorted, each
/// with its path relative to pipeline.toml (the key of its pin); empty for other sources.
/// A pattern that matches nothing adds nothing: the make itself says so.
pub fn pinnable_game_files(
    loaded: &Loaded,
    spec: &crate::pipeline::SourceSpec,
) -> Vec<(PathBuf, String)> {
    let mut files: Vec<PathBuf> = spec
        .game_paths()
        .iter()
        .filter_map(|pattern| {
            let full = loaded.path(pattern).display().to_string();
            crate::games::input::expand_paths(&[&full]).ok()
        })
        .flatten()
        .collect();
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|path| {
            let shown = path.strip_prefix(&loaded.root).unwrap_or(&path).display().to_string();
            (path, shown)
        })
        .collect()
}

/// A game file of a `path`/`paths` source against its pin in `[sources.<name>.pins]`,
/// when it has one (`okb make --locked` has already required one for every file).
fn check_file_pin(
    name: &str,
    spec: &crate::pipeline::SourceSpec,
    shown: &str,
    hash: &str,
) -> Result<(), MakeError> {
    match spec.file_pins().and_then(|pins| pins.get(shown)) {
        Some(pin) if pin != hash => Err(MakeError::Source(crate::sources::SourceError::Mismatch {
            name: name.to_string(),
            location: shown.to_string(),
            expected: pin.clone(),
            actual: hash.to_string(),
        })),
        _ => Ok(()),
    }
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
    let resolver = resolver(loaded, &options.mirrors, options.offline);
    let mut found = Vec::new();
    for (name, spec) in &loaded.pipeline.sources {
        if !spec.kind().is_pinned_file() {
            continue;
        }
        if spec.kind() == SourceKind::CountsState {
            found.push(counts_state(loaded, name, spec, build)?);
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

/// A counts state folder (`kind = "counts-state"`), known by its manifest's BLAKE3 and
/// read in place (its shards are checked as they are read).
fn counts_state(
    loaded: &Loaded,
    name: &str,
    spec: &crate::pipeline::SourceSpec,
    build: &Build,
) -> Result<SourceFile, MakeError> {
    use crate::sources::SourceError;
    let folder = loaded.path(spec.path().expect("a counts-state source has a path"));
    let manifest = folder.join(crate::games::state::folder::MANIFEST);
    let mut files = build.files.lock().expect("file states poisoned");
    let hash = files.hash(&manifest).map_err(|source| SourceError::Io {
        name: name.to_string(),
        path: manifest.display().to_string(),
        source,
    })?;
    if let Some(pin) = spec.blake3().filter(|pin| *pin != hash) {
        let location = manifest.display().to_string();
        let (name, expected) = (name.to_string(), pin.to_string());
        return Err(SourceError::Mismatch { name, location, expected, actual: hash }.into());
    }
    Ok(SourceFile { name: name.to_string(), kind: SourceKind::CountsState, path: folder, hash })
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
            check_file_pin(name, spec, &shown, &hash)?;
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
    let resolver = resolver(loaded, &options.mirrors, options.offline);
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
    let resolver = resolver(loaded, &options.mirrors, options.offline || options.dry_run);
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
                .map(|m| game_file(db.file_name(m), loaded.layout().sources, "unfetched".into()));
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
