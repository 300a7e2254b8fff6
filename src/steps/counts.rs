//! `counts:<source>`: a counts file (`okb count`) read as one more part of the game
//! counts (Phase 2). The file is read as a stream and its statistics stored as the game
//! files' are (two sorted runs in the cache), so a counts file of any size passes
//! through without being held.


use serde::de::DeserializeOwned;

use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{Planner, Planning, SourceFile, counts_id};
use crate::games::counts::{CountsError, CountsReader};
use crate::games::runs::{MoveRecord, PosRecord, Record, write_record};
use crate::games::stored::{StoredCounts, StoredRun};

/// The rule.
pub static RULE: Rule = Rule { name: "counts", about: "a counts file (okb count) read as game counts", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// Why a counts file could not be stored.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// The file is damaged or unreadable.
    #[error(transparent)]
    Counts(#[from] CountsError),
    /// The cache could not be written.
    #[error("storing its counts in the cache: {0}")]
    Cache(#[from] std::io::Error),
}

/// A step per counts source.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.counts_files().map(|file| declare(p, file)).collect()
}

/// Reads counts source `file`, which must be counted to the tree's depth.
fn declare(p: &Planning<'_>, file: &SourceFile) -> Result<Decl<'static>, BuildError> {
    let (source, path) = (file.name.clone(), file.path.clone());
    let mut d = p.declare(counts_id(&source), &RULE);
    d.file(&source, &file.hash);
    let max_ply: usize = d.param("tree.max_ply")?;
    let run = move |cx: &Ctx<'_>| {
        let fail = |e: &dyn std::fmt::Display| cx.fail(format!("counts source {source}: {e}"));
        let mut counts = CountsReader::open(&path).map_err(|e| fail(&e))?;
        if counts.max_ply as usize != max_ply {
            return Err(cx.fail(format!(
                "counts source {source}: {} was counted to ply {}, the tree is built to ply {max_ply}: recount with `okb count --max-ply {max_ply}`",
                path.display(),
                counts.max_ply
            )));
        }
        let positions = store_sequence::<PosRecord>(cx, &mut counts).map_err(|e| fail(&e))?;
        let moves = store_sequence::<MoveRecord>(cx, &mut counts).map_err(|e| fail(&e))?;
        let (file, counted_to) = (std::mem::take(&mut counts.file), counts.max_ply);
        let (bad, counters) = counts.finish().map_err(|e| fail(&e))?;
        let text = format!("{} games counted of {}, {} positions", counters.games_counted, counters.games_read, positions.records);
        Ok(Produced::new(StoredCounts { file, max_ply: counted_to, bad, counters, positions, moves, games: None }, text))
    };
    Ok(d.value(run).references(StoredCounts::objects).priority(800))
}

/// Streams the next sequence of `counts` into a cache blob (the reader checks that it is
/// sorted with each key once, as the merge needs).
fn store_sequence<T: Record + DeserializeOwned>(cx: &Ctx<'_>, counts: &mut CountsReader) -> Result<StoredRun, Failure> {
    let mut records = 0;
    let name = cx.build.cache.put_stream(|w| -> Result<(), Failure> {
        records = counts.records(&mut |r: T| write_record(w, &r).map_err(Failure::from))?;
        Ok(())
    })?;
    Ok(StoredRun { name, records })
}
