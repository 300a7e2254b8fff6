//! `export:<name>` of format `pgn`: one PGN per named opening, the tree as variations
//! with `[%eval]` comments.

use super::ids::{ENGINE, TREE};

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Export, Planner, Planning};
use crate::engine::Annotations;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:pgn", about: "PGN per opening with [%eval]", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `pgn`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports::<Settings>("pgn")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

/// The settings of a `pgn` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Plies of tree below each named opening.
    #[serde(default = "max_depth")]
    max_depth: u16,
}

fn max_depth() -> u16 {
    crate::export::pgn::DEFAULT_MAX_DEPTH
}

fn declare(p: &Planning<'_>, declared: &[Decl<'static>], export: Export<Settings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let Export { target, settings: Settings { max_depth }, .. } = export;
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let run = move |cx: &Ctx<'_>| {
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
        let files = crate::export::pgn::render_all(&*cx.get(&tree)?, annotations.as_deref(), max_depth);
        let text = format!("{} openings", files.len());
        Ok((files, text))
    };
    Ok(d.files(target, run).priority(200))
}
