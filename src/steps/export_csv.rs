//! `export:<name>` of format `csv`: one row per node.

use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning};
use crate::record::NodeRecord;

/// The rule.
pub static RULE: Rule = Rule { name: "export:csv", about: "one CSV row per node", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `csv`.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("csv").into_iter().map(|(name, target)| declare(p, &name, target)).collect()
}

/// What the export reads of its table.
#[derive(serde::Deserialize)]
struct Settings {
    delimiter: String,
}

/// Writes the rows to `target`, fields separated by the table's `delimiter`.
fn declare(p: &Planning<'_>, name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let records: Input<Vec<NodeRecord>> = d.input_in_memory(super::ids::NODE_RECORDS);
    let Settings { delimiter } = d.param_at(&["exports", name])?;
    // The pipeline's validation checked it is one byte.
    let delimiter = delimiter.as_bytes()[0];
    let run = move |cx: &Ctx<'_>| {
        let records = cx.get(&records)?;
        let bytes = crate::export::csv::render_records(&records, delimiter);
        Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} rows", records.len())))
    };
    Ok(d.files(target, run).priority(200))
}
