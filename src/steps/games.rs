//! `games`: the counts of every game file merged (Phase 2).

use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::games::aggregate::{FileAggregate, GamesMerged, merge, merge_reports};

/// The rule.
pub static RULE: Rule = Rule { name: "games", about: "all game files' counts merged", file: file!() };

/// Merges the counts of the steps `files`.
pub fn declare(files: Vec<String>) -> Decl<'static> {
    let reads = files.clone();
    let run = move |cx: &Ctx<'_>| {
        let parts: Vec<Arc<FileAggregate>> = files.iter().map(|id| cx.load(id)).collect::<Result<_, _>>()?;
        let refs: Vec<&FileAggregate> = parts.iter().map(|a| a.as_ref()).collect();
        let stats = merge(&refs);
        let (bad, counters) = merge_reports(&refs);
        if counters.games_bad > 0 {
            eprintln!("{}", bad.render_table().trim_end());
        }
        let text = format!(
            "{} games counted of {}, {} positions, {} moves, {} bad, {} filtered out",
            counters.games_counted,
            counters.games_read,
            stats.positions.len(),
            stats.moves.len(),
            counters.games_bad,
            counters.filtered.values().sum::<u64>()
        );
        Ok(Produced::new(GamesMerged { stats, bad, counters }, text))
    };
    let mut decl = Decl::new("games", &RULE, Action::Value(Box::new(run))).priority(750);
    for read in reads {
        decl = decl.reads(read);
    }
    decl
}
