//! `coverage`: what each game source holds, read from the game counting steps: how many
//! games it gave and the dates they span. The manifest (`coverage`) and the store's
//! metadata (the API's `GET /`) say how fresh the knowledge base is from it, in facts
//! that the same inputs reproduce.

use super::ids::DUPLICATES;
use super::ids;
use std::collections::BTreeMap;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::games::stored::{Repeats, StoredCounts};

/// The `duplicates` step's id (steps modules never name each other).
use crate::release::manifest::Coverage;

/// The rule.
pub static RULE: Rule = Rule { name: "coverage", about: "each game source's games and the dates they span", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// What each game source covers, from every counting step (none: "no games"), each
/// distinct game once when `duplicates` found repeats.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare(ids::COVERAGE, &RULE);
    let parts: Vec<(String, Input<StoredCounts>)> = p.counting_parts().into_iter().map(|(source, id)| (source, d.input(id))).collect();
    let repeats: Option<Input<Repeats>> = d.input_if(declared, DUPLICATES);
    let run = move |cx: &Ctx<'_>| {
        let mut sources: BTreeMap<String, Coverage> = BTreeMap::new();
        for (source, part) in &parts {
            sources.entry(source.clone()).or_default().add(&cx.get(part)?.counters);
        }
        let repeats = repeats.as_ref().map(|r| cx.get(r)).transpose()?;
        for (id, at) in repeats.iter().flat_map(|r| &r.files) {
            let source = parts.iter().find(|(_, part)| part.id() == id).map(|(source, _)| source);
            sources.get_mut(source.expect("a repeat is in a counted file")).expect("every part's source").skip_repeats(at.len() as u64);
        }
        let text = sources.iter().map(|(name, c)| format!("{name}: {}", c.summary())).collect::<Vec<_>>().join("; ");
        let text = if text.is_empty() { "no games".to_string() } else { text };
        Ok(Produced::new(sources, text))
    };
    Ok(vec![d.value(run).priority(650)])
}
