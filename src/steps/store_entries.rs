//! `store:entries`: the store's entry table in a part database under `cache/`, written
//! while the tree is built and copied into every store written from this skeleton.


use super::ids::{self, ECO};
use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Planner, Planning};
use crate::eco::EcoSkeleton;

/// The rule.
pub static RULE: Rule = Rule { name: "store:entries", about: "the store's opening entries, a part database", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The skeleton's entries in `store-entries.sqlite` in the cache.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::STORE_ENTRIES, &RULE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let path = p.store_entries();
    let target = path.clone();
    let run = move |cx: &Ctx<'_>| {
        let rows = crate::store::write::write_entries(&*cx.get(&eco)?, &path).map_err(|e| cx.fail(e))?;
        Ok(format!("{rows} entries"))
    };
    Ok(vec![d.writes_file(target, run).priority(650)])
}
