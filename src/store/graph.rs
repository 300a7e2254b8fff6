//! Loading a built store into a [`Graph`], in two table scans (the server's endpoints that
//! walk the tree keep a small store's whole knowledge base in memory), one node of it, or
//! the piece of it below one node that a tree-shaped answer reads ([`piece`]: a large
//! store's trees are answered from disk).

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
    let err = super::sql(path);
    let mut stmt = conn.prepare_cached(&node_select("n.position_key = ?1")).map_err(err)?;
    let entry_at = super::row::stored_count();
    let mut rows = stmt
        .query_map([epd], |r| Ok(graph_node(read_node(r)?, entry(r, entry_at)?)))
        .map_err(err)?;
    rows.next().transpose().map_err(err)
}

/// Calls `visit` with the outline of every node of the store on `conn` (`path` names it
/// in errors), in no particular order, one at a time: its id, identity, ply, line, names,
/// entry, game counts and structure, without its FEN, evaluation or edges (decoding an
/// evaluation's lines costs more than the rest of a row), and whether it has an
/// evaluation with lines ([`evaluated_fen`] reads them). What reads a store too large to
/// hold in memory once through.
pub fn each_outline(
    conn: &Connection,
    path: &str,
    mut visit: impl FnMut(Node, bool),
) -> Result<(), StoreError> {
    let err = super::sql(path);
    // The entries (a few thousand) first: a join would look one up per node.
    let mut entries: HashMap<String, Entry> = HashMap::new();
    let mut stmt = conn
        .prepare("SELECT node_id, src, eco, scid, name, aliases, is_eco_root FROM opening_entries")
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        if let Some(entry) = entry(r, 1).map_err(err)? {
            entries.insert(r.get(0).map_err(err)?, entry);
        }
    }
    let mut stmt = conn
        .prepare(
            "SELECT node_id, position_key, ply, moves, eco_code, opening_name, variation_name,
                    white_wins, draws, black_wins, resulting_structure, name_src,
                    stockfish_eval IS NOT NULL AND stockfish_lines IS NOT NULL
             FROM opening_nodes",
        )
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let mut node = outline(r).map_err(err)?;
        node.entry = entries.remove(&node.node_id);
        visit(node, r.get(12).map_err(err)?);
    }
    Ok(())
}

/// The node of an [`each_outline`] row, without its entry.
fn outline(r: &rusqlite::Row<'_>) -> rusqlite::Result<Node> {
    Ok(Node {
        node_id: r.get(0)?,
        epd: r.get(1)?,
        fen: String::new(),
        ply: r.get(2)?,
        moves: r.get(3)?,
        eco: r.get(4)?,
        opening_name: r.get(5)?,
        variation_name: r.get(6)?,
        games: Outcomes { white: count(r, 7)?, draws: count(r, 8)?, black: count(r, 9)? },
        resulting_structure: r.get(10)?,
        is_stub: r.get::<_, Option<String>>(11)?.as_deref() == Some(crate::record::STUB_SRC),
        entry: None,
        engine: None,
        children: Vec::new(),
    })
}

/// The count in column `at` of `r` (stored as SQLite's signed integer).
fn count(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, i64>(at)?.max(0) as u64)
}

/// The FEN of node `node_id` of the store on `conn` if its evaluation has a line with
/// moves (what `GET /api/cloud-eval` answers with a move).
pub fn evaluated_fen(
    conn: &Connection,
    path: &str,
    node_id: &str,
) -> Result<Option<String>, StoreError> {
    let err = super::sql(path);
    let mut stmt = conn
        .prepare_cached(
            "SELECT fen, stockfish_lines FROM opening_nodes
             WHERE node_id = ?1 AND stockfish_eval IS NOT NULL",
        )
        .map_err(err)?;
    let mut rows = stmt.query([node_id]).map_err(err)?;
    let Some(r) = rows.next().map_err(err)? else { return Ok(None) };
    let lines: Vec<crate::engine::Line> = r
        .get::<_, Option<String>>(1)
        .map_err(err)?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    if !lines.iter().any(|l| !l.pv_uci.is_empty()) {
        return Ok(None);
    }
    Ok(Some(r.get(0).map_err(err)?))
}

/// Reads every node and edge of the store on `conn` (`path` names it in errors).
pub fn load(conn: &Connection, path: &str) -> Result<Graph, StoreError> {
    let err = super::sql(path);
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
        nodes[parent as usize].children.push(Edge { child, ..edge(r, 2).map_err(err)? });
    }
    Graph::new(nodes)
        .ok_or_else(|| StoreError::Corrupt(format!("{path} (it has no start position)")))
}

/// The edge whose `move_san, move_uci, white_wins, draws, black_wins, avg_rating` are
/// the columns from `at`, its child left at 0.
fn edge(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Edge> {
    let count = |i: usize| r.get::<_, i64>(at + i).map(|v| v.max(0) as u64);
    Ok(Edge {
        child: 0,
        san: r.get(at)?,
        uci: r.get(at + 1)?,
        games: Outcomes { white: count(2)?, draws: count(3)?, black: count(4)? },
        avg_rating: r.get(at + 5)?,
    })
}

/// Which piece of the store [`piece`] reads.
#[derive(Clone, Copy, Debug)]
pub struct Cut<'a> {
    /// The node at the piece's root.
    pub root_id: &'a str,
    /// Plies below the root.
    pub max_depth: u32,
    /// Edges played in fewer games are not followed.
    pub min_games: u64,
    /// The most nodes the piece may hold.
    pub limit: usize,
}

