//! Game files → sorted statistics ([`FileAggregate`]) → merged [`GameStats`].
//!
//! Counting rule (the tree's rule, not Polyglot's): for each counted game, the start
//! position and every position reached by its first `max_ply` moves count once per game
//! (a position repeated within a game counts once), and each move played from a position
//! at ply < `max_ply` counts once per game per (position, move). The mover's rating is
//! summed when known.
//!
//! Parallelism never changes results: chunks are cut from the bytes alone, counts are
//! sums (order-independent), outputs are sorted by key, and bad-game reports keep the
//! first locations in (file, line) order. Memory is bounded by `memory_budget_mb`: hash
//! maps over budget are sorted into runs spilled to a temporary directory and k-way
//! merged at the end ([`super::runs`]). [`count_file`] leaves a file's runs unmerged, so
//! that the build can merge them straight into its cache.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::Move;

use super::GamesError;
use super::dedup::{GameRef, chunk_locations, fingerprint, location};
use super::filter::{CompiledFilter, GameFilter, GameResult, GameTags};
use super::input::{Boundary, Chunk, Chunker, DEFAULT_CHUNK_BYTES, StreamBreak};
use super::pgn::{ChunkOrigin, GameEnd, GameVisitor, IdentityKeys, read_chunk_at};
use super::report::{BadGames, BadKind, Counters, FilterReason};
use super::runs::{
    MergePlan, MoveRecord, Opener, PosRecord, Record, RunError, SpillFile, in_memory,
};
use super::stats::{GameStats, MoveStats, Outcomes};
use super::table::{CountTable, TableKey};
use crate::position::{MoveKey, PositionKey};

/// Default ply limit: the start position plus positions after up to 15 plies.
pub const DEFAULT_MAX_PLY: usize = 15;

/// Default memory budget for one aggregation, in MiB.
pub const DEFAULT_MEMORY_BUDGET_MB: usize = 2048;

/// Input format of a game file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// PGN unless the file name contains `.bgn`.
    #[default]
    Auto,
    /// PGN.
    Pgn,
    /// BGN: one JSON game per line (see [`super::bgn`]).
    Bgn,
}

impl Format {
    fn resolve(self, path: &Path) -> Format {
        match self {
            Format::Auto if path.to_string_lossy().to_ascii_lowercase().contains(".bgn") => {
                Format::Bgn
            }
            Format::Auto => Format::Pgn,
            f => f,
        }
    }
}

/// Tuning of [`aggregate_file_with`]; none of it changes results.
#[derive(Clone, Debug)]
pub struct AggregateOptions {
    /// Ply limit (see the module docs).
    pub max_ply: usize,
    /// Memory budget for the in-memory maps, in MiB, before spilling to `spill_dir`.
    pub memory_budget_mb: usize,
    /// Where spill runs go (default: the system temporary directory).
    pub spill_dir: Option<PathBuf>,
    /// Target chunk size in bytes for splitting one file across threads.
    pub chunk_bytes: usize,
    /// Input format.
    pub format: Format,
    /// Show how far the reading is (a bar, or periodic lines) for files of 64 MiB or more.
    pub progress: bool,
    /// Fingerprint every counted PGN game ([`Counted::games`]), to find repeats.
    pub fingerprints: bool,
}

impl AggregateOptions {
    /// Where spill runs go.
    pub fn spill_dir(&self) -> PathBuf {
        self.spill_dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// How merges of this aggregation use memory and disk.
    pub fn merge_plan(&self) -> MergePlan {
        MergePlan::for_budget(self.memory_budget_mb, self.spill_dir())
    }
}

impl Default for AggregateOptions {
    fn default() -> Self {
        AggregateOptions {
            max_ply: DEFAULT_MAX_PLY,
            memory_budget_mb: DEFAULT_MEMORY_BUDGET_MB,
            spill_dir: None,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            format: Format::Auto,
            progress: false,
            fingerprints: false,
        }
    }
}

/// Statistics of one game file, as cached by the build engine (postcard-encoded).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAggregate {
    /// The file as given.
    pub file: String,
    /// The ply limit used.
    pub max_ply: u32,
    /// Sorted statistics of the counted games.
    pub stats: GameStats,
    /// Bad games by reason with first locations.
    pub bad: BadGames,
    /// Games read, counted, bad and filtered by reason.
    pub counters: Counters,
    /// Where the file's (compressed) stream broke, if it did: the games before the break
    /// are counted, the rest of the file is not (see [`Chunker::next_chunk`]).
    pub broken: Option<StreamBreak>,
}

