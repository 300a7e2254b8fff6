//! The data contract between Phase 2 (game aggregation) and tree assembly.
//!
//! Phase 2 reduces every game collection to [`GameStats`]: counts per position and per
//! (position, move), keyed by [`PositionKey`] and [`MoveKey`]. Tree assembly walks these
//! from the start position; it never sees a game.

use serde::{Deserialize, Serialize};

use crate::position::{KeyMap, MoveKey, PositionKey};

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

impl MoveStats {
    /// Its seven counts in the order the runs and the counts state write them: White
    /// wins, draws, Black wins, rating sum, rated games, the opponent's sum and games.
    pub fn fields(&self) -> [u64; 7] {
        let o = &self.outcomes;
        [
            o.white,
            o.draws,
            o.black,
            self.rating_sum,
            self.rated_games,
            self.opponent_rating_sum,
            self.opponent_rated_games,
        ]
    }

    /// The statistics of seven counts read in [`MoveStats::fields`]' order, or `None` at
    /// the first one `next` has not.
    pub fn from_fields(mut next: impl FnMut() -> Option<u64>) -> Option<MoveStats> {
        let outcomes = Outcomes { white: next()?, draws: next()?, black: next()? };
        Some(MoveStats {
            outcomes,
            rating_sum: next()?,
            rated_games: next()?,
            opponent_rating_sum: next()?,
            opponent_rated_games: next()?,
        })
    }
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

    /// [`GameStats::moves_from`] for many lookups: one pass over the moves builds a map
    /// from each position to its run of moves, so that a lookup costs one probe instead of
    /// a binary search whose every step is a cache miss in a list of large records.
    pub fn move_index(&self) -> MoveIndex<'_> {
        let same_position = |a: &(PositionKey, _, _), b: &(PositionKey, _, _)| a.0 == b.0;
        // Sized once: growing the map rehashes it into fresh memory at each doubling.
        let positions = self.moves.chunk_by(same_position).count();
        let mut runs: KeyMap<PositionKey, (u32, u32)> =
            KeyMap::with_capacity_and_hasher(positions, Default::default());
        let mut start = 0;
        for run in self.moves.chunk_by(same_position) {
            runs.insert(hashed_half_first(run[0].0), (start as u32, run.len() as u32));
            start += run.len();
        }
        MoveIndex { stats: self, runs }
    }
}

/// `key` with its halves swapped: a counts state keeps only a key's top 72 bits
/// (`GameStats::key_mask`), and [`crate::position::KeyHasher`] hashes the low 64, which
/// would then be nearly all zeros. A rotation loses nothing, so equal keys stay equal.
fn hashed_half_first(key: PositionKey) -> PositionKey {
    PositionKey(key.0.rotate_left(64))
}

/// The moves of [`GameStats`] by position (see [`GameStats::move_index`]).
pub struct MoveIndex<'a> {
    stats: &'a GameStats,
    /// Per position (halves swapped: [`hashed_half_first`]), where its moves start in
    /// `stats.moves` and how many there are.
    runs: KeyMap<PositionKey, (u32, u32)>,
}

impl MoveIndex<'_> {
    /// All moves played from the position `key`, sorted by move key (as
    /// [`GameStats::moves_from`]).
    pub fn moves_from(&self, key: PositionKey) -> &[(PositionKey, MoveKey, MoveStats)] {
        let key = PositionKey(key.0 & self.stats.key_mask);
        match self.runs.get(&hashed_half_first(key)) {
            Some(&(start, len)) => &self.stats.moves[start as usize..(start + len) as usize],
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played(key: u128, m: u16, games: u64) -> (PositionKey, MoveKey, MoveStats) {
        let outcomes = Outcomes { white: games, draws: 0, black: 0 };
        (PositionKey(key), MoveKey(m), MoveStats { outcomes, ..Default::default() })
    }

    #[test]
    fn the_move_index_finds_what_the_binary_search_finds() {
        // Keys cut to their top bits, as a counts state's, differ only in the high half.
        let high = |k: u128| k << 100;
        let moves = vec![
            played(high(1), 1, 5),
            played(high(1), 2, 3),
            played(high(2), 7, 1),
            played(high(4), 3, 9),
        ];
        let mut stats = GameStats::new(Vec::new(), moves);
        stats.key_mask = !((1u128 << 56) - 1);
        let index = stats.move_index();
        for key in [high(1), high(2), high(3), high(4), high(4) | 12345, 0] {
            assert_eq!(
                index.moves_from(PositionKey(key)),
                stats.moves_from(PositionKey(key)),
                "{key:x}"
            );
        }
        assert_eq!(index.moves_from(PositionKey(high(1))).len(), 2);
    }
}
