//! `node-records`: the flat per-node records that the store and the CSV exports write,
//! built once per run for both (kept in memory, not in the cache: rebuilding them is
//! cheaper than storing them).


use super::ids::{ENGINE, STRUCTURES, TREE};
use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::engine::Annotations;
use crate::record::NodeRecord;
use crate::structure::StructureTags;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "node-records", about: "per-node records for the store and CSV (in memory)", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The node records of the tree, with its structures and (when declared) evaluations.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(super::ids::NODE_RECORDS, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let structures: Input<StructureTags> = d.input(STRUCTURES);
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let run = move |cx: &Ctx<'_>| {
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
        let records = NodeRecord::tagged(&*cx.get(&tree)?, annotations.as_deref(), Some(&*cx.get(&structures)?));
        let text = format!("{} records", records.len());
        Ok(Produced::unstored(records, text))
    };
    Ok(vec![d.memory(run).priority(550)])
}
