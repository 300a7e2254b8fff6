//! The steps of `[repertoires.*]`: each repertoire's file resolved like a pinned source
//! (store, mirrors, download; its BLAKE3 checked), read by `repertoire:<name>`, and
//! reported on by `repertoire-report:<name>` into `build/repertoire-<name>/`, with the
//! games of its player collections judged by `repertoire-games:<name>`, and exported by
//! `repertoire-export:<name>`.

use std::path::{Path, PathBuf};

use super::MakeError;
use crate::dataflow::{Build, Decl};
use crate::pipeline::Loaded;
use crate::release::{self, Manifest};
use crate::sources::{Origin, Resolver, Wanted};
use crate::steps;
use crate::steps::game_file::GameFile;

/// Declares the steps of every repertoire, reports written under `build_dir`.
pub(super) fn steps(
    loaded: &Loaded,
    options: &super::MakeOptions,
    build: &Build,
    build_dir: &Path,
    game_files: &[GameFile],
    fetched: &mut Vec<String>,
    facts: &mut Manifest,
) -> Result<Vec<Decl<'static>>, MakeError> {
    let resolver = Resolver { store: loaded.path("sources"), mirrors: options.mirrors.clone(), offline: options.offline };
    let mut out = Vec::new();
    for (name, spec) in &loaded.pipeline.repertoires {
        let source = steps::repertoire::id(name);
        let wanted = Wanted { name: &source, blake3: spec.blake3.as_deref(), path: spec.path.as_deref().map(|p| loaded.path(p)), url: spec.url.as_deref() };
        let resolved = resolver.resolve(&wanted, &mut build.files.lock().expect("file states poisoned"))?;
        if let Origin::Mirror(_) | Origin::Download(_) = &resolved.origin {
            let note = format!("{source} from {}", spec.url.as_deref().unwrap_or("a mirror"));
            eprintln!("{:>12} {note}", "Fetched");
            fetched.push(note);
        }
        let shown = spec.path.clone().or_else(|| spec.url.clone()).unwrap_or_default();
        let kind = "repertoire".to_string();
        facts.sources.insert(source, release::manifest::SourceFacts { kind, url: spec.url.clone(), path: spec.path.clone(), blake3: resolved.hash.clone() });
        out.push(steps::repertoire::declare(name, spec.color, resolved.path, shown, &resolved.hash));
        let dir = report_dir(build_dir, name);
        out.push(steps::repertoire_report::declare(name, spec, dir.clone(), loaded.pipeline.engine.is_some()));
        out.push(steps::repertoire_export::declare(name, dir.clone(), loaded.pipeline.engine.is_some()));
        if !spec.games.is_empty() {
            out.push(steps::repertoire_games::declare(name, player_files(loaded, game_files, &spec.games), dir));
        }
    }
    Ok(out)
}

/// The game files of the player collections `sources`, with their players.
fn player_files(loaded: &Loaded, game_files: &[GameFile], sources: &[String]) -> Vec<steps::repertoire_games::PlayerFile> {
    game_files
        .iter()
        .filter(|g| sources.contains(&g.source))
        .map(|g| {
            let players = loaded.pipeline.sources[&g.source].players.clone().unwrap_or_default();
            (g.path.clone(), g.shown.clone(), g.hash.clone(), g.source.clone(), players)
        })
        .collect()
}

/// The folder of repertoire `name`'s reports under `build_dir`.
pub fn report_dir(build_dir: &Path, name: &str) -> PathBuf {
    build_dir.join(format!("repertoire-{name}"))
}
