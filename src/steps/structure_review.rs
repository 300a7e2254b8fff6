//! `structure-review`: the terminal positions no structure names, for review (Phase 5).

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::structure::StructureTags;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule =
    Rule { name: "structure-review", about: "Unknown pawn structures listed for review (structures-review.{json,txt})", file: file!() };

/// Writes the review files into `dir`.
pub fn declare(dir: PathBuf) -> Decl<'static> {
    let run = |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let tags: Arc<StructureTags> = cx.load("structures")?;
        let review = crate::structure::review::review(&tree, &tags);
        let text = format!("{} Unknown terminal positions", review.unknown.len());
        let files = vec![
            ExportFile { name: "structures-review.json".into(), bytes: review.to_json() },
            ExportFile { name: "structures-review.txt".into(), bytes: review.to_table() },
        ];
        Ok((files, text))
    };
    Decl::new("structure-review", &RULE, Action::Files(dir, Box::new(run))).reads("tree").reads("structures").priority(300)
}
