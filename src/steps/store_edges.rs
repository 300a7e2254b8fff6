//! `store:edges`: the store's edge table in a part database under `cache/`, written
//! from the tree alone while the node records are made, and copied into the store.

use super::ids::{self, TREE};
use super::planning::{Planner, Planning};
use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule =
    Rule { name: "store:edges", about: "the store's move edges, a part database", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The tree's edges in `store-edges.sqlite` in the cache.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::STORE_EDGES, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let path = p.store_edges();
    let target = path.clone();
    let run = move |cx: &Ctx<'_>| {
        let edges = crate::store::write::write_edges(&*cx.get(&tree)?, &path).map_err(|e| cx.fail(e))?;
        Ok(format!("{edges} edges"))
    };
    Ok(vec![d.writes_file(target, run).priority(600)])
}
