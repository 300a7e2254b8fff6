//! Evaluations from pinned sources ([`crate::evals`]) serving the engine phase.
//!
//! For a position searched to `depth` with `multipv` lines, an evaluation of a source
//! qualifies when it is at least that deep and has at least `multipv` lines (or as many
//! lines as the position has legal moves). The deepest qualifying evaluation of all the
//! sources wins; ties go to more nodes, then to the earlier source in `[engine] sources`,
//! then to the earlier evaluation in the file. Only the result of a pinned input can be
//! chosen, so the choice is a function of the pins, whatever the machine has cached.

use std::sync::Arc;

use shakmaty::{Chess, Position};

use super::Analysis;
use crate::evals::Selection;

/// One evaluation source as the engine phase sees it.
#[derive(Clone, Debug)]
pub struct EvalSource {
    /// The source's name in pipeline.toml.
    pub name: String,
    /// What stored evaluations say they came from: `<name>@<first 12 digits of the pin>`.
    pub label: String,
    /// The positions of the tree the source has evaluations of.
    pub selection: Arc<Selection>,
}

impl EvalSource {
    /// The label of source `name` pinned at `pin`: `<name>@<first 12 digits of the pin>`.
    pub fn label(name: &str, pin: &str) -> String {
        format!("{name}@{}", &pin[..pin.len().min(12)])
    }
}

