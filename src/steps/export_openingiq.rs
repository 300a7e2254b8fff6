//! `export:<name>` of format `openingiq`: one OpeningIQ JSON tree per named opening.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::eco::EcoSkeleton;
use crate::engine::Annotations;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:openingiq", about: "OpeningIQ JSON per opening", file: file!() };

/// Writes the files into `target`.
pub fn declare(name: &str, target: PathBuf, max_depth: u16, pretty: bool, with_engine: bool) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let skeleton: Arc<EcoSkeleton> = cx.load("eco")?;
        let annotations: Option<Arc<Annotations>> = if with_engine { Some(cx.load("engine")?) } else { None };
        let files = crate::export::openingiq::render_build(&tree, &skeleton, annotations.as_deref(), u32::from(max_depth), pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    };
    let decl = Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("tree")
        .reads("eco")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200);
    if with_engine { decl.reads("engine") } else { decl }
}
