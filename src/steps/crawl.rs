//! `crawl:<source>`: an explorer crawl's answers read as game counts (Phase 2 from the
//! Lichess opening explorer, [`crate::crawl`]), one more part of the `games` merge.

use std::path::PathBuf;

use crate::crawl::archive::Archive;
use crate::crawl::manifest::Manifest;
use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{Planner, Planning, crawl_id};
use crate::games::runs::{MergePlan, in_memory};
use crate::games::stored::{Store, StoredCounts, store_both};

/// The rule.
pub static RULE: Rule = Rule { name: "crawl", about: "an explorer crawl's answers read as game counts", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per explorer crawl (each made complete before the make: [`crate::crawl::source`]).
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    Ok(p.crawls.iter().map(|(name, hash)| declare(p, name, hash)).collect())
}

/// Reads crawl `name`'s answers, listed by its manifest (BLAKE3 `hash`) in the source store.
fn declare(p: &Planning<'_>, name: &str, hash: &str) -> Decl<'static> {
    let (source, manifest_hash) = (name.to_string(), hash.to_string());
    let archive = Archive::new(&p.loaded.path("sources"), &[]);
    let mut d = p.declare(crawl_id(name), &RULE);
    d.file(name, hash);
    let run = move |cx: &Ctx<'_>| {
        let fail = |why: String| cx.fail(format!("crawl {source}: {why}"));
        let path = archive.manifest_path(&manifest_hash);
        let bytes = std::fs::read(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        let manifest = Manifest::parse(&bytes).map_err(|why| fail(format!("{}: {why}", path.display())))?;
        let read = |hash: &str| {
            let path: PathBuf = archive.object_path(hash);
            std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
        };
        let stats = crate::crawl::stats::from_manifest(&manifest, read).map_err(fail)?;
        let games = manifest.root_index().and_then(|i| stats.position(position_key(&manifest.positions[i].fen)?)).map_or(0, |o| o.games());
        let text = format!("{} positions asked about, {games} games at the root, {} moves", manifest.positions.len(), stats.moves.len());
        let counters = crate::games::report::Counters { games_read: games, games_counted: games, ..Default::default() };
        // Stored as the game files' counts are: two sorted runs in the cache.
        let store: &Store = &|write| cx.build.cache.put_stream(write);
        let plan = MergePlan::for_budget(64, cx.build.cache.root().join("spill"));
        let (positions, moves) = store_both(vec![in_memory(stats.positions)], vec![in_memory(stats.moves)], &plan, store).map_err(|e| fail(e.to_string()))?;
        let max_ply = u32::from(manifest.params.max_ply);
        let part = StoredCounts { file: format!("crawl {source}"), max_ply, bad: Default::default(), counters, positions, moves, games: None };
        Ok(Produced::new(part, text))
    };
    d.value(run).references(StoredCounts::objects).priority(800)
}

fn position_key(fen: &str) -> Option<crate::position::PositionKey> {
    crate::position::parse_fen(fen).ok().map(|pos| crate::position::key(&pos))
}
