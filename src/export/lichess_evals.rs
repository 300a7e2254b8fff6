//! The engine's evaluations in the Lichess evaluation database's format
//! ([`crate::evals`]): one JSON line per position, sorted by position, so that a team
//! can share them, merge them into a bigger dump, or pin them as another pipeline's
//! `lichess-evals` source.
//!
//! Each position gets one evaluation: its lines (`cp` or `mate` from White's point of
//! view, the moves in UCI), the search's depth and its nodes in thousands (rounded
//! down, as the format counts them). Reading the file back gives the same scores, best
//! moves, lines and flags.
//!
//! A finished position (checkmate, stalemate) is left out: its only line has no move,
//! which the format cannot say (every `line` of Lichess's database holds moves, and
//! readers split it), and a reader needs none, since the rules evaluate such a position
//! without a search.

use crate::engine::{Analysis, Annotations};
use crate::evals::dump::{Eval, Pv, Score, write_line};

/// The JSON lines of `annotations`, in position order.
pub fn render(annotations: &Annotations) -> Vec<u8> {
    let mut out = Vec::with_capacity(annotations.results.len() * 200);
    for (epd, analysis) in &annotations.results {
        let eval = eval_of(analysis);
        if !eval.pvs.is_empty() {
            write_line(&mut out, epd, &[eval]);
        }
    }
    out
}

/// The evaluation of one stored result: its lines that hold a move (none in a finished
/// position).
fn eval_of(analysis: &Analysis) -> Eval {
    let pvs = analysis
        .lines
        .iter()
        .filter(|line| !line.pv_uci.is_empty())
        .map(|line| Pv {
            score: match line.mate {
                Some(m) => Score::Mate(m),
                None => Score::Cp(line.eval),
            },
            line: line.pv_uci.join(" "),
        })
        .collect();
    Eval { depth: analysis.stockfish_depth, knodes: analysis.nodes / 1000, pvs }
}

/// `bytes` compressed with zstd when `output` ends in `.zst` (level 19: the file is
/// written once and read by many), as they are otherwise.
pub fn encode_for(output: &std::path::Path, bytes: Vec<u8>) -> std::io::Result<Vec<u8>> {
    if output.extension().is_some_and(|e| e == "zst") {
        zstd::bulk::compress(&bytes, 19)
    } else {
        Ok(bytes)
    }
}