/// Aggregates one game file with default options and the given ply limit.
pub fn aggregate_file(
    path: &Path,
    filter: &GameFilter,
    max_ply: usize,
) -> Result<FileAggregate, GamesError> {
    aggregate_file_with(path, filter, &AggregateOptions { max_ply, ..Default::default() })
}

/// Aggregates several files in parallel (across files, and across chunks of big files).
/// The result is in the order of `paths`.
pub fn aggregate_files(
    paths: &[PathBuf],
    filter: &GameFilter,
    opts: &AggregateOptions,
) -> Result<Vec<FileAggregate>, GamesError> {
    let threads = rayon::current_num_threads().max(1);
    let per_file = AggregateOptions {
        memory_budget_mb: (opts.memory_budget_mb / threads).max(1),
        ..opts.clone()
    };
    paths.par_iter().map(|p| aggregate_file_with(p, filter, &per_file)).collect()
}

/// Aggregates one game file (PGN or BGN, possibly compressed), its statistics merged
/// in memory.
pub fn aggregate_file_with(
    path: &Path,
    filter: &GameFilter,
    opts: &AggregateOptions,
) -> Result<FileAggregate, GamesError> {
    let counted = count_file(path, filter, opts)?;
    let (mut positions, mut moves) = (Vec::new(), Vec::new());
    let mut to_positions = |r| {
        positions.push(r);
        Ok(())
    };
    let mut to_moves = |r| {
        moves.push(r);
        Ok(())
    };
    super::runs::merge_both(
        counted.positions,
        counted.moves,
        &opts.merge_plan(),
        &mut to_positions,
        &mut to_moves,
    )
    .map_err(spill_err)?;
    Ok(FileAggregate {
        file: counted.file,
        max_ply: counted.max_ply,
        stats: GameStats::new(positions, moves),
        bad: counted.bad,
        counters: counted.counters,
        broken: counted.broken,
    })
}

/// One game file counted: its report, and its statistics as sorted runs still to merge
/// ([`super::runs::merge_both`]).
pub struct Counted {
    /// The file as given.
    pub file: String,
    /// The ply limit used.
    pub max_ply: u32,
    /// Bad games by reason with first locations.
    pub bad: BadGames,
    /// Games read, counted, bad and filtered by reason.
    pub counters: Counters,
    /// Where the file's stream broke, if it did (see [`FileAggregate::broken`]).
    pub broken: Option<StreamBreak>,
    /// Sorted runs of position counts: spilled ones, and the last one still in memory.
    pub positions: Vec<Opener<'static, PosRecord>>,
    /// Sorted runs of move counts, likewise.
    pub moves: Vec<Opener<'static, MoveRecord>>,
    /// Every counted PGN game's fingerprint and location, sorted ([`super::dedup`]);
    /// none when only chosen games were counted ([`count_games_at`]).
    pub games: Vec<GameRef>,
}

/// A bar in MiB read of the file at `path`, when it is large enough to take a while.
fn reading_bar(path: &Path) -> Option<crate::progress::Bar> {
    let size = std::fs::metadata(path).ok()?.len() >> 20;
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    (size >= 64).then(|| crate::progress::start(size, &format!("MiB of {name}")))
}

/// Counts one game file (PGN or BGN, possibly compressed) within the memory budget,
/// leaving its sorted runs unmerged.
pub fn count_file(
    path: &Path,
    filter: &GameFilter,
    opts: &AggregateOptions,
) -> Result<Counted, GamesError> {
    count_chosen(path, filter, opts, None)
}

/// Counts only the games of a file at `locations` (sorted, as [`Counted::games`] gives
/// them): the repeats of a collection, read again to be subtracted.
pub fn count_games_at(
    path: &Path,
    filter: &GameFilter,
    opts: &AggregateOptions,
    locations: &[u64],
) -> Result<Counted, GamesError> {
    count_chosen(path, filter, opts, Some(locations))
}

