//! `export:<name>` of format `pgn`: one PGN per named opening, the tree as variations
//! with `[%eval]` comments.

use super::ids::{ENGINE, TREE};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Planner, Planning};
use crate::engine::Annotations;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:pgn", about: "PGN per opening with [%eval]", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `pgn`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("pgn").into_iter().map(|(name, target)| declare(p, declared, &name, target)).collect()
}

/// What the export reads of its table.
#[derive(serde::Deserialize)]
struct Settings {
    max_depth: u16,
}

fn declare(p: &Planning<'_>, declared: &[Decl<'static>], name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let Settings { max_depth } = d.param_at(&["exports", name])?;
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let run = move |cx: &Ctx<'_>| {
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
        let files = crate::export::pgn::render_all(&*cx.get(&tree)?, annotations.as_deref(), max_depth);
        let text = format!("{} openings", files.len());
        Ok((files, text))
    };
    Ok(d.files(target, run).priority(200))
}
