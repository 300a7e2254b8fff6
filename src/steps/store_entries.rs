//! `store:entries`: the store's entry table in a part database under `cache/`, written
//! while the tree is built and copied into every store written from this skeleton.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::eco::EcoSkeleton;

/// The rule.
pub static RULE: Rule = Rule { name: "store:entries", about: "the store's opening entries, a part database", file: file!() };

/// Writes the entries of the skeleton into `path`.
pub fn declare(path: PathBuf) -> Decl<'static> {
    let target = path.clone();
    let run = move |cx: &Ctx<'_>| {
        let skeleton: Arc<EcoSkeleton> = cx.load("eco")?;
        let rows = crate::store::write::write_entries(&skeleton, &path).map_err(|e| cx.fail(e))?;
        Ok(format!("{rows} entries"))
    };
    Decl::new("store:entries", &RULE, Action::File(target, Box::new(run))).reads("eco").priority(650)
}
