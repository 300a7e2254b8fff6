//! `export:<name>` of format `csv`: one row per node.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::record::NodeRecord;

/// The rule.
pub static RULE: Rule = Rule { name: "export:csv", about: "one CSV row per node", file: file!() };

/// Writes the rows to `target`, fields separated by `delimiter`.
pub fn declare(name: &str, target: PathBuf, delimiter: u8) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let records: Arc<Vec<NodeRecord>> = cx.load_in_memory("node-records")?;
        let bytes = crate::export::csv::render_records(&records, delimiter);
        Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} rows", records.len())))
    };
    Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("node-records")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200)
}
