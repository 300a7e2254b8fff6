//! `games`: the counts of every game file merged (Phase 2).
//!
//! The parts' sorted runs are read back from the cache as streams and merged k ways
//! (through intermediate runs in `cache/spill` past the fan-in the memory budget allows)
//! straight into two new blobs: memory holds a buffer per open run, whatever the number
//! of games. The tree prunes while it reads the result. (Summing the parts in a hash map
//! instead, read one after another, took three times as long: every record is a cache
//! miss in a map of the collection's keys, where a heap of one head per run stays in
//! the processor's cache.)

use super::ids::DUPLICATES;
use super::ids;
use std::sync::Arc;

use crate::dataflow::{BuildError, CorruptCache, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::games::report::{BadGames, Counters};
use crate::games::runs::{self, MergePlan, MoveRecord, Opener, PosRecord, Record, RunError};
use crate::games::stored::{MergedCounts, Repeats, Store, StoredCounts, StoredRun, store_both, store_both_minus};

/// The rule.
pub static RULE: Rule = Rule { name: "games", about: "all game files' counts merged", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With any counting step (game files, counts sources, crawls) besides the files of
/// sources that keep a counts state (the `state` steps add those): their counts merged.
/// With `duplicates`, each repeated game's counts are taken away again.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let parts = p.merged_parts();
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let mut d = p.declare(ids::GAMES, &RULE);
    let parts: Vec<Input<StoredCounts>> = parts.into_iter().map(|(_, id)| d.input(id)).collect();
    let repeats: Option<Input<Repeats>> = d.input_if(declared, DUPLICATES);
    // The budget changes how the counts are merged, not what they are: it is no key.
    let memory_budget_mb = p.loaded.pipeline.games.memory_budget_mb;
    let run = move |cx: &Ctx<'_>| {
        let loaded: Vec<Arc<StoredCounts>> = parts.iter().map(|part| cx.get(part)).collect::<Result<_, _>>()?;
        let (mut bad, mut counters) = (BadGames::default(), Counters::default());
        for part in &loaded {
            bad.merge(&part.bad);
            counters.merge(&part.counters);
        }
        let repeats = repeats.as_ref().map(|r| cx.get(r)).transpose()?;
        let minus = repeats.as_deref().map(|r| less(cx, r)).transpose()?.flatten();
        let repeated = repeats.as_ref().map_or(0, |r| r.count());
        counters.games_counted -= repeated;
        if counters.games_bad > 0 {
            eprintln!("{}", bad.render_table().trim_end());
        }
        let plan = MergePlan::for_budget(memory_budget_mb, cx.build.cache.root().join("spill"));
        let positions = openers(cx, &parts, &loaded, |p| &p.positions);
        let moves = openers(cx, &parts, &loaded, |p| &p.moves);
        let store: &Store = &|write| cx.build.cache.put_stream(write);
        let merged = match minus {
            Some(minus) => store_both_minus(positions, moves, minus, &plan, store),
            None => store_both(positions, moves, &plan, store),
        };
        let (positions, moves) = merged.map_err(|e| corrupt_or_failed(cx, &parts, e))?;
        let skipped = match repeated {
            0 => String::new(),
            n => format!(", {n} repeats skipped"),
        };
        let text = format!(
            "{} games counted of {}{skipped}, {} positions, {} moves, {} bad, {} filtered out",
            counters.games_counted,
            counters.games_read,
            positions.records,
            moves.records,
            counters.games_bad,
            counters.filtered.values().sum::<u64>()
        );
        Ok(Produced::new(MergedCounts { positions, moves, bad, counters, repeated }, text))
    };
    Ok(vec![d.value(run).references(MergedCounts::objects).priority(750)])
}

/// Openers of a position run and its move run.
type RunOpeners<'a> = (Opener<'a, PosRecord>, Opener<'a, MoveRecord>);

/// Openers of the repeats' runs, to subtract (`None`: no repeat).
fn less<'a>(cx: &'a Ctx<'_>, repeats: &Repeats) -> Result<Option<RunOpeners<'a>>, BuildError> {
    let (Some(positions), Some(moves)) = (&repeats.positions, &repeats.moves) else { return Ok(None) };
    let cache = &cx.build.cache;
    let opener = |hash: String| move || cache.open_blob(&hash);
    Ok(Some((runs::from_reader(DUPLICATES.name().into(), opener(positions.name.clone())), runs::from_reader(DUPLICATES.name().into(), opener(moves.name.clone())))))
}

/// Openers of one run (`which`) of every part, each named by its step.
fn openers<'a, T: Record + 'a>(cx: &'a Ctx<'_>, inputs: &[Input<StoredCounts>], parts: &[Arc<StoredCounts>], which: fn(&StoredCounts) -> &StoredRun) -> Vec<Opener<'a, T>> {
    let cache = &cx.build.cache;
    inputs
        .iter()
        .zip(parts)
        .map(|(input, part)| {
            let hash = which(part).name.clone();
            runs::from_reader(input.id().to_string(), move || cache.open_blob(&hash))
        })
        .collect()
}

/// A run of part `id` that is missing or corrupt discards the part's own value, so that
/// the retry counts that file again; other failures fail the step.
fn corrupt_or_failed(cx: &Ctx<'_>, parts: &[Input<StoredCounts>], error: RunError) -> BuildError {
    use std::io::ErrorKind::{InvalidData, NotFound, UnexpectedEof};
    let part = |id: &str| parts.iter().find(|p| p.id() == id);
    match &error {
        RunError::Input { input, source } if matches!(source.kind(), InvalidData | NotFound | UnexpectedEof) && part(input).is_some() => {
            let part = part(input).expect("checked above");
            let found = bad_run(cx, part).unwrap_or_else(|| cx.hash_of(part));
            CorruptCache { step: input.clone(), hash: cx.hash_of(part), found }.into()
        }
        _ => cx.fail(error),
    }
}

/// Which of part `id`'s two runs is missing or corrupt (each read through to the end, where
/// the cache checks its hash): the object a warning names.
fn bad_run(cx: &Ctx<'_>, part: &Input<StoredCounts>) -> Option<String> {
    let part = cx.get(part).ok()?;
    [&part.positions, &part.moves].into_iter().map(|run| run.name.clone()).find(|name| {
        let read = cx.build.cache.open_blob(name).and_then(|mut blob| std::io::copy(&mut blob, &mut std::io::sink()));
        read.is_err()
    })
}
