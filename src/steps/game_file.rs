//! `games:<source>:<file>`: one game file counted (Phase 2). Every file is a step of its
//! own, so adding a file to a collection counts only that file.
//!
//! The value kept (in memory and in the cache) is small: the file's report and the names
//! of two cache blobs holding its sorted runs of position and move counts, streamed
//! there by the file's final merge. The `games` merge streams them back, so no step ever
//! holds a file's counts whole.


use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{GameFile, Planner, Planning};
use crate::diagnostics::Warning;
use crate::games::aggregate::{AggregateOptions, Format, count_file, spill_err};
use crate::games::report::BadGames;
use crate::games::stored::{Store, StoredCounts, store_both, store_games};

/// The rule.
pub static RULE: Rule = Rule { name: "games-file", about: "one game file's move counts up to tree.max_ply", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The memory budget of one counting step: steps count files on every core at once,
/// and together stay within `[games] memory_budget_mb`.
fn budget_per_step(memory_budget_mb: usize) -> usize {
    (memory_budget_mb / rayon::current_num_threads().max(1)).max(1)
}

/// A step per game file.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.game_files.iter().map(|file| declare(p, file.clone())).collect()
}

/// Counts `file` to the tree's depth; sorted runs past the memory budget spill to the
/// cache's `spill` folder.
fn declare(p: &Planning<'_>, file: GameFile) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(file.id(), &RULE);
    d.file("file", &file.hash);
    d.key_at(&["sources", &file.source, "kind"]).key_at(&["sources", &file.source, "filter"]);
    let max_ply: usize = d.param("tree.max_ply")?;
    // The budget changes how the counts are sorted, not what they are: it is no key.
    let memory_budget_mb = p.loaded.pipeline.games.memory_budget_mb;
    let spill_dir = p.cache_dir().join("spill");
    // Months of a counts state hold each game once (Lichess game ids are unique) and BGN
    // games have no PGN text: neither is deduplicated.
    let fingerprints = !file.bgn && !p.keeps_state(&file.source);
    let run = move |cx: &Ctx<'_>| {
        let format = if file.bgn { Format::Bgn } else { Format::Pgn };
        let memory_budget_mb = budget_per_step(memory_budget_mb);
        // Steps count files side by side: a bar each would overwrite one another.
        let progress = crate::progress::periodic_lines();
        let options = AggregateOptions { max_ply, memory_budget_mb, spill_dir: Some(spill_dir.clone()), format, progress, fingerprints, ..Default::default() };
        let fail = |e: crate::games::GamesError| cx.fail(format!("game source {}: {e}", file.source));
        let counted = count_file(&file.path, &file.filter, &options).map_err(fail)?;
        let c = &counted.counters;
        let text = format!("{} games, {} counted", c.games_read, c.games_counted);
        cx.warn(bad_games(&counted.bad));
        cx.warn(file_problems(&file, counted.counters.games_read, counted.broken.as_ref()));
        // Each run a cache blob, named by its hash.
        let store: &Store = &|write| cx.build.cache.put_stream(write);
        let (positions, moves) = store_both(counted.positions, counted.moves, &options.merge_plan(), store).map_err(|e| fail(spill_err(e)))?;
        let games = fingerprints.then(|| store_games(&counted.games, store)).transpose().map_err(|e| fail(spill_err(e)))?;
        let part = StoredCounts { file: counted.file, max_ply: counted.max_ply, bad: counted.bad, counters: counted.counters, positions, moves, games };
        Ok(Produced::new(part, text))
    };
    Ok(d.value(run).references(StoredCounts::objects).priority(800))
}

/// A file whose stream broke part way (`corrupt-file`, at the line where it broke) or
/// that holds no game at all (`no-games`: an HTML error page saved as .pgn, random bytes).
fn file_problems(file: &GameFile, counted: u64, broken: Option<&crate::games::input::StreamBreak>) -> Vec<Warning> {
    if let Some(b) = broken {
        let message = format!(
            "{b}; the {counted} games before the break are read, the rest of the file is not (the last game started before the break is dropped)"
        );
        let line = u32::try_from(b.line).ok();
        return vec![Warning { kind: "corrupt-file".into(), file: file.shown.clone(), line, message, text: None }];
    }
    if counted > 0 {
        return Vec::new();
    }
    let message = match first_text(&file.path) {
        Some(head) if !head.is_empty() => format!("no games in this file; it starts with {head:?}: is it PGN{}?", if file.bgn { " (BGN)" } else { "" }),
        _ => "no games in this file: it is empty".to_string(),
    };
    vec![Warning { kind: "no-games".into(), file: file.shown.clone(), line: None, message, text: None }]
}

/// The first 40 characters of a file's decompressed text (lossy), for a message.
fn first_text(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    crate::games::input::open(path).ok()?.take(160).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    Some(crate::diagnostics::shorten(text.trim_start(), 40))
}

/// `game skipped: bad-tag (a tag line … longer than 4096 bytes)`.
fn skipped(kind: crate::games::report::BadKind) -> String {
    let name = kind.name().replace('_', "-");
    match kind.why() {
        Some(why) => format!("game skipped: {name} ({why})"),
        None => format!("game skipped: {name}"),
    }
}

/// The skipped games of a file, and the games kept by reading them leniently
/// (`repaired-tag`, `lenient-san`), as warnings (`illegal-san`, `truncated`…), one per
/// example kept by the report, the count of the rest in the last one's message.
fn bad_games(bad: &BadGames) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for (kind, report) in bad.kinds.iter().filter(|(kind, _)| kind.skipped() || kind.repair().is_some()) {
        let name = kind.name().replace('_', "-");
        let shown = report.examples.len() as u64;
        for (i, at) in report.examples.iter().enumerate() {
            let more = if i as u64 + 1 == shown && report.count > shown { format!(" ({} more like it)", report.count - shown) } else { String::new() };
            let line = u32::try_from(at.line).ok();
            warnings.push(Warning { kind: name.clone(), file: at.file.clone(), line, message: format!("{}{more}", kind.repair().map_or_else(|| skipped(*kind), str::to_string)), text: None });
        }
    }
    warnings
}
