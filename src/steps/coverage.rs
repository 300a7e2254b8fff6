//! `coverage`: what each game source holds, read from the game counting steps: how many
//! games it gave and the dates they span. The manifest (`coverage`) and the store's
//! metadata (the API's `GET /`) say how fresh the knowledge base is from it, in facts
//! that the same inputs reproduce.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::games::stored::StoredCounts;
use crate::release::manifest::Coverage;

/// The rule.
pub static RULE: Rule = Rule { name: "coverage", about: "each game source's games and the dates they span", file: file!() };

/// Sums the counters of `parts`, each a (source name, counting step id) pair, by source.
pub fn declare(parts: Vec<(String, String)>) -> Decl<'static> {
    let reads: Vec<String> = parts.iter().map(|(_, id)| id.clone()).collect();
    let run = move |cx: &Ctx<'_>| {
        let mut sources: BTreeMap<String, Coverage> = BTreeMap::new();
        for (source, id) in &parts {
            let counted: Arc<StoredCounts> = cx.load(id)?;
            sources.entry(source.clone()).or_default().add(&counted.counters);
        }
        let text = sources.iter().map(|(name, c)| format!("{name}: {}", c.summary())).collect::<Vec<_>>().join("; ");
        let text = if text.is_empty() { "no games".to_string() } else { text };
        Ok(Produced::new(sources, text))
    };
    let mut decl = Decl::new("coverage", &RULE, Action::Value(Box::new(run))).priority(650);
    for id in reads {
        decl = decl.reads(id);
    }
    decl
}
