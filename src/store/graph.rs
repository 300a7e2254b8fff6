//! Loading a built store into a [`Graph`], in two table scans: the server keeps the
//! whole read-only knowledge base in memory instead of querying SQLite per request.

use std::collections::HashMap;

use rusqlite::Connection;

use super::StoreError;
use crate::games::stats::Outcomes;
use crate::graph::{Edge, Engine, Entry, Graph, Node};

/// Reads every node and edge of the store on `conn` (`path` names it in errors).
pub fn load(conn: &Connection, path: &str) -> Result<Graph, StoreError> {
    let err = |source| StoreError::Sqlite { path: path.to_string(), source };
    let mut stmt = conn
        .prepare(
            "SELECT n.node_id, n.position_key, n.fen, n.ply, n.moves, n.eco_code, n.opening_name, n.variation_name,
             n.white_wins, n.draws, n.black_wins, n.stockfish_eval, n.stockfish_mate, n.stockfish_depth, n.best_move,
             n.best_move_uci, n.is_dubious, n.is_busted, n.stockfish_lines,
             e.src, e.eco, e.scid, e.name, e.aliases, e.is_eco_root, n.resulting_structure, n.name_src, n.eval_source, n.eval_nodes
             FROM opening_nodes n LEFT JOIN opening_entries e ON e.node_id = n.node_id
             ORDER BY n.position_key",
        )
        .map_err(err)?;
    let mut nodes: Vec<Node> = stmt
        .query_map([], |r| {
            let count = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
            let eval: Option<i32> = r.get(11)?;
            let engine = match eval {
                None => None,
                Some(eval) => Some(Engine {
                    eval,
                    mate: r.get(12)?,
                    depth: r.get::<_, Option<u32>>(13)?.unwrap_or(0),
                    best_san: r.get(14)?,
                    best_uci: r.get(15)?,
                    is_dubious: r.get::<_, Option<bool>>(16)?.unwrap_or(false),
                    is_busted: r.get::<_, Option<bool>>(17)?.unwrap_or(false),
                    lines: r
                        .get::<_, Option<String>>(18)?
                        .and_then(|text| serde_json::from_str(&text).ok())
                        .unwrap_or_default(),
                    source: r.get(27)?,
                    nodes: r.get::<_, Option<i64>>(28)?.map_or(0, |n| n.max(0) as u64),
                }),
            };
            let src: Option<String> = r.get(19)?;
            let entry = match src {
                None => None,
                Some(src) => Some(Entry {
                    src,
                    eco: r.get(20)?,
                    scid: r.get(21)?,
                    name: r.get(22)?,
                    aliases: r
                        .get::<_, Option<String>>(23)?
                        .and_then(|text| serde_json::from_str(&text).ok())
                        .unwrap_or_default(),
                    is_eco_root: r.get(24)?,
                }),
            };
            Ok(Node {
                node_id: r.get(0)?,
                epd: r.get(1)?,
                fen: r.get(2)?,
                ply: r.get(3)?,
                moves: r.get(4)?,
                eco: r.get(5)?,
                opening_name: r.get(6)?,
                variation_name: r.get(7)?,
                entry,
                games: Outcomes { white: count(8)?, draws: count(9)?, black: count(10)? },
                engine,
                children: Vec::new(),
                resulting_structure: r.get(25)?,
                is_stub: r.get::<_, Option<String>>(26)?.as_deref() == Some(crate::record::STUB_SRC),
            })
        })
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let index: HashMap<String, u32> = nodes.iter().enumerate().map(|(i, n)| (n.node_id.clone(), i as u32)).collect();
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
        let (Some(&parent), Some(&child)) = (index.get(&parent), index.get(&child)) else { continue };
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
    Graph::new(nodes).ok_or_else(|| StoreError::Corrupt(format!("{path} (it has no start position)")))
}
