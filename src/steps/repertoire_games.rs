//! `repertoire-games:<name>`: the games of a repertoire's player collections judged
//! against it, as `games.json` and `games.txt` in `build/repertoire-<name>/`.

use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::repertoire::players::{Matcher, PlayerSpec};
use crate::repertoire::{Repertoire, games, judge};

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-games", about: "a player's games judged against a repertoire", file: file!() };

/// One game file of a player collection: path, shown name, BLAKE3, the collection's
/// source name and players.
pub type PlayerFile = (PathBuf, String, String, String, Vec<PlayerSpec>);

/// Judges the games of `files` against repertoire `name`; files go into `dir`.
pub fn declare(name: &str, files: Vec<PlayerFile>, dir: PathBuf) -> Decl<'static> {
    let source = format!("repertoire:{name}");
    let reads = source.clone();
    let sources: std::collections::BTreeSet<String> = files.iter().map(|f| f.3.clone()).collect();
    let hashes: Vec<(String, String)> = files.iter().map(|f| (f.1.clone(), f.2.clone())).collect();
    let run = move |cx: &Ctx<'_>| {
        let rep: Arc<Repertoire> = cx.load(&source)?;
        let max_ply = usize::from(rep.depth()) + 1;
        let book = rep.index();
        let read = files.par_iter().map(|(path, shown, _, _, players)| games::read_file(path, shown, &Matcher::new(players), max_ply, Some(&book)));
        let per_file: Vec<Vec<games::PlayerGame>> = read.collect::<Result<_, _>>().map_err(|e| cx.fail(e))?;
        let rows = judge::rows(&rep, per_file.into_iter().flatten().collect(), max_ply);
        let files = vec![
            ExportFile { name: "games.json".into(), bytes: judge::to_json(&rep, &rows) },
            ExportFile { name: "games.txt".into(), bytes: judge::to_text(&rep, &rows) },
        ];
        let deviations = rows.iter().filter(|r| matches!(r.verdict, judge::Verdict::MyDeviation | judge::Verdict::OpponentDeviation)).count();
        Ok((files, format!("{} games judged, {deviations} deviations", rows.len())))
    };
    let mut decl = Decl::new(format!("repertoire-games:{name}"), &RULE, Action::Files(dir, Box::new(run))).reads(reads).priority(300);
    for s in sources {
        decl = decl.param_at(vec!["sources".into(), s, "players".into()]);
    }
    for (shown, hash) in hashes {
        decl = decl.file(shown, hash);
    }
    decl
}
