//! `GET /player`: a player's games at a position in the Lichess explorer's `/player`
//! shape (lichess-org/api's `OpeningExplorerPlayer`), from the store's player
//! collections ([`crate::repertoire::collection`]).
//!
//! As Lichess's player indexer counts: a game counts at a position it reached with a
//! move played from there (the last such move when the game came back to it), within its
//! first 50 plies; a position's `white`/`draws`/`black` sum its moves. Lichess answers a
//! stream that grows while it indexes; okb's collections are indexed when built, so the
//! stream is one line with `queuePosition` 0. Departures, also stated in the OpenAPI
//! document: a player is named as the collection's players are matched (initials,
//! aliases; an unknown name answers zero counts, as Lichess does for a player without
//! games); games without a `TimeControl` (over-the-board) are `classical`, and rated
//! unless their Event says "Casual"; an unknown month counts as January; ratings of 0
//! are unknown and leave a game out of `averageOpponentRating` and `performance` (0
//! when no game has a rated opponent).

use std::collections::HashMap;

use serde::Serialize;
use shakmaty::{Chess, Position};

use super::masters::{ExplorerOpening, Player};
use crate::explorer_index::speed_name;
use crate::graph::Graph;
use crate::position::{MoveKey, PositionKey};
use crate::repertoire::Side;
use crate::repertoire::collection::{CollectionGame, Collections};
use crate::repertoire::players::Matcher;

/// Recent games: default and maximum (Lichess's).
pub const RECENT_GAMES: usize = 8;
/// The packed speed of a game without `TimeControl`: classical.
const OVER_THE_BOARD: u8 = 5;

/// A game with the positions it passed through.
struct Indexed {
    game: CollectionGame,
    /// Keys after 0, 1, … plies (one more than moves).
    keys: Vec<PositionKey>,
}

/// The player collections as the server keeps them.
pub struct Players {
    matcher: Matcher,
    games: Vec<Indexed>,
    /// Rows of each (player, side), in collection order.
    by_player: HashMap<(String, Side), Vec<u32>>,
}

/// A player query's games through the position: (when played, game row, move played).
type RecentGames = Vec<(u64, u32, MoveKey)>;

impl Players {
    /// Indexes `collections`; a game whose moves do not replay is cut where they stop.
    pub fn new(collections: Collections) -> Players {
        let specs: Vec<_> = collections.players.iter().map(|p| p.spec()).collect();
        let mut by_player: HashMap<(String, Side), Vec<u32>> = HashMap::new();
        let mut games = Vec::with_capacity(collections.games.len());
        for (row, mut game) in collections.games.into_iter().enumerate() {
            let mut pos = Chess::default();
            let mut keys = vec![crate::position::key(&pos)];
            for (i, mv) in game.moves.iter().enumerate() {
                let Some(m) = mv.to_move(&pos) else {
                    game.moves.truncate(i);
                    break;
                };
                keys.push(crate::position::child_key(&pos, keys[i], &m));
                pos.play_unchecked(m);
            }
            by_player.entry((game.player.clone(), game.side)).or_default().push(row as u32);
            games.push(Indexed { game, keys });
        }
        Players { matcher: Matcher::new(&specs), games, by_player }
    }

    /// A listed player's name (for the OpenAPI document's examples).
    pub fn some_player(&self) -> Option<&str> {
        self.games.first().map(|g| g.game.player.as_str())
    }
}

/// Which games count and what an answer lists.
#[derive(Clone, Debug)]
pub struct PlayerQuery {
    /// The player as asked.
    pub player: String,
    /// Their side.
    pub side: Side,
    /// Admitted modes: (rated, casual); `None` admits both.
    pub modes: Option<(bool, bool)>,
    /// Bit `1 << code` per admitted packed speed; `None` admits all.
    pub speeds: Option<u16>,
    /// Months as `year * 12 + month - 1`, inclusive.
    pub months: Option<(u32, u32)>,
    /// Most moves.
    pub moves: usize,
    /// Most recent games.
    pub recent_games: usize,
}

impl PlayerQuery {
    fn admits(&self, c: &CollectionGame) -> bool {
        let g = &c.game;
        let speed = if g.speed == 0 { OVER_THE_BOARD } else { g.speed };
        let month = u32::from(g.year) * 12 + u32::from(g.month.max(1)) - 1;
        self.modes.is_none_or(|(rated, casual)| if c.rated() { rated } else { casual })
            && self.speeds.is_none_or(|mask| mask & (1 << speed) != 0)
            && self.months.is_none_or(|(a, b)| (a..=b).contains(&month))
    }
}

