//! `export:<name>` of format `eco-json`: the skeleton as eco.json-compatible files.

use super::ids::{ECO};

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Export, Planner, Planning};
use crate::eco::EcoSkeleton;

/// The rule.
pub static RULE: Rule = Rule { name: "export:eco-json", about: "ecoA..E.json, eco_interpolated.json, fromTo.json", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `eco-json`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports::<Settings>("eco-json")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

/// The settings of an `eco-json` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Indented JSON.
    #[serde(default = "indented")]
    pretty: bool,
}

fn indented() -> bool {
    true
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], export: Export<Settings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let Export { target, settings: Settings { pretty }, .. } = export;
    let run = move |cx: &Ctx<'_>| {
        let files = crate::export::eco_json::render_all(&*cx.get(&eco)?, pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    };
    Ok(d.files(target, run).priority(100))
}
