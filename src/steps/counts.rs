//! `counts:<source>`: a counts file (`okb count`) read as one more part of the game
//! counts (Phase 2).

use std::path::PathBuf;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};

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
        Ok(Produced::new(counts, text))
    };
    Decl::new(id(name), &RULE, Action::Value(Box::new(run))).file(name, hash).param("tree.max_ply").priority(800)
}
