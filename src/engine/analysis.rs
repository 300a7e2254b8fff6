//! The per-position engine result as okb stores and exports it.
//!
//! Everything here is from White's point of view, except the two flags, which judge the
//! move that led to the position (see [`Analysis::is_dubious`]).

use serde::{Deserialize, Serialize};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, Position};

use super::EngineError;
use super::uci::{Bound, Score, SearchOutput};
use crate::position;

/// Stored evaluations are capped here; a mate is stored as exactly ±`MATE_CAP`.
pub const MATE_CAP: i32 = 1000;
/// Mover's eval at or below which the move that led to the position is dubious.
pub const DUBIOUS_CP: i32 = -50;
/// Mover's eval at or below which the move that led to the position is busted.
pub const BUSTED_CP: i32 = -150;
/// A mate against the mover in at most this many moves makes the move busted.
pub const BUSTED_MATE: i32 = 10;

/// One of the top lines of a position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    /// 1-based rank of the line.
    pub multipv: u32,
    /// Depth the line was searched to.
    pub depth: u32,
    /// Evaluation in centipawns from White's point of view, capped like
    /// [`Analysis::stockfish_eval`].
    pub eval: i32,
    /// Mate distance in moves from White's point of view (positive: White mates), if the
    /// engine reported a mate; `Some(0)` when the side to move is already checkmated.
    pub mate: Option<i32>,
    /// Whether the engine gave only a bound for this line (never for a finished search
    /// of Stockfish; kept so odd engines are visible).
    pub bound: Option<Bound>,
    /// The line in UCI notation (cut at the first move that is not legal).
    pub pv_uci: Vec<String>,
    /// The same line in SAN.
    pub pv_san: Vec<String>,
}

/// The engine annotation of one position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Analysis {
    /// Evaluation in centipawns from White's point of view. Centipawn scores are clamped
    /// to ±999 and mates stored as ±1000, so ±1000 always means a forced mate.
    pub stockfish_eval: i32,
    /// Raw mate distance in moves from White's point of view (positive: White mates), if
    /// the best line is a mate; `Some(0)` when the side to move is checkmated.
    pub stockfish_mate: Option<i32>,
    /// Depth of the best line.
    pub stockfish_depth: u32,
    /// Best move in SAN; `None` when the position has no legal move.
    pub best_move_san: Option<String>,
    /// Best move in UCI notation; `None` when the position has no legal move.
    pub best_move_uci: Option<String>,
    /// The top lines, best first (as many as `multipv`, fewer when there are fewer moves).
    pub lines: Vec<Line>,
    /// The move that led here is dubious for the side that made it (the side *not* to
    /// move): its eval is ≤ −50 cp from that side's point of view.
    pub is_dubious: bool,
    /// The move that led here is busted for the side that made it: ≤ −150 cp from its
    /// point of view, or a mate in ≤ 10 against it.
    pub is_busted: bool,
    /// Nodes the engine searched (deterministic with `new_game`, otherwise not).
    pub nodes: u64,
}

/// Converts an engine score (side to move's view) to White's view: `(eval, mate)`.
fn white_view(score: Score, turn: Color) -> (i32, Option<i32>) {
    let sign = if turn == Color::White { 1 } else { -1 };
    match score {
        Score::Cp(cp) => (sign * cp.clamp(-(MATE_CAP - 1), MATE_CAP - 1), None),
        // Mate 0 is "side to move is mated": the sign lives in the eval, not the distance.
        Score::Mate(0) => (-sign * MATE_CAP, Some(0)),
        Score::Mate(n) => (sign * n.signum() * MATE_CAP, Some(sign * n)),
    }
}