/// The best qualifying evaluation of `epd` (the position `pos`) among `sources`, as a
/// stored result, with the index of the source it came from.
pub fn best(
    sources: &[EvalSource],
    epd: &str,
    pos: &Chess,
    depth: u32,
    multipv: u32,
) -> Option<(usize, Analysis)> {
    let legal = pos.legal_moves().len();
    let needed = (multipv as usize).min(legal.max(1));
    // Mate or stalemate on the board: there is nothing to search, any depth will do
    // (an engine reports depth 0 there).
    let depth = if legal == 0 { 0 } else { depth };
    let mut chosen: Option<(u32, u64, usize, &crate::evals::Eval)> = None;
    for (i, source) in sources.iter().enumerate() {
        for eval in source.selection.evals.get(epd).into_iter().flatten() {
            if eval.depth < depth || eval.pvs.len() < needed {
                continue;
            }
            let better = chosen.is_none_or(|(d, k, _, _)| (eval.depth, eval.knodes) > (d, k));
            if better {
                chosen = Some((eval.depth, eval.knodes, i, eval));
            }
        }
    }
    let (_, _, i, eval) = chosen?;
    Analysis::from_source(pos, eval, multipv).map(|a| (i, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::dump::parse_line;
    use crate::position;

    fn source(name: &str, lines: &[&str]) -> EvalSource {
        let mut selection = Selection::default();
        for line in lines {
            let entry = parse_line(line.as_bytes()).unwrap();
            let epd = position::epd(&position::parse_fen(&entry.fen).unwrap());
            selection.evals.entry(epd).or_default().extend(entry.evals);
        }
        EvalSource {
            name: name.into(),
            label: format!("{name}@0123456789ab"),
            selection: Arc::new(selection),
        }
    }

    fn pick(
        sources: &[EvalSource],
        fen: &str,
        depth: u32,
        multipv: u32,
    ) -> Option<(usize, Analysis)> {
        let pos = position::parse_fen(fen).unwrap();
        best(sources, &position::epd(&pos), &pos, depth, multipv)
    }

    // Black to move, a queen up: clearly winning for the side to move. Lichess writes
    // scores from White's point of view, so the dump says -900 and so must okb.
    const BLACK_WINS: &str = "4k3/8/8/8/8/8/q7/4K3 b - -";

    #[test]
    fn scores_are_white_s_point_of_view_and_judge_the_last_move() {
        let s = [source(
            "evals",
            &[
                r#"{"fen":"4k3/8/8/8/8/8/q7/4K3 b - -","evals":[{"pvs":[{"cp":-900,"line":"a2b2"}],"knodes":5,"depth":30}]}"#,
            ],
        )];
        let (_, a) = pick(&s, BLACK_WINS, 10, 1).unwrap();
        assert_eq!(a.stockfish_eval, -900);
        assert!(a.is_busted, "White's last move left Black a queen up");
        assert_eq!(a.best_move_san.as_deref(), Some("Qb2"));
        assert_eq!((a.stockfish_depth, a.nodes), (30, 5000));
        // Fool's mate: Black to move mates in one; White's view is mate -1.
        let mate = [source(
            "evals",
            &[
                r#"{"fen":"rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq -","evals":[{"pvs":[{"mate":-1,"line":"d8h4"}],"knodes":1,"depth":245}]}"#,
            ],
        )];
        let (_, a) =
            pick(&mate, "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2", 20, 1)
                .unwrap();
        assert_eq!((a.stockfish_eval, a.stockfish_mate), (-1000, Some(-1)));
        assert_eq!(a.best_move_san.as_deref(), Some("Qh4#"));
        assert!(a.is_busted && a.is_dubious);
        // The mated position itself: depth 0 is all there is, and it serves any request.
        let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -";
        let s = [source(
            "evals",
            &[
                r#"{"fen":"rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq -","evals":[{"pvs":[{"mate":0,"line":""}],"knodes":0,"depth":0}]}"#,
            ],
        )];
        let (_, a) = pick(&s, mated, 22, 3).unwrap();
        assert_eq!((a.stockfish_eval, a.stockfish_mate, a.best_move_uci), (-1000, Some(0), None));
    }

    #[test]
    fn the_deepest_evaluation_with_enough_lines_wins_across_sources() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
        let three = r#"{"cp":20,"line":"e2e4"},{"cp":18,"line":"d2d4"},{"cp":15,"line":"g1f3"}"#;
        let a = source(
            "a",
            &[&format!(
                r#"{{"fen":"{start}","evals":[{{"pvs":[{three}],"knodes":9,"depth":30}},{{"pvs":[{{"cp":25,"line":"d2d4"}}],"knodes":9,"depth":50}}]}}"#
            )],
        );
        let b = source(
            "b",
            &[&format!(
                r#"{{"fen":"{start}","evals":[{{"pvs":[{three}],"knodes":99,"depth":30}}]}}"#
            )],
        );
        let both = [a.clone(), b];
        // MultiPV 3: the depth-50 single line does not qualify; at depth 30 more nodes win.
        let (i, x) = pick(&both, start, 20, 3).unwrap();
        assert_eq!((i, x.stockfish_depth, x.lines.len()), (1, 30, 3));
        // MultiPV 1: the deepest wins, and only one line is kept.
        let (i, x) = pick(&both, start, 20, 1).unwrap();
        assert_eq!((i, x.stockfish_depth, x.best_move_uci.as_deref()), (0, 50, Some("d2d4")));
        let (_, x) = pick(std::slice::from_ref(&a), start, 20, 2).unwrap();
        assert_eq!(x.lines.iter().map(|l| l.multipv).collect::<Vec<_>>(), vec![1, 2]);
        // Too shallow for the request: not served.
        assert!(pick(&[a], start, 51, 1).is_none());
    }

    #[test]
    fn a_position_with_fewer_moves_than_multipv_qualifies_with_all_of_them() {
        // White's king has exactly two legal moves, Kd1 and Kb1.
        let fen = "k7/8/8/8/8/8/r7/2K5 w - -";
        let s = [source(
            "e",
            &[
                r#"{"fen":"k7/8/8/8/8/8/r7/2K5 w - -","evals":[{"pvs":[{"cp":-900,"line":"c1d1"}],"knodes":1,"depth":40}]}"#,
            ],
        )];
        assert!(
            pick(&s, fen, 10, 3).is_none(),
            "one line of two legal moves is not enough for multipv 3"
        );
        let two = [source(
            "e",
            &[
                r#"{"fen":"k7/8/8/8/8/8/r7/2K5 w - -","evals":[{"pvs":[{"cp":-900,"line":"c1d1"},{"cp":-950,"line":"c1b1"}],"knodes":1,"depth":40}]}"#,
            ],
        )];
        assert_eq!(pick(&two, fen, 10, 3).unwrap().1.lines.len(), 2);
    }
}