/// A game as `/player` shows it (lichess-org/api's `OpeningExplorerPlayerGame`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PlayerGameJson {
    /// Game id (as in `/masters` and `/lichess`).
    pub id: String,
    /// `"white"`, `"black"`, or `null` for a draw.
    pub winner: Option<&'static str>,
    /// Speed (`classical` for a game without `TimeControl`).
    pub speed: &'static str,
    /// `rated` or `casual`.
    pub mode: &'static str,
    /// White.
    pub white: Player,
    /// Black.
    pub black: Player,
    /// Year.
    pub year: u32,
    /// `YYYY-MM` (January when the month is unknown).
    pub month: String,
}

/// A recent game with the move it played from the position.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PlayerGameRow {
    /// The move in UCI.
    pub uci: String,
    /// The game.
    #[serde(flatten)]
    pub game: PlayerGameJson,
}

/// One move of the answer.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PlayerMove {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// The opponents' average rating over games with a rated opponent (0: none).
    pub average_opponent_rating: u32,
    /// The player's performance in those games (FIDE's table, as Lichess; 0: none).
    pub performance: i32,
    /// White wins.
    pub white: u64,
    /// Draws.
    pub draws: u64,
    /// Black wins.
    pub black: u64,
    /// The game, when exactly one game played the move.
    pub game: Option<PlayerGameJson>,
    /// The opening the move reaches (the Lichess taxonomy's own name), if any.
    pub opening: Option<ExplorerOpening>,
}

/// The answer (one line of the stream).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PlayerAnswer {
    /// The position's opening by Lichess's rule (see [`super::masters::ExplorerAnswer`]).
    pub opening: Option<ExplorerOpening>,
    /// Players waiting to be indexed first: always 0.
    pub queue_position: u32,
    /// White wins.
    pub white: u64,
    /// Draws.
    pub draws: u64,
    /// Black wins.
    pub black: u64,
    /// Moves, most played first (then by UCI).
    pub moves: Vec<PlayerMove>,
    /// The latest games, each with its move.
    pub recent_games: Vec<PlayerGameRow>,
}

/// Sums of one move.
#[derive(Default)]
struct Tally {
    outcomes: [u64; 3],
    /// Outcomes of the games with a rated opponent, and the ratings' sum.
    rated: [u64; 3],
    rating_sum: u64,
    /// The latest game (row).
    latest: Option<u32>,
}

impl Tally {
    fn games(&self) -> u64 {
        self.outcomes.iter().sum()
    }

    fn average(&self) -> Option<f64> {
        let n: u64 = self.rated.iter().sum();
        (n > 0).then(|| self.rating_sum as f64 / n as f64)
    }

    /// Lichess's performance: FIDE's rating differences by score, interpolated.
    fn performance(&self, side: Side) -> i32 {
        const DELTAS: [f64; 101] = [
            -800.0, -677.0, -589.0, -538.0, -501.0, -470.0, -444.0, -422.0, -401.0, -383.0, -366.0,
            -351.0, -336.0, -322.0, -309.0, -296.0, -284.0, -273.0, -262.0, -251.0, -240.0, -230.0,
            -220.0, -211.0, -202.0, -193.0, -184.0, -175.0, -166.0, -158.0, -149.0, -141.0, -133.0,
            -125.0, -117.0, -110.0, -102.0, -95.0, -87.0, -80.0, -72.0, -65.0, -57.0, -50.0, -43.0,
            -36.0, -29.0, -21.0, -14.0, -7.0, 0.0, 7.0, 14.0, 21.0, 29.0, 36.0, 43.0, 50.0, 57.0,
            65.0, 72.0, 80.0, 87.0, 95.0, 102.0, 110.0, 117.0, 125.0, 133.0, 141.0, 149.0, 158.0,
            166.0, 175.0, 184.0, 193.0, 202.0, 211.0, 220.0, 230.0, 240.0, 251.0, 262.0, 273.0,
            284.0, 296.0, 309.0, 322.0, 336.0, 351.0, 366.0, 383.0, 401.0, 422.0, 444.0, 470.0,
            501.0, 538.0, 589.0, 677.0, 800.0,
        ];
        let Some(average) = self.average() else { return 0 };
        let [white, draws, black] = self.rated;
        let wins = if side == Side::White { white } else { black };
        let p = (100 * wins + 50 * draws) as f64 / (white + draws + black) as f64;
        let i = p.trunc() as usize;
        (average
            + DELTAS[i] * (1.0 - p.fract())
            + DELTAS.get(i + 1).copied().unwrap_or(800.0) * p.fract())
        .round() as i32
    }
}

fn outcome(winner: u8) -> usize {
    match winner {
        1 => 0,
        2 => 2,
        _ => 1,
    }
}

