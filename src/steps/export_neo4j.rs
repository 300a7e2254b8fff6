//! `export:<name>` of format `neo4j`: positions, moves and transpositions as CSV files
//! for `neo4j-admin database import`.

use super::ids::{TREE};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning};
use crate::record::NodeRecord;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:neo4j", about: "positions.csv, moves.csv, transpositions.csv for neo4j-admin import", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `neo4j`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("neo4j").into_iter().map(|(name, target)| declare(p, declared, &name, target)).collect()
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let records: Input<Vec<NodeRecord>> = d.input_in_memory(super::ids::NODE_RECORDS);
    d.key_at(&["exports", name]);
    let run = move |cx: &Ctx<'_>| {
        let (tree, records) = (cx.get(&tree)?, cx.get(&records)?);
        let files: Vec<ExportFile> = crate::export::neo4j::render(&tree, &records).into_iter().map(|(name, bytes)| ExportFile { name, bytes }).collect();
        let edges: usize = tree.nodes.iter().map(|n| n.children.len()).sum();
        Ok((files, format!("{} positions, {edges} moves", records.len())))
    };
    Ok(d.files(target, run).priority(200))
}
