//! `store:postgres`: the built SQLite store copied into a PostgreSQL schema, swapped in
//! atomically (`[store] url`).


use super::ids::{STORE};
use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::store::postgres::PgTarget;

/// The rule.
pub static RULE: Rule = Rule { name: "store:postgres", about: "the knowledge base copied into PostgreSQL", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With `[store] url`: the store copied into PostgreSQL.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    // The pipeline's validation parsed the URL already; this cannot fail here.
    let Some(target) = p.loaded.pipeline.store.postgres() else { return Ok(Vec::new()) };
    let target: PgTarget = target.map_err(|e| Planning::fail("store:postgres", e))?;
    let mut d = p.declare("store:postgres", &RULE);
    let _store = d.after(STORE);
    d.key_at(&["store", "url"]).key_at(&["store", "schema"]);
    let store = p.store_path();
    let run = move |cx: &Ctx<'_>| {
        let summary = crate::store::postgres::load::load(&store, &target).map_err(|e| cx.fail(e))?;
        let text = format!("{} tables, {} rows into {}, schema {}", summary.tables, summary.rows, target.shown(), summary.schema);
        Ok(Produced::new(summary, text))
    };
    Ok(vec![d.value(run).priority(400)])
}
