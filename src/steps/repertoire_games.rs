//! `repertoire-games:<name>`: the games of a repertoire's player collections judged
//! against it, as `games.json` and `games.txt` in `build/repertoire-<name>/`. With
//! `[games] deduplicate` (the default) a game the collection's files hold more than once
//! is judged once, its first copy in pipeline file order ([`games::first_copies`]).

use std::path::PathBuf;

use rayon::prelude::*;

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning, repertoire_id};
use crate::repertoire::players::{Matcher, PlayerSpec};
use crate::repertoire::{Repertoire, games, judge};

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-games", about: "a player's games judged against a repertoire", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// One game file of a player collection: path, shown name, BLAKE3, the collection's
/// source name and players.
pub type PlayerFile = (PathBuf, String, String, String, Vec<PlayerSpec>);

/// A step per repertoire with `games`: its player collections' games judged.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let with_games = p.loaded.pipeline.repertoires.iter().filter(|(_, spec)| !spec.games.is_empty());
    with_games.map(|(name, spec)| declare(p, name, player_files(p, &spec.games))).collect()
}

/// The game files of the player collections `sources`, with their players.
fn player_files(p: &Planning<'_>, sources: &[String]) -> Vec<PlayerFile> {
    let players = |source: &str| p.loaded.pipeline.sources.get(source).and_then(|s| s.players().map(<[_]>::to_vec)).unwrap_or_default();
    let files = p.game_files.iter().filter(|g| sources.contains(&g.source));
    files.map(|g| (g.path.clone(), g.shown.clone(), g.hash.clone(), g.source.clone(), players(&g.source))).collect()
}

/// Judges the games of `files` against repertoire `name`.
fn declare(p: &Planning<'_>, name: &str, files: Vec<PlayerFile>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("repertoire-games:{name}"), &RULE);
    let rep: Input<Repertoire> = d.input(repertoire_id(name));
    let sources: std::collections::BTreeSet<&str> = files.iter().map(|f| f.3.as_str()).collect();
    for source in sources {
        d.key_at(&["sources", source, "players"]);
    }
    for (_, shown, hash, _, _) in &files {
        d.file(shown, hash);
    }
    let deduplicate = p.loaded.pipeline.games.deduplicate;
    d.key_at(&["games", "deduplicate"]);
    let run = move |cx: &Ctx<'_>| {
        let rep = cx.get(&rep)?;
        let max_ply = usize::from(rep.depth()) + 1;
        let book = rep.index();
        let read = files.par_iter().map(|(path, shown, _, _, players)| games::read_file(path, shown, &Matcher::new(players), max_ply, Some(&book)));
        let per_file: Vec<Vec<games::PlayerGame>> = read.collect::<Result<_, _>>().map_err(|e| cx.fail(e))?;
        // Only the repertoire's side is judged: repeats are counted among those games.
        let mine = per_file.into_iter().flatten().filter(|g| g.side == rep.color).collect();
        let (mine, repeats) = games::first_copies(mine, deduplicate);
        let rows = judge::rows(&rep, mine, max_ply);
        let files = vec![
            ExportFile { name: "games.json".into(), bytes: judge::to_json(&rep, &rows, repeats) },
            ExportFile { name: "games.txt".into(), bytes: judge::to_text(&rep, &rows, repeats) },
        ];
        let deviations = rows.iter().filter(|r| matches!(r.verdict, judge::Verdict::MyDeviation | judge::Verdict::OpponentDeviation)).count();
        Ok((files, format!("{} games judged{}, {deviations} deviations", rows.len(), judge::repeated(repeats))))
    };
    Ok(d.files(p.repertoire_dir(name), run).priority(300))
}
