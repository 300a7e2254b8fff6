//! `player-games`: the games of the pipeline's player collections (game sources with
//! `players`), each listed player's games with their references and first 50 moves, for
//! the store and `okb serve`'s `GET /player`.

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::repertoire::collection::{self, CollectionFile};

/// The rule.
pub static RULE: Rule = Rule { name: "player-games", about: "the player collections' games, for GET /player", file: file!() };

/// Reads `files` (each with its BLAKE3 and source name).
pub fn declare(files: Vec<(CollectionFile, String, String)>) -> Decl<'static> {
    let mut sources: Vec<String> = files.iter().map(|f| f.2.clone()).collect();
    sources.sort();
    sources.dedup();
    let hashes: Vec<(String, String)> = files.iter().map(|(f, hash, _)| (f.1.clone(), hash.clone())).collect();
    let specs: Vec<CollectionFile> = files.into_iter().map(|f| f.0).collect();
    let run = move |cx: &Ctx<'_>| {
        let read = collection::read(&specs).map_err(|e| cx.fail(e))?;
        let text = format!("{} games of {} players", read.games.len(), read.players.len());
        Ok(Produced::new(read, text))
    };
    let mut decl = Decl::new("player-games", &RULE, Action::Value(Box::new(run))).priority(600);
    for (name, hash) in hashes {
        decl = decl.file(name, hash);
    }
    for source in sources {
        decl = decl.param_at(vec!["sources".into(), source, "players".into()]);
    }
    decl
}
