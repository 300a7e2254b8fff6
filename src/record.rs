//! The flat, per-node view of the knowledge base shared by the store, the CSV export and
//! query answers, so every consumer names and computes each field the same way.

use serde::Serialize;

use crate::engine::{Analysis, Annotations};
use crate::position;
use crate::tree::{Node, Tree};
use crate::validate::report::StubNode;

/// The `name_src` of validation stubs: nodes games reach under a name the tree lacks.
pub const STUB_SRC: &str = "stub";

/// One node as a flat record (the technical design's `opening_nodes` row).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeRecord {
    /// Stable id derived from the position.
    pub node_id: String,
    /// Position identity (placement, side, castling, legal en passant).
    pub position_key: String,
    /// Full FEN of the canonical line.
    pub fen: String,
    /// Length of the canonical line in plies.
    pub ply: usize,
    /// Canonical line as numbered SAN.
    pub moves: String,
    /// Last move of the canonical line in SAN.
    pub pgn_move: Option<String>,
    /// ECO code, own or inherited.
    pub eco_code: Option<String>,
    /// Opening name (the part of the full name before `:`).
    pub opening_name: Option<String>,
    /// Variation name (the part after `:`), if any.
    pub variation_name: Option<String>,
    /// Source of the name.
    pub name_src: Option<String>,
    /// Whether the name is inherited from an ancestor.
    pub name_inherited: bool,
    /// Games that reached the position.
    pub game_count: u64,
    /// White wins among them.
    pub white_wins: u64,
    /// Draws among them.
    pub draws: u64,
    /// Black wins among them.
    pub black_wins: u64,
    /// Percentage of White wins, two decimals.
    pub white_win_pct: Option<f64>,
    /// Percentage of draws, two decimals.
    pub draw_pct: Option<f64>,
    /// Two or more children.
    pub is_branching_node: bool,
    /// Number of children.
    pub children: usize,
    /// Stockfish evaluation in centipawns from White's side (Phase 4).
    pub stockfish_eval: Option<i32>,
    /// Depth of that evaluation.
    pub stockfish_depth: Option<u32>,
    /// Engine's best move in SAN.
    pub best_move: Option<String>,
    /// Engine's best move in UCI.
    pub best_move_uci: Option<String>,
    /// The move into this position is dubious for its mover.
    pub is_dubious: Option<bool>,
    /// The move into this position loses for its mover.
    pub is_busted: Option<bool>,
    /// Pawn structure tag (Phase 5).
    pub resulting_structure: Option<String>,
    /// How the tag was found: `label`, `exact`, `near` or `rule` (none for Unknown).
    pub structure_confidence: Option<String>,
    /// Where the evaluation came from: the engine's name (okb's own search), or an
    /// evaluation source's `<name>@<first 12 digits of its pin>`.
    pub eval_source: Option<String>,
    /// Nodes the evaluation's search took (thousands × 1000 for an evaluation source).
    pub eval_nodes: Option<u64>,
}

/// `part` as a percentage of `whole`, rounded to two decimals.
pub fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| (part as f64 * 10000.0 / whole as f64).round() / 100.0)
}

/// Splits `Sicilian Defense: Najdorf Variation` into opening and variation.
pub fn split_name(name: &str) -> (String, Option<String>) {
    match name.split_once(':') {
        Some((opening, variation)) => (opening.trim().to_string(), Some(variation.trim().to_string())),
        None => (name.trim().to_string(), None),
    }
}

