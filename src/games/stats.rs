//! The data contract between Phase 2 (game aggregation) and tree assembly.
//!
//! Phase 2 reduces every game collection to [`GameStats`]: counts per position and per
//! (position, move), keyed by [`PositionKey`] and [`MoveKey`]. Tree assembly walks these
//! from the start position; it never sees a game.

use serde::{Deserialize, Serialize};

use crate::position::{MoveKey, PositionKey};

/// Results of the games that reached a position or played a move.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcomes {
    /// Games won by White.
    pub white: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games won by Black.
    pub black: u64,
}

impl Outcomes {
    /// Number of games counted.
    pub fn games(&self) -> u64 {
        self.white + self.draws + self.black
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Outcomes) {
        self.white += other.white;
        self.draws += other.draws;
        self.black += other.black;
    }
}

/// Statistics of one move from one position.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveStats {
    /// Results of the games in which the move was played from the position.
    pub outcomes: Outcomes,
    /// Sum of the mover's ratings over the games that had one.
    pub rating_sum: u64,
    /// Number of games that contributed to `rating_sum`.
    pub rated_games: u64,
    /// Sum of the mover's opponent's ratings over the games that had one (with the
    /// mover's, this gives White's and Black's average Elo of a move: packed records).
    pub opponent_rating_sum: u64,
    /// Number of games that contributed to `opponent_rating_sum`.
    pub opponent_rated_games: u64,
}

/// Merged statistics of all game sources, sorted by key so that serialization is
/// deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStats {
    /// Per position, sorted by key.
    pub positions: Vec<(PositionKey, Outcomes)>,
    /// Per (position, move), sorted by (position, move).
    pub moves: Vec<(PositionKey, MoveKey, MoveStats)>,
}

impl GameStats {
    /// Statistics of the position `key`, if any game reached it.
    pub fn position(&self, key: PositionKey) -> Option<&Outcomes> {
        self.positions
            .binary_search_by_key(&key, |(k, _)| *k)
            .ok()
            .map(|i| &self.positions[i].1)
    }

    /// All moves played from the position `key`, sorted by move key.
    pub fn moves_from(&self, key: PositionKey) -> &[(PositionKey, MoveKey, MoveStats)] {
        let start = self.moves.partition_point(|(k, _, _)| *k < key);
        let end = self.moves.partition_point(|(k, _, _)| *k <= key);
        &self.moves[start..end]
    }
}
