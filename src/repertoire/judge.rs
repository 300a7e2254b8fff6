//! Each of a player's games judged against the repertoire: where it left the prepared
//! lines and who left them.
//!
//! A game stays in book while every position it reaches is a repertoire position (by
//! identity: a transposition into a prepared line stays in book). It ends in one of:
//! - `unmatched`: its first move already leaves the repertoire (another opening);
//! - `my-deviation` / `opponent-deviation`: the repertoire's side (the player) or the
//!   opponent played a move to a position the repertoire does not have;
//! - `book-ended`: it reached a position the repertoire has no move from (the prepared
//!   line ends there);
//! - `completed`: the game itself ended inside the book.

use serde::Serialize;

use super::games::PlayerGame;
use super::{RepNode, Repertoire};
use crate::position::{KeyMap, PositionKey};

/// How a game went against the repertoire.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The player left the prepared lines.
    MyDeviation,
    /// The opponent left them.
    OpponentDeviation,
    /// The prepared line ended while the game went on.
    BookEnded,
    /// The game ended inside the book.
    Completed,
    /// The first move already left the repertoire.
    Unmatched,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Verdict; 5] = [
        Verdict::MyDeviation,
        Verdict::OpponentDeviation,
        Verdict::BookEnded,
        Verdict::Completed,
        Verdict::Unmatched,
    ];

    /// The word used in reports.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::MyDeviation => "my-deviation",
            Verdict::OpponentDeviation => "opponent-deviation",
            Verdict::BookEnded => "book-ended",
            Verdict::Completed => "completed",
            Verdict::Unmatched => "unmatched",
        }
    }
}

/// A verdict and where it happened: the ply of the move that left the book (for
/// deviations and unmatched games), or the last ply in book.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Judgment {
    /// The verdict.
    pub verdict: Verdict,
    /// For deviations and unmatched games the leaving move's ply (1-based); otherwise
    /// the plies played in book.
    pub ply: usize,
}

/// The repertoire's positions by key, for judging many games.
pub struct Judge<'r> {
    rep: &'r Repertoire,
    index: KeyMap<PositionKey, u32>,
}

impl<'r> Judge<'r> {
    /// A judge for `rep`.
    pub fn new(rep: &'r Repertoire) -> Judge<'r> {
        Judge { rep, index: rep.index() }
    }

    /// The node of a position, if the repertoire has it.
    fn node(&self, key: PositionKey) -> Option<&RepNode> {
        self.index.get(&key).map(|&i| &self.rep.nodes[i as usize])
    }

    /// Judges the positions `keys` of a game (after 0, 1, … plies); `ended` says whether
    /// the last key is the game's end (rather than where reading stopped).
    pub fn judge(&self, keys: &[PositionKey], ended: bool) -> Judgment {
        for (ply, pair) in keys.windows(2).enumerate() {
            // Every position but the first was checked as the previous pair's second; the
            // first is the start position, node 0.
            let Some(node) = self.node(pair[0]) else {
                return Judgment { verdict: Verdict::Unmatched, ply };
            };
            if node.moves.is_empty() {
                return Judgment { verdict: Verdict::BookEnded, ply };
            }
            if self.node(pair[1]).is_none() {
                let verdict = if ply == 0 {
                    Verdict::Unmatched
                } else if self.rep.mine(node) {
                    Verdict::MyDeviation
                } else {
                    Verdict::OpponentDeviation
                };
                return Judgment { verdict, ply: ply + 1 };
            }
        }
        let last = keys.len().saturating_sub(1);
        match keys.last().and_then(|k| self.node(*k)) {
            Some(node) if node.moves.is_empty() => {
                Judgment { verdict: Verdict::BookEnded, ply: last }
            }
            _ if ended => Judgment { verdict: Verdict::Completed, ply: last },
            // Reading stops one ply past the repertoire's depth, so this is not reached
            // for games read that far; a shorter read is judged as far as it goes.
            _ => Judgment { verdict: Verdict::BookEnded, ply: last },
        }
    }

    /// Judges a player's game read `max_ply` plies deep (or until it left the book).
    pub fn judge_game(&self, game: &PlayerGame, max_ply: usize) -> Judgment {
        self.judge(&game.keys, game.moves.len() < max_ply)
    }

    /// The repertoire's positions, for reading games only as far as they stay in book.
    pub fn book(&self) -> &KeyMap<PositionKey, u32> {
        &self.index
    }
}

/// One judged game, as reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The game (names, date, result, file and line).
    #[serde(flatten)]
    pub game: PlayerGame,
    /// The verdict.
    pub verdict: Verdict,
    /// See [`Judgment::ply`].
    pub ply: usize,
    /// The move that left the book (SAN), for deviations and unmatched games.
    pub deviation: Option<String>,
    /// The game's moves to that move (or to the last ply in book), numbered SAN. Written
    /// as `moves` in JSON: the flattened game's `line` is its line in its file.
    #[serde(rename = "moves")]
    pub line: String,
}

