//! `coverage`: what each game source holds, read from the game counting steps: how many
//! games it gave and the dates they span. The manifest (`coverage`) and the store's
//! metadata (the API's `GET /`) say how fresh the knowledge base is from it, in facts
//! that the same inputs reproduce.

use super::ids;
use std::collections::BTreeMap;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::games::stored::StoredCounts;
use crate::release::manifest::Coverage;

/// The rule.
pub static RULE: Rule = Rule { name: "coverage", about: "each game source's games and the dates they span", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// What each game source covers, from every counting step (none: "no games").
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::COVERAGE, &RULE);
    let parts: Vec<(String, Input<StoredCounts>)> = p.counting_parts().into_iter().map(|(source, id)| (source, d.input(id))).collect();
    let run = move |cx: &Ctx<'_>| {
        let mut sources: BTreeMap<String, Coverage> = BTreeMap::new();
        for (source, part) in &parts {
            sources.entry(source.clone()).or_default().add(&cx.get(part)?.counters);
        }
        let text = sources.iter().map(|(name, c)| format!("{name}: {}", c.summary())).collect::<Vec<_>>().join("; ");
        let text = if text.is_empty() { "no games".to_string() } else { text };
        Ok(Produced::new(sources, text))
    };
    Ok(vec![d.value(run).priority(650)])
}
