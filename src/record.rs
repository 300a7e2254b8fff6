//! The flat, per-node view of the knowledge base shared by the store, the CSV export and
//! query answers, so every consumer names and computes each field the same way.

use serde::Serialize;

pub mod column;

use column::{Column, Field, JsonText, Shown};

use crate::engine::{Analysis, Annotations};
use crate::position;
use crate::tree::{Node, Tree};
use crate::validate::report::StubNode;

/// The `name_src` of validation stubs: nodes games reach under a name the tree lacks.
pub const STUB_SRC: &str = "stub";

/// Declares [`NodeRecord`] and [`COLUMNS`] from one list: each field with its doc, type,
/// SQL declaration (`None`: not stored), whether the API's node JSON and the CSV export
/// show it, and, when the store's changelog tracks it, `tracked: N`, its place in the
/// log's order ([`tracked_columns`]). The list is in the table's order, which is also
/// the CSV's.
macro_rules! node_row {
    (@tracked) => { None };
    (@tracked $place:literal) => { Some($place) };
    ($($(#[doc = $doc:literal])* $field:ident: $ty:ty => $sql:expr, api: $api:literal, csv: $csv:literal $(, tracked: $tracked:literal)?;)*) => {
        /// One node as a flat record (the technical design's `opening_nodes` row).
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct NodeRecord {
            $($(#[doc = $doc])* pub $field: $ty,)*
        }

        /// The columns of the node row, in the table's order.
        pub const COLUMNS: &[Column<NodeRecord>] = &[$(Column {
            name: stringify!($field),
            sql: $sql,
            api: $api,
            csv: $csv,
            tracked: node_row!(@tracked $($tracked)?),
            shape: <$ty as Field>::SHAPE,
            cell: |r| Field::cell(&r.$field),
            set: |r, cell| Field::set(&mut r.$field, cell),
        },)*];
    };
}

node_row! {
    /// Stable id derived from the position.
    node_id: String => Some("TEXT PRIMARY KEY"), api: true, csv: true;
    /// Position identity (placement, side, castling, legal en passant).
    position_key: String => Some("TEXT NOT NULL"), api: false, csv: true;
    /// Full FEN of the canonical line.
    fen: String => Some("TEXT NOT NULL"), api: true, csv: true, tracked: 1;
    /// Length of the canonical line in plies.
    ply: usize => Some("INTEGER NOT NULL"), api: false, csv: true;
    /// Canonical line as numbered SAN.
    moves: String => Some("TEXT NOT NULL"), api: true, csv: true, tracked: 2;
    /// Last move of the canonical line in SAN.
    pgn_move: Option<String> => Some("TEXT"), api: true, csv: true;
    /// ECO code, own or inherited.
    eco_code: Option<String> => Some("TEXT"), api: true, csv: true, tracked: 3;
    /// Opening name (the part of the full name before `:`).
    opening_name: Option<String> => Some("TEXT"), api: true, csv: true, tracked: 4;
    /// Variation name (the part after `:`), if any.
    variation_name: Option<String> => Some("TEXT"), api: true, csv: true, tracked: 5;
    /// Source of the name (`eco_tsv`, `scid`, `pgn_extract`, `interpolated`, or `stub` for a validation stub).
    name_src: Option<String> => Some("TEXT"), api: true, csv: true;
    /// Whether the name is inherited from an ancestor.
    name_inherited: bool => Some("INTEGER NOT NULL DEFAULT 0"), api: true, csv: true;
    /// Games that reached the position.
    game_count: u64 => Some("INTEGER NOT NULL DEFAULT 0"), api: true, csv: true, tracked: 6;
    /// White wins among them.
    white_wins: u64 => Some("INTEGER NOT NULL DEFAULT 0"), api: false, csv: true;
    /// Draws among them.
    draws: u64 => Some("INTEGER NOT NULL DEFAULT 0"), api: false, csv: true;
    /// Black wins among them.
    black_wins: u64 => Some("INTEGER NOT NULL DEFAULT 0"), api: false, csv: true;
    /// Percentage of White wins, two decimals.
    white_win_pct: Option<f64> => Some("REAL"), api: true, csv: true, tracked: 7;
    /// Percentage of draws, two decimals.
    draw_pct: Option<f64> => Some("REAL"), api: true, csv: true, tracked: 8;
    /// Two or more children.
    is_branching_node: bool => Some("INTEGER NOT NULL DEFAULT 0"), api: true, csv: true, tracked: 9;
    /// Number of children (the store keeps the edges themselves).
    children: usize => None, api: false, csv: true;
    /// Stockfish evaluation in centipawns from White's side (Phase 4).
    stockfish_eval: Option<i32> => Some("INTEGER"), api: true, csv: true, tracked: 10;
    /// Depth of that evaluation.
    stockfish_depth: Option<u32> => Some("INTEGER"), api: true, csv: true, tracked: 11;
    /// Engine's best move in SAN.
    best_move: Option<String> => Some("TEXT"), api: true, csv: true, tracked: 13;
    /// Engine's best move in UCI.
    best_move_uci: Option<String> => Some("TEXT"), api: true, csv: true;
    /// The move into this position is dubious for its mover.
    is_dubious: Option<bool> => Some("INTEGER"), api: true, csv: true, tracked: 14;
    /// The move into this position loses for its mover.
    is_busted: Option<bool> => Some("INTEGER"), api: true, csv: true, tracked: 15;
    /// Pawn structure tag (Phase 5).
    resulting_structure: Option<String> => Some("TEXT"), api: true, csv: true, tracked: 16;
    /// Mate distance in moves from White's point of view (positive: White mates) when the
    /// best line mates; 0 when the side to move is checkmated.
    stockfish_mate: Option<i32> => Some("INTEGER"), api: true, csv: false;
    /// The engine's top lines (score and principal variation), best first, as JSON.
    stockfish_lines: Option<JsonText> => Some("TEXT"), api: true, csv: false;
    /// How the tag was found: `label`, `exact`, `near` or `rule` (none for Unknown).
    structure_confidence: Option<String> => Some("TEXT"), api: true, csv: true;
    /// Where the evaluation came from: the engine's name (okb's own search), an
    /// evaluation source's `<name>@<first 12 digits of its pin>`, or
    /// [`crate::engine::FINISHED_ORIGIN`] for a checkmate or stalemate.
    eval_source: Option<String> => Some("TEXT"), api: true, csv: true, tracked: 12;
    /// Nodes the evaluation's search took (thousands × 1000 for an evaluation source).
    eval_nodes: Option<u64> => Some("INTEGER"), api: true, csv: true;
    /// Centipawns the canonical line's last move loses against the best move of the
    /// position before it, from the mover's side ([`crate::engine::loss`]); the node
    /// answer gives it per move, in its `children`.
    cp_loss: Option<i32> => None, api: false, csv: true;
    /// Winning chances that move loses, in percentage points (Lichess's formula).
    win_chance_loss: Option<f64> => None, api: false, csv: true;
}

/// The columns whose changes the store logs (`node_changelog`), in the log's order
/// ([`Column::tracked`]).
pub fn tracked_columns() -> Vec<&'static Column<NodeRecord>> {
    let mut tracked: Vec<_> = COLUMNS.iter().filter(|c| c.tracked.is_some()).collect();
    tracked.sort_by_key(|c| c.tracked);
    tracked
}

/// The column named `name`.
pub fn column(name: &str) -> Option<&'static Column<NodeRecord>> {
    COLUMNS.iter().find(|c| c.name == name)
}

/// The CSV export's columns, by [`NodeRecord`]'s `Serialize`.
impl Serialize for NodeRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let shown = || COLUMNS.iter().filter(|c| c.csv);
        let mut record = s.serialize_struct("NodeRecord", shown().count())?;
        for column in shown() {
            record.serialize_field(column.name, &Shown { row: self, column })?;
        }
        record.end()
    }
}

