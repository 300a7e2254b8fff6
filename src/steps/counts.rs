//! `counts:<source>`: a counts file (`okb count`) read as one more part of the game
//! counts (Phase 2).

use std::path::PathBuf;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::games::runs::{MergePlan, in_memory};
use crate::games::stored::{Store, StoredCounts, store_both};

/// The rule.
pub static RULE: Rule = Rule { name: "counts", about: "a counts file (okb count) read as game counts", file: file!() };

/// The step id of the counts source `name`.
pub fn id(name: &str) -> String {
    format!("counts:{name}")
}

/// Reads the counts source `name` (resolved to `path`, with BLAKE3 `hash`); its ply limit
/// must be the tree's `max_ply`.
pub fn declare(name: &str, path: PathBuf, hash: &str, max_ply: usize) -> Decl<'static> {
    let source = name.to_string();
    let run = move |cx: &Ctx<'_>| {
        let counts = crate::games::counts::read(&path).map_err(|e| cx.fail(format!("counts source {source}: {e}")))?;
        if counts.max_ply as usize != max_ply {
            return Err(cx.fail(format!(
                "counts source {source}: {} was counted to ply {}, the tree is built to ply {max_ply}: recount with `okb count --max-ply {max_ply}`",
                path.display(),
                counts.max_ply
            )));
        }
        let c = &counts.counters;
        let text = format!("{} games counted of {}, {} positions", c.games_counted, c.games_read, counts.stats.positions.len());
        // Stored as the game files' counts are, so the merge streams both alike (one
        // sorted run each: nothing is merged or spilled here).
        let plan = MergePlan { fan_in: 2, spill_dir: cx.build.cache.root().join("spill") };
        let store: &Store = &|write| cx.build.cache.put_stream(write);
        let runs = store_both(vec![in_memory(counts.stats.positions)], vec![in_memory(counts.stats.moves)], &plan, store);
        let (positions, moves) = runs.map_err(|e| cx.fail(format!("counts source {source}: {e}")))?;
        let part = StoredCounts { file: counts.file, max_ply: counts.max_ply, bad: counts.bad, counters: counts.counters, positions, moves };
        Ok(Produced::new(part, text))
    };
    Decl::new(id(name), &RULE, Action::Value(Box::new(run))).file(name, hash).param("tree.max_ply").priority(800)
}
