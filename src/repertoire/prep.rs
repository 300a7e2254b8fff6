//! Preparing for an opponent (`okb prep`): from a player collection, the opponent's own
//! tree with one colour (the positions they reach most, their moves there and how they
//! scored), and against each of my repertoires for the other colour, where their games
//! left it and how those games went.

use std::collections::BTreeMap;

use serde::Serialize;

use super::games::PlayerGame;
use super::judge::{self, Verdict};
use super::{Repertoire, Side};
use crate::position::{KeyMap, PositionKey};

/// A move the opponent played at a position.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrepMove {
    /// The move in SAN.
    pub san: String,
    /// Games they played it in.
    pub games: u64,
    /// Their average score in those games with a known result.
    pub score: Option<f64>,
}

/// A position where the opponent was to move, with their moves (most played first).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrepPosition {
    /// The first line of their games that reached it (numbered SAN).
    pub line: String,
    /// Games that reached it.
    pub games: u64,
    /// Their moves.
    pub moves: Vec<PrepMove>,
}

/// Where the opponent's games left one of my repertoires.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leave {
    /// The line, their leaving move last.
    pub line: String,
    /// Games.
    pub games: u64,
    /// Their average score.
    pub score: Option<f64>,
}

/// Their games against one repertoire.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Against {
    /// The repertoire's name.
    pub repertoire: String,
    /// Verdicts of their games, seen from the repertoire (`opponent-deviation`: they left it).
    pub totals: Vec<(Verdict, judge::Total)>,
    /// Where they left it, most games first: games that followed it, then departed.
    pub leaves: Vec<Leave>,
    /// Games that never entered it (their first move is not one it answers), by that
    /// move, most games first.
    pub never_entered: Vec<Leave>,
}

/// What `okb prep` says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prep {
    /// The opponent.
    pub player: String,
    /// The colour they had.
    pub side: Side,
    /// Their games with that colour in the window (each distinct game once, unless
    /// `[games] deduplicate = false`).
    pub games: usize,
    /// Copies of those games left out (a game the collection's files hold more than once).
    pub repeats: usize,
    /// Positions where they were to move, most reached first.
    pub positions: Vec<PrepPosition>,
    /// Against my repertoires for the other colour.
    pub against: Vec<Against>,
}

#[derive(Default)]
struct Tally {
    line: String,
    games: u64,
    moves: BTreeMap<String, (u64, f64, u64)>,
}

/// Their tree: for each position where they were to move, their moves (`limit` positions).
fn positions(games: &[PlayerGame], limit: usize) -> Vec<PrepPosition> {
    let mut tally: KeyMap<PositionKey, Tally> = KeyMap::default();
    for g in games {
        let mut pos = shakmaty::Chess::default();
        let mut sans = Vec::new();
        for (ply, m) in g.moves.iter().enumerate() {
            let san = crate::position::san(&pos, m);
            if g.side.to_move(ply % 2 == 0) {
                let t = tally.entry(g.keys[ply]).or_default();
                if t.games == 0 {
                    t.line = super::numbered(0, &sans);
                }
                t.games += 1;
                let e = t.moves.entry(san.clone()).or_default();
                e.0 += 1;
                if let Some(s) = g.score() {
                    (e.1, e.2) = (e.1 + s, e.2 + 1);
                }
            }
            shakmaty::Position::play_unchecked(&mut pos, *m);
            sans.push(san);
        }
    }
    let mut out: Vec<PrepPosition> = tally
        .into_values()
        .map(|t| {
            let mut moves: Vec<PrepMove> = t
                .moves
                .into_iter()
                .map(|(san, (games, sum, known))| PrepMove {
                    san,
                    games,
                    score: (known > 0).then(|| sum / known as f64),
                })
                .collect();
            moves.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.san.cmp(&b.san)));
            PrepPosition { line: t.line, games: t.games, moves }
        })
        .collect();
    out.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.line.cmp(&b.line)));
    out.truncate(limit);
    out
}

