//! `node-records`: the flat per-node records that the store and the CSV exports write,
//! built once per run for both (kept in memory, not in the cache: rebuilding them is
//! cheaper than storing them).

use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::engine::Annotations;
use crate::record::NodeRecord;
use crate::structure::StructureTags;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "node-records", about: "per-node records for the store and CSV (in memory)", file: file!() };

/// Records of the tree's nodes, with engine lines when `with_engine`.
pub fn declare(with_engine: bool) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let annotations: Option<Arc<Annotations>> = if with_engine { Some(cx.load("engine")?) } else { None };
        let structures: Arc<StructureTags> = cx.load("structures")?;
        let records = NodeRecord::tagged(&tree, annotations.as_deref(), Some(&structures));
        let text = format!("{} records", records.len());
        Ok(Produced::unstored(records, text))
    };
    let decl = Decl::new("node-records", &RULE, Action::Memory(Box::new(run))).reads("tree").reads("structures").priority(550);
    if with_engine { decl.reads("engine") } else { decl }
}
