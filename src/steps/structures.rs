//! `structures`: the pawn structure of every terminal node (Phase 5).

use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::structure::labels::Labels;
use crate::structure::StructureTags;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "structures", about: "the pawn structure of every terminal node", file: file!() };

/// Tags the tree's terminal nodes, with the labels of the `structure-labels` steps
/// `labels`.
pub fn declare(labels: Vec<String>) -> Decl<'static> {
    let reads = labels.clone();
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let loaded: Vec<Arc<Labels>> = labels.iter().map(|id| cx.load(id)).collect::<Result<_, _>>()?;
        let (classifier, warnings) = crate::structure::labels::classifier(loaded.iter().map(|l| l.as_ref()));
        cx.warn(warnings);
        let tags: StructureTags = crate::structure::tag_tree(&tree, &classifier);
        let unknown = tags.unknown();
        let text = format!("{} terminal nodes, {} named, {unknown} Unknown", tags.terminal.len(), tags.terminal.len() - unknown);
        Ok(Produced::new(tags, text))
    };
    reads.iter().fold(Decl::new("structures", &RULE, Action::Value(Box::new(run))).reads("tree"), |d, id| d.reads(id)).priority(600)
}
