//! Prepared moves the engine dislikes: evaluated below the floor, or worse than the
//! engine's best move by more than the allowed loss.

use serde::Serialize;

use super::Repertoire;
use crate::engine::Annotations;

/// A flagged prepared move.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flag {
    /// The line to the move (numbered SAN, the move last).
    pub line: String,
    /// The move in SAN.
    pub san: String,
    /// Evaluation after it, centipawns from the repertoire side.
    pub eval: i32,
    /// The engine's best move there, in SAN.
    pub best_move: Option<String>,
    /// Evaluation of the best move, from the repertoire side.
    pub best_eval: Option<i32>,
    /// `best_eval - eval` when both are known.
    pub loss: Option<i32>,
    /// Why it is flagged: `below-floor`, `loses`.
    pub reasons: Vec<&'static str>,
    /// 1-based line of the PGN where the move is written.
    pub source_line: u32,
}

/// The prepared moves with an evaluation below `eval_floor` or a loss above `max_loss`,
/// worst first. A move's evaluation is its own position's; failing that, the engine
/// line that starts with it at the position before.
pub fn flags(
    rep: &Repertoire,
    annotations: &Annotations,
    eval_floor: i32,
    max_loss: i32,
) -> Vec<Flag> {
    let mut out = Vec::new();
    for (i, node) in rep.nodes.iter().enumerate().filter(|(_, n)| rep.mine(n)) {
        let before = annotations.results.get(&node.epd);
        let best = before.and_then(|a| a.lines.first()).map(|l| rep.color.cp(l.eval));
        for m in &node.moves {
            let own = annotations
                .results
                .get(&rep.nodes[m.child as usize].epd)
                .map(|a| rep.color.cp(a.stockfish_eval));
            let in_lines = || {
                before?
                    .lines
                    .iter()
                    .find(|l| l.pv_uci.first() == Some(&m.uci))
                    .map(|l| rep.color.cp(l.eval))
            };
            let Some(eval) = own.or_else(in_lines) else { continue };
            let loss = best.map(|b| b - eval);
            let mut reasons = Vec::new();
            if eval < eval_floor {
                reasons.push("below-floor");
            }
            if loss.is_some_and(|l| l > max_loss) {
                reasons.push("loses");
            }
            if reasons.is_empty() {
                continue;
            }
            let mut line = rep.line(i as u32);
            line.push(m.san.clone());
            out.push(Flag {
                line: super::numbered(node.start_ply, &line),
                san: m.san.clone(),
                eval,
                best_move: before.and_then(|a| a.best_move_san.clone()),
                best_eval: best,
                loss,
                reasons,
                source_line: m.source_line,
            });
        }
    }
    out.sort_by(|a, b| {
        a.eval.cmp(&b.eval).then(b.loss.cmp(&a.loss)).then_with(|| a.line.cmp(&b.line))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Analysis, Line};
    use crate::repertoire::{Side, parse};

    fn analysis(eval: i32, lines: &[(&str, i32)]) -> Analysis {
        let lines: Vec<Line> = lines
            .iter()
            .enumerate()
            .map(|(i, (uci, eval))| Line {
                multipv: i as u32 + 1,
                depth: 10,
                eval: *eval,
                mate: None,
                bound: None,
                pv_uci: vec![uci.to_string()],
                pv_san: Vec::new(),
            })
            .collect();
        Analysis {
            stockfish_eval: eval,
            stockfish_mate: None,
            stockfish_depth: 10,
            best_move_san: (!lines.is_empty()).then(|| "Nf6".to_string()),
            best_move_uci: None,
            lines,
            is_dubious: false,
            is_busted: false,
            nodes: 0,
        }
    }

    #[test]
    fn moves_below_the_floor_or_losing_too_much_are_flagged_from_the_repertoires_side() {
        // Black's 1... f6 is bad, 1... e5 fine; 1... c5 is evaluated only by the line
        // starting with it at the position before.
        let rep =
            parse::parse("t", Side::Black, "t.pgn", "1. e4 e5 (1... f6) (1... c5) *").unwrap();
        let epd = |line: &[&str]| {
            (0..rep.nodes.len() as u32)
                .find(|&i| rep.line(i) == line)
                .map(|i| rep.nodes[i as usize].epd.clone())
                .unwrap()
        };
        let mut a = Annotations::default();
        a.results.insert(epd(&["e4"]), analysis(30, &[("g8f6", 25), ("e7e5", 30), ("c7c5", 35)]));
        a.results.insert(epd(&["e4", "e5"]), analysis(30, &[]));
        a.results.insert(epd(&["e4", "f6"]), analysis(140, &[]));
        let flags = flags(&rep, &a, -100, 50);
        let found: Vec<(&str, i32, Option<i32>, &[&str])> =
            flags.iter().map(|f| (f.san.as_str(), f.eval, f.loss, f.reasons.as_slice())).collect();
        assert_eq!(found, [("f6", -140, Some(115), &["below-floor", "loses"][..])]);
        assert_eq!(flags[0].line, "1. e4 f6");
        // A stricter loss flags 1... e5 (−30 against −25) and 1... c5 (−35, from the line).
        let strict = super::flags(&rep, &a, -100, 4);
        let sans: Vec<&str> = strict.iter().map(|f| f.san.as_str()).collect();
        assert_eq!(sans, ["f6", "c5", "e5"]);
    }
}
