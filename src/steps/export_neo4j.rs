//! `export:<name>` of format `neo4j`: positions, moves and transpositions as CSV files
//! for `neo4j-admin database import`.

use super::ids::{TREE};

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Export, NoSettings, Planner, Planning};
use crate::record::NodeRecord;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:neo4j", about: "positions.csv, moves.csv, transpositions.csv for neo4j-admin import", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `neo4j`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    // The format has no settings: any key beside `format` and `output` is an error.
    p.exports::<NoSettings>("neo4j")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], export: Export<NoSettings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let target = export.target;
    let tree: Input<Tree> = d.input(TREE);
    let records: Input<Vec<NodeRecord>> = d.input_in_memory(super::ids::NODE_RECORDS);
    let run = move |cx: &Ctx<'_>| {
        let (tree, records) = (cx.get(&tree)?, cx.get(&records)?);
        let files: Vec<ExportFile> = crate::export::neo4j::render(&tree, &records).into_iter().map(|(name, bytes)| ExportFile { name, bytes }).collect();
        let edges: usize = tree.nodes.iter().map(|n| n.children.len()).sum();
        Ok((files, format!("{} positions, {edges} moves", records.len())))
    };
    Ok(d.files(target, run).priority(200))
}
