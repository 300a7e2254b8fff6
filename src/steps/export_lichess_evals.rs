//! `export:<name>` of format `lichess-evals`: the engine's evaluations as JSON lines in
//! the Lichess evaluation database's format.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::engine::Annotations;

/// The rule.
pub static RULE: Rule = Rule { name: "export:lichess-evals", about: "engine evaluations in the Lichess evaluation format", file: file!() };

/// Writes the evaluations to `target` (zstd when it ends in `.zst`).
pub fn declare(name: &str, target: PathBuf) -> Decl<'static> {
    let output = target.clone();
    let run = move |cx: &Ctx<'_>| {
        let annotations: Arc<Annotations> = cx.load("engine")?;
        let plain = crate::export::lichess_evals::render(&annotations);
        let bytes = crate::export::lichess_evals::encode_for(&output, plain).map_err(|e| cx.fail(format!("compressing {}: {e}", output.display())))?;
        Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} positions", annotations.results.len())))
    };
    Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("engine")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200)
}
