//! `player-games`: the games of the pipeline's player collections (game sources with
//! `players`), each listed player's games with their references and first 50 moves, for
//! the store and `okb serve`'s `GET /player`.

use super::ids;
use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::diagnostics::Warning;
use crate::repertoire::collection::{self, CollectionFile, Named};
use crate::repertoire::players;

/// The rule.
pub static RULE: Rule = Rule { name: "player-games", about: "the player collections' games, for GET /player", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With player collections (game sources with `players`): their PGN files' games.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let players = |source: &str| p.loaded.pipeline.sources.get(source).and_then(|s| s.players().map(<[_]>::to_vec));
    let files: Vec<_> = p.game_files.iter().filter(|g| !g.bgn).filter_map(|g| players(&g.source).map(|list| (g, list))).collect();
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let mut d = p.declare(ids::PLAYER_GAMES, &RULE);
    for (g, _) in &files {
        d.file(&g.shown, &g.hash);
    }
    let mut sources: Vec<&str> = files.iter().map(|(g, _)| g.source.as_str()).collect();
    sources.sort();
    sources.dedup();
    for source in sources {
        d.key_at(&["sources", source, "players"]);
    }
    let owners: Vec<String> = files.iter().map(|(g, _)| g.source.clone()).collect();
    let specs: Vec<CollectionFile> = files.into_iter().map(|(g, list)| (g.path.clone(), g.shown.clone(), list)).collect();
    let deduplicate = p.loaded.pipeline.games.deduplicate;
    d.key_at(&["games", "deduplicate"]);
    let shown = p.loaded.file.strip_prefix(&p.loaded.root).unwrap_or(&p.loaded.file).display().to_string();
    let run = move |cx: &Ctx<'_>| {
        let (read, named) = collection::read(&specs, deduplicate).map_err(|e| cx.fail(e))?;
        let text = format!("{} games of {} players", read.games.len(), read.players.len());
        let warnings = doubts(&owners, &specs, &named, &shown);
        let count = warnings.len();
        cx.warn(warnings);
        Ok(Produced::new(read, text).warnings(count))
    };
    Ok(vec![d.value(run).priority(600)])
}

/// The doubts about each source's `players` (in pipeline.toml, shown as `shown`), from
/// what its files' games name: `owners[i]` is the source of `specs[i]`.
fn doubts(owners: &[String], specs: &[CollectionFile], named: &[Named], shown: &str) -> Vec<Warning> {
    let mut by_source: std::collections::BTreeMap<&str, (Named, &[players::PlayerSpec])> = std::collections::BTreeMap::new();
    for ((owner, spec), file) in owners.iter().zip(specs).zip(named) {
        by_source.entry(owner.as_str()).or_insert_with(|| (Named::default(), spec.2.as_slice())).0.add(file);
    }
    let mut out = Vec::new();
    for (source, (named, list)) in by_source {
        for message in players::doubts(list, &named.matched, &named.names) {
            out.push(Warning { kind: "players".into(), file: shown.to_string(), line: None, message: format!("[sources.{source}] {message}"), text: None });
        }
    }
    out
}