/// [`count_file`], of the games at `only` when given.
fn count_chosen(
    path: &Path,
    filter: &GameFilter,
    opts: &AggregateOptions,
    only: Option<&[u64]>,
) -> Result<Counted, GamesError> {
    let compiled = filter.compile()?;
    let format = opts.format.resolve(path);
    let boundary = if format == Format::Bgn { Boundary::Line } else { Boundary::Pgn };
    let file = path.display().to_string();
    let read = Arc::new(AtomicU64::new(0));
    let mut chunker = Chunker::new(
        crate::games::input::open_counting(path, read.clone())?,
        path,
        opts.chunk_bytes,
        boundary,
    )
    .leave_tag_repair();
    let bar = opts.progress.then(|| reading_bar(path)).flatten();
    let shown = |bar: &Option<crate::progress::Bar>| {
        bar.iter().for_each(|b| b.set(read.load(Ordering::Relaxed) >> 20))
    };
    let mut counted = Counted {
        file,
        max_ply: opts.max_ply as u32,
        bad: BadGames::default(),
        counters: Counters::default(),
        broken: None,
        positions: Vec::new(),
        moves: Vec::new(),
        games: Vec::new(),
    };
    let Some(first) = whole_games(&mut chunker)? else {
        counted.broken = chunker.broken().cloned();
        return Ok(counted);
    };
    let slots = if first.last { 1 } else { rayon::current_num_threads().max(1) };
    let budget = opts.memory_budget_mb.max(1).saturating_mul(1 << 20) / slots;
    let accs: Vec<Mutex<Accumulator>> =
        (0..slots).map(|_| Mutex::new(Accumulator::new(budget, opts.spill_dir()))).collect();
    let ctx = ChunkContext {
        file: &counted.file,
        filter: &compiled,
        max_ply: opts.max_ply,
        format,
        only,
        fingerprints: opts.fingerprints && only.is_none(),
    };
    let recycler = chunker.recycler();
    let process = |mut chunk: Chunk| -> Result<(), GamesError> {
        chunk.repair_tags();
        let slot = rayon::current_thread_index().unwrap_or(0) % slots;
        // One lock per chunk; the slot is this thread's, so it is never contended.
        let mut acc = accs[slot].lock().unwrap_or_else(|e| e.into_inner());
        let counted = acc.process_chunk(&chunk, &ctx);
        recycler.give_back(chunk.data);
        counted
    };
    if first.last {
        process(first)?;
    } else {
        // One thread decompresses and cuts chunks while the pool parses the ones before:
        // the reading and the counting overlap instead of taking turns.
        let (send, receive) = std::sync::mpsc::sync_channel(slots * 2);
        let (chunks, bar, shown) = (&mut chunker, &bar, &shown);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                let rest = std::iter::from_fn(|| {
                    shown(bar);
                    whole_games(chunks).transpose()
                });
                for chunk in std::iter::once(Ok(first)).chain(rest) {
                    let failed = chunk.is_err();
                    // The receiver is gone when counting failed: stop reading.
                    if send.send(chunk).is_err() || failed {
                        break;
                    }
                }
            });
            receive.into_iter().par_bridge().try_for_each(|c| process(c?))
        })?;
    }
    // Each worker's tables are sorted on a core of their own (in the order of the slots:
    // the runs' order never changes the merged counts, but keeps the work repeatable).
    let finished: Vec<_> = accs
        .into_par_iter()
        .map(|acc| acc.into_inner().unwrap_or_else(|e| e.into_inner()).finish())
        .collect();
    for (bad, counters, p, m, games) in finished {
        counted.bad.merge(&bad);
        counted.counters.merge(&counters);
        counted.positions.extend(p);
        counted.moves.extend(m);
        counted.games.extend(games);
    }
    counted.games.sort_unstable_by_key(Record::key);
    counted.broken = chunker.broken().cloned();
    Ok(counted)
}

