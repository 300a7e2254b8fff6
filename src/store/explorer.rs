//! The explorer index ([`crate::explorer_index`]) in the store: `explorer_nodes` (one
//! postcard blob per node: its cells and kept game references), `explorer_games` (the
//! referenced games, `game` being their index) and `explorer_pgn` (zstd blocks of PGN
//! text). A store built without `[explorer]` has the tables, empty; a store of an older
//! schema has none, and reads as having no index.

use rusqlite::types::ToSqlOutput;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::schema::{GAME_COLUMNS, game_insert, game_select};
use super::{StoreError, sql};
use crate::explorer_index::{ExplorerIndex, GameRef, NodeIndex};

/// Writes `index` on `conn`; `node_ids[i]` is the id of tree node `i`.
pub fn write(
    conn: &mut Connection,
    path: &str,
    node_ids: &[&str],
    index: &ExplorerIndex,
) -> Result<(), StoreError> {
    let tx = conn.transaction().map_err(sql(path))?;
    {
        let mut order: Vec<usize> = (0..index.nodes.len().min(node_ids.len())).collect();
        order.sort_by_key(|&i| node_ids[i]);
        let mut insert =
            tx.prepare("INSERT INTO explorer_nodes VALUES (?1, ?2)").map_err(sql(path))?;
        let mut bytes = Vec::new();
        for i in order {
            let node = &index.nodes[i];
            if node.positions.is_empty() && node.games.is_empty() {
                continue;
            }
            bytes.clear();
            bytes = postcard::to_extend(node, std::mem::take(&mut bytes))
                .expect("serializing to memory does not fail");
            insert.execute(params![node_ids[i], bytes]).map_err(sql(path))?;
        }
        let mut insert = tx.prepare(&game_insert("explorer_games", 1, 3)).map_err(sql(path))?;
        for (i, g) in index.games.iter().enumerate() {
            let place = [g.block, g.start, g.len].map(ToSqlOutput::from);
            let values = [ToSqlOutput::from(i as i64)].into_iter().chain(reference_values(g));
            let values = values.chain(place);
            insert.execute(params_from_iter(values)).map_err(sql(path))?;
        }
        let mut insert =
            tx.prepare("INSERT INTO explorer_pgn VALUES (?1, ?2)").map_err(sql(path))?;
        for (i, block) in index.blocks.iter().enumerate() {
            insert.execute(params![i as i64, block]).map_err(sql(path))?;
        }
        // `GET /masters/pgn/{id}` on a store served from disk finds its game by id.
        tx.execute_batch(GAMES_BY_ID).map_err(sql(path))?;
    }
    tx.commit().map_err(sql(path))
}

/// The index of the referenced games by id, made once they are in.
const GAMES_BY_ID: &str = "CREATE INDEX explorer_games_id ON explorer_games (id, game);";

/// The explorer index of a store, as the server keeps it: node blobs by node id and the
/// referenced games (PGN blocks stay in the file, see [`pgn_block`]).
#[derive(Debug, Default)]
pub struct Loaded {
    /// (node id, its index).
    pub nodes: Vec<(String, NodeIndex)>,
    /// Referenced games by index.
    pub games: Vec<GameRef>,
}

/// Whether the store on `conn` has the explorer tables.
fn has_tables(conn: &Connection, path: &str) -> Result<bool, StoreError> {
    super::has_table(conn, path, "explorer_nodes")
}

/// Whether the store has an explorer index ([`load`] would read one), without reading it.
pub fn present(conn: &Connection, path: &str) -> Result<bool, StoreError> {
    if !has_tables(conn, path)? {
        return Ok(false);
    }
    conn.query_row("SELECT EXISTS (SELECT 1 FROM explorer_nodes)", [], |r| r.get(0))
        .map_err(sql(path))
}

/// Reads the explorer index, `None` when the store has none (built without `[explorer]`,
/// or of an older schema).
pub fn load(conn: &Connection, path: &str) -> Result<Option<Loaded>, StoreError> {
    if !has_tables(conn, path)? {
        return Ok(None);
    }
    let mut loaded = Loaded::default();
    let mut stmt = conn.prepare("SELECT node_id, data FROM explorer_nodes").map_err(sql(path))?;
    let mut rows = stmt.query([]).map_err(sql(path))?;
    while let Some(r) = rows.next().map_err(sql(path))? {
        let id: String = r.get(0).map_err(sql(path))?;
        let data: Vec<u8> = r.get(1).map_err(sql(path))?;
        let node: NodeIndex = postcard::from_bytes(&data)
            .map_err(|e| StoreError::Corrupt(format!("{path}: explorer node {id}: {e}")))?;
        loaded.nodes.push((id, node));
    }
    if loaded.nodes.is_empty() {
        return Ok(None);
    }
    let mut stmt =
        conn.prepare(&placed_select("explorer_games ORDER BY game")).map_err(sql(path))?;
    let games = stmt.query_map([], placed).map_err(sql(path))?;
    loaded.games = games.collect::<Result<_, _>>().map_err(sql(path))?;
    Ok(Some(loaded))
}

/// One node's part of the index, `None` when the node has none (a store read from disk
/// answers one position at a time: [`load`] reads them all), on a store with the index
/// ([`present`]: asked once by the caller, not on every lookup).
pub fn node(conn: &Connection, path: &str, node_id: &str) -> Result<Option<NodeIndex>, StoreError> {
    let data: Option<Vec<u8>> = conn
        .prepare_cached("SELECT data FROM explorer_nodes WHERE node_id = ?1")
        .and_then(|mut s| s.query_row([node_id], |r| r.get(0)).optional())
        .map_err(sql(path))?;
    data.map(|data| {
        postcard::from_bytes(&data)
            .map_err(|e| StoreError::Corrupt(format!("{path}: explorer node {node_id}: {e}")))
    })
    .transpose()
}