/// Judges `games` (the player's side must be the repertoire's; others are skipped),
/// read `max_ply` plies deep.
pub fn rows(rep: &Repertoire, games: Vec<PlayerGame>, max_ply: usize) -> Vec<Row> {
    let judge = Judge::new(rep);
    games
        .into_iter()
        .filter(|g| g.side == rep.color)
        .map(|game| {
            let j = judge.judge_game(&game, max_ply);
            let sans = sans(&game.moves[..j.ply.min(game.moves.len())]);
            let leaves = !matches!(j.verdict, Verdict::BookEnded | Verdict::Completed);
            let deviation = leaves.then(|| sans.last().cloned()).flatten();
            Row { line: super::numbered(0, &sans), verdict: j.verdict, ply: j.ply, deviation, game }
        })
        .collect()
}

/// SAN of moves played from the start position.
fn sans(moves: &[shakmaty::Move]) -> Vec<String> {
    let mut pos = shakmaty::Chess::default();
    moves
        .iter()
        .map(|m| {
            let san = crate::position::san(&pos, m);
            shakmaty::Position::play_unchecked(&mut pos, *m);
            san
        })
        .collect()
}

/// Games and the player's average score for one verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Total {
    /// Games with this verdict.
    pub games: usize,
    /// The player's average score in those with a known result.
    pub score: Option<f64>,
    /// Average ply of the verdict.
    pub mean_ply: Option<f64>,
}

/// Totals per verdict, in [`Verdict::ALL`] order.
pub fn totals(rows: &[Row]) -> Vec<(Verdict, Total)> {
    Verdict::ALL
        .iter()
        .map(|&v| {
            let of: Vec<&Row> = rows.iter().filter(|r| r.verdict == v).collect();
            let scores: Vec<f64> = of.iter().filter_map(|r| r.game.score()).collect();
            let mean =
                |xs: &[f64]| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
            let plies: Vec<f64> = of.iter().map(|r| r.ply as f64).collect();
            (v, Total { games: of.len(), score: mean(&scores), mean_ply: mean(&plies) })
        })
        .collect()
}

/// `, N repeats skipped` when copies of games already judged were left out.
pub fn repeated(repeats: usize) -> String {
    if repeats == 0 { String::new() } else { format!(", {repeats} repeats skipped") }
}

/// `games.json`; `repeats`: the copies of games already judged that were left out.
pub fn to_json(rep: &Repertoire, rows: &[Row], repeats: usize) -> Vec<u8> {
    let totals: serde_json::Map<String, serde_json::Value> = totals(rows)
        .into_iter()
        .map(|(v, t)| (v.word().to_string(), serde_json::json!(t)))
        .collect();
    let value = serde_json::json!({"repertoire": rep.name, "color": rep.color, "games": rows.len(), "repeats": repeats, "totals": totals, "judged": rows});
    let mut bytes = serde_json::to_vec_pretty(&value).expect("rows serialize");
    bytes.push(b'\n');
    bytes
}

/// `games.txt`: totals (and the `repeats` left out, if any), then one row per game.
pub fn to_text(rep: &Repertoire, rows: &[Row], repeats: usize) -> Vec<u8> {
    let mut out = format!(
        "Repertoire {} ({}): {} games of the player judged{}\n\n",
        rep.name,
        rep.color.word(),
        rows.len(),
        repeated(repeats)
    );
    out.push_str(&format!("{:<19}  {:>6}  {:>6}  {:>6}\n", "verdict", "games", "score", "ply"));
    for (v, t) in totals(rows) {
        let score = t.score.map_or("-".into(), |s| format!("{:.1}%", s * 100.0));
        let ply = t.mean_ply.map_or("-".into(), |p| format!("{p:.1}"));
        out.push_str(&format!("{:<19}  {:>6}  {:>6}  {:>6}\n", v.word(), t.games, score, ply));
    }
    out.push('\n');
    for r in rows {
        let g = &r.game;
        out.push_str(&format!(
            "{}:{}  {} - {}  {}  {}  {:<18} ply {:>2} {:<7} {}\n",
            g.file,
            g.line,
            g.white,
            g.black,
            g.date,
            g.result,
            r.verdict.word(),
            r.ply,
            r.deviation.as_deref().unwrap_or("-"),
            r.line
        ));
    }
    out.into_bytes()
}
