//! `export:<name>` of format `pgn`: one PGN per named opening, the tree as variations
//! with `[%eval]` comments.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::engine::Annotations;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:pgn", about: "PGN per opening with [%eval]", file: file!() };

/// Writes the files into `target`, `max_depth` plies below each opening.
pub fn declare(name: &str, target: PathBuf, max_depth: u16, with_engine: bool) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let annotations: Option<Arc<Annotations>> = if with_engine { Some(cx.load("engine")?) } else { None };
        let files = crate::export::pgn::render_all(&tree, annotations.as_deref(), max_depth);
        let text = format!("{} openings", files.len());
        Ok((files, text))
    };
    let decl = Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("tree")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200);
    if with_engine { decl.reads("engine") } else { decl }
}
