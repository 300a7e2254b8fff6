//! `store`: the knowledge base as an SQLite database (nodes, edges, transpositions,
//! entries, engine lines, structures, changelog), replaced atomically.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::engine::Annotations;
use crate::record::NodeRecord;
use crate::repertoire::collection::Collections;
use crate::tree::Tree;
use crate::validate::report::ValidationReport;

/// The rule.
pub static RULE: Rule = Rule { name: "store", about: "the SQLite knowledge base", file: file!() };

/// Which optional parts the store holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct With {
    /// Engine lines (`engine`).
    pub engine: bool,
    /// Validation stubs (`validate`).
    pub stubs: bool,
    /// The explorer index (`explorer`).
    pub explorer: bool,
    /// The player collections' games (`player-games`).
    pub players: bool,
}

/// Writes the store at `path` from the entry part at `entries`, with the parts `with`
/// names. The store it replaces is kept as `previous/store.sqlite` (a hard link, so no
/// copy), for `okb diff`.
pub fn declare(path: PathBuf, entries: PathBuf, previous: PathBuf, with: With) -> Decl<'static> {
    let With { engine: with_engine, stubs: with_stubs, explorer: with_explorer, players: with_players } = with;
    let target = path.clone();
    let run = move |cx: &Ctx<'_>| {
        let kept = previous.join("store.sqlite");
        crate::diff::keep_previous(&path, &kept).map_err(|e| cx.fail(format!("keeping the previous store as {}: {e}", kept.display())))?;
        let tree: Arc<Tree> = cx.load("tree")?;
        let annotations: Option<Arc<Annotations>> = if with_engine { Some(cx.load("engine")?) } else { None };
        let records: Arc<Vec<NodeRecord>> = cx.load_in_memory("node-records")?;
        let stubs = if with_stubs { cx.load::<ValidationReport>("validate")?.stub_nodes() } else { Vec::new() };
        let explorer: Option<Arc<crate::explorer_index::ExplorerIndex>> = if with_explorer { Some(cx.load("explorer")?) } else { None };
        let players: Option<Arc<Collections>> = if with_players { Some(cx.load("player-games")?) } else { None };
        let coverage: Arc<std::collections::BTreeMap<String, crate::release::manifest::Coverage>> = cx.load("coverage")?;
        let coverage = serde_json::to_string(&*coverage).map_err(|e| cx.fail(e))?;
        let parts = crate::store::write::Parts { explorer: explorer.as_deref(), players: players.as_deref(), coverage: Some(&coverage) };
        let written = crate::store::write::write_records(&tree, &records, &entries, annotations.as_deref(), &stubs, parts, &path).map_err(|e| cx.fail(e))?;
        let stubs = if written.stubs > 0 { format!(" ({} validation stubs)", written.stubs) } else { String::new() };
        Ok(format!(
            "{} nodes{stubs}, {} edges, {} transpositions, {} changes logged",
            written.nodes, written.edges, written.transpositions, written.changes
        ))
    };
    let mut decl = Decl::new("store", &RULE, Action::File(target, Box::new(run)))
        .reads("tree")
        .reads("store:entries")
        .reads("node-records")
        .reads("coverage")
        .priority(500);
    if with_engine {
        decl = decl.reads("engine");
    }
    if with_stubs {
        decl = decl.reads("validate");
    }
    if with_explorer {
        decl = decl.reads("explorer");
    }
    if with_players {
        decl = decl.reads("player-games");
    }
    decl
}
