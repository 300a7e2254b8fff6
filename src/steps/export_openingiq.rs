//! `export:<name>` of format `openingiq`: one OpeningIQ JSON tree per named opening.

use super::ids::{ECO, ENGINE, TREE};

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Export, Planner, Planning};
use crate::eco::EcoSkeleton;
use crate::engine::Annotations;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:openingiq", about: "OpeningIQ JSON per opening", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `openingiq`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports::<Settings>("openingiq")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

/// The settings of an `openingiq` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Plies of tree kept below each named opening.
    #[serde(default = "max_depth")]
    max_depth: u16,
    /// Indented JSON.
    #[serde(default = "indented")]
    pretty: bool,
}

fn indented() -> bool {
    true
}

fn max_depth() -> u16 {
    crate::export::openingiq::DEFAULT_MAX_DEPTH as u16
}

fn declare(p: &Planning<'_>, declared: &[Decl<'static>], export: Export<Settings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let Export { target, settings: Settings { max_depth, pretty }, .. } = export;
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let run = move |cx: &Ctx<'_>| {
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
        let files = crate::export::openingiq::render_build(&*cx.get(&tree)?, &*cx.get(&eco)?, annotations.as_deref(), u32::from(max_depth), pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    };
    Ok(d.files(target, run).priority(200))
}
