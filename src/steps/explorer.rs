//! `explorer`: the explorer index (`[explorer]`): every game file read again for counts
//! by year, month, speed and rating group, game references and PGN texts, for
//! `okb serve`'s `/masters` and `/lichess` filters.

use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::explorer_index::{ExplorerParams, FileSpec};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "explorer", about: "the explorer index: counts by year, month, speed and rating, top games, PGN", file: file!() };

/// Indexes `files` (with their BLAKE3s and sources) over the tree.
pub fn declare(files: Vec<(FileSpec, String, String)>, max_ply: usize, params: ExplorerParams) -> Decl<'static> {
    let mut sources: Vec<String> = files.iter().map(|f| f.2.clone()).collect();
    sources.sort();
    sources.dedup();
    let hashes: Vec<(String, String)> = files.iter().map(|(f, hash, _)| (f.path.display().to_string(), hash.clone())).collect();
    let specs: Vec<FileSpec> = files.into_iter().map(|f| f.0).collect();
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let index = crate::explorer_index::build(&tree, &specs, max_ply, &params).map_err(|e| cx.fail(e))?;
        let cells: usize = index.nodes.iter().map(|n| n.positions.len() + n.moves.len()).sum();
        let text = format!("{} games indexed, {cells} cells, {} game references", index.counted, index.games.len());
        Ok(Produced::new(index, text))
    };
    let mut decl = Decl::new("explorer", &RULE, Action::Value(Box::new(run))).reads("tree").param("explorer").param("tree.max_ply").priority(600);
    for (name, hash) in hashes {
        decl = decl.file(name, hash);
    }
    for source in sources {
        decl = decl.param_at(vec!["sources".into(), source.clone(), "kind".into()]).param_at(vec!["sources".into(), source, "filter".into()]);
    }
    decl
}
