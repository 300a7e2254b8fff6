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
pub fn flags(rep: &Repertoire, annotations: &Annotations, eval_floor: i32, max_loss: i32) -> Vec<Flag> {
    let mut out = Vec::new();
    for node in rep.nodes.iter().filter(|n| rep.mine(n)) {
        let before = annotations.results.get(&node.epd);
        let best = before.and_then(|a| a.lines.first()).map(|l| rep.color.cp(l.eval));
        for m in &node.moves {
            let own = annotations.results.get(&rep.nodes[m.child as usize].epd).map(|a| rep.color.cp(a.stockfish_eval));
            let in_lines = || before?.lines.iter().find(|l| l.pv_uci.first() == Some(&m.uci)).map(|l| rep.color.cp(l.eval));
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
            let mut line = node.line.clone();
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
    out.sort_by(|a, b| a.eval.cmp(&b.eval).then(b.loss.cmp(&a.loss)).then_with(|| a.line.cmp(&b.line)));
    out
}
