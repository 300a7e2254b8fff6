//! `export:<name>` of format `openingiq`: one OpeningIQ JSON tree per named opening.

use super::ids::{ECO, ENGINE, TREE};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Planner, Planning};
use crate::eco::EcoSkeleton;
use crate::engine::Annotations;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:openingiq", about: "OpeningIQ JSON per opening", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `openingiq`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("openingiq").into_iter().map(|(name, target)| declare(p, declared, &name, target)).collect()
}

/// What the export reads of its table.
#[derive(serde::Deserialize)]
struct Settings {
    max_depth: u16,
    pretty: bool,
}

fn declare(p: &Planning<'_>, declared: &[Decl<'static>], name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let Settings { max_depth, pretty } = d.param_at(&["exports", name])?;
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let run = move |cx: &Ctx<'_>| {
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
        let files = crate::export::openingiq::render_build(&*cx.get(&tree)?, &*cx.get(&eco)?, annotations.as_deref(), u32::from(max_depth), pretty);
        let text = format!("{} files", files.len());
        Ok((files, text))
    };
    Ok(d.files(target, run).priority(200))
}