impl NodeRecord {
    /// The record of `node`, with its engine annotation and where it came from, if there
    /// is one.
    pub fn new(node: &Node, analysis: Option<(&Analysis, &str)>) -> NodeRecord {
        let (analysis, origin) = analysis.unzip();
        let stats = node.stats.unwrap_or_default();
        let games = stats.games();
        let (opening_name, variation_name) = match &node.opening {
            Some(o) => {
                let (a, b) = split_name(&o.name);
                (Some(a), b)
            }
            None => (None, None),
        };
        NodeRecord {
            node_id: position::node_id(&node.epd),
            position_key: node.epd.clone(),
            fen: node.fen.clone(),
            ply: node.line.len(),
            moves: node.movetext.clone(),
            pgn_move: node.pgn_move.clone(),
            eco_code: node.opening.as_ref().map(|o| o.eco.clone()),
            opening_name,
            variation_name,
            name_src: node.opening.as_ref().map(|o| o.src.clone()),
            name_inherited: node.opening.as_ref().is_some_and(|o| !o.own),
            game_count: games,
            white_wins: stats.white,
            draws: stats.draws,
            black_wins: stats.black,
            white_win_pct: pct(stats.white, games),
            draw_pct: pct(stats.draws, games),
            is_branching_node: node.is_branching(),
            children: node.children.len(),
            stockfish_eval: analysis.map(|a| a.stockfish_eval),
            stockfish_depth: analysis.map(|a| a.stockfish_depth),
            best_move: analysis.and_then(|a| a.best_move_san.clone()),
            best_move_uci: analysis.and_then(|a| a.best_move_uci.clone()),
            is_dubious: analysis.map(|a| a.is_dubious),
            is_busted: analysis.map(|a| a.is_busted),
            resulting_structure: None,
            structure_confidence: None,
            eval_source: origin.map(str::to_string),
            eval_nodes: analysis.map(|a| a.nodes),
        }
    }

    /// The record of a validation stub (Phase 3): a leaf named by the games' Opening
    /// tag, `name_src = "stub"`, counted over those games.
    pub fn stub(stub: &StubNode) -> NodeRecord {
        let (opening_name, variation_name) = split_name(&stub.name);
        let o = stub.outcomes;
        let games = o.games();
        NodeRecord {
            node_id: position::node_id(&stub.epd),
            position_key: stub.epd.clone(),
            fen: stub.fen.clone(),
            ply: stub.ply,
            moves: stub.moves.clone(),
            pgn_move: Some(stub.san.clone()),
            eco_code: Some(stub.eco.clone()),
            opening_name: Some(opening_name),
            variation_name,
            name_src: Some(STUB_SRC.to_string()),
            name_inherited: false,
            game_count: games,
            white_wins: o.white,
            draws: o.draws,
            black_wins: o.black,
            white_win_pct: pct(o.white, games),
            draw_pct: pct(o.draws, games),
            is_branching_node: false,
            children: 0,
            stockfish_eval: None,
            stockfish_depth: None,
            best_move: None,
            best_move_uci: None,
            is_dubious: None,
            is_busted: None,
            resulting_structure: Some(stub.structure.clone()),
            structure_confidence: stub.structure_confidence.map(|c| c.as_str().to_string()),
            eval_source: None,
            eval_nodes: None,
        }
    }

    /// Records of all nodes of `tree`, in node order.
    pub fn all(tree: &Tree, annotations: Option<&Annotations>) -> Vec<NodeRecord> {
        use rayon::prelude::*;
        tree.nodes
            .par_iter()
            .map(|n| NodeRecord::new(n, annotations.and_then(|a| Some((a.results.get(&n.epd)?, a.origin(&n.epd)?)))))
            .collect()
    }

    /// [`NodeRecord::all`] with the structure tags of the terminal nodes applied: the
    /// records the store and the CSV export write.
    pub fn tagged(
        tree: &Tree,
        annotations: Option<&Annotations>,
        structures: Option<&crate::structure::StructureTags>,
    ) -> Vec<NodeRecord> {
        let mut records = NodeRecord::all(tree, annotations);
        // The structure phase knows nothing of records: the records read its tags.
        for tag in structures.map_or(&[][..], |tags| &tags.terminal[..]) {
            if let Some(r) = records.get_mut(tag.node as usize) {
                r.resulting_structure = Some(tag.structure.clone());
                r.structure_confidence = tag.confidence.map(|c| c.as_str().to_string());
            }
        }
        records
    }
}
