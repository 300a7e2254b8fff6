//! The explorer's answer for one position, as the Lichess opening explorer API writes it
//! (`/masters` and `/lichess`), read strictly: an answer that is not explorer JSON, or
//! whose moves are not legal in the position asked about, is an error, never an empty
//! node.

use serde::Deserialize;
use shakmaty::{Chess, Move};

use crate::games::stats::Outcomes;

/// An opening as the explorer names it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Opening {
    /// ECO code.
    pub eco: String,
    /// Full name.
    pub name: String,
}

/// One move of an answer.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerMove {
    /// The move in UCI (castling as king-takes-rook or king-two-squares: both are read).
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// Average rating of the games' players (0: unknown).
    #[serde(default)]
    pub average_rating: u64,
    /// White wins after the move.
    pub white: u64,
    /// Draws after the move.
    pub draws: u64,
    /// Black wins after the move.
    pub black: u64,
}

impl AnswerMove {
    /// The games in which the move was played.
    pub fn outcomes(&self) -> Outcomes {
        Outcomes { white: self.white, draws: self.draws, black: self.black }
    }
}

/// The whole answer for one position.
#[derive(Clone, Debug, Deserialize)]
pub struct Answer {
    /// White wins from the position.
    pub white: u64,
    /// Draws from the position.
    pub draws: u64,
    /// Black wins from the position.
    pub black: u64,
    /// Moves played from the position.
    pub moves: Vec<AnswerMove>,
    /// The position's opening, `null` where the explorer names none.
    #[serde(default)]
    pub opening: Option<Opening>,
}

impl Answer {
    /// The games that reached the position.
    pub fn outcomes(&self) -> Outcomes {
        Outcomes { white: self.white, draws: self.draws, black: self.black }
    }
}

/// An answer that is not what the explorer writes.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AnswerError {
    /// Not JSON of the explorer's shape.
    #[error("not explorer JSON: {0}")]
    Shape(String),
    /// A move that is not legal in the position.
    #[error("move {uci} ({san}) is not legal in the position asked about")]
    IllegalMove {
        /// The move's UCI.
        uci: String,
        /// The move's SAN.
        san: String,
    },
}

/// Reads `body` as the explorer's answer for `pos`, with each move resolved in it.
pub fn parse(body: &[u8], pos: &Chess) -> Result<(Answer, Vec<Move>), AnswerError> {
    let answer: Answer =
        serde_json::from_slice(body).map_err(|e| AnswerError::Shape(e.to_string()))?;
    let moves = answer.moves.iter().map(|m| resolve(pos, m)).collect::<Result<Vec<_>, _>>()?;
    Ok((answer, moves))
}

/// The legal move `m` names: its UCI (either castling notation), else its SAN.
fn resolve(pos: &Chess, m: &AnswerMove) -> Result<Move, AnswerError> {
    let by_uci = m.uci.parse::<shakmaty::uci::UciMove>().ok().and_then(|u| u.to_move(pos).ok());
    let by_san = || m.san.parse::<shakmaty::san::San>().ok().and_then(|s| s.to_move(pos).ok());
    by_uci
        .or_else(by_san)
        .ok_or_else(|| AnswerError::IllegalMove { uci: m.uci.clone(), san: m.san.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = r#"{"white":10,"draws":5,"black":3,"moves":[
        {"uci":"e2e4","san":"e4","averageRating":2400,"white":6,"draws":2,"black":1,"game":null,"opening":null},
        {"uci":"d2d4","san":"d4","averageRating":0,"white":4,"draws":3,"black":2}],
        "topGames":[],"opening":null}"#;

    #[test]
    fn an_answer_is_read_with_its_moves_resolved() {
        let (answer, moves) = parse(START.as_bytes(), &Chess::default()).unwrap();
        assert_eq!(answer.outcomes().games(), 18);
        assert_eq!(moves.len(), 2);
        assert_eq!(crate::position::uci(&moves[0]), "e2e4");
        assert!(answer.opening.is_none());
    }

    #[test]
    fn castling_is_read_in_both_notations() {
        let pos = crate::position::parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        for uci in ["e1g1", "e1h1"] {
            let body = format!(
                r#"{{"white":1,"draws":0,"black":0,"moves":[{{"uci":"{uci}","san":"O-O","white":1,"draws":0,"black":0}}]}}"#
            );
            let (_, moves) = parse(body.as_bytes(), &pos).unwrap();
            assert!(moves[0].is_castle(), "{uci}");
        }
    }

    #[test]
    fn bad_answers_are_errors_not_empty_nodes() {
        assert!(matches!(
            parse(b"<html>rate limited</html>", &Chess::default()),
            Err(AnswerError::Shape(_))
        ));
        assert!(matches!(
            parse(br#"{"white":1,"draws":0}"#, &Chess::default()),
            Err(AnswerError::Shape(_))
        ));
        assert!(matches!(
            parse(br#"{"white":-1,"draws":0,"black":0,"moves":[]}"#, &Chess::default()),
            Err(AnswerError::Shape(_))
        ));
        let illegal = br#"{"white":1,"draws":0,"black":0,"moves":[{"uci":"e2e5","san":"e5","white":1,"draws":0,"black":0}]}"#;
        assert_eq!(
            parse(illegal, &Chess::default()).unwrap_err(),
            AnswerError::IllegalMove { uci: "e2e5".into(), san: "e5".into() }
        );
    }
}
