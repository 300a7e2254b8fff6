//! `export:<name>` of format `csv`: one row per node.

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Export, Planner, Planning};
use crate::record::NodeRecord;

/// The rule.
pub static RULE: Rule = Rule { name: "export:csv", about: "one CSV row per node", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `csv`.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports::<Settings>("csv")?.into_iter().map(|e| declare(p, e)).collect()
}

/// The settings of a `csv` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Field delimiter, one ASCII character.
    #[serde(default = "comma", deserialize_with = "one_byte")]
    delimiter: u8,
}

fn comma() -> u8 {
    b','
}

/// The delimiter as the CSV writer takes it: one byte, so one ASCII character.
fn one_byte<'de, D: serde::Deserializer<'de>>(from: D) -> Result<u8, D::Error> {
    let text: String = serde::Deserialize::deserialize(from)?;
    crate::export::csv::delimiter(&text).map_err(serde::de::Error::custom)
}

/// Writes the rows to the target, fields separated by the table's `delimiter`.
fn declare(p: &Planning<'_>, export: Export<Settings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let records: Input<Vec<NodeRecord>> = d.input_in_memory(super::ids::NODE_RECORDS);
    let Export { target, settings: Settings { delimiter }, .. } = export;
    let run = move |cx: &Ctx<'_>| {
        let records = cx.get(&records)?;
        let bytes = crate::export::csv::render_records(&records, delimiter);
        Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} rows", records.len())))
    };
    Ok(d.files(target, run).priority(200))
}
