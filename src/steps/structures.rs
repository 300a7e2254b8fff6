//! `structures`: the pawn structure of every terminal node (Phase 5).

use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "structures", about: "the pawn structure of every terminal node", file: file!() };

/// Tags the tree's terminal nodes.
pub fn declare() -> Decl<'static> {
    let run = |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let tags = crate::structure::tag_tree(&tree);
        let unknown = tags.terminal.iter().filter(|(_, name)| name == crate::structure::UNKNOWN.name).count();
        let text = format!("{} terminal nodes, {} named, {unknown} Unknown", tags.terminal.len(), tags.terminal.len() - unknown);
        Ok(Produced::new(tags, text))
    };
    Decl::new("structures", &RULE, Action::Value(Box::new(run))).reads("tree").priority(600)
}