/// The next chunk; a broken stream ends the file after its sound games instead of
/// failing it (the break is kept in the chunker for the report).
fn whole_games(chunker: &mut Chunker) -> Result<Option<Chunk>, GamesError> {
    match chunker.next_chunk() {
        Err(GamesError::Read { .. }) if chunker.broken().is_some() => Ok(None),
        other => other,
    }
}

/// A failed merge or spill as the error of the aggregation.
pub fn spill_err(e: RunError) -> GamesError {
    match e {
        RunError::Input { input, source } => GamesError::Spill { path: input.into(), source },
        RunError::Output(source) => GamesError::MergedCounts { source },
    }
}

/// Merges file aggregates into the statistics of the whole collection.
///
/// The result depends only on the inputs' contents, never on their order or on the
/// number of threads. Key ranges are merged in parallel.
pub fn merge(files: &[&FileAggregate]) -> GameStats {
    const PARTS: u32 = 64;
    let bound = |p: u32| -> Option<PositionKey> {
        (p < PARTS).then(|| PositionKey(u128::from(p) << (128 - 6)))
    };
    let slice_of = |v: &[(PositionKey, Outcomes)], p: u32| {
        let lo = bound(p).map_or(v.len(), |b| v.partition_point(|e| e.0 < b));
        let lo = if p == 0 { 0 } else { lo };
        let hi = bound(p + 1).map_or(v.len(), |b| v.partition_point(|e| e.0 < b));
        lo..hi
    };
    let mslice_of = |v: &[MoveRecord], p: u32| {
        let lo =
            if p == 0 { 0 } else { bound(p).map_or(v.len(), |b| v.partition_point(|e| e.0 < b)) };
        let hi = bound(p + 1).map_or(v.len(), |b| v.partition_point(|e| e.0 < b));
        lo..hi
    };
    // Per key range, gather and sort: faster than a 240-way heap merge, and equal keys
    // are summed, so the result cannot depend on input order.
    let parts: Vec<(Vec<PosRecord>, Vec<MoveRecord>)> = (0..PARTS)
        .into_par_iter()
        .map(|p| {
            let mut positions: Vec<PosRecord> = Vec::new();
            for f in files {
                positions.extend_from_slice(&f.stats.positions[slice_of(&f.stats.positions, p)]);
            }
            positions.sort_unstable_by_key(|e| e.0);
            positions.dedup_by(|b, a| {
                let same = a.0 == b.0;
                if same {
                    a.1.add(&b.1);
                }
                same
            });
            let mut moves: Vec<MoveRecord> = Vec::new();
            for f in files {
                moves.extend_from_slice(&f.stats.moves[mslice_of(&f.stats.moves, p)]);
            }
            moves.sort_unstable_by_key(|e| (e.0, e.1));
            moves.dedup_by(|b, a| {
                let same = (a.0, a.1) == (b.0, b.1);
                if same {
                    add_move(&mut a.2, &b.2);
                }
                same
            });
            (positions, moves)
        })
        .collect();
    let mut stats = GameStats::default();
    for (p, m) in parts {
        stats.positions.extend(p);
        stats.moves.extend(m);
    }
    stats
}

/// Merges the reports of file aggregates (bad games and counters).
pub fn merge_reports(files: &[&FileAggregate]) -> (BadGames, Counters) {
    let mut bad = BadGames::default();
    let mut counters = Counters::default();
    for f in files {
        bad.merge(&f.bad);
        counters.merge(&f.counters);
    }
    (bad, counters)
}

fn add_move(a: &mut MoveStats, b: &MoveStats) {
    let mut record: MoveRecord = (PositionKey(0), MoveKey(0), *a);
    record.combine(&(PositionKey(0), MoveKey(0), *b));
    *a = record.2;
}

/// Spreads a move over the 64 bits of a hash (the golden-ratio constant).
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// Compact in-memory counters (u32 is enough: maps are flushed long before 2^32 games).
#[derive(Copy, Clone, Default)]
struct PosCounts {
    white: u32,
    draws: u32,
    black: u32,
}

#[derive(Copy, Clone, Default)]
struct MoveCounts {
    white: u32,
    draws: u32,
    black: u32,
    rated: u32,
    rating_sum: u64,
    opponent_rated: u32,
    opponent_rating_sum: u64,
}

