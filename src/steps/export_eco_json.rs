//! `export:<name>` of format `eco-json`: the skeleton as eco.json-compatible files.

use super::ids::{ECO};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Planner, Planning};
use crate::eco::EcoSkeleton;

/// The rule.
pub static RULE: Rule = Rule { name: "export:eco-json", about: "ecoA..E.json, eco_interpolated.json, fromTo.json", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `eco-json`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("eco-json").into_iter().map(|(name, target)| declare(p, declared, &name, target)).collect()
}

/// What the export reads of its table.
#[derive(serde::Deserialize)]
struct Settings {
    pretty: bool,
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let Settings { pretty } = d.param_at(&["exports", name])?;
    let run = move |cx: &Ctx<'_>| {
        let files = crate::export::eco_json::render_all(&*cx.get(&eco)?, pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    };
    Ok(d.files(target, run).priority(100))
}
