//! `state:<source>:<file>`: one game file's counts added to the counts state of the
//! sources that keep one (Phase 2 at the scale of the Lichess database).
//!
//! The steps form a chain in the order okb lists the files (sources in pipeline order, each
//! source's files sorted by path, so months named by date come in date order): each reads
//! the state the previous one left
//! and the file's counts, merges them shard by shard and leaves the new state. So adding
//! a file at the end costs counting it and one pass over the state; the states before are
//! fresh. Each merge removes the shards it replaces (the state is kept once, not once a
//! month) and the file's runs (kept, every month's would add up to the whole history): a
//! step that has to run again over a state since replaced (a file repinned or removed in
//! the middle of the chain) finds its inputs gone and rebuilds the chain from the first
//! file, counting the files again; `okb status` and `okb make` say so before any step
//! ([`rebuild_note`]), from the files the last merge recorded ([`held_files`]).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::planning::{GameFile, Planner, Planning, state_id};
use crate::dataflow::cache::Cache;
use crate::dataflow::{BuildError, CorruptCache, Ctx, Decl, Input, Produced, Rule};
use crate::games::runs::RunError;
use crate::games::state::merge::{self, MergeError, MergeReport, RunGroups, RunStore, ShardStore};
use crate::games::state::CountsState;
use crate::games::state::hot::HotCut;
use crate::games::stored::StoredCounts;

/// The rule.
pub static RULE: Rule = Rule { name: "state", about: "a game file's counts added to the counts state", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per game file of the sources that keep a state, each reading the one before.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let files = p.state_files();
    let mut previous = None;
    let mut steps = Vec::with_capacity(files.len());
    for file in files {
        let id = state_id(&file);
        steps.push(declare(p, &file, previous.take())?);
        previous = Some(id);
    }
    Ok(steps)
}

fn declare(p: &Planning<'_>, file: &GameFile, previous: Option<String>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(state_id(file), &RULE);
    let shards: usize = d.param("games.state_shards")?;
    let before: Option<Input<CountsState>> = previous.map(|id| d.input(id));
    let month: Input<StoredCounts> = d.input(file.id());
    let (shown, hash) = (file.shown.clone(), file.hash.clone());
    // Not a parameter: the threshold decides only which hot cut the merge writes beside
    // each shard (the tree cuts any other itself), never the state.
    let hot_at = p.loaded.pipeline.tree.min_games;
    let run = move |cx: &Ctx<'_>| {
        let mut state = match &before {
            Some(input) => CountsState::clone(&*cx.get(input)?),
            None => CountsState::empty(shards),
        };
        if let Some((name, _)) = state.months.iter().find(|(_, pin)| *pin == hash) {
            return Err(cx.fail(format!("{shown} holds the same games as {name} (BLAKE3 {hash}), which the counts state already holds: list each month once")));
        }
        let counts = cx.get(&month)?;
        let cache = &cx.build.cache;
        let progress = state_dir(cache.root()).join(format!("{}.progress", progress_name(cx, before.as_ref(), &month, shards)));
        let added = (|| -> Result<_, MergeError> {
            let mut groups = RunGroups::open(cache, month.id(), &counts.positions.name, &counts.moves.name)?;
            merge::add_month(&state.shards, &mut groups, cache, &progress, Some(hot_at))
        })();
        let (shards, report) = added.map_err(|e| failed(cx, before.as_ref(), &month, e))?;
        state.shards = shards;
        state.months.push((shown.clone(), hash.clone()));
        state.bad.merge(&counts.bad);
        state.counters.merge(&counts.counters);
        state.collisions += report.collisions;
        // The month's runs are in the state now: kept, every month's would grow the cache
        // by the month's size (about 12 GB for a Lichess month). A step that needs them
        // again (a chain rebuilt) counts the file again.
        for run in counts.objects() {
            ShardStore::remove(cache, &run);
        }
        // The merge is done: its progress and any left by merges since given up go. (A
        // kill before the value is stored costs a rebuild of the chain, not a wrong one.)
        sweep_progress(&progress);
        let _ = std::fs::remove_file(&progress);
        record_held(cache.root(), &state.months).map_err(|e| cx.fail(format!("recording the files the counts state holds: {e}")))?;
        let text = describe(&state, &report);
        Ok(Produced::new(state, text))
    };
    Ok(d.value(run).references(CountsState::objects).priority(760))
}

