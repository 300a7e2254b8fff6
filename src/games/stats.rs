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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStats {
    /// Per position, sorted by key.
    pub positions: Vec<(PositionKey, Outcomes)>,
    /// Per (position, move), sorted by (position, move).
    pub moves: Vec<(PositionKey, MoveKey, MoveStats)>,
    /// The key bits the statistics are keyed by: all of them, or the top 72 when they come
    /// from a counts state (`games::state`); lookups cut the asked key the same way. Not
    /// serialized: counts files hold whole keys.
    #[serde(skip, default = "whole_keys")]
    pub key_mask: u128,
}

fn whole_keys() -> u128 {
    u128::MAX
}

impl Default for GameStats {
    fn default() -> GameStats {
        GameStats::new(Vec::new(), Vec::new())
    }
}

impl GameStats {
    /// Statistics keyed by whole keys.
    pub fn new(
        positions: Vec<(PositionKey, Outcomes)>,
        moves: Vec<(PositionKey, MoveKey, MoveStats)>,
    ) -> GameStats {
        GameStats { positions, moves, key_mask: u128::MAX }
    }

    /// Statistics of the position `key`, if any game reached it.
    pub fn position(&self, key: PositionKey) -> Option<&Outcomes> {
        let key = PositionKey(key.0 & self.key_mask);
        self.positions.binary_search_by_key(&key, |(k, _)| *k).ok().map(|i| &self.positions[i].1)
    }

    /// All moves played from the position `key`, sorted by move key.
    pub fn moves_from(&self, key: PositionKey) -> &[(PositionKey, MoveKey, MoveStats)] {
        let key = PositionKey(key.0 & self.key_mask);
        let start = self.moves.partition_point(|(k, _, _)| *k < key);
        // A position's moves are few and follow at once: a second search over the whole
        // list would cost as many cache misses as the first.
        let len = self.moves[start..].iter().take_while(|(k, _, _)| *k == key).count();
        &self.moves[start..start + len]
    }
}