/// (position, move) as a table key, 8-byte aligned to keep slots small.
#[derive(Copy, Clone, PartialEq, Eq)]
struct MoveSlot {
    lo: u64,
    hi: u64,
    mv: u16,
}

impl MoveSlot {
    fn new(position: u128, mv: MoveKey) -> Self {
        MoveSlot { lo: position as u64, hi: (position >> 64) as u64, mv: mv.0 }
    }
}

impl TableKey for MoveSlot {
    // Position key 0 is the all-zero Zobrist key, which no position has in practice;
    // the table keeps it apart all the same.
    const EMPTY: Self = MoveSlot { lo: 0, hi: 0, mv: 0 };
    #[inline]
    fn hash(&self) -> u64 {
        self.lo ^ self.hi ^ (u64::from(self.mv) + 1).wrapping_mul(MIX)
    }
}

impl TableKey for u128 {
    const EMPTY: Self = 0;
    #[inline]
    fn hash(&self) -> u64 {
        (*self as u64) ^ ((*self >> 64) as u64)
    }
}

// Flush before any u32 counter could overflow.
const MAX_GAMES_IN_MAPS: u64 = u32::MAX as u64 - 1;

struct ChunkContext<'a> {
    file: &'a str,
    filter: &'a CompiledFilter,
    max_ply: usize,
    format: Format,
    /// The locations of the only games to count ([`count_games_at`]).
    only: Option<&'a [u64]>,
    /// Whether to fingerprint the games counted.
    fingerprints: bool,
}

impl ChunkContext<'_> {
    /// Whether chunk `index` holds a game to count.
    fn wants_chunk(&self, index: u64) -> bool {
        let range = chunk_locations(index);
        self.only.is_none_or(|only| {
            let first = only.partition_point(|l| *l < range.start);
            only.get(first).is_some_and(|l| *l < range.end)
        })
    }

    /// Whether the game at `location` is to count.
    fn wants(&self, location: u64) -> bool {
        self.only.is_none_or(|only| only.binary_search(&location).is_ok())
    }
}

/// A worker's bad games, counters, sorted position and move runs and counted games
/// ([`Accumulator::finish`]).
type Finished = (
    BadGames,
    Counters,
    Vec<Opener<'static, PosRecord>>,
    Vec<Opener<'static, MoveRecord>>,
    Vec<GameRef>,
);

/// One worker's counts: tables in memory plus sorted runs spilled to disk.
struct Accumulator {
    positions: CountTable<u128, PosCounts>,
    moves: CountTable<MoveSlot, MoveCounts>,
    games_in_maps: u64,
    budget: usize,
    spill_dir: PathBuf,
    runs: Vec<(SpillFile, SpillFile)>,
    bad: BadGames,
    counters: Counters,
    move_keys: Vec<MoveKey>,
    games: Vec<GameRef>,
}

impl Accumulator {
    fn new(budget: usize, spill_dir: PathBuf) -> Self {
        Accumulator {
            positions: CountTable::new(),
            moves: CountTable::new(),
            games_in_maps: 0,
            budget,
            spill_dir,
            runs: Vec::new(),
            bad: BadGames::default(),
            counters: Counters::default(),
            move_keys: Vec::new(),
            games: Vec::new(),
        }
    }

