//! The knowledge base as a graph for Neo4j: CSV files in `neo4j-admin database import`'s
//! layout (header fields `name:type`, `:ID(Position)`, `:LABEL`, `:START_ID(Position)`,
//! `:END_ID(Position)`, `:TYPE`).
//!
//! - `positions.csv`: one `Position` node per tree node (also labelled `Opening` when a
//!   taxonomy names the position itself), with its line, names, counts, engine
//!   evaluation and pawn structure.
//! - `moves.csv`: one `MOVE` relationship per edge, with the move and its games.
//! - `transpositions.csv`: `TRANSPOSES_TO` between two positions whose moves reach the
//!   same position (the store's `node_transpositions`), with that position's id.
//!
//! Import with `neo4j-admin database import full --nodes=Position=positions.csv
//! --relationships=moves.csv --relationships=transpositions.csv`; the header rows are
//! the first lines of each file.

use crate::record::NodeRecord;
use crate::tree::Tree;

/// The three files: `(name, bytes)`.
pub fn render(tree: &Tree, records: &[NodeRecord]) -> Vec<(String, Vec<u8>)> {
    vec![
        ("positions.csv".into(), positions(records)),
        ("moves.csv".into(), moves(tree, records)),
        ("transpositions.csv".into(), transpositions(tree, records)),
    ]
}

fn writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new())
}

fn text(value: &Option<String>) -> String {
    value.clone().unwrap_or_default()
}

fn number<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn positions(records: &[NodeRecord]) -> Vec<u8> {
    let mut w = writer();
    let header = [
        "positionId:ID(Position)",
        "fen",
        "moves",
        "ply:int",
        "eco",
        "opening",
        "variation",
        "games:long",
        "whiteWinPct:double",
        "drawPct:double",
        "eval:int",
        "bestMove",
        "structure",
        ":LABEL",
    ];
    w.write_record(header).expect("writing to memory");
    for r in records {
        let own_name = r.opening_name.is_some() && !r.name_inherited;
        w.write_record([
            r.node_id.clone(),
            r.fen.clone(),
            r.moves.clone(),
            r.ply.to_string(),
            text(&r.eco_code),
            text(&r.opening_name),
            text(&r.variation_name),
            r.game_count.to_string(),
            number(r.white_win_pct),
            number(r.draw_pct),
            number(r.stockfish_eval),
            text(&r.best_move),
            text(&r.resulting_structure),
            if own_name { "Position;Opening".into() } else { "Position".into() },
        ])
        .expect("writing to memory");
    }
    w.into_inner().expect("writing to memory")
}

fn moves(tree: &Tree, records: &[NodeRecord]) -> Vec<u8> {
    let mut w = writer();
    w.write_record([
        ":START_ID(Position)",
        ":END_ID(Position)",
        "san",
        "uci",
        "rank:int",
        "games:long",
        "whiteWins:long",
        "draws:long",
        "blackWins:long",
        ":TYPE",
    ])
    .expect("writing to memory");
    for (from, node) in tree.nodes.iter().enumerate() {
        for (rank, edge) in node.children.iter().enumerate() {
            let o = edge.stats.as_ref().map(|s| s.outcomes).unwrap_or_default();
            w.write_record([
                records[from].node_id.as_str(),
                records[edge.child as usize].node_id.as_str(),
                &edge.san,
                &edge.uci,
                &(rank + 1).to_string(),
                &o.games().to_string(),
                &o.white.to_string(),
                &o.draws.to_string(),
                &o.black.to_string(),
                "MOVE",
            ])
            .expect("writing to memory");
        }
    }
    w.into_inner().expect("writing to memory")
}

fn transpositions(tree: &Tree, records: &[NodeRecord]) -> Vec<u8> {
    let mut w = writer();
    w.write_record([":START_ID(Position)", ":END_ID(Position)", "positionId", ":TYPE"])
        .expect("writing to memory");
    for (target, a, b) in tree.transpositions() {
        let id = |i: u32| records[i as usize].node_id.as_str();
        w.write_record([id(a), id(b), id(target), "TRANSPOSES_TO"]).expect("writing to memory");
    }
    w.into_inner().expect("writing to memory")
}
