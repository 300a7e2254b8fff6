//! `export:<name>` of format `packed`: 64-bit move records of the tree.

use super::ids::{TREE};

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Export, NoSettings, Planner, Planning};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:packed", about: "packed 64-bit move records", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `packed`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    // The format has no settings: any key beside `format` and `output` is an error.
    p.exports::<NoSettings>("packed")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], export: Export<NoSettings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let target = export.target;
    let tree: Input<Tree> = d.input(TREE);
    let run = move |cx: &Ctx<'_>| {
        let (file, count) = crate::export::packed::render(&*cx.get(&tree)?);
        Ok((vec![file], format!("{count} move records")))
    };
    Ok(d.files(target, run).priority(200))
}