/// What [`piece`] read.
#[derive(Debug)]
pub enum Piece {
    /// The store has no node with the root's id.
    Missing,
    /// The piece holds more than the cut's limit of nodes.
    TooLarge,
    /// The piece: its `root` is the cut's root.
    Read(Graph),
}

/// The piece of the store on `conn` (`path` names it in errors) that the tree-shaped
/// answers below a node read, as a [`Graph::piece`]: the nodes within `max_depth` plies
/// below the root along edges played in at least `min_games` games (breadth-first, so
/// each at its shallowest depth, and expanded only above the cut's depth), and the
/// root's parents (its last move); each node with all its edges, in rank order, as
/// [`load`] reads them. Memory is bounded by the cut's limit, not by the store.
pub fn piece(conn: &Connection, path: &str, cut: Cut<'_>) -> Result<Piece, StoreError> {
    let err = super::sql(path);
    let mut reader = PieceReader::new(conn).map_err(err)?;
    if !reader.add(cut.root_id).map_err(err)? {
        return Ok(Piece::Missing);
    }
    let mut queue = std::collections::VecDeque::from([(0usize, 0u32)]);
    while let Some((at, depth)) = queue.pop_front() {
        if depth >= cut.max_depth {
            continue;
        }
        let kept: Vec<String> = reader.nodes[at]
            .1
            .iter()
            .filter(|(_, e)| e.games.games() >= cut.min_games)
            .map(|(id, _)| id.clone())
            .collect();
        for child in kept {
            if !reader.index.contains_key(&child) && reader.add(&child).map_err(err)? {
                queue.push_back((reader.nodes.len() - 1, depth + 1));
            }
            if reader.nodes.len() > cut.limit {
                return Ok(Piece::TooLarge);
            }
        }
    }
    let parents: Vec<String> = reader
        .parents
        .query_map([cut.root_id], |r| r.get(0))
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    for parent in parents {
        if !reader.index.contains_key(&parent) {
            reader.add(&parent).map_err(err)?;
        }
    }
    if reader.nodes.len() > cut.limit {
        return Ok(Piece::TooLarge);
    }
    Ok(Piece::Read(reader.graph(cut.root_id)))
}

/// The statements and the nodes of one [`piece`] being read.
struct PieceReader<'c> {
    node: rusqlite::CachedStatement<'c>,
    edges: rusqlite::CachedStatement<'c>,
    parents: rusqlite::CachedStatement<'c>,
    /// Each node read, with its edges by child id.
    nodes: Vec<(Node, Vec<(String, Edge)>)>,
    /// Where each node read is in `nodes`, by id.
    index: HashMap<String, usize>,
}

impl<'c> PieceReader<'c> {
    fn new(conn: &'c Connection) -> rusqlite::Result<PieceReader<'c>> {
        Ok(PieceReader {
            node: conn.prepare_cached(&node_select("n.node_id = ?1"))?,
            // Joined with the child's row as [`load`] keeps only edges between two nodes.
            edges: conn.prepare_cached(
                "SELECT c.child_id, c.move_san, c.move_uci, c.white_wins, c.draws, c.black_wins, c.avg_rating
                 FROM node_children c JOIN opening_nodes n ON n.node_id = c.child_id
                 WHERE c.parent_id = ?1 ORDER BY c.rank",
            )?,
            parents: conn.prepare_cached(
                "SELECT c.parent_id FROM node_children c JOIN opening_nodes n ON n.node_id = c.parent_id
                 WHERE c.child_id = ?1",
            )?,
            nodes: Vec::new(),
            index: HashMap::new(),
        })
    }

    /// Reads node `id` with its edges; false when the store has no such node.
    fn add(&mut self, id: &str) -> rusqlite::Result<bool> {
        let entry_at = super::row::stored_count();
        let node = self
            .node
            .query_map([id], |r| Ok(graph_node(read_node(r)?, entry(r, entry_at)?)))?
            .next()
            .transpose()?;
        let Some(node) = node else { return Ok(false) };
        let edges = self
            .edges
            .query_map([id], |r| Ok((r.get::<_, String>(0)?, edge(r, 1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        self.index.insert(id.to_string(), self.nodes.len());
        self.nodes.push((node, edges));
        Ok(true)
    }

    /// The nodes read as a [`Graph::piece`] rooted at `root_id` (one of them).
    fn graph(self, root_id: &str) -> Graph {
        let mut nodes = self.nodes;
        nodes.sort_by(|a, b| a.0.epd.cmp(&b.0.epd));
        let at: HashMap<&str, u32> =
            nodes.iter().enumerate().map(|(i, n)| (n.0.node_id.as_str(), i as u32)).collect();
        let root = at[root_id];
        let children: Vec<Vec<Edge>> = nodes
            .iter()
            .map(|(_, edges)| {
                let child = |id: &str| at.get(id).copied().unwrap_or(crate::graph::OUTSIDE);
                edges.iter().map(|(id, e)| Edge { child: child(id), ..e.clone() }).collect()
            })
            .collect();
        let nodes = nodes
            .into_iter()
            .zip(children)
            .map(|((node, _), children)| Node { children, ..node })
            .collect();
        Graph::piece(nodes, root)
    }
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