impl Players {
    fn json(&self, row: u32) -> PlayerGameJson {
        let c = &self.games[row as usize].game;
        let g = &c.game;
        PlayerGameJson {
            id: g.id.clone(),
            winner: [Some("white"), None, Some("black")][outcome(g.winner)],
            speed: speed_name(if g.speed == 0 { OVER_THE_BOARD } else { g.speed })
                .unwrap_or("classical"),
            mode: if c.rated() { "rated" } else { "casual" },
            white: Player { name: g.white.clone(), rating: u32::from(g.white_rating) },
            black: Player { name: g.black.clone(), rating: u32::from(g.black_rating) },
            year: u32::from(g.year),
            month: format!("{:04}-{:02}", g.year, g.month.max(1)),
        }
    }

    /// Each move's sums over the admitted games of `rows` at position `key`, and those
    /// games as (played, row, move).
    fn tally(
        &self,
        rows: &[u32],
        key: PositionKey,
        q: &PlayerQuery,
    ) -> (HashMap<MoveKey, Tally>, RecentGames) {
        let mut tallies: HashMap<MoveKey, Tally> = HashMap::new();
        let mut recent = Vec::new();
        for &row in rows {
            let g = &self.games[row as usize];
            if !q.admits(&g.game) {
                continue;
            }
            // The last move played from the position (Lichess removes loops so).
            let Some(i) = (0..g.game.moves.len()).rev().find(|&i| g.keys[i] == key) else {
                continue;
            };
            let (mv, game) = (g.game.moves[i], &g.game.game);
            let t = tallies.entry(mv).or_default();
            let o = outcome(game.winner);
            t.outcomes[o] += 1;
            let opponent =
                if q.side == Side::White { game.black_rating } else { game.white_rating };
            if opponent > 0 {
                t.rated[o] += 1;
                t.rating_sum += u64::from(opponent);
            }
            let played = |r: u32| (self.games[r as usize].game.game.played, std::cmp::Reverse(r));
            if t.latest.is_none_or(|l| played(row) > played(l)) {
                t.latest = Some(row);
            }
            recent.push((game.played, row, mv));
        }
        (tallies, recent)
    }

    /// The games of `q` at `pos`, one answer named `opening` (graph nodes give the
    /// moves' openings).
    pub fn answer(
        &self,
        graph: &Graph,
        find: impl Fn(&Chess) -> Option<u32>,
        pos: &Chess,
        opening: Option<ExplorerOpening>,
        q: &PlayerQuery,
    ) -> PlayerAnswer {
        let mut answer = PlayerAnswer {
            opening,
            queue_position: 0,
            white: 0,
            draws: 0,
            black: 0,
            moves: Vec::new(),
            recent_games: Vec::new(),
        };
        let Some(player) = self.matcher.find(&q.player) else { return answer };
        let Some(rows) = self.by_player.get(&(player.to_string(), q.side)) else { return answer };
        let (tallies, mut recent) = self.tally(rows, crate::position::key(pos), q);
        let mut moves: Vec<(MoveKey, Tally, String)> = tallies
            .into_iter()
            .filter_map(|(mv, t)| Some((mv, t, crate::position::uci(&mv.to_move(pos)?))))
            .collect();
        moves.sort_by(|a, b| b.1.games().cmp(&a.1.games()).then_with(|| a.2.cmp(&b.2)));
        for (mv, t, uci) in moves.iter() {
            [answer.white, answer.draws, answer.black] = [
                answer.white + t.outcomes[0],
                answer.draws + t.outcomes[1],
                answer.black + t.outcomes[2],
            ];
            if answer.moves.len() >= q.moves {
                continue;
            }
            let m = mv.to_move(pos).expect("kept moves are legal here");
            let mut child = pos.clone();
            child.play_unchecked(m);
            answer.moves.push(PlayerMove {
                uci: uci.clone(),
                san: crate::position::san(pos, &m),
                average_opponent_rating: t.average().map_or(0, |a| a.round() as u32),
                performance: t.performance(q.side),
                white: t.outcomes[0],
                draws: t.outcomes[1],
                black: t.outcomes[2],
                game: t.latest.filter(|_| t.games() == 1).map(|r| self.json(r)),
                opening: find(&child).and_then(|i| super::masters::move_opening(graph.node(i))),
            });
        }
        recent.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        answer.recent_games = recent
            .into_iter()
            .take(q.recent_games)
            .filter_map(|(_, row, mv)| {
                Some(PlayerGameRow {
                    uci: crate::position::uci(&mv.to_move(pos)?),
                    game: self.json(row),
                })
            })
            .collect();
        answer
    }
}
