//! PGN files straight to a Polyglot book, counting exactly as `polyglot make-book` does.
//!
//! This deliberately differs from the tree's statistics rule ([`super::aggregate`]):
//! Polyglot counts a (position, move) every time it occurs (a position repeated within a
//! game counts each time), scores the Result tag from the mover's point of view (win 2,
//! draw 1, loss 0) where anything but `1-0`/`0-1` (including `*` or no tag) scores like a
//! draw, halves all counts of a position (rounding up) as soon as one move's count
//! reaches [`COUNT_MAX`], and keeps moves played at least `min_game` times whose score is
//! not zero. The halving makes counts depend on game order, so games are applied in file
//! order, chunk order and game order; only parsing runs in parallel.
//!
//! Where Polyglot would abort (an illegal move), okb skips the game and reports it.
//! Games with a non-standard start or variant are filtered out.

use std::collections::HashMap;
use std::path::PathBuf;

use rayon::prelude::*;

use super::polyglot::{BookEntry, WeightMode, encode_move};
use crate::games::GamesError;
use crate::games::filter::GameResult;
use crate::games::input::{Chunk, DEFAULT_CHUNK_BYTES};
use crate::games::pgn::{ChunkOrigin, GameEnd, GameVisitor, PolyglotKeys, read_chunk};
use crate::games::report::{BadGames, Counters};

/// Polyglot's count limit: reaching it halves the position's counts.
pub const COUNT_MAX: u64 = 16384;

/// Polyglot's default ply limit.
pub const DEFAULT_BOOK_MAX_PLY: usize = 1024;

/// Polyglot's default minimum number of games per move.
pub const DEFAULT_MIN_GAME: u64 = 3;

/// Settings of [`build_book`].
#[derive(Clone, Debug)]
pub struct BookOptions {
    /// Moves played at ply < `max_ply` are counted.
    pub max_ply: usize,
    /// Moves counted fewer times are left out.
    pub min_game: u64,
    /// Weight computation.
    pub weights: WeightMode,
    /// Target chunk size for parallel parsing.
    pub chunk_bytes: usize,
}

impl Default for BookOptions {
    fn default() -> Self {
        BookOptions {
            max_ply: DEFAULT_BOOK_MAX_PLY,
            min_game: DEFAULT_MIN_GAME,
            weights: WeightMode::Polyglot,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        }
    }
}

/// A built book with what happened to the games.
#[derive(Debug, Default)]
pub struct BookResult {
    /// Sorted entries, ready for [`crate::export::polyglot::write_book`].
    pub entries: Vec<BookEntry>,
    /// Bad games.
    pub bad: BadGames,
    /// Game counters.
    pub counters: Counters,
}

/// One occurrence: key, Polyglot move, and the mover's score (0, 1 or 2).
#[derive(Copy, Clone)]
struct Occurrence {
    key: u64,
    mv: u16,
    score: u8,
}

/// What parsing one chunk yields, applied later in order.
#[derive(Default)]
struct ChunkOutput {
    occurrences: Vec<Occurrence>,
    bad: BadGames,
    counters: Counters,
}

fn parse_chunk(file: &str, chunk: &Chunk, max_ply: usize) -> ChunkOutput {
    let mut out = ChunkOutput::default();
    let origin = ChunkOrigin::of(file, chunk);
    let mut visitor = GameVisitor::<PolyglotKeys>::new(max_ply, None);
    let occ = &mut out.occurrences;
    let counters = &mut out.counters;
    let games = read_chunk(&chunk.data, origin, &mut visitor, &mut out.bad, |v, end| match end {
        GameEnd::Filtered(r) => *counters.filtered.entry(r).or_default() += 1,
        GameEnd::Done => {
            counters.games_counted += 1;
            // Polyglot reads the Result tag only; anything else is a draw.
            let white = match v.tags.result {
                Some(GameResult::WhiteWins) => 2,
                Some(GameResult::BlackWins) => 0,
                _ => 1,
            };
            for (i, m) in v.moves.iter().enumerate() {
                let score = if i % 2 == 0 { white } else { 2 - white };
                occ.push(Occurrence { key: v.keys[i], mv: encode_move(m), score });
            }
        }
        GameEnd::Bad(_) => {}
    });
    out.counters.games_read = games;
    out.counters.games_bad = out.bad.skipped_games();
    out
}

