//! Polyglot opening books (`.bin`): 16-byte big-endian entries (key u64, move u16,
//! weight u16, learn u32) sorted by key.
//!
//! Keys come from [`crate::position::polyglot_key`] (Polyglot's pseudo-legal en-passant
//! rule). Moves follow the Polyglot format: bits 0–5 to-square, 6–11 from-square
//! (file + 8 × rank), 12–14 promotion (1 knight … 4 queen); castling is written as the
//! king taking its own rook (e1h1, e1a1, e8h8, e8a8).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use shakmaty::{CastlingMode, Chess, Move, Position, Role};

use crate::games::GamesError;
use crate::games::stats::MoveStats;
use crate::position::{MoveKey, polyglot_key};

/// One book entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BookEntry {
    /// Polyglot key of the position.
    pub key: u64,
    /// Polyglot-encoded move.
    pub mv: u16,
    /// Relative weight among the position's moves.
    pub weight: u16,
    /// Learning data (always 0 when okb writes a book).
    pub learn: u32,
}

/// How entry weights are computed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WeightMode {
    /// Polyglot's: 2 × wins + draws of the side that moved.
    #[default]
    Polyglot,
    /// Number of games, scaled per position so that the most played move gets 65535.
    Games,
}

/// Polyglot encoding of `m` (a legal move of standard chess).
pub fn encode_move(m: &Move) -> u16 {
    // Standard-mode UCI gives castling as e1g1; Polyglot wants the rook square.
    let (from, to) = match m {
        Move::Castle { king, rook } => (*king, *rook),
        _ => match m.to_uci(CastlingMode::Chess960) {
            shakmaty::uci::UciMove::Normal { from, to, .. } => (from, to),
            _ => return 0,
        },
    };
    let promo = match m.promotion() {
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(Role::Queen) => 4,
        _ => 0,
    };
    (to as u16) | ((from as u16) << 6) | (promo << 12)
}

/// Sorts entries as written to a book: by key, then heavier moves first, then by move
/// (the last rule only makes ties deterministic).
pub fn sort_entries(entries: &mut [BookEntry]) {
    entries.sort_by(|a, b| a.key.cmp(&b.key).then(b.weight.cmp(&a.weight)).then(a.mv.cmp(&b.mv)));
}

/// Builds book entries from the tree's statistics: one triple per (position, move).
///
/// In [`WeightMode::Polyglot`], a position whose largest weight exceeds 65535 has all its
/// weights halved (rounding up, as `polyglot make-book` does) until it fits, and
/// zero-weight moves are left out (Polyglot drops moves that never scored). Moves that
/// are not legal in their position are ignored. Entries come back sorted.
pub fn entries_from_stats<'a, I>(items: I, mode: WeightMode) -> Vec<BookEntry>
where
    I: IntoIterator<Item = (&'a Chess, MoveKey, MoveStats)>,
{
    // Group by Polyglot key; a BTreeMap keeps the work deterministic whatever the order.
    let mut by_key: BTreeMap<u64, Vec<(u16, u64)>> = BTreeMap::new();
    for (pos, mk, stats) in items {
        let Some(m) = mk.to_move(pos) else { continue };
        let raw = raw_weight(pos, &stats.outcomes, mode);
        by_key.entry(polyglot_key(pos)).or_default().push((encode_move(&m), raw));
    }
    let mut out = Vec::new();
    for (key, moves) in by_key {
        for (mv, weight) in scale_weights(&moves, mode) {
            out.push(BookEntry { key, mv, weight, learn: 0 });
        }
    }
    sort_entries(&mut out);
    out
}

/// A move's weight before scaling: 2 × wins + draws of the side to move in `pos`
/// (Polyglot's), or its games.
pub fn raw_weight(pos: &Chess, games: &crate::games::stats::Outcomes, mode: WeightMode) -> u64 {
    match mode {
        WeightMode::Polyglot => {
            let wins = if pos.turn().is_white() { games.white } else { games.black };
            2 * wins + games.draws
        }
        WeightMode::Games => games.games(),
    }
}

/// Fits the raw weights of one position into u16 according to `mode`; drops zeros.
pub fn scale_weights(moves: &[(u16, u64)], mode: WeightMode) -> Vec<(u16, u16)> {
    let max = moves.iter().map(|m| m.1).max().unwrap_or(0);
    match mode {
        WeightMode::Polyglot => {
            let mut shift = 0;
            while (max + (1 << shift) - 1) >> shift > 65535 {
                shift += 1;
            }
            let halve = |mut w: u64| {
                for _ in 0..shift {
                    w = w.div_ceil(2);
                }
                w as u16
            };
            moves.iter().map(|&(mv, w)| (mv, halve(w))).filter(|m| m.1 > 0).collect()
        }
        WeightMode::Games => moves
            .iter()
            .filter(|m| m.1 > 0)
            .map(|&(mv, w)| {
                let scaled = (u128::from(w) * 65535 + u128::from(max) / 2) / u128::from(max);
                (mv, scaled.max(1) as u16)
            })
            .collect(),
    }
}

/// The bytes of a book with `entries` (which must already be sorted).
pub fn to_bytes(entries: &[BookEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 16);
    for e in entries {
        out.extend_from_slice(&e.to_bytes());
    }
    out
}

impl BookEntry {
    /// The entry's 16 bytes in a book: key, move, weight, learn, big-endian.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        bytes[0..8].copy_from_slice(&self.key.to_be_bytes());
        bytes[8..10].copy_from_slice(&self.mv.to_be_bytes());
        bytes[10..12].copy_from_slice(&self.weight.to_be_bytes());
        bytes[12..16].copy_from_slice(&self.learn.to_be_bytes());
        bytes
    }
}

