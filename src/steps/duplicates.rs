//! `duplicates`: the games that game files hold more than once, counted again so that
//! the `games` merge counts each distinct game once ([`crate::games::dedup`]).
//!
//! Each game file's step lists its counted games' fingerprints, sorted; this step merges
//! those lists (28 bytes a game, streamed), keeps the first copy of each game (in
//! pipeline file order, then the file's own order) and reads the other copies again from
//! their files, counting only them. Adding a file therefore counts that file, merges the
//! lists and recounts the repeats, never the other files' games. Counts files, crawls,
//! BGN files and the months of a counts state are left out.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::ids;
use super::planning::{GameFile, Planner, Planning};
use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use crate::games::aggregate::{AggregateOptions, Counted, Format, count_games_at};
use crate::games::dedup::GameRef;
use crate::games::runs::{self, MergePlan, Opener, RunError, Source};
use crate::games::stored::{Repeats, Store, StoredCounts, store_both};

/// The rule.
pub static RULE: Rule = Rule { name: "duplicates", about: "repeated games found and counted again, to count each game once", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };


/// With `[games] deduplicate` (the default) and a game file to deduplicate.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let files: Vec<GameFile> = p.game_files.iter().filter(|f| !f.bgn && !p.keeps_state(&f.source)).cloned().collect();
    if !p.loaded.pipeline.games.deduplicate || files.is_empty() {
        return Ok(Vec::new());
    }
    let mut d = p.declare(ids::DUPLICATES, &RULE);
    let _: bool = d.param("games.deduplicate")?;
    let max_ply: usize = d.param("tree.max_ply")?;
    let parts: Vec<Input<StoredCounts>> = files.iter().map(|f| d.input(f.id())).collect();
    for file in &files {
        d.file(file.id(), &file.hash);
        d.key_at(&["sources", &file.source, "filter"]);
    }
    // The budget changes how the counts are sorted, not what they are: it is no key.
    let memory_budget_mb = p.loaded.pipeline.games.memory_budget_mb;
    let spill_dir = p.cache_dir().join("spill");
    let run = move |cx: &Ctx<'_>| {
        let loaded: Vec<Arc<StoredCounts>> = parts.iter().map(|part| cx.get(part)).collect::<Result<_, _>>()?;
        let plan = MergePlan::for_budget(memory_budget_mb, spill_dir.clone());
        let repeated = find_repeats(cx, &parts, &loaded, &plan).map_err(|e| cx.fail(format!("finding repeated games: {e}")))?;
        let per_step = (memory_budget_mb / rayon::current_num_threads().max(1)).max(1);
        let options = AggregateOptions { max_ply, memory_budget_mb: per_step, spill_dir: Some(spill_dir.clone()), format: Format::Pgn, ..Default::default() };
        let counted = recount(&files, repeated, &options).map_err(|e| cx.fail(e))?;
        let repeats = store(cx, &files, counted, &plan).map_err(|e| cx.fail(format!("storing the repeated games' counts: {e}")))?;
        let games: u64 = loaded.iter().map(|part| part.counters.games_counted).sum();
        let text = format!("{} repeated games of {games} counted, in {} files", repeats.count(), repeats.files.len());
        Ok(Produced::new(repeats, text))
    };
    Ok(vec![d.value(run).references(Repeats::objects).priority(780)])
}

/// The repeats' locations by file index (sorted), from every file's sorted game list.
fn find_repeats(cx: &Ctx<'_>, parts: &[Input<StoredCounts>], loaded: &[Arc<StoredCounts>], plan: &MergePlan) -> Result<BTreeMap<u32, Vec<u64>>, RunError> {
    let cache = &cx.build.cache;
    let mut openers: Vec<Opener<'_, GameRef>> = Vec::new();
    for (i, (input, part)) in parts.iter().zip(loaded).enumerate() {
        let Some(games) = &part.games else { continue };
        let hash = games.name.clone();
        let open = runs::from_reader::<GameRef, _>(input.id().to_string(), move || cache.open_blob(&hash));
        openers.push(Box::new(move || {
            let mut games = open()?;
            let file = i as u32;
            let source: Source<'_, GameRef> = Box::new(move || Ok(games()?.map(|g| GameRef { file, ..g })));
            Ok(source)
        }));
    }
    let (mut last, mut repeats) = (None, BTreeMap::<u32, Vec<u64>>::new());
    runs::merge_runs(openers, plan, &mut |game| {
        if last == Some(game.fingerprint) {
            repeats.entry(game.file).or_default().push(game.location);
        }
        last = Some(game.fingerprint);
        Ok(())
    })?;
    repeats.values_mut().for_each(|locations| locations.sort_unstable());
    Ok(repeats)
}

/// Counts the repeated games of each file again (files side by side).
fn recount(files: &[GameFile], repeats: BTreeMap<u32, Vec<u64>>, options: &AggregateOptions) -> Result<Vec<(usize, Counted, Vec<u64>)>, String> {
    let repeats: Vec<(u32, Vec<u64>)> = repeats.into_iter().collect();
    repeats
        .into_par_iter()
        .map(|(i, locations)| {
            let file = &files[i as usize];
            let counted = count_games_at(&file.path, &file.filter, options, &locations).map_err(|e| format!("game source {}: counting its repeated games again: {e}", file.source))?;
            if counted.counters.games_counted != locations.len() as u64 {
                let found = counted.counters.games_counted;
                return Err(format!("{}: {found} of its {} repeated games were found again (the file changed while the make ran?)", file.shown, locations.len()));
            }
            Ok((i as usize, counted, locations))
        })
        .collect()
}

/// The repeats' counts merged into two cache blobs.
fn store(cx: &Ctx<'_>, files: &[GameFile], counted: Vec<(usize, Counted, Vec<u64>)>, plan: &MergePlan) -> Result<Repeats, RunError> {
    if counted.is_empty() {
        return Ok(Repeats::default());
    }
    let mut located = Vec::new();
    let (mut positions, mut moves) = (Vec::new(), Vec::new());
    for (i, c, locations) in counted {
        located.push((files[i].id(), locations));
        positions.extend(c.positions);
        moves.extend(c.moves);
    }
    let store: &Store = &|write| cx.build.cache.put_stream(write);
    let (positions, moves) = store_both(positions, moves, plan, store)?;
    Ok(Repeats { files: located, positions: Some(positions), moves: Some(moves) })
}