/// The progress file's name: the merge's inputs, so a rerun of the same merge resumes.
fn progress_name(cx: &Ctx<'_>, before: Option<&Input<CountsState>>, month: &Input<StoredCounts>, shards: usize) -> String {
    let before = before.map(|b| cx.hash_of(b)).unwrap_or_default();
    let text = format!("{before} {} {shards}", cx.hash_of(month));
    blake3::hash(text.as_bytes()).to_hex()[..32].to_string()
}

/// Removes the progress files of merges other than `kept` (finished ones: a step ran).
fn sweep_progress(kept: &Path) {
    let Some(dir) = kept.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.path() != kept && entry.path().extension().is_some_and(|e| e == "progress") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The cache's folder of the state chain's own files: merge progress, the held files.
fn state_dir(cache: &Path) -> PathBuf {
    cache.join("state")
}

/// Where the last merge records the files of the state it left (see [`held_files`]).
fn held_path(cache: &Path) -> PathBuf {
    state_dir(cache).join("held.json")
}

/// Records `files` as those of the one state whose shards the cache holds (its folder
/// made on the way by `write_atomic`).
fn record_held(cache: &Path, files: &[(String, String)]) -> std::io::Result<()> {
    crate::files::write_atomic(&held_path(cache), &serde_json::to_vec(files)?)
}

/// The files, `(shown name, BLAKE3)` in merge order, of the counts state the cache holds:
/// the state the last merge left. Every state before it gave its shards to the next, so a
/// chain of state steps can only continue from this one (empty: no merge yet, or a cache
/// from before this record).
pub fn held_files(cache: &Path) -> Vec<(String, String)> {
    std::fs::read(held_path(cache))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// What `okb status` and `okb make` say before the steps when the state chain cannot
/// continue from the state the cache holds (a file removed, repinned or reordered): the
/// next state step to run counts every file again, and about how long that takes by the
/// last runs' times. None when the listed files extend the held ones.
pub fn rebuild_note(p: &Planning<'_>) -> Option<String> {
    let cache = p.loaded.layout().cache;
    let held = held_files(&cache);
    let files = p.state_files();
    let listed: Vec<(&str, &str)> = files.iter().map(|f| (f.shown.as_str(), f.hash.as_str())).collect();
    if listed.is_empty() {
        return None;
    }
    let at = held.iter().zip(&listed).position(|((_, a), (_, b))| a != b);
    let what = match at {
        None if held.len() <= listed.len() => return None,
        None => format!("{} and what follows it no longer listed", held[listed.len()].0),
        Some(i) if held[i].0 == listed[i].0 => format!("{} repinned", held[i].0),
        Some(i) => moved(&held, &listed, i),
    };
    let ids: Vec<String> = files.iter().flat_map(|f| [f.id(), state_id(f)]).collect();
    let estimate = crate::dataflow::timings::Timings::load(&cache).estimate(ids.iter().map(String::as_str));
    let counted = match listed.len() {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    let cost = match estimate.timed + estimate.inferred {
        0 => counted,
        _ => format!("{counted}, about {} by the last runs' times", crate::dataflow::timings::spoken(estimate.total)),
    };
    Some(format!(
        "the counts state in the cache holds {} files that this pipeline does not continue ({what}): the next state step to run counts every file again ({cost})",
        held.len()
    ))
}

/// What differs at place `i` of the held and listed files, whose names differ there.
fn moved(held: &[(String, String)], listed: &[(&str, &str)], i: usize) -> String {
    let (was, is) = (held[i].0.as_str(), listed[i].0);
    if !listed.iter().any(|(name, _)| *name == was) {
        format!("{was} removed")
    } else if !held.iter().any(|(name, _)| name == is) {
        format!("{is} inserted before {was}")
    } else {
        format!("{was} moved")
    }
}

/// `1 file, 12,345 positions and 15,678 pairs in 0.2 MB (13.1 B a pair), 256 shards merged`.
fn describe(state: &CountsState, report: &MergeReport) -> String {
    let (positions, pairs, bytes) = state.size();
    let per_pair = bytes as f64 / pairs.max(1) as f64;
    let resumed = if report.resumed > 0 { format!(" ({} resumed)", report.resumed) } else { String::new() };
    let months = state.months.len();
    let mb = |b: u64| b as f64 / 1e6;
    format!(
        "{months} file{}, {positions} positions and {pairs} pairs in {:.1} MB ({per_pair:.1} B a pair), {} shards merged{resumed}, {:.1} MB read, {:.1} MB written",
        if months == 1 { "" } else { "s" },
        mb(bytes),
        report.merged,
        mb(report.read),
        mb(report.written)
    )
}

/// A shard or run found missing or corrupt discards the value of the step that made it
/// (the previous state, the file's counts), so that the retry makes it again.
fn failed(cx: &Ctx<'_>, before: Option<&Input<CountsState>>, month: &Input<StoredCounts>, error: MergeError) -> BuildError {
    use std::io::ErrorKind::{InvalidData, NotFound, UnexpectedEof};
    let lost = |kind| matches!(kind, InvalidData | NotFound | UnexpectedEof);
    match (&error, before) {
        (MergeError::Shard { shard, source }, Some(b)) if shard != "new" && lost(source.kind()) => {
            CorruptCache { step: b.id().into(), hash: cx.hash_of(b), found: shard.clone() }.into()
        }
        (MergeError::Month(RunError::Input { source, .. }), _) if lost(source.kind()) => {
            CorruptCache { step: month.id().into(), hash: cx.hash_of(month), found: cx.hash_of(month) }.into()
        }
        _ => cx.fail(error),
    }
}

/// The build cache as the state's shard store: shards are blobs named by their hash.
/// (The tree step reads the state through this too.)
impl ShardStore for Cache {
    fn read(&self, name: &str) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        // Read to the end: the cache checks the hash there.
        self.open_blob(name)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<String> {
        self.put_blob(bytes)
    }

    fn exists(&self, name: &str) -> bool {
        self.has_blob(name)
    }

    fn remove(&self, name: &str) {
        let _ = std::fs::remove_file(self.object_path(name));
        let folder = self.side_path(HOT, name, "0").with_file_name("");
        let Ok(cuts) = std::fs::read_dir(folder) else { return };
        let prefix = format!("{name}-");
        for cut in cuts.flatten().filter(|c| c.file_name().to_string_lossy().starts_with(&prefix)) {
            let _ = std::fs::remove_file(cut.path());
        }
    }

    fn read_at(&self, name: &str, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
        use std::io::{Seek, SeekFrom};
        self.mark(name);
        let mut file = std::fs::File::open(self.object_path(name))?;
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = vec![0; len as usize];
        file.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    fn put_hot(&self, name: &str, cut: &HotCut) -> std::io::Result<()> {
        let path = self.side_path(HOT, name, &cut.min_games.to_string());
        crate::files::write::write_atomic(&path, &cut.to_bytes())
    }

    fn get_hot(&self, name: &str, min_games: u64) -> Option<HotCut> {
        let path = self.side_path(HOT, name, &min_games.to_string());
        HotCut::from_bytes(&std::fs::read(path).ok()?)
    }
}

/// The kind of side file a shard's hot cut is (`games::state::hot`).
const HOT: &str = "hot";

impl RunStore for Cache {
    fn open_run(&self, name: &str) -> std::io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(self.open_blob(name)?))
    }
}