/// The UCI line turned into legal moves from `pos`, cut at the first illegal one.
fn legal_line<'a>(
    pos: &Chess,
    pv: impl IntoIterator<Item = &'a str>,
) -> (Vec<String>, Vec<String>) {
    let mut pos = pos.clone();
    let (mut ucis, mut sans) = (Vec::new(), Vec::new());
    for text in pv {
        let Ok(uci) = text.parse::<UciMove>() else { break };
        let Ok(m) = uci.to_move(&pos) else { break };
        ucis.push(position::uci(&m));
        sans.push(position::san(&pos, &m));
        pos.play_unchecked(m);
    }
    (ucis, sans)
}

impl Analysis {
    /// Builds the stored result from a finished search of `pos`.
    ///
    /// Fails with [`EngineError::Protocol`] when the output cannot describe `pos`: no
    /// scored line, an illegal best move, or "no move" in a position that has moves.
    pub fn from_search(pos: &Chess, out: &SearchOutput) -> Result<Analysis, EngineError> {
        let protocol = |reason: String| EngineError::Protocol { reason };
        let turn = pos.turn();
        let has_moves = !pos.legal_moves().is_empty();
        let best = if matches!(out.best_move.as_str(), "(none)" | "0000") {
            if has_moves {
                return Err(protocol(format!(
                    "engine answered `bestmove {}` in a position with legal moves",
                    out.best_move
                )));
            }
            None
        } else {
            let m = out
                .best_move
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(pos).ok())
                .ok_or_else(|| {
                    protocol(format!(
                        "illegal best move {:?} in {}",
                        out.best_move,
                        position::fen(pos)
                    ))
                })?;
            Some((position::uci(&m), position::san(pos, &m)))
        };
        let mut lines = Vec::new();
        for l in &out.lines {
            let (pv_uci, pv_san) = legal_line(pos, l.pv.iter().map(String::as_str));
            // A line whose first move is illegal is garbage, except in a position with
            // no legal move where the only line is the depth-0 verdict.
            if pv_uci.is_empty() && has_moves {
                continue;
            }
            let (eval, mate) = white_view(l.score, turn);
            let bound = (l.bound != Bound::Exact).then_some(l.bound);
            lines.push(Line {
                multipv: l.multipv,
                depth: l.depth,
                eval,
                mate,
                bound,
                pv_uci,
                pv_san,
            });
        }
        if lines.is_empty() {
            return Err(protocol(format!(
                "no scored line with a legal move before `bestmove {}`",
                out.best_move
            )));
        }
        Ok(Analysis::judged(turn, lines, best, out.nodes))
    }

    /// The result of a finished position (no legal move), which needs no search:
    /// checkmate is mate 0 against the side to move, stalemate a draw (0 cp), at depth 0
    /// with one line of no moves and no best move, exactly as an engine reports them.
    /// `None` when the position has a legal move.
    pub fn of_finished(pos: &Chess) -> Option<Analysis> {
        if !pos.legal_moves().is_empty() {
            return None;
        }
        let score = if pos.is_check() { Score::Mate(0) } else { Score::Cp(0) };
        let (eval, mate) = white_view(score, pos.turn());
        let line = Line {
            multipv: 1,
            depth: 0,
            eval,
            mate,
            bound: None,
            pv_uci: Vec::new(),
            pv_san: Vec::new(),
        };
        Some(Analysis::judged(pos.turn(), vec![line], None, 0))
    }

    /// Builds the stored result from an evaluation made elsewhere (an evaluation source,
    /// scores from White's view): at most `multipv` of its lines are kept, its nodes are
    /// its thousands × 1000. `None` when no line starts with a legal move of `pos`.
    pub fn from_source(pos: &Chess, eval: &crate::evals::Eval, multipv: u32) -> Option<Analysis> {
        let has_moves = !pos.legal_moves().is_empty();
        // The source speaks from White's side, an engine from the side to move's: turn
        // it into the latter and cap it as okb's own searches are (`white_view`).
        let sign = if pos.turn() == Color::White { 1 } else { -1 };
        let mut lines = Vec::new();
        for pv in &eval.pvs {
            let (pv_uci, pv_san) = legal_line(pos, pv.line.split_ascii_whitespace());
            if (pv_uci.is_empty() && has_moves) || lines.len() as u32 >= multipv {
                continue;
            }
            let to_move = match pv.score {
                crate::evals::Score::Cp(cp) => Score::Cp(cp.saturating_mul(sign)),
                crate::evals::Score::Mate(m) => Score::Mate(m * sign),
            };
            let (score, mate) = white_view(to_move, pos.turn());
            let multipv = lines.len() as u32 + 1;
            lines.push(Line {
                multipv,
                depth: eval.depth,
                eval: score,
                mate,
                bound: None,
                pv_uci,
                pv_san,
            });
        }
        let first = lines.first()?;
        let best = first.pv_uci.first().cloned().zip(first.pv_san.first().cloned());
        Some(Analysis::judged(pos.turn(), lines, best, eval.knodes.saturating_mul(1000)))
    }

    /// The result of scored `lines` (best first, at least one) in a position with
    /// `turn` to move: the best line's score and the mover's flags.
    fn judged(
        turn: Color,
        lines: Vec<Line>,
        best: Option<(String, String)>,
        nodes: u64,
    ) -> Analysis {
        let first = &lines[0];
        let (stockfish_eval, stockfish_mate, stockfish_depth) =
            (first.eval, first.mate, first.depth);
        // The mover is the side not to move; its view is the negation of the mover-to-be's.
        let mover_sign = if turn == Color::White { -1 } else { 1 };
        let mover_eval = mover_sign * stockfish_eval;
        let mate_against_mover =
            stockfish_mate.is_some_and(|m| m != 0 && mover_sign * m < 0 && m.abs() <= BUSTED_MATE);
        let is_busted = mover_eval <= BUSTED_CP || mate_against_mover;
        let is_dubious = is_busted || mover_eval <= DUBIOUS_CP;
        let (best_move_uci, best_move_san) = best.unzip();
        Analysis {
            stockfish_eval,
            stockfish_mate,
            stockfish_depth,
            best_move_san,
            best_move_uci,
            lines,
            is_dubious,
            is_busted,
            nodes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::uci::PvLine;

    fn out(best: &str, lines: &[(u32, Score, &[&str])]) -> SearchOutput {
        SearchOutput {
            lines: lines
                .iter()
                .enumerate()
                .map(|(i, (depth, score, pv))| PvLine {
                    multipv: i as u32 + 1,
                    depth: *depth,
                    seldepth: None,
                    score: *score,
                    bound: Bound::Exact,
                    pv: pv.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
            best_move: best.into(),
            nodes: 42,
            time_ms: 1,
        }
    }

    #[test]
    fn black_to_move_scores_are_flipped_and_judge_white_s_move() {
        // After 1. f3 e5 2. g4 Black mates with Qh4: White's last move is busted.
        let pos =
            position::parse_fen("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2")
                .unwrap();
        let a =
            Analysis::from_search(&pos, &out("d8h4", &[(5, Score::Mate(1), &["d8h4"])])).unwrap();
        assert_eq!(a.stockfish_eval, -1000);
        assert_eq!(a.stockfish_mate, Some(-1));
        assert_eq!(a.best_move_san.as_deref(), Some("Qh4#"));
        assert_eq!(a.lines[0].pv_san, vec!["Qh4#"]);
        assert!(a.is_busted && a.is_dubious);
    }

    #[test]
    fn thresholds_are_inclusive_and_from_the_mover_s_view() {
        let start = Chess::default();
        let judge = |cp: i32| {
            let a = Analysis::from_search(&start, &out("e2e4", &[(8, Score::Cp(cp), &["e2e4"])]))
                .unwrap();
            (a.stockfish_eval, a.is_dubious, a.is_busted)
        };
        // White to move: the mover is Black, so a good score for White is bad for Black.
        assert_eq!(judge(49), (49, false, false));
        assert_eq!(judge(50), (50, true, false));
        assert_eq!(judge(149), (149, true, false));
        assert_eq!(judge(150), (150, true, true));
        assert_eq!(judge(-400), (-400, false, false));
        assert_eq!(judge(5000), (999, true, true));
    }

    #[test]
    fn mate_for_the_mover_is_not_busted_and_checkmate_has_no_best_move() {
        // Fool's mate delivered: White to move is checkmated, Black (the mover) won.
        let pos =
            position::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
                .unwrap();
        let a = Analysis::from_search(&pos, &out("(none)", &[(0, Score::Mate(0), &[])])).unwrap();
        assert_eq!((a.stockfish_eval, a.stockfish_mate), (-1000, Some(0)));
        assert_eq!(a.best_move_uci, None);
        assert!(!a.is_busted && !a.is_dubious);
    }

    #[test]
    fn finished_positions_are_evaluated_as_an_engine_reports_them_without_a_search() {
        // Fool's mate: the rules give what Stockfish answers there (depth 0, mate 0).
        let mated =
            position::parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
                .unwrap();
        let searched =
            Analysis::from_search(&mated, &out("(none)", &[(0, Score::Mate(0), &[])])).unwrap();
        assert_eq!(Analysis::of_finished(&mated), Some(Analysis { nodes: 0, ..searched }));
        // Stalemate, Black to move: a draw, no best move, no flag.
        let stalemate = position::parse_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap();
        let a = Analysis::of_finished(&stalemate).unwrap();
        assert_eq!(
            (a.stockfish_eval, a.stockfish_mate, a.stockfish_depth, a.best_move_uci),
            (0, None, 0, None)
        );
        assert_eq!(a.lines.len(), 1);
        assert!(a.lines[0].pv_uci.is_empty() && !a.is_dubious && !a.is_busted);
        assert_eq!(Analysis::of_finished(&Chess::default()), None);
    }

    #[test]
    fn long_mates_against_the_mover_are_busted_by_eval() {
        let start = Chess::default();
        let a = Analysis::from_search(&start, &out("e2e4", &[(30, Score::Mate(25), &["e2e4"])]))
            .unwrap();
        assert_eq!(a.stockfish_mate, Some(25));
        assert!(a.is_busted);
    }

    #[test]
    fn garbage_is_a_protocol_error_not_a_panic() {
        let start = Chess::default();
        for o in [
            out("e2e5", &[(8, Score::Cp(10), &["e2e4"])]),
            out("(none)", &[(8, Score::Cp(10), &["e2e4"])]),
            out("e2e4", &[]),
            out("e2e4", &[(8, Score::Cp(10), &["zz99"])]),
        ] {
            assert!(matches!(Analysis::from_search(&start, &o), Err(EngineError::Protocol { .. })));
        }
        // An illegal tail is cut, the legal head kept.
        let a =
            Analysis::from_search(&start, &out("e2e4", &[(8, Score::Cp(10), &["e2e4", "e2e4"])]))
                .unwrap();
        assert_eq!(a.lines[0].pv_uci, vec!["e2e4"]);
    }

    #[test]
    fn serialization_is_stable() {
        let start = Chess::default();
        let a = Analysis::from_search(
            &start,
            &out("e2e4", &[(8, Score::Cp(31), &["e2e4", "e7e5"]), (8, Score::Cp(25), &["d2d4"])]),
        )
        .unwrap();
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(
            json,
            r#"{"stockfish_eval":31,"stockfish_mate":null,"stockfish_depth":8,"best_move_san":"e4","best_move_uci":"e2e4","lines":[{"multipv":1,"depth":8,"eval":31,"mate":null,"bound":null,"pv_uci":["e2e4","e7e5"],"pv_san":["e4","e5"]},{"multipv":2,"depth":8,"eval":25,"mate":null,"bound":null,"pv_uci":["d2d4"],"pv_san":["d4"]}],"is_dubious":false,"is_busted":false,"nodes":42}"#
        );
        assert_eq!(serde_json::from_str::<Analysis>(&json).unwrap(), a);
    }
}
