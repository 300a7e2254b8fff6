//! The explorer index (`[explorer]` in pipeline.toml): what `okb serve` needs to answer
//! `/masters` and `/lichess` like the Lichess opening explorer, with filters, game
//! references and PGN.
//!
//! The game files are read again, with the same readers, filter and counting rule as the
//! `games` step ([`crate::games::aggregate`]: a position counts once per game, a move
//! once per game and position, only the first `max_ply` plies, only games with a
//! result), and every count is kept per *slice* of games:
//!
//! - a game with a `TimeControl` (an online game) is sliced by month (from `Date`, else
//!   `UTCDate`), speed (Lichess's thresholds on base + 40 × increment) and rating group
//!   (Lichess's groups 0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500 on the average
//!   of both ratings);
//! - any other game (an over-the-board game, like the masters corpus) by year only, so
//!   that a 1749–2025 corpus stays small; for month filters it counts as January of its
//!   year, and speed or rating filters leave it out.
//!
//! A filter is a set of slices, so a filtered count is a sum of the node's cells in those
//! slices, and the sum over all slices is exactly the tree's count. Only positions of
//! the tree are indexed, and only moves that are edges of the tree.
//!
//! Game references: per position and slice, the [`ExplorerParams::top_games`] games with
//! the highest rating sum (mover + opponent, Lichess's order for masters top games) and
//! the [`ExplorerParams::recent_games`] most recent, each with the move it played there;
//! per move and slice, the game when exactly one game played it (Lichess's `game`). A
//! filter's top games are the best of its slices' kept games, which holds the filter's
//! true top games. Games from BGN files are counted but not referenced (BGN keeps no
//! names).
//!
//! Game ids: a Lichess `Site` URL (`https://lichess.org/abcdefgh`) gives its 8-character
//! id; any other game gets the first 8 base-62 digits of the BLAKE3 of its PGN text (line
//! endings normalized to `\n`, surrounding blank space trimmed), so the same game in two
//! files has one id. Two different texts with the same 8 digits (about one chance in 10^5
//! for a million games) are told apart by hashing the text again with `#1`, `#2`…, in file
//! order. The PGN text of every counted game is kept, zstd-compressed in blocks of
//! [`BLOCK_GAMES`] games, for `GET /masters/pgn/{id}`.

mod build;
mod model;
mod pgn;
mod slice;

pub use build::build;
pub use model::{
    ExplorerIndex, ExplorerParams, FileSpec, GameAt, GameRef, MoveCell, NO_GAME, NodeIndex, PosCell,
};
pub use pgn::{BLOCK_GAMES, decompress, game_pgn, game_text, reference_of_text, tag_pairs};
pub use slice::{
    MODE_CASUAL, MODE_RATED, RATING_GROUPS, SPEEDS, Slice, mode_name, rating_group, slice_of,
    speed_code, speed_name,
};
