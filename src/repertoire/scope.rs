//! Which opponent moves a repertoire covers. A Black repertoire against 1. e4 has
//! nothing to say about 1. d4: that is outside it, not a gap. The scope is a list of
//! lines from the start position (`scope = ["1. e4", "1. d4 Nf6 2. c4"]`); along them,
//! at each position where the opponent moves, only the lines' moves are in scope. Unset,
//! a Black repertoire's scope is inferred from its first moves (the opponent's first
//! moves it answers); a White repertoire's, and `scope = []`, is everything.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use shakmaty::san::San;
use shakmaty::{Chess, Position};

use super::{Repertoire, Side};
use crate::position;

/// The opponent moves in scope, by position.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Scope {
    /// The lines, as numbered SAN (empty: everything).
    pub lines: Vec<String>,
    /// Whether they were inferred from the repertoire's first moves.
    pub inferred: bool,
    /// Position (EPD) → the opponent moves (UCI) in scope there; positions not listed
    /// have every move in scope.
    #[serde(skip)]
    pub allowed: HashMap<String, BTreeSet<String>>,
}

impl Scope {
    /// Whether the opponent's move `uci` at `epd` is in scope.
    pub fn admits(&self, epd: &str, uci: &str) -> bool {
        self.allowed.get(epd).is_none_or(|moves| moves.contains(uci))
    }

    /// Whether anything is out of scope at `epd`.
    pub fn restricts(&self, epd: &str) -> bool {
        self.allowed.contains_key(epd)
    }

    /// How the report says it: `1. e4 (inferred from its first moves)`, or `every
    /// opponent move`.
    pub fn describe(&self) -> String {
        if self.lines.is_empty() {
            return "every opponent move".into();
        }
        let how = if self.inferred {
            " (inferred from its first moves; `scope` in pipeline.toml sets it)"
        } else {
            ""
        };
        format!("{}{how}", self.lines.join(", "))
    }
}

/// The scope of `rep`: `lines` as pipeline.toml gives them, or inferred when unset. A
/// line that is not legal chess is an error naming the line and the move.
pub fn scope(rep: &Repertoire, lines: Option<&[String]>) -> Result<Scope, String> {
    match lines {
        Some(lines) => declared(rep.color, lines),
        None if rep.color == Side::Black && !rep.nodes[0].moves.is_empty() => {
            let root = &rep.nodes[0];
            let moves: BTreeSet<String> = root.moves.iter().map(|m| m.uci.clone()).collect();
            let lines = root
                .moves
                .iter()
                .map(|m| super::numbered(0, std::slice::from_ref(&m.san)))
                .collect();
            Ok(Scope { lines, inferred: true, allowed: HashMap::from([(root.epd.clone(), moves)]) })
        }
        None => Ok(Scope::default()),
    }
}

/// The scope of the declared `lines` for a repertoire of `color`.
fn declared(color: Side, lines: &[String]) -> Result<Scope, String> {
    let played: Vec<Played> = lines.iter().map(|l| play(l)).collect::<Result<_, _>>()?;
    // A line that ends at a position puts everything after it in scope, whatever longer
    // lines through it say.
    let ended: BTreeSet<&str> = played.iter().map(|p| p.end.as_str()).collect();
    let mut allowed: HashMap<String, BTreeSet<String>> = HashMap::new();
    for line in &played {
        for (epd, uci, white_to_move) in &line.moves {
            if ended.contains(epd.as_str()) {
                break;
            }
            if !color.to_move(*white_to_move) {
                allowed.entry(epd.clone()).or_default().insert(uci.clone());
            }
        }
    }
    let lines = lines.iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    Ok(Scope { lines, inferred: false, allowed })
}

/// A line played out: each move as (the position before it, its UCI, whether White
/// moved), and the position it ends at.
struct Played {
    moves: Vec<(String, String, bool)>,
    end: String,
}

/// Plays a line of numbered SAN from the start.
fn play(line: &str) -> Result<Played, String> {
    let mut pos = Chess::default();
    let mut out = Vec::new();
    for token in line.split_whitespace() {
        // Move numbers: `1.`, `1...`, or glued to the move (`1.e4`).
        let san_text =
            token.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('.');
        if san_text.is_empty() {
            continue;
        }
        let san: San = san_text
            .parse()
            .map_err(|_| format!("scope line {line:?}: {san_text:?} is not a SAN move"))?;
        let m = san.to_move(&pos).map_err(|_| {
            format!("scope line {line:?}: {san_text} is not legal after {}", position::epd(&pos))
        })?;
        out.push((position::epd(&pos), position::uci(&m), pos.turn() == shakmaty::Color::White));
        pos.play_unchecked(m);
    }
    if out.is_empty() {
        return Err(format!("scope line {line:?} has no move"));
    }
    Ok(Played { moves: out, end: position::epd(&pos) })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";

    #[test]
    fn declared_lines_restrict_the_opponents_moves_along_them_only() {
        let s = declared(Side::Black, &["1. e4".into(), "1.d4 Nf6 2. c4".into()]).unwrap();
        assert!(s.admits(START, "e2e4") && s.admits(START, "d2d4") && !s.admits(START, "c2c4"));
        let after_d4_nf6 = "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq -";
        assert!(s.admits(after_d4_nf6, "c2c4") && !s.admits(after_d4_nf6, "g1f3"));
        // Black's own moves are never restricted; a shorter line opens what it reaches.
        let s = declared(Side::Black, &["1. d4".into(), "1. d4 Nf6 2. c4".into()]).unwrap();
        assert!(!s.restricts(after_d4_nf6), "{s:?}");
        assert_eq!(s.lines, ["1. d4", "1. d4 Nf6 2. c4"]);
        let err = declared(Side::Black, &["1. e4 e5 2. Ke3".into()]).unwrap_err();
        assert!(err.contains("Ke3 is not legal after"), "{err}");
    }
}
