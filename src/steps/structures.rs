//! `structures`: the pawn structure of every terminal node (Phase 5).

use super::ids::{self, TREE};
use std::sync::Arc;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::structure::labels::Labels;
use crate::structure::StructureTags;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "structures", about: "the pawn structure of every terminal node", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The structure tags of the tree, with every structure-labels source's labels.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::STRUCTURES, &RULE);
    let labels: Vec<Input<Labels>> = p.labels().into_iter().map(|id| d.input(id)).collect();
    let tree: Input<Tree> = d.input(TREE);
    let run = move |cx: &Ctx<'_>| {
        let tree = cx.get(&tree)?;
        let loaded: Vec<Arc<Labels>> = labels.iter().map(|l| cx.get(l)).collect::<Result<_, _>>()?;
        let (classifier, warnings) = crate::structure::labels::classifier(loaded.iter().map(|l| l.as_ref()));
        cx.warn(warnings);
        let tags: StructureTags = crate::structure::tag_tree(&tree, &classifier);
        let unknown = tags.unknown();
        let text = format!("{} terminal nodes, {} named, {unknown} Unknown", tags.terminal.len(), tags.terminal.len() - unknown);
        Ok(Produced::new(tags, text))
    };
    Ok(vec![d.value(run).priority(600)])
}