/// Polyglot's table: entries of one position linked through `next`, so halving can visit
/// a position's moves without a second index.
struct Table {
    heads: HashMap<u64, u32>,
    entries: Vec<TableEntry>,
    halving: bool,
}

struct TableEntry {
    key: u64,
    mv: u16,
    n: u64,
    sum: u64,
    next: u32,
}

const NONE: u32 = u32::MAX;

impl Table {
    fn add(&mut self, o: Occurrence) {
        let head = *self.heads.get(&o.key).unwrap_or(&NONE);
        let mut i = head;
        while i != NONE && self.entries[i as usize].mv != o.mv {
            i = self.entries[i as usize].next;
        }
        if i == NONE {
            i = self.entries.len() as u32;
            self.entries.push(TableEntry { key: o.key, mv: o.mv, n: 0, sum: 0, next: head });
            self.heads.insert(o.key, i);
        }
        let e = &mut self.entries[i as usize];
        e.n += 1;
        e.sum += u64::from(o.score);
        if self.halving && e.n >= COUNT_MAX {
            let mut j = self.heads[&o.key];
            while j != NONE {
                let e = &mut self.entries[j as usize];
                e.n = e.n.div_ceil(2);
                e.sum = e.sum.div_ceil(2);
                j = e.next;
            }
        }
    }
}

/// Builds a book from PGN files (plain or compressed), in the order given.
pub fn build_book(paths: &[PathBuf], opts: &BookOptions) -> Result<BookResult, GamesError> {
    let mut table = Table {
        heads: HashMap::new(),
        entries: Vec::new(),
        halving: opts.weights == WeightMode::Polyglot,
    };
    let mut bad = BadGames::default();
    let mut counters = Counters::default();
    let window = 2 * rayon::current_num_threads().max(1);
    let mut batches = crate::games::input::ChunkBatches::new(paths, opts.chunk_bytes, window);
    while let Some(batch) = batches.next_batch()? {
        let outputs: Vec<ChunkOutput> =
            batch.par_iter().map(|(f, c)| parse_chunk(f, c, opts.max_ply)).collect();
        for out in outputs {
            for o in out.occurrences {
                table.add(o);
            }
            bad.merge(&out.bad);
            counters.merge(&out.counters);
        }
    }
    let entries = finish(table, opts);
    Ok(BookResult { entries, bad, counters })
}

fn finish(table: Table, opts: &BookOptions) -> Vec<BookEntry> {
    let kept = table.entries.iter().filter(|e| e.n >= opts.min_game);
    let mut entries: Vec<BookEntry> = match opts.weights {
        // keep_entry(): enough games and a non-zero score; the weight is the score.
        WeightMode::Polyglot => kept
            .filter(|e| e.sum > 0)
            .map(|e| BookEntry { key: e.key, mv: e.mv, weight: e.sum.min(65535) as u16, learn: 0 })
            .collect(),
        WeightMode::Games => {
            let mut max: HashMap<u64, u64> = HashMap::new();
            for e in kept.clone() {
                let m = max.entry(e.key).or_default();
                *m = (*m).max(e.n);
            }
            kept.map(|e| {
                let scaled = (u128::from(e.n) * 65535 + u128::from(max[&e.key]) / 2)
                    / u128::from(max[&e.key]);
                BookEntry { key: e.key, mv: e.mv, weight: scaled.clamp(1, 65535) as u16, learn: 0 }
            })
            .collect()
        }
    };
    // Polyglot sorts its table (kept in first-occurrence order) by key and descending
    // weight with a stable sort, so ties keep first-occurrence order; so does okb.
    entries.sort_by(|a, b| a.key.cmp(&b.key).then(b.weight.cmp(&a.weight)));
    entries
}