/// Parses book bytes (trailing bytes that do not form an entry are ignored).
pub fn from_bytes(bytes: &[u8]) -> Vec<BookEntry> {
    bytes
        .chunks_exact(16)
        .map(|c| BookEntry {
            key: u64::from_be_bytes(c[0..8].try_into().unwrap_or_default()),
            mv: u16::from_be_bytes([c[8], c[9]]),
            weight: u16::from_be_bytes([c[10], c[11]]),
            learn: u32::from_be_bytes(c[12..16].try_into().unwrap_or_default()),
        })
        .collect()
}

/// Writes a book file atomically (temporary file, then rename).
pub fn write_book(path: &Path, entries: &[BookEntry]) -> Result<(), GamesError> {
    let err = |source| GamesError::Write { path: path.to_path_buf(), source };
    crate::files::write_atomic(path, &to_bytes(entries)).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::stats::Outcomes;

    fn play(pos: &Chess, uci: &str) -> Move {
        uci.parse::<shakmaty::uci::UciMove>().unwrap().to_move(pos).unwrap()
    }

    #[test]
    fn moves_encode_like_polyglot() {
        let start = Chess::default();
        // e2e4: from e2 = 12, to e4 = 28.
        assert_eq!(encode_move(&play(&start, "e2e4")), 28 | (12 << 6));
        let castle = crate::position::parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        assert_eq!(encode_move(&play(&castle, "e1g1")), 7 | (4 << 6), "e1h1");
        assert_eq!(encode_move(&play(&castle, "e1c1")), 4 << 6, "e1a1");
        let promo = crate::position::parse_fen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1").unwrap();
        assert_eq!(encode_move(&play(&promo, "e7e8n")), 60 | (52 << 6) | (1 << 12));
        assert_eq!(encode_move(&play(&promo, "e7e8q")), 60 | (52 << 6) | (4 << 12));
    }

    #[test]
    fn weights_from_stats() {
        let start = Chess::default();
        let e4 = MoveKey::new(&play(&start, "e2e4"));
        let d4 = MoveKey::new(&play(&start, "d2d4"));
        let st = |w, d, b| MoveStats {
            outcomes: Outcomes { white: w, draws: d, black: b },
            ..Default::default()
        };
        let items = vec![(&start, e4, st(10, 5, 3)), (&start, d4, st(40_000, 1, 0))];
        let e = entries_from_stats(items.clone(), WeightMode::Polyglot);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].key, 0x463b96181691fc9c);
        // 80001 does not fit: halved once, rounding up, like Polyglot.
        assert_eq!((e[0].weight, e[1].weight), (40_001, 13));
        let g = entries_from_stats(items, WeightMode::Games);
        // 18 × 65535 / 40001, rounded.
        assert_eq!((g[0].weight, g[1].weight), (65535, 29));
        let bytes = to_bytes(&e);
        assert_eq!(bytes.len(), 32);
        assert_eq!(from_bytes(&bytes), e);
    }
}
