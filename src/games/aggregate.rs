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
//! merged at the end.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::Move;

use super::GamesError;
use super::filter::{CompiledFilter, GameFilter, GameResult, GameTags};
use super::input::{Boundary, Chunk, Chunker, DEFAULT_CHUNK_BYTES, StreamBreak};
use super::pgn::{ChunkOrigin, GameEnd, GameVisitor, IdentityKeys, read_chunk};
use super::report::{BadGames, BadKind, Counters, FilterReason};
use super::stats::{GameStats, MoveStats, Outcomes};
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
}

impl Default for AggregateOptions {
    fn default() -> Self {
        AggregateOptions {
            max_ply: DEFAULT_MAX_PLY,
            memory_budget_mb: DEFAULT_MEMORY_BUDGET_MB,
            spill_dir: None,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            format: Format::Auto,
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
    aggregate_file_with(
        path,
        filter,
        &AggregateOptions {
            max_ply,
            ..Default::default()
        },
    )
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
    paths
        .par_iter()
        .map(|p| aggregate_file_with(p, filter, &per_file))
        .collect()
}

/// Aggregates one game file (PGN or BGN, possibly compressed).
pub fn aggregate_file_with(
    path: &Path,
    filter: &GameFilter,
    opts: &AggregateOptions,
) -> Result<FileAggregate, GamesError> {
    let compiled = filter.compile()?;
    let format = opts.format.resolve(path);
    let boundary = if format == Format::Bgn {
        Boundary::Line
    } else {
        Boundary::Pgn
    };
    let file = path.display().to_string();
    let mut chunker = Chunker::open(path, opts.chunk_bytes, boundary)?;
    let Some(first) = whole_games(&mut chunker)? else {
        return Ok(FileAggregate {
            file,
            max_ply: opts.max_ply as u32,
            broken: chunker.broken().cloned(),
            ..Default::default()
        });
    };
    let slots = if first.last {
        1
    } else {
        rayon::current_num_threads().max(1)
    };
    let budget = opts.memory_budget_mb.max(1).saturating_mul(1 << 20) / slots;
    let spill_dir = opts.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
    let accs: Vec<Mutex<Accumulator>> = (0..slots)
        .map(|_| Mutex::new(Accumulator::new(budget, spill_dir.clone())))
        .collect();
    let ctx = ChunkContext {
        file: &file,
        filter: &compiled,
        max_ply: opts.max_ply,
        format,
    };
    let process = |chunk: Chunk| -> Result<(), GamesError> {
        let slot = rayon::current_thread_index().unwrap_or(0) % slots;
        // One lock per chunk; the slot is this thread's, so it is never contended.
        let mut acc = accs[slot].lock().unwrap_or_else(|e| e.into_inner());
        acc.process_chunk(&chunk, &ctx)
    };
    if first.last {
        process(first)?;
    } else {
        let rest = std::iter::from_fn(|| whole_games(&mut chunker).transpose());
        std::iter::once(Ok(first))
            .chain(rest)
            .par_bridge()
            .try_for_each(|c| process(c?))?;
    }
    let mut bad = BadGames::default();
    let mut counters = Counters::default();
    let mut pos_runs = Vec::new();
    let mut move_runs = Vec::new();
    for acc in accs {
        let acc = acc.into_inner().unwrap_or_else(|e| e.into_inner());
        bad.merge(&acc.bad);
        counters.merge(&acc.counters);
        let (p, m) = acc.finish()?;
        pos_runs.extend(p);
        move_runs.extend(m);
    }
    let positions =
        kmerge(pos_runs, |e: &PosRecord| e.0, |a, b| a.1.add(&b.1)).map_err(spill_err)?;
    let moves = kmerge(
        move_runs,
        |e: &MoveRecord| (e.0, e.1),
        |a, b| add_move(&mut a.2, &b.2),
    )
    .map_err(spill_err)?;
    Ok(FileAggregate {
        file,
        max_ply: opts.max_ply as u32,
        stats: GameStats { positions, moves },
        bad,
        counters,
        broken: chunker.broken().cloned(),
    })
}

/// The next chunk; a broken stream ends the file after its sound games instead of
/// failing it (the break is kept in the chunker for the report).
fn whole_games(chunker: &mut Chunker) -> Result<Option<Chunk>, GamesError> {
    match chunker.next_chunk() {
        Err(GamesError::Read { .. }) if chunker.broken().is_some() => Ok(None),
        other => other,
    }
}

fn spill_err(e: SpillError) -> GamesError {
    GamesError::Spill {
        path: e.0,
        source: e.1,
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
        let lo = if p == 0 {
            0
        } else {
            bound(p).map_or(v.len(), |b| v.partition_point(|e| e.0 < b))
        };
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
    a.outcomes.add(&b.outcomes);
    a.rating_sum += b.rating_sum;
    a.rated_games += b.rated_games;
    a.opponent_rating_sum += b.opponent_rating_sum;
    a.opponent_rated_games += b.opponent_rated_games;
}

type PosRecord = (PositionKey, Outcomes);
type MoveRecord = (PositionKey, MoveKey, MoveStats);

/// Hasher for Zobrist keys: they are already uniformly random, so folding is enough.
#[derive(Default)]
struct ZobristHasher(u64);

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for ZobristHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(MIX);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 ^= v;
    }
    fn write_u128(&mut self, v: u128) {
        self.0 ^= (v as u64) ^ ((v >> 64) as u64);
    }
}

type Zobrist = BuildHasherDefault<ZobristHasher>;

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

/// (position, move) as a hash key, 8-byte aligned to keep map slots small.
#[derive(Copy, Clone, PartialEq, Eq)]
struct MoveSlot {
    lo: u64,
    hi: u64,
    mv: u16,
}

impl Hash for MoveSlot {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.lo ^ self.hi ^ (u64::from(self.mv) + 1).wrapping_mul(MIX));
    }
}