    fn process_chunk(&mut self, chunk: &Chunk, ctx: &ChunkContext<'_>) -> Result<(), GamesError> {
        if !ctx.wants_chunk(chunk.index) {
            return Ok(());
        }
        let origin = ChunkOrigin::of(ctx.file, chunk);
        let mut chunk_bad = BadGames::default();
        let mut error = None;
        let games = match ctx.format {
            Format::Bgn => {
                super::bgn::read_chunk(&chunk.data, origin, ctx.max_ply, &mut chunk_bad, |game| {
                    if error.is_none() {
                        if let Some(r) = ctx.filter.check_tags(&game.tags) {
                            self.counters.count_filtered(r);
                        } else if let Err(e) =
                            self.count_game(&game.keys, &game.moves, &game.tags, game.result)
                        {
                            error = Some(e);
                        }
                    }
                })
            }
            _ => {
                let mut visitor = GameVisitor::<IdentityKeys>::new(ctx.max_ply, Some(ctx.filter));
                read_chunk_at(&chunk.data, origin, &mut visitor, &mut chunk_bad, |v, end, at| {
                    let location = location(chunk.index, at);
                    if error.is_some() || !ctx.wants(location) {
                        return;
                    }
                    match end {
                        GameEnd::Filtered(r) => self.counters.count_filtered(r),
                        GameEnd::Done => {
                            match self.count_game(&v.keys, &v.moves, &v.tags, v.result()) {
                                Ok(true) if ctx.fingerprints => {
                                    let result = v.result().expect("a counted game has a result");
                                    let fingerprint = fingerprint(&chunk.data[at..], result);
                                    self.games.push(GameRef { fingerprint, file: 0, location });
                                }
                                Ok(_) => {}
                                Err(e) => error = Some(e),
                            }
                        }
                        GameEnd::Bad(_) => {}
                    }
                })
            }
        };
        if let Some(e) = error {
            return Err(e);
        }
        self.counters.games_read += games;
        self.counters.games_bad += chunk_bad.skipped_games();
        self.bad.merge(&chunk_bad);
        Ok(())
    }

    /// Counts one readable game (or files it under the no-result filter); whether it
    /// counted.
    fn count_game(
        &mut self,
        keys: &[u128],
        moves: &[Move],
        tags: &GameTags,
        result: Option<GameResult>,
    ) -> Result<bool, GamesError> {
        let (w, d, b) = match result {
            Some(GameResult::WhiteWins) => (1, 0, 0),
            Some(GameResult::Draw) => (0, 1, 0),
            Some(GameResult::BlackWins) => (0, 0, 1),
            Some(GameResult::Unknown) | None => {
                self.counters.count_filtered(FilterReason::NoResult);
                return Ok(false);
            }
        };
        self.counters.games_counted += 1;
        if let Some(date) = tags.date {
            self.counters.add_dated(date.earliest);
        }
        // A table that would double past the budget for this game's keys: spill first
        // (the tables keep the memory they have for what comes next).
        let (grow_positions, grow_moves) =
            (self.positions.needs_growth(keys.len()), self.moves.needs_growth(moves.len()));
        let grown = |grows: bool, bytes: usize| if grows { 2 * bytes } else { bytes };
        if self.games_in_maps > 0
            && (grow_positions || grow_moves)
            && grown(grow_positions, self.positions.bytes()) + grown(grow_moves, self.moves.bytes())
                > self.budget
        {
            self.spill()?;
        }
        self.move_keys.clear();
        self.move_keys.extend(moves.iter().map(MoveKey::new));
        // Fetch every slot this game touches at once: the cache misses overlap.
        for k in keys {
            self.positions.prefetch(k);
        }
        for (k, mk) in keys.iter().zip(&self.move_keys) {
            self.moves.prefetch(&MoveSlot::new(*k, *mk));
        }
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].contains(k) {
                continue;
            }
            let e = self.positions.entry(*k);
            e.white += w;
            e.draws += d;
            e.black += b;
        }
        let elos = [tags.white_elo, tags.black_elo];
        for (i, mk) in self.move_keys.iter().enumerate() {
            let k = keys[i];
            if (0..i).any(|j| keys[j] == k && self.move_keys[j] == *mk) {
                continue;
            }
            let e = self.moves.entry(MoveSlot::new(k, *mk));
            e.white += w;
            e.draws += d;
            e.black += b;
            if let Some(elo) = elos[i % 2] {
                e.rated += 1;
                e.rating_sum += u64::from(elo);
            }
            if let Some(elo) = elos[(i + 1) % 2] {
                e.opponent_rated += 1;
                e.opponent_rating_sum += u64::from(elo);
            }
        }
        self.games_in_maps += 1;
        if self.games_in_maps >= MAX_GAMES_IN_MAPS {
            self.spill()?;
        }
        Ok(true)
    }

    /// The tables' counts as sorted records, the tables left empty. Each vector is
    /// allocated at its final length: grown by doubling instead, a month's hundreds of
    /// megabytes were copied and their fresh pages faulted in again at every step.
    fn sorted(&mut self) -> (Vec<PosRecord>, Vec<MoveRecord>) {
        let mut p: Vec<PosRecord> = Vec::with_capacity(self.positions.len());
        p.extend(self.positions.drain().map(|(k, c): (u128, PosCounts)| {
            (
                PositionKey(k),
                Outcomes { white: c.white.into(), draws: c.draws.into(), black: c.black.into() },
            )
        }));
        p.sort_unstable_by_key(|e| e.0);
        let mut m: Vec<MoveRecord> = Vec::with_capacity(self.moves.len());
        m.extend(self.moves.drain().map(|(s, c): (MoveSlot, MoveCounts)| {
            let stats = MoveStats {
                outcomes: Outcomes {
                    white: c.white.into(),
                    draws: c.draws.into(),
                    black: c.black.into(),
                },
                rating_sum: c.rating_sum,
                rated_games: c.rated.into(),
                opponent_rating_sum: c.opponent_rating_sum,
                opponent_rated_games: c.opponent_rated.into(),
            };
            (PositionKey(u128::from(s.lo) | (u128::from(s.hi) << 64)), MoveKey(s.mv), stats)
        }));
        m.sort_unstable_by_key(|e| (e.0, e.1));
        self.games_in_maps = 0;
        (p, m)
    }

    fn spill(&mut self) -> Result<(), GamesError> {
        let (p, m) = self.sorted();
        let positions = SpillFile::write(&self.spill_dir, &p).map_err(spill_err)?;
        let moves = SpillFile::write(&self.spill_dir, &m).map_err(spill_err)?;
        self.runs.push((positions, moves));
        Ok(())
    }

    /// The report and sorted runs of everything counted: the spilled runs and what is
    /// still in memory.
    fn finish(mut self) -> Finished {
        let (p, m) = self.sorted();
        let mut positions = vec![in_memory(p)];
        let mut moves = vec![in_memory(m)];
        for (p, m) in self.runs.drain(..) {
            positions.push(p.opener());
            moves.push(m.opener());
        }
        (self.bad, self.counters, positions, moves, self.games)
    }
}

