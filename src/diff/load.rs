//! Reading what a diff compares from a store (and, optionally, its build's manifest).

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::NodeFacts;
use crate::release::Manifest;

/// One build as a diff sees it.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Positions by identity (the store's `position_key`).
    pub nodes: BTreeMap<String, NodeFacts>,
    /// Transposition links as pairs of lines, each pair sorted.
    pub transpositions: Vec<(String, String)>,
    /// Output files by path: (BLAKE3, bytes), when the build's manifest is known.
    pub files: Option<BTreeMap<String, (String, u64)>>,
}

/// The node columns compared; `{source}` is `n.eval_source`, or NULL in a store made
/// before evaluations recorded their source.
const NODES: &str = "SELECT n.position_key, n.moves, n.eco_code, n.opening_name, n.variation_name, n.name_inherited,
    e.aliases, n.game_count, n.white_win_pct, n.draw_pct, n.stockfish_eval, n.stockfish_mate, n.best_move,
    n.resulting_structure, n.stockfish_depth, {source}
    FROM opening_nodes n LEFT JOIN opening_entries e ON e.node_id = n.node_id";

const LINKS: &str = "SELECT a.moves, b.moves FROM node_transpositions t
    JOIN opening_nodes a ON a.node_id = t.node_id JOIN opening_nodes b ON b.node_id = t.transposed_node_id";

impl Snapshot {
    /// Reads the store at `store`, and the manifest at `manifest` when given and present.
    pub fn load(store: &Path, manifest: Option<&Path>) -> Result<Snapshot, String> {
        let shown = store.display();
        if !store.exists() {
            return Err(format!("{shown}: no such store"));
        }
        let conn = Connection::open_with_flags(store, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("{shown}: {e}"))?;
        let sql = |e: rusqlite::Error| format!("{shown}: not an okb store ({e})");
        let mut nodes = BTreeMap::new();
        let has_source = conn.prepare("SELECT eval_source FROM opening_nodes LIMIT 0").is_ok();
        let nodes_sql =
            NODES.replace("{source}", if has_source { "n.eval_source" } else { "NULL" });
        let mut stmt = conn.prepare(&nodes_sql).map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let key: String = r.get(0).map_err(sql)?;
            nodes.insert(key, node(r).map_err(sql)?);
        }
        let mut stmt = conn.prepare(LINKS).map_err(sql)?;
        let links = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql)?;
        let mut transpositions = Vec::new();
        for link in links {
            let (a, b) = link.map_err(sql)?;
            transpositions.push(if a <= b { (a, b) } else { (b, a) });
        }
        transpositions.sort();
        let files = match manifest.filter(|m| m.exists()) {
            Some(path) => Some(output_files(&Manifest::load(path)?)),
            None => None,
        };
        Ok(Snapshot { nodes, transpositions, files })
    }
}

fn node(r: &rusqlite::Row<'_>) -> rusqlite::Result<NodeFacts> {
    let (opening, variation): (Option<String>, Option<String>) = (r.get(3)?, r.get(4)?);
    let name = crate::graph::full_name(opening.as_deref(), variation.as_deref());
    let aliases: Option<String> = r.get(6)?;
    let aliases: BTreeMap<String, String> =
        aliases.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default();
    Ok(NodeFacts {
        moves: r.get(1)?,
        eco: r.get(2)?,
        name,
        named_here: !r.get::<_, bool>(5)?,
        aliases: aliases.into_iter().map(|(src, name)| format!("{src}: {name}")).collect(),
        games: r.get::<_, i64>(7)?.max(0) as u64,
        white_pct: r.get(8)?,
        draw_pct: r.get(9)?,
        eval_cp: r.get(10)?,
        mate: r.get(11)?,
        best_move: r.get(12)?,
        structure: r.get(13)?,
        eval_depth: r.get(14)?,
        eval_source: r.get(15)?,
    })
}

fn output_files(m: &Manifest) -> BTreeMap<String, (String, u64)> {
    m.outputs.iter().map(|o| (o.path.clone(), (o.blake3.clone(), o.bytes))).collect()
}
