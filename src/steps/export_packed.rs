//! `export:<name>` of format `packed`: 64-bit move records of the tree.

use super::ids::{TREE};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Planner, Planning};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:packed", about: "packed 64-bit move records", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `packed`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports("packed").into_iter().map(|(name, target)| declare(p, declared, &name, target)).collect()
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], name: &str, target: PathBuf) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("export:{name}"), &RULE);
    let tree: Input<Tree> = d.input(TREE);
    d.key_at(&["exports", name]);
    let run = move |cx: &Ctx<'_>| {
        let (file, count) = crate::export::packed::render(&*cx.get(&tree)?);
        Ok((vec![file], format!("{count} move records")))
    };
    Ok(d.files(target, run).priority(200))
}