/// The referenced games `games` (indices into `explorer_games`, in any order), each with
/// its place in the PGN blocks, by index. A game the table lacks is a corrupt store.
pub fn games(
    conn: &Connection,
    path: &str,
    games: impl IntoIterator<Item = u32>,
) -> Result<std::collections::HashMap<u32, GameRef>, StoreError> {
    let mut stmt =
        conn.prepare_cached(&placed_select("explorer_games WHERE game = ?1")).map_err(sql(path))?;
    let mut found = std::collections::HashMap::new();
    for game in games {
        if found.contains_key(&game) {
            continue;
        }
        let g = stmt.query_row([game], placed).optional().map_err(sql(path))?;
        let g = g.ok_or_else(|| {
            StoreError::Corrupt(format!("{path}: explorer game {game} is referenced but missing"))
        })?;
        found.insert(game, g);
    }
    Ok(found)
}

/// The first referenced game (lowest index) with id `id`, as [`load`]'s callers look ids
/// up: by the index `explorer_games_id` where the store has it, else by a scan.
pub fn game_by_id(conn: &Connection, path: &str, id: &str) -> Result<Option<GameRef>, StoreError> {
    if !has_tables(conn, path)? {
        return Ok(None);
    }
    conn.prepare_cached(&placed_select("explorer_games WHERE id = ?1 ORDER BY game LIMIT 1"))
        .and_then(|mut s| s.query_row([id], placed).optional())
        .map_err(sql(path))
}

/// The id of the first referenced game (index 0), if any.
pub fn first_game_id(conn: &Connection, path: &str) -> Result<Option<String>, StoreError> {
    if !has_tables(conn, path)? {
        return Ok(None);
    }
    conn.query_row("SELECT id FROM explorer_games ORDER BY game LIMIT 1", [], |r| r.get(0))
        .optional()
        .map_err(sql(path))
}

/// The query of `explorer_games` rows, game columns then place columns, that [`placed`]
/// reads; `rest` is the table and what follows it.
fn placed_select(rest: &str) -> String {
    game_select(&[], &["block", "start", "len"], rest)
}

/// A game reference with its place in the PGN blocks, from a row of [`placed_select`].
fn placed(r: &rusqlite::Row<'_>) -> rusqlite::Result<GameRef> {
    let place = GAME_COLUMNS.len();
    Ok(GameRef {
        block: r.get(place)?,
        start: r.get(place + 1)?,
        len: r.get(place + 2)?,
        ..reference(r, 0)?
    })
}

/// The values of `g`'s [`GAME_COLUMNS`], in their order, for an insert to bind.
pub(super) fn reference_values(g: &GameRef) -> [ToSqlOutput<'_>; GAME_COLUMNS.len()] {
    [
        g.id.as_str().into(),
        g.white.as_str().into(),
        g.black.as_str().into(),
        g.white_rating.into(),
        g.black_rating.into(),
        g.year.into(),
        g.month.into(),
        g.winner.into(),
        g.speed.into(),
        g.mode.into(),
        (g.played as i64).into(),
    ]
}

/// A game's reference read from its [`GAME_COLUMNS`], from column `first` on (as
/// `explorer_games` and `player_games` hold them); no PGN place.
pub(super) fn reference(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<GameRef> {
    Ok(GameRef {
        id: r.get(first)?,
        white: r.get(first + 1)?,
        black: r.get(first + 2)?,
        white_rating: r.get(first + 3)?,
        black_rating: r.get(first + 4)?,
        year: r.get(first + 5)?,
        month: r.get(first + 6)?,
        winner: r.get(first + 7)?,
        speed: r.get(first + 8)?,
        mode: r.get(first + 9)?,
        played: r.get::<_, i64>(first + 10)? as u64,
        ..Default::default()
    })
}

/// The compressed PGN block `block`.
pub fn pgn_block(conn: &Connection, path: &str, block: u32) -> Result<Option<Vec<u8>>, StoreError> {
    conn.query_row("SELECT data FROM explorer_pgn WHERE block = ?1", [block], |r| r.get(0))
        .optional()
        .map_err(sql(path))
}

/// The PGN text of `game`, from its block (`None` when the store lacks the block).
pub fn game_text(
    conn: &Connection,
    path: &str,
    game: &GameRef,
) -> Result<Option<String>, StoreError> {
    let block = pgn_block(conn, path, game.block)?;
    block.map_or(Ok(None), |block| text_in_block(path, game, &block))
}

/// The PGN text of `game` in its compressed block `block`.
fn text_in_block(path: &str, game: &GameRef, block: &[u8]) -> Result<Option<String>, StoreError> {
    let bytes = crate::explorer_index::decompress(block)
        .map_err(|e| StoreError::Corrupt(format!("{path}: PGN block {}: {e}", game.block)))?;
    Ok(crate::explorer_index::game_pgn(game, &bytes))
}

/// A read-only connection for PGN blocks, shared by the server's request handlers.
#[derive(Debug)]
pub struct PgnReader {
    conn: std::sync::Mutex<Connection>,
    path: String,
}

impl PgnReader {
    /// Opens the store at `path` for PGN reads.
    pub fn open(path: &std::path::Path) -> Result<PgnReader, StoreError> {
        let shown = path.display().to_string();
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(sql(&shown))?;
        Ok(PgnReader { conn: std::sync::Mutex::new(conn), path: shown })
    }

    /// The PGN text of `game`.
    pub fn pgn(&self, game: &GameRef) -> Result<Option<String>, StoreError> {
        let block = {
            let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
            pgn_block(&conn, &self.path, game.block)?
        };
        block.map_or(Ok(None), |block| text_in_block(&self.path, game, &block))
    }
}
