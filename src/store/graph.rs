//! Loading a built store into a [`Graph`], in two table scans (the server's endpoints that
//! walk the tree keep the whole read-only knowledge base in memory), or one node of it.

use std::collections::HashMap;

use rusqlite::Connection;

use super::StoreError;
use super::row::{node_columns, read_node};
use crate::games::stats::Outcomes;
use crate::graph::{Edge, Engine, Entry, Graph, Node};
use crate::record::NodeRecord;

/// The select of a graph node's row with its entry, rows matching `condition`.
fn node_select(condition: &str) -> String {
    format!(
        "SELECT {}, e.src, e.eco, e.scid, e.name, e.aliases, e.is_eco_root
         FROM opening_nodes n LEFT JOIN opening_entries e ON e.node_id = n.node_id
         WHERE {condition} ORDER BY n.position_key",
        node_columns("n")
    )
}

/// The node on position identity `epd`, without edges, from the store on `conn` (`path`
/// names it in errors): what a server answering from disk reads for one position.
pub fn node_at(conn: &Connection, path: &str, epd: &str) -> Result<Option<Node>, StoreError> {
    let err = |source| StoreError::Sqlite { path: path.to_string(), source };
    let mut stmt = conn.prepare_cached(&node_select("n.position_key = ?1")).map_err(err)?;
    let entry_at = super::row::stored_count();
    let mut rows = stmt
        .query_map([epd], |r| Ok(graph_node(read_node(r)?, entry(r, entry_at)?)))
        .map_err(err)?;
    rows.next().transpose().map_err(err)
}

/// Reads every node and edge of the store on `conn` (`path` names it in errors).
pub fn load(conn: &Connection, path: &str) -> Result<Graph, StoreError> {
    let err = |source| StoreError::Sqlite { path: path.to_string(), source };
    let mut stmt = conn.prepare(&node_select("1 = 1")).map_err(err)?;
    let entry_at = super::row::stored_count();
    let mut nodes: Vec<Node> = stmt
        .query_map([], |r| Ok(graph_node(read_node(r)?, entry(r, entry_at)?)))
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let index: HashMap<String, u32> =
        nodes.iter().enumerate().map(|(i, n)| (n.node_id.clone(), i as u32)).collect();
    let mut stmt = conn
        .prepare(
            "SELECT parent_id, child_id, move_san, move_uci, white_wins, draws, black_wins, avg_rating
             FROM node_children ORDER BY parent_id, rank",
        )
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let parent: String = r.get(0).map_err(err)?;
        let child: String = r.get(1).map_err(err)?;
        // Foreign keys are not enforced by SQLite; an edge to nowhere is skipped, not trusted.
        let (Some(&parent), Some(&child)) = (index.get(&parent), index.get(&child)) else {
            continue;
        };
        let count = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64).map_err(err);
        let edge = Edge {
            child,
            san: r.get(2).map_err(err)?,
            uci: r.get(3).map_err(err)?,
            games: Outcomes { white: count(4)?, draws: count(5)?, black: count(6)? },
            avg_rating: r.get(7).map_err(err)?,
        };
        nodes[parent as usize].children.push(edge);
    }
    Graph::new(nodes)
        .ok_or_else(|| StoreError::Corrupt(format!("{path} (it has no start position)")))
}

/// The node's own entry, from the entry columns at `at` (none when the node has none).
fn entry(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Option<Entry>> {
    let Some(src) = r.get::<_, Option<String>>(at)? else { return Ok(None) };
    Ok(Some(Entry {
        src,
        eco: r.get(at + 1)?,
        scid: r.get(at + 2)?,
        name: r.get(at + 3)?,
        aliases: r
            .get::<_, Option<String>>(at + 4)?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default(),
        is_eco_root: r.get(at + 5)?,
    }))
}

/// The graph's node for a stored node row (its edges are added after).
fn graph_node(row: NodeRecord, entry: Option<Entry>) -> Node {
    let engine = row.stockfish_eval.map(|eval| Engine {
        eval,
        mate: row.stockfish_mate,
        depth: row.stockfish_depth.unwrap_or(0),
        best_san: row.best_move,
        best_uci: row.best_move_uci,
        is_dubious: row.is_dubious.unwrap_or(false),
        is_busted: row.is_busted.unwrap_or(false),
        lines: row
            .stockfish_lines
            .and_then(|text| serde_json::from_str(&text.0).ok())
            .unwrap_or_default(),
        source: row.eval_source,
        nodes: row.eval_nodes.unwrap_or(0),
    });
    Node {
        node_id: row.node_id,
        epd: row.position_key,
        fen: row.fen,
        ply: row.ply as u32,
        moves: row.moves,
        eco: row.eco_code,
        opening_name: row.opening_name,
        variation_name: row.variation_name,
        entry,
        games: Outcomes { white: row.white_wins, draws: row.draws, black: row.black_wins },
        engine,
        children: Vec::new(),
        resulting_structure: row.resulting_structure,
        is_stub: row.name_src.as_deref() == Some(crate::record::STUB_SRC),
    }
}