impl Counters {
    fn count_filtered(&mut self, r: FilterReason) {
        *self.filtered.entry(r).or_default() += 1;
    }
}

impl BadGames {
    /// Number of skipped *games* (stray text between games is not a game).
    pub fn skipped_games(&self) -> u64 {
        self.kinds
            .iter()
            .filter(|(k, _)| k.skipped() && **k != BadKind::Garbage)
            .map(|(_, r)| r.count)
            .sum()
    }
}

/// Number of spill files written by this process so far (for tests and diagnostics).
pub fn spill_runs_written() -> u64 {
    super::runs::spill_files_written()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_under_the_merge_reads_as_a_sentence() {
        // /dev/full: every write fails as on a full disk (ENOSPC).
        use std::io::Write;
        let error = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
            .write_all(b"counts")
            .unwrap_err();
        let message = spill_err(RunError::Output(error)).to_string();
        assert!(
            message.starts_with("writing the merged counts: No space left on device"),
            "{message}"
        );
        assert!(!message.contains("spill file"), "{message}");
    }

    #[test]
    fn repeated_positions_count_once_per_game() {
        let text = b"[Result \"1-0\"]\n\n1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. e4 1-0\n";
        let dir = std::env::temp_dir();
        let path = dir.join(format!("okb-agg-test-{}.pgn", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let agg = aggregate_file(&path, &GameFilter::default(), 15).unwrap();
        let _ = std::fs::remove_file(&path);
        let start = crate::position::key(&shakmaty::Chess::default());
        assert_eq!(agg.stats.position(start).unwrap().white, 1);
        let from_start = agg.stats.moves_from(start);
        assert_eq!(from_start.len(), 1, "Nf3 counted once though played twice");
        assert_eq!(from_start[0].2.outcomes.white, 1);
        // Positions: start, Nf3, Nf6, Ng1 (then the start again, Nf3, Nf6) and e4.
        assert_eq!(agg.stats.positions.len(), 5);
        assert_eq!(agg.counters.games_counted, 1);
    }
}