/// Their games judged against `rep` (which plays the other colour).
fn against(rep: &Repertoire, games: &[PlayerGame]) -> Against {
    let max_ply = usize::from(rep.depth()) + 1;
    // The judge sees the repertoire's side; their games are judged from my side.
    let mine: Vec<PlayerGame> =
        games.iter().cloned().map(|g| PlayerGame { side: rep.color, ..g }).collect();
    let rows = judge::rows(rep, mine, max_ply);
    // An unmatched game left at White's first move: theirs only when they had White, and
    // then it never was in the repertoire (not a departure from it).
    let never = rep.color == Side::Black;
    let departed = rows.iter().filter(|r| r.verdict == Verdict::OpponentDeviation);
    let unmatched = rows.iter().filter(|r| never && r.verdict == Verdict::Unmatched);
    Against {
        repertoire: rep.name.clone(),
        totals: judge::totals(&rows),
        leaves: tally(departed),
        never_entered: tally(unmatched),
    }
}

/// The rows by line, with the opponent's score (a row's score is the repertoire side's),
/// most games first.
fn tally<'r>(rows: impl Iterator<Item = &'r judge::Row>) -> Vec<Leave> {
    let mut by_line: BTreeMap<String, (u64, f64, u64)> = BTreeMap::new();
    for r in rows {
        let e = by_line.entry(r.line.clone()).or_default();
        e.0 += 1;
        if let Some(s) = r.game.score() {
            (e.1, e.2) = (e.1 + 1.0 - s, e.2 + 1);
        }
    }
    let mut leaves: Vec<Leave> = by_line
        .into_iter()
        .map(|(line, (games, sum, known))| Leave {
            line,
            games,
            score: (known > 0).then(|| sum / known as f64),
        })
        .collect();
    leaves.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.line.cmp(&b.line)));
    leaves
}

/// The preparation against `player`'s `games` with `side` (already filtered, `repeats`
/// copies left out), against `repertoires` (those for the other colour are used),
/// `limit` positions and leaves.
pub fn prepare(
    player: &str,
    side: Side,
    (games, repeats): (&[PlayerGame], usize),
    repertoires: &[Repertoire],
    limit: usize,
) -> Prep {
    let against = repertoires
        .iter()
        .filter(|r| r.color != side)
        .map(|r| {
            let mut a = against(r, games);
            a.leaves.truncate(limit);
            a.never_entered.truncate(limit);
            a
        })
        .collect();
    Prep {
        player: player.to_string(),
        side,
        games: games.len(),
        repeats,
        positions: positions(games, limit),
        against,
    }
}

fn percent(score: Option<f64>) -> String {
    score.map_or("-".into(), |s| format!("{:.0}%", s * 100.0))
}

impl Prep {
    /// The readable form.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} with {}: {} games{}\n\nTheir moves, most reached positions first:\n",
            self.player,
            self.side.word(),
            self.games,
            judge::repeated(self.repeats)
        );
        for p in &self.positions {
            let moves: Vec<String> = p
                .moves
                .iter()
                .take(5)
                .map(|m| format!("{} {} ({})", m.san, m.games, percent(m.score)))
                .collect();
            let line = if p.line.is_empty() { "start".to_string() } else { p.line.clone() };
            out.push_str(&format!("  {:>5}  {line}: {}\n", p.games, moves.join(", ")));
        }
        for a in &self.against {
            out.push_str(&format!("\nAgainst repertoire {}:\n", a.repertoire));
            for (v, t) in &a.totals {
                let who = match v {
                    Verdict::OpponentDeviation => "they left it",
                    Verdict::MyDeviation => "their opponent left it",
                    Verdict::BookEnded => "the prepared line ended",
                    Verdict::Completed => "the game ended in book",
                    Verdict::Unmatched => "another opening at once",
                };
                out.push_str(&format!("  {:>5} games  {who}\n", t.games));
            }
            out.push_str("  Where they left it (their score):\n");
            for l in &a.leaves {
                out.push_str(&format!("  {:>5}  {:>4}  {}\n", l.games, percent(l.score), l.line));
            }
            if !a.never_entered.is_empty() {
                out.push_str(
                    "  Never in it: their first move is not one it answers (their score):\n",
                );
                for l in &a.never_entered {
                    out.push_str(&format!(
                        "  {:>5}  {:>4}  {}\n",
                        l.games,
                        percent(l.score),
                        l.line
                    ));
                }
            }
        }
        out
    }
}
