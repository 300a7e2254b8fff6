//! `store:postgres`: the built SQLite store copied into a PostgreSQL schema, swapped in
//! atomically (`[store] url`).

use std::path::PathBuf;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::store::postgres::PgTarget;

/// The rule.
pub static RULE: Rule = Rule { name: "store:postgres", about: "the knowledge base copied into PostgreSQL", file: file!() };

/// Copies the store at `store` into `target` whenever the store changes.
pub fn declare(store: PathBuf, target: PgTarget) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let summary = crate::store::postgres::load::load(&store, &target).map_err(|e| cx.fail(e))?;
        let text = format!("{} tables, {} rows into {}, schema {}", summary.tables, summary.rows, target.shown(), summary.schema);
        Ok(Produced::new(summary, text))
    };
    Decl::new("store:postgres", &RULE, Action::Value(Box::new(run)))
        .reads("store")
        .param("store.url")
        .param("store.schema")
        .priority(400)
}
