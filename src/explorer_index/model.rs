//! The explorer index's model: the settings (`[explorer]`), the cells kept per position,
//! move and slice, the game references, and the files indexed. What the store writes and
//! `okb serve` reads; the rules that fill it are in [`super::slice`] and [`super::build`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Slice;
use crate::games::filter::GameFilter;
use crate::position::MoveKey;

/// `[explorer]`: build the explorer index (absent: `okb serve` answers `/masters` and
/// `/lichess` from the tree's counts only, without filters or game references).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExplorerParams {
    /// Best-rated game references kept per position and slice (Lichess's masters
    /// explorer lists at most 15).
    pub top_games: usize,
    /// Most recent game references kept per position and slice (Lichess lists at most 8).
    pub recent_games: usize,
}

impl Default for ExplorerParams {
    fn default() -> Self {
        ExplorerParams { top_games: 15, recent_games: 8 }
    }
}

/// "No game" in [`MoveCell::single`].
pub const NO_GAME: u32 = u32::MAX;

/// Games of one slice that reached a position.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PosCell {
    /// The slice.
    pub slice: Slice,
    /// White wins.
    pub white: u32,
    /// Draws.
    pub draws: u32,
    /// Black wins.
    pub black: u32,
}

/// Games of one slice that played a move from a position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveCell {
    /// The move.
    pub mv: MoveKey,
    /// The slice.
    pub slice: Slice,
    /// White wins.
    pub white: u32,
    /// Draws.
    pub draws: u32,
    /// Black wins.
    pub black: u32,
    /// Games where the mover's rating is known.
    pub rated: u32,
    /// Sum of those ratings.
    pub rating_sum: u64,
    /// The game, when exactly one game of the slice played the move ([`NO_GAME`] otherwise).
    pub single: u32,
}

impl MoveCell {
    /// Games counted.
    pub fn games(&self) -> u64 {
        u64::from(self.white) + u64::from(self.draws) + u64::from(self.black)
    }
}

/// A kept game reference at a position.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameAt {
    /// The game's slice.
    pub slice: Slice,
    /// The move the game played from the position.
    pub mv: MoveKey,
    /// Index in [`ExplorerIndex::games`].
    pub game: u32,
}

/// One position's index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeIndex {
    /// Games reaching the position, by slice (sorted).
    pub positions: Vec<PosCell>,
    /// Moves of the tree's edges, by (move, slice) (sorted).
    pub moves: Vec<MoveCell>,
    /// Kept game references, sorted by (slice, game).
    pub games: Vec<GameAt>,
}

/// A referenced game.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRef {
    /// The id (see the module docs).
    pub id: String,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// White's rating (0: unknown).
    pub white_rating: u16,
    /// Black's rating (0: unknown).
    pub black_rating: u16,
    /// Year (0: unknown).
    pub year: u16,
    /// Month 1–12 (0: unknown).
    pub month: u8,
    /// 1: White won, 2: Black won, 0: draw.
    pub winner: u8,
    /// 1 + the [`Speed`](crate::games::filter::Speed) index (0: unknown).
    pub speed: u8,
    /// [`MODE_RATED`] or [`MODE_CASUAL`], from a Lichess `Event` tag ("Rated Blitz
    /// game", "Casual Bullet game"); 0 when the Event does not say.
    pub mode: u8,
    /// When it was played, `yyyymmddhhmmss` with unknown parts 0 (for "most recent").
    pub played: u64,
    /// Its PGN block.
    pub block: u32,
    /// Byte offset of its text in the decompressed block.
    pub start: u32,
    /// Length of its text.
    pub len: u32,
}

impl GameRef {
    /// The sum of both ratings (Lichess's masters top-game order).
    pub fn score(&self) -> u32 {
        u32::from(self.white_rating) + u32::from(self.black_rating)
    }
}

/// The whole index: one [`NodeIndex`] per tree node (in tree order), the referenced
/// games and the PGN blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplorerIndex {
    /// Per tree node.
    pub nodes: Vec<NodeIndex>,
    /// Referenced games.
    pub games: Vec<GameRef>,
    /// zstd-compressed PGN texts, [`super::BLOCK_GAMES`] games each.
    pub blocks: Vec<Vec<u8>>,
    /// Games counted.
    pub counted: u64,
}

/// A game file to index.
#[derive(Clone, Debug)]
pub struct FileSpec {
    /// The file.
    pub path: PathBuf,
    /// BGN rather than PGN.
    pub bgn: bool,
    /// Its source's filter.
    pub filter: GameFilter,
    /// The locations of its repeated games, sorted: left out, as the counts leave them
    /// out (`games::dedup`).
    pub repeats: Vec<u64>,
}
