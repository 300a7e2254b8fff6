//! `export:<name>` of format `eco-json`: the skeleton as eco.json-compatible files.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::eco::EcoSkeleton;

/// The rule.
pub static RULE: Rule = Rule { name: "export:eco-json", about: "ecoA..E.json, eco_interpolated.json, fromTo.json", file: file!() };

/// Writes the files into `target`.
pub fn declare(name: &str, target: PathBuf, pretty: bool) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let skeleton: Arc<EcoSkeleton> = cx.load("eco")?;
        let files = crate::export::eco_json::render_all(&skeleton, pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    };
    Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("eco")
        .param_at(vec!["exports".into(), name.into()])
        .priority(100)
}