// Approximate bytes per map entry including hashbrown's slack, for the budget.
const POS_ENTRY_BYTES: usize = 48;
const MOVE_ENTRY_BYTES: usize = 88;
// Flush before any u32 counter could overflow.
const MAX_GAMES_IN_MAPS: u64 = u32::MAX as u64 - 1;

struct ChunkContext<'a> {
    file: &'a str,
    filter: &'a CompiledFilter,
    max_ply: usize,
    format: Format,
}

/// One worker's counts: hash maps plus sorted runs spilled to disk.
struct Accumulator {
    positions: HashMap<u128, PosCounts, Zobrist>,
    moves: HashMap<MoveSlot, MoveCounts, Zobrist>,
    games_in_maps: u64,
    budget: usize,
    spill_dir: PathBuf,
    runs: Vec<SpillRun>,
    bad: BadGames,
    counters: Counters,
    move_keys: Vec<MoveKey>,
}

impl Accumulator {
    fn new(budget: usize, spill_dir: PathBuf) -> Self {
        Accumulator {
            positions: HashMap::default(),
            moves: HashMap::default(),
            games_in_maps: 0,
            budget,
            spill_dir,
            runs: Vec::new(),
            bad: BadGames::default(),
            counters: Counters::default(),
            move_keys: Vec::new(),
        }
    }

