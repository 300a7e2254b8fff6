//! `games`: the counts of every game file merged (Phase 2).
//!
//! The parts' sorted runs are read back from the cache as streams and merged k ways
//! (through intermediate runs in `cache/spill` past the fan-in the memory budget allows)
//! straight into two new blobs: memory holds a buffer per open run, whatever the number
//! of games. The tree prunes while it reads the result. (Summing the parts in a hash map
//! instead, read one after another, took three times as long: every record is a cache
//! miss in a map of the collection's keys, where a heap of one head per run stays in
//! the processor's cache.)

use std::sync::Arc;

use crate::dataflow::{Action, BuildError, CorruptCache, Ctx, Decl, Produced, Rule};
use crate::games::report::{BadGames, Counters};
use crate::games::runs::{self, MergePlan, Opener, Record, RunError};
use crate::games::stored::{MergedCounts, Store, StoredCounts, StoredRun, store_both};

/// The rule.
pub static RULE: Rule = Rule { name: "games", about: "all game files' counts merged", file: file!() };

/// Merges the counts of the steps `files` within `memory_budget_mb`.
pub fn declare(files: Vec<String>, memory_budget_mb: usize) -> Decl<'static> {
    let reads = files.clone();
    let run = move |cx: &Ctx<'_>| {
        let parts: Vec<Arc<StoredCounts>> = files.iter().map(|id| cx.load(id)).collect::<Result<_, _>>()?;
        let (mut bad, mut counters) = (BadGames::default(), Counters::default());
        for part in &parts {
            bad.merge(&part.bad);
            counters.merge(&part.counters);
        }
        if counters.games_bad > 0 {
            eprintln!("{}", bad.render_table().trim_end());
        }
        let plan = MergePlan::for_budget(memory_budget_mb, cx.build.cache.root().join("spill"));
        let positions = openers(cx, &files, &parts, |p| &p.positions);
        let moves = openers(cx, &files, &parts, |p| &p.moves);
        let store: &Store = &|write| cx.build.cache.put_stream(write);
        let (positions, moves) = store_both(positions, moves, &plan, store).map_err(|e| corrupt_or_failed(cx, &files, e))?;
        let text = format!(
            "{} games counted of {}, {} positions, {} moves, {} bad, {} filtered out",
            counters.games_counted,
            counters.games_read,
            positions.records,
            moves.records,
            counters.games_bad,
            counters.filtered.values().sum::<u64>()
        );
        Ok(Produced::new(MergedCounts { positions, moves, bad, counters }, text))
    };
    let mut decl = Decl::new("games", &RULE, Action::Value(Box::new(run))).references(MergedCounts::objects).priority(750);
    for read in reads {
        decl = decl.reads(read);
    }
    decl
}

/// Openers of one run (`which`) of every part, each named by its step.
fn openers<'a, T: Record + 'a>(cx: &'a Ctx<'_>, files: &[String], parts: &[Arc<StoredCounts>], which: fn(&StoredCounts) -> &StoredRun) -> Vec<Opener<'a, T>> {
    let cache = &cx.build.cache;
    files
        .iter()
        .zip(parts)
        .map(|(id, part)| {
            let hash = which(part).name.clone();
            runs::from_reader(id.clone(), move || cache.open_blob(&hash))
        })
        .collect()
}

/// A run of part `id` that is missing or corrupt discards the part's own value, so that
/// the retry counts that file again; other failures fail the step.
fn corrupt_or_failed(cx: &Ctx<'_>, parts: &[String], error: RunError) -> BuildError {
    use std::io::ErrorKind::{InvalidData, NotFound, UnexpectedEof};
    match &error {
        RunError::Input { input, source } if parts.contains(input) && matches!(source.kind(), InvalidData | NotFound | UnexpectedEof) => {
            let found = bad_run(cx, input).unwrap_or_else(|| cx.hash_of(input));
            CorruptCache { step: input.clone(), hash: cx.hash_of(input), found }.into()
        }
        _ => cx.fail(error),
    }
}

/// Which of part `id`'s two runs is missing or corrupt (each read through to the end, where
/// the cache checks its hash): the object a warning names.
fn bad_run(cx: &Ctx<'_>, id: &str) -> Option<String> {
    let part: Arc<StoredCounts> = cx.load(id).ok()?;
    [&part.positions, &part.moves].into_iter().map(|run| run.name.clone()).find(|name| {
        let read = cx.build.cache.open_blob(name).and_then(|mut blob| std::io::copy(&mut blob, &mut std::io::sink()));
        read.is_err()
    })
}
