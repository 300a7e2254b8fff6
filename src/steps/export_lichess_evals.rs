//! `export:<name>` of format `lichess-evals`: the engine's evaluations as JSON lines in
//! the Lichess evaluation database's format.

use super::ids::{ENGINE};

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Export, NoSettings, Planner, Planning};
use crate::engine::Annotations;

/// The rule.
pub static RULE: Rule = Rule { name: "export:lichess-evals", about: "engine evaluations in the Lichess evaluation format", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `lichess-evals`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    // The format has no settings: any key beside `format` and `output` is an error.
    p.exports::<NoSettings>("lichess-evals")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], export: Export<NoSettings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let target = export.target;
    let engine: Input<Annotations> = d.input(ENGINE);
    let output = target.clone();
    let run = move |cx: &Ctx<'_>| {
        let annotations = cx.get(&engine)?;
        let plain = crate::export::lichess_evals::render(&annotations);
        let bytes = crate::export::lichess_evals::encode_for(&output, plain).map_err(|e| cx.fail(format!("compressing {}: {e}", output.display())))?;
        Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} positions", annotations.results.len())))
    };
    Ok(d.files(target, run).priority(200))
}
