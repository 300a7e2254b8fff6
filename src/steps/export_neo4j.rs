//! `export:<name>` of format `neo4j`: positions, moves and transpositions as CSV files
//! for `neo4j-admin database import`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::record::NodeRecord;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:neo4j", about: "positions.csv, moves.csv, transpositions.csv for neo4j-admin import", file: file!() };

/// Writes the files into the folder `target`.
pub fn declare(name: &str, target: PathBuf) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let records: Arc<Vec<NodeRecord>> = cx.load_in_memory("node-records")?;
        let files: Vec<ExportFile> = crate::export::neo4j::render(&tree, &records).into_iter().map(|(name, bytes)| ExportFile { name, bytes }).collect();
        let edges: usize = tree.nodes.iter().map(|n| n.children.len()).sum();
        Ok((files, format!("{} positions, {edges} moves", records.len())))
    };
    Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("tree")
        .reads("node-records")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200)
}
