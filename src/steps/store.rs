//! `store`: the knowledge base as an SQLite database (nodes, edges, transpositions,
//! entries, engine lines, structures, changelog), replaced atomically.

use super::ids::{self, COVERAGE, EXPLORER, NODE_RECORDS, PLAYER_GAMES, STORE_EDGES, STORE_ENTRIES, TREE, VALIDATE};
use std::collections::BTreeMap;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use crate::explorer_index::ExplorerIndex;
use crate::release::manifest::Coverage;
use super::planning::{Planner, Planning};
use crate::record::NodeRecord;
use crate::store::write::LogAfter;
use crate::repertoire::collection::Collections;
use crate::tree::Tree;
use crate::validate::report::ValidationReport;

/// The rule.
pub static RULE: Rule = Rule { name: "store", about: "the SQLite knowledge base", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// Writes the store from the entries `store:entries` and the edges `store:edges` wrote, and the node records (evaluations and structure tags applied), with the parts the plan
/// declared (validation stubs, explorer index, player collections). The
/// store it replaces is kept as `previous/store.sqlite` (a hard link, so no copy), for
/// `okb diff`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::STORE, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let _entries = d.after(STORE_ENTRIES);
    let _edges = d.after(STORE_EDGES);
    let records: Input<Vec<NodeRecord>> = d.input_in_memory(NODE_RECORDS);
    let coverage: Input<BTreeMap<String, Coverage>> = d.input(COVERAGE);
    let with_stubs = p.loaded.pipeline.validate.as_ref().is_some_and(|v| v.stubs);
    let validation: Option<Input<ValidationReport>> = with_stubs.then(|| d.input(VALIDATE));
    let explorer: Option<Input<ExplorerIndex>> = d.input_if(declared, EXPLORER);
    let players: Option<Input<Collections>> = d.input_if(declared, PLAYER_GAMES);
    let changelog_builds: u32 = d.param("store.changelog_builds")?;
    let answers_above: u64 = d.param("store.answers_above")?;
    let (path, entries, edges, previous) = (p.store_path(), p.store_entries(), p.store_edges(), p.previous_dir());
    let target = path.clone();
    let run = move |cx: &Ctx<'_>| {
        let kept = previous.join("store.sqlite");
        // The log continues the last finished build: not a store that a killed run put in
        // place but never recorded (the store before it, which that run kept, is the one),
        // nor one the cache knows nothing of (a lost cache starts afresh, as a clone does).
        let log_after = if cx.build.holds_last_output(cx.id, &path) {
            crate::files::write::keep_previous(&path, &kept).map_err(|e| cx.fail(format!("keeping the previous store as {}: {e}", kept.display())))?;
            LogAfter::Store(&kept)
        } else if path.exists() && kept.exists() {
            LogAfter::Store(&kept)
        } else {
            LogAfter::Nothing
        };
        let tree = cx.get(&tree)?;
        let records = cx.get(&records)?;
        let stubs = validation.as_ref().map(|v| cx.get(v)).transpose()?.map(|v| v.stub_nodes()).unwrap_or_default();
        let explorer = explorer.as_ref().map(|e| cx.get(e)).transpose()?;
        let players = players.as_ref().map(|e| cx.get(e)).transpose()?;
        let coverage = serde_json::to_string(&*cx.get(&coverage)?).map_err(|e| cx.fail(e))?;
        let parts = crate::store::write::Parts { explorer: explorer.as_deref(), players: players.as_deref(), coverage: Some(&coverage), changelog_builds: Some(changelog_builds), edges: Some(&edges), answers_above: Some(answers_above), log_after };
        let written = crate::store::write::write_records(&tree, &records, &entries, &stubs, parts, &path).map_err(|e| cx.fail(e))?;
        let stubs = if written.stubs > 0 { format!(" ({} validation stubs)", written.stubs) } else { String::new() };
        let answers = if written.answers > 0 { format!(", {} node answers", written.answers) } else { String::new() };
        Ok(format!(
            "{} nodes{stubs}, {} edges, {} transpositions, {} changes logged{answers}",
            written.nodes, written.edges, written.transpositions, written.changes
        ))
    };
    Ok(vec![d.writes_file(target, run).priority(500)])
}
