//! `export:<name>` of format `packed`: 64-bit move records of the tree.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:packed", about: "packed 64-bit move records", file: file!() };

/// Writes the records to `target`.
pub fn declare(name: &str, target: PathBuf) -> Decl<'static> {
    let run = |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let (file, count) = crate::export::packed::render(&tree);
        Ok((vec![file], format!("{count} move records")))
    };
    Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("tree")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200)
}