/// `part` as a percentage of `whole`, rounded to two decimals.
pub fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| (part as f64 * 10000.0 / whole as f64).round() / 100.0)
}

/// Splits `Sicilian Defense: Najdorf Variation` into opening and variation.
pub fn split_name(name: &str) -> (String, Option<String>) {
    match name.split_once(':') {
        Some((opening, variation)) => {
            (opening.trim().to_string(), Some(variation.trim().to_string()))
        }
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
            stockfish_mate: analysis.and_then(|a| a.stockfish_mate),
            stockfish_lines: analysis
                .map(|a| JsonText(serde_json::to_string(&a.lines).expect("lines serialize"))),
            structure_confidence: None,
            eval_source: origin.map(str::to_string),
            eval_nodes: analysis.map(|a| a.nodes),
            cp_loss: None,
            win_chance_loss: None,
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
            resulting_structure: Some(stub.structure.clone()),
            structure_confidence: stub.structure_confidence.map(|c| c.as_str().to_string()),
            ..NodeRecord::default()
        }
    }

    /// Records of all nodes of `tree`, in node order.
    pub fn all(tree: &Tree, annotations: Option<&Annotations>) -> Vec<NodeRecord> {
        use rayon::prelude::*;
        tree.nodes
            .par_iter()
            .map(|n| {
                NodeRecord::new(
                    n,
                    annotations.and_then(|a| Some((a.results.get(&n.epd)?, a.origin(&n.epd)?))),
                )
            })
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
        judge_moves(tree, &mut records);
        records
    }
}

/// Sets each record's loss of the canonical line's last move, from the evaluations of
/// the node and of its canonical parent (the parent whose line the node's extends).
fn judge_moves(tree: &Tree, records: &mut [NodeRecord]) {
    for (i, node) in tree.nodes.iter().enumerate() {
        // Without an evaluation of its own a node has no loss to find (its record's is
        // `None` already), so its parents are not searched.
        if records[i].stockfish_eval.is_none() {
            continue;
        }
        let Some((_, before)) = node.line.split_last() else { continue };
        let parent = node.parents.iter().find(|&&p| tree.nodes[p as usize].line == before);
        let Some(parent) = parent.map(|&p| &records[p as usize]) else { continue };
        let mover = crate::engine::loss::side_to_move(&parent.fen);
        let loss = parent
            .stockfish_eval
            .zip(records[i].stockfish_eval)
            .map(|(p, c)| crate::engine::loss::move_loss(p, c, mover));
        records[i].cp_loss = loss.map(|l| l.cp);
        records[i].win_chance_loss = loss.map(|l| l.win_chance);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The changelog's places are 1, 2, … each once, and only stored columns are tracked.
    #[test]
    fn tracked_places_are_one_to_n_on_stored_columns() {
        let tracked = tracked_columns();
        let places: Vec<u8> = tracked.iter().filter_map(|c| c.tracked).collect();
        assert_eq!(places, (1..=tracked.len() as u8).collect::<Vec<_>>());
        assert!(tracked.iter().all(|c| c.stored()));
    }
}
