//! `explorer`: the explorer index (`[explorer]`): every game file read again for counts
//! by year, month, speed and rating group, game references and PGN texts, for
//! `okb serve`'s `/masters` and `/lichess` filters.


use super::ids::{self, TREE, DUPLICATES};
use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::games::stored::Repeats;

/// The `duplicates` step's id (steps modules never name each other).
use crate::explorer_index::{ExplorerParams, FileSpec};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "explorer", about: "the explorer index: counts by year, month, speed and rating, top games, PGN", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With `[explorer]`: the index over every game file (a counts file holds no games, so
/// filtered answers leave counts sources out; the plan says so).
/// With `duplicates`, repeated games are left out as the counts leave them out.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    if p.loaded.pipeline.explorer.is_none() {
        return Ok(Vec::new());
    }
    if let Some(counts) = p.counts_source().filter(|_| !p.dry_run) {
        crate::progress::note("Note", &format!("[explorer] indexes game files only: filtered answers leave out counts source {counts}"));
    }
    let mut d = p.declare(ids::EXPLORER, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let params: ExplorerParams = d.param("explorer")?;
    let max_ply: usize = d.param("tree.max_ply")?;
    for g in &p.game_files {
        d.file(g.path.display().to_string(), &g.hash);
    }
    let mut sources: Vec<&str> = p.game_files.iter().map(|g| g.source.as_str()).collect();
    sources.sort();
    sources.dedup();
    for source in sources {
        d.key_at(&["sources", source, "kind"]).key_at(&["sources", source, "filter"]);
    }
    let repeats: Option<Input<Repeats>> = d.input_if(declared, DUPLICATES);
    let files = p.game_files.clone();
    let run = move |cx: &Ctx<'_>| {
        let repeats = repeats.as_ref().map(|r| cx.get(r)).transpose()?;
        let repeats_of = |id: String| repeats.iter().flat_map(|r| &r.files).find(|(file, _)| *file == id).map(|(_, at)| at.clone()).unwrap_or_default();
        let specs: Vec<FileSpec> = files.iter().map(|g| FileSpec { path: g.path.clone(), bgn: g.bgn, filter: g.filter.clone(), repeats: repeats_of(g.id()) }).collect();
        let index = crate::explorer_index::build(&*cx.get(&tree)?, &specs, max_ply, &params).map_err(|e| cx.fail(e))?;
        let cells: usize = index.nodes.iter().map(|n| n.positions.len() + n.moves.len()).sum();
        let text = format!("{} games indexed, {cells} cells, {} game references", index.counted, index.games.len());
        Ok(Produced::new(index, text))
    };
    Ok(vec![d.value(run).priority(600)])
}