    fn process_chunk(&mut self, chunk: &Chunk, ctx: &ChunkContext<'_>) -> Result<(), GamesError> {
        let origin = ChunkOrigin {
            file: ctx.file,
            first_line: chunk.first_line,
            last: chunk.last,
        };
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
                read_chunk(
                    &chunk.data,
                    origin,
                    &mut visitor,
                    &mut chunk_bad,
                    |v, end| {
                        if error.is_some() {
                            return;
                        }
                        match end {
                            GameEnd::Filtered(r) => self.counters.count_filtered(r),
                            GameEnd::Done => {
                                if let Err(e) =
                                    self.count_game(&v.keys, &v.moves, &v.tags, v.result())
                                {
                                    error = Some(e);
                                }
                            }
                            GameEnd::Bad(_) => {}
                        }
                    },
                )
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

    /// Counts one readable game (or files it under the no-result filter).
    fn count_game(
        &mut self,
        keys: &[u128],
        moves: &[Move],
        tags: &GameTags,
        result: Option<GameResult>,
    ) -> Result<(), GamesError> {
        let (w, d, b) = match result {
            Some(GameResult::WhiteWins) => (1, 0, 0),
            Some(GameResult::Draw) => (0, 1, 0),
            Some(GameResult::BlackWins) => (0, 0, 1),
            Some(GameResult::Unknown) | None => {
                self.counters.count_filtered(FilterReason::NoResult);
                return Ok(());
            }
        };
        self.counters.games_counted += 1;
        for (i, k) in keys.iter().enumerate() {
            if keys[..i].contains(k) {
                continue;
            }
            let e = self.positions.entry(*k).or_default();
            e.white += w;
            e.draws += d;
            e.black += b;
        }
        self.move_keys.clear();
        self.move_keys.extend(moves.iter().map(MoveKey::new));
        let elos = [tags.white_elo, tags.black_elo];
        for (i, mk) in self.move_keys.iter().enumerate() {
            let k = keys[i];
            if (0..i).any(|j| keys[j] == k && self.move_keys[j] == *mk) {
                continue;
            }
            let slot = MoveSlot {
                lo: k as u64,
                hi: (k >> 64) as u64,
                mv: mk.0,
            };
            let e = self.moves.entry(slot).or_default();
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
        if self.games_in_maps >= MAX_GAMES_IN_MAPS
            || self.positions.len() * POS_ENTRY_BYTES + self.moves.len() * MOVE_ENTRY_BYTES
                > self.budget
        {
            self.spill()?;
        }
        Ok(())
    }

    fn sorted(&mut self) -> (Vec<PosRecord>, Vec<MoveRecord>) {
        let mut p: Vec<PosRecord> = self
            .positions
            .drain()
            .map(|(k, c)| {
                (
                    PositionKey(k),
                    Outcomes {
                        white: c.white.into(),
                        draws: c.draws.into(),
                        black: c.black.into(),
                    },
                )
            })
            .collect();
        p.sort_unstable_by_key(|e| e.0);
        let mut m: Vec<MoveRecord> = self
            .moves
            .drain()
            .map(|(s, c)| {
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
                (
                    PositionKey(u128::from(s.lo) | (u128::from(s.hi) << 64)),
                    MoveKey(s.mv),
                    stats,
                )
            })
            .collect();
        m.sort_unstable_by_key(|e| (e.0, e.1));
        self.games_in_maps = 0;
        (p, m)
    }

    fn spill(&mut self) -> Result<(), GamesError> {
        let (p, m) = self.sorted();
        let run = SpillRun::write(&self.spill_dir, &p, &m).map_err(spill_err)?;
        self.runs.push(run);
        Ok(())
    }

    /// Sorted runs of everything counted: the spilled ones and what is still in memory.
    #[allow(clippy::type_complexity)]
    fn finish(
        mut self,
    ) -> Result<(Vec<Run<'static, PosRecord>>, Vec<Run<'static, MoveRecord>>), GamesError> {
        let (p, m) = self.sorted();
        let mut pos_runs: Vec<Run<'static, PosRecord>> = vec![Box::new(p.into_iter().map(Ok))];
        let mut move_runs: Vec<Run<'static, MoveRecord>> = vec![Box::new(m.into_iter().map(Ok))];
        for run in self.runs.drain(..) {
            let (p, m) = run.open().map_err(spill_err)?;
            pos_runs.push(p);
            move_runs.push(m);
        }
        Ok((pos_runs, move_runs))
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

/// A sorted stream of records; errors come from reading spill files.
type Run<'a, T> = Box<dyn Iterator<Item = Result<T, SpillError>> + Send + 'a>;

/// An I/O error on a spill file.
#[derive(Debug)]
struct SpillError(PathBuf, io::Error);

/// K-way merge of sorted runs, combining records with equal keys.
fn kmerge<T, K: Ord + Copy>(
    mut runs: Vec<Run<'_, T>>,
    key: impl Fn(&T) -> K,
    combine: impl Fn(&mut T, &T),
) -> Result<Vec<T>, SpillError> {
    let (lower, _) = runs
        .iter()
        .map(|r| r.size_hint())
        .fold((0, None::<usize>), |a, b| (a.0 + b.0, None));
    let mut out: Vec<T> = Vec::with_capacity(lower);
    if runs.len() == 1 {
        for item in runs.pop().into_iter().flatten() {
            out.push(item?);
        }
        return Ok(out);
    }
    let mut heads: Vec<Option<T>> = Vec::with_capacity(runs.len());
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, r) in runs.iter_mut().enumerate() {
        let head = r.next().transpose()?;
        if let Some(h) = &head {
            heap.push(Reverse((key(h), i)));
        }
        heads.push(head);
    }
    while let Some(Reverse((k, i))) = heap.pop() {
        let Some(item) = heads[i].take() else {
            continue;
        };
        if let Some(next) = runs[i].next().transpose()? {
            heap.push(Reverse((key(&next), i)));
            heads[i] = Some(next);
        }
        match out.last_mut() {
            Some(last) if key(last) == k => combine(last, &item),
            _ => out.push(item),
        }
    }
    Ok(out)
}

static SPILL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Number of spill runs written by this process so far (for tests and diagnostics).
pub fn spill_runs_written() -> u64 {
    SPILL_COUNTER.load(Ordering::Relaxed)
}

/// A pair of spill files (positions, moves), removed when dropped.
struct SpillRun {
    positions: TempFile,
    moves: TempFile,
}

struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const POS_RECORD_BYTES: usize = 16 + 3 * 8;
const MOVE_RECORD_BYTES: usize = 16 + 2 + 7 * 8;

impl SpillRun {
    fn write(dir: &Path, p: &[PosRecord], m: &[MoveRecord]) -> Result<SpillRun, SpillError> {
        let n = SPILL_COUNTER.fetch_add(1, Ordering::Relaxed);
        let base = format!("okb-spill-{}-{n}", std::process::id());
        let positions = TempFile(dir.join(format!("{base}.pos")));
        let moves = TempFile(dir.join(format!("{base}.mov")));
        let write = |path: &Path, f: &mut dyn FnMut(&mut BufWriter<File>) -> io::Result<()>| {
            let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
            f(&mut w)?;
            w.flush()
        };
        write(&positions.0, &mut |w| {
            for (k, o) in p {
                w.write_all(&k.0.to_le_bytes())?;
                for v in [o.white, o.draws, o.black] {
                    w.write_all(&v.to_le_bytes())?;
                }
            }
            Ok(())
        })
        .map_err(|e| SpillError(positions.0.clone(), e))?;
        write(&moves.0, &mut |w| {
            for (k, mk, s) in m {
                w.write_all(&k.0.to_le_bytes())?;
                w.write_all(&mk.0.to_le_bytes())?;
                let o = &s.outcomes;
                for v in [o.white, o.draws, o.black, s.rating_sum, s.rated_games, s.opponent_rating_sum, s.opponent_rated_games] {
                    w.write_all(&v.to_le_bytes())?;
                }
            }
            Ok(())
        })
        .map_err(|e| SpillError(moves.0.clone(), e))?;
        Ok(SpillRun { positions, moves })
    }

    #[allow(clippy::type_complexity)]
    fn open(self) -> Result<(Run<'static, PosRecord>, Run<'static, MoveRecord>), SpillError> {
        let p = records(self.positions, POS_RECORD_BYTES, |b| {
            let k = PositionKey(u128::from_le_bytes(b[..16].try_into().unwrap_or_default()));
            let v = |i: usize| {
                u64::from_le_bytes(b[16 + 8 * i..24 + 8 * i].try_into().unwrap_or_default())
            };
            (
                k,
                Outcomes {
                    white: v(0),
                    draws: v(1),
                    black: v(2),
                },
            )
        })?;
        let m = records(self.moves, MOVE_RECORD_BYTES, |b| {
            let k = PositionKey(u128::from_le_bytes(b[..16].try_into().unwrap_or_default()));
            let mk = MoveKey(u16::from_le_bytes([b[16], b[17]]));
            let v = |i: usize| {
                u64::from_le_bytes(b[18 + 8 * i..26 + 8 * i].try_into().unwrap_or_default())
            };
            let stats = MoveStats {
                outcomes: Outcomes {
                    white: v(0),
                    draws: v(1),
                    black: v(2),
                },
                rating_sum: v(3),
                rated_games: v(4),
                opponent_rating_sum: v(5),
                opponent_rated_games: v(6),
            };
            (k, mk, stats)
        })?;
        Ok((p, m))
    }
}

/// Streams fixed-size records back from a spill file (deleted once fully read).
fn records<T: 'static>(
    file: TempFile,
    size: usize,
    decode: fn(&[u8]) -> T,
) -> Result<Run<'static, T>, SpillError> {
    let f = File::open(&file.0).map_err(|e| SpillError(file.0.clone(), e))?;
    let mut reader = BufReader::with_capacity(1 << 20, f);
    let mut buf = vec![0u8; size];
    Ok(Box::new(std::iter::from_fn(move || {
        match reader.read_exact(&mut buf) {
            Ok(()) => Some(Ok(decode(&buf))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => None,
            Err(e) => Some(Err(SpillError(file.0.clone(), e))),
        }
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of<T: Copy + Send + 'static>(v: Vec<T>) -> Run<'static, T> {
        Box::new(v.into_iter().map(Ok))
    }

    #[test]
    fn kmerge_combines_equal_keys() {
        let a = run_of(vec![(1u32, 1u64), (3, 1), (5, 1)]);
        let b = run_of(vec![(1u32, 10u64), (4, 10), (5, 10)]);
        let out = kmerge(vec![a, b], |e| e.0, |x, y| x.1 += y.1).unwrap();
        assert_eq!(out, vec![(1, 11), (3, 1), (4, 10), (5, 11)]);
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

/// The merged statistics of all game files, with what was skipped: the `games` step's value.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct GamesMerged {
    /// Counts per position and move.
    pub stats: crate::games::stats::GameStats,
    /// Bad games by reason.
    pub bad: crate::games::report::BadGames,
    /// Games read, counted, filtered.
    pub counters: crate::games::report::Counters,
}
