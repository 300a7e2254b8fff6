//! `export:<name>` of format `lichess-evals`: the engine's evaluations as JSON lines in
//! the Lichess evaluation database's format.

use super::ids::{ENGINE};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning};
use crate::engine::Annotations;

/// The rule.
pub static RULE: Rule = Rule { name: "export:lichess-evals", about: "engine evaluations in the Lichess evaluation format", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `lichess-evals`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("lichess-evals").into_iter().map(|(name, target)| declare(p, declared, &name, target)).collect()
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let engine: Input<Annotations> = d.input(ENGINE);
    d.key_at(&["exports", name]);
    let output = target.clone();
    let run = move |cx: &Ctx<'_>| {
        let annotations = cx.get(&engine)?;
        let plain = crate::export::lichess_evals::render(&annotations);
        let bytes = crate::export::lichess_evals::encode_for(&output, plain).map_err(|e| cx.fail(format!("compressing {}: {e}", output.display())))?;
        Ok((vec![ExportFile { name: String::new(), bytes }], format!("{} positions", annotations.results.len())))
    };
    Ok(d.files(target, run).priority(200))
}
