//! One record per position for the server's node answers on a large store:
//! `node_answers` holds each node's `GET /node/fen` answer, its JSON as [`read`] makes it,
//! zstd-compressed, under the node's 128-bit position key (two integer columns, indexed).
//!
//! Why: on a store far larger than the page cache, an answer built from the relational
//! tables reads the position index (text keys), the node row, its entry, its edges, each
//! child's row and the index of its parents: five to eight random pages. Here a lookup
//! descends one integer index, small enough to stay cached, and reads one row. The table
//! is written only for stores over a node count (`[store] answers_above`, by default the
//! size above which `okb serve` no longer holds the graph in memory); smaller stores keep
//! it empty and are answered from the tables (or from memory) as before.
//!
//! The answers are made by [`Store::nodes_by_id`] from the finished store, so they are the
//! bytes the tables give, whatever wrote the tables.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::position::PositionKey;

/// The node count above which a store is large: `okb serve` answers it from the file
/// rather than holding its graph in memory (`--in-memory-nodes`), so the store step
/// writes its node answers (`[store] answers_above`).
pub const LARGE_STORE_NODES: u64 = 500_000;

/// The zstd level of the answers: a node answer is about 1–3 KB of JSON, compressed about
/// fourfold at this level in a few microseconds.
pub(super) const LEVEL: i32 = 3;

/// The two integer columns of a position key: its high and low 64 bits.
pub(super) fn columns(key: PositionKey) -> (i64, i64) {
    ((key.0 >> 64) as u64 as i64, key.0 as u64 as i64)
}

/// Whether the store on `conn` has node answers (a store of an older schema has no
/// table; a small store's table is empty). The table is written whole or not at all.
pub fn present(conn: &Connection, path: &str) -> Result<bool, StoreError> {
    let err = |source| StoreError::Sqlite { path: path.to_string(), source };
    let table: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'node_answers')",
            [],
            |r| r.get(0),
        )
        .map_err(err)?;
    if !table {
        return Ok(false);
    }
    conn.query_row("SELECT EXISTS (SELECT 1 FROM node_answers)", [], |r| r.get(0)).map_err(err)
}

/// The `GET /node/fen` answer (JSON) of the position keyed `key`, if the store has it; on
/// a store whose answers are [`present`].
pub fn lookup(
    conn: &Connection,
    path: &str,
    key: PositionKey,
) -> Result<Option<Vec<u8>>, StoreError> {
    let (high, low) = columns(key);
    let mut stmt = conn
        .prepare_cached("SELECT answer FROM node_answers WHERE key = ?1 AND check_key = ?2")
        .map_err(|source| StoreError::Sqlite { path: path.to_string(), source })?;
    let blob: Option<Vec<u8>> = stmt
        .query_row(params![high, low], |r| r.get(0))
        .optional()
        .map_err(|source| StoreError::Sqlite { path: path.to_string(), source })?;
    blob.map(|blob| {
        zstd::stream::decode_all(&blob[..]).map_err(|e| {
            StoreError::Corrupt(format!("{path}: a node answer does not decompress: {e}"))
        })
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_splits_into_its_high_and_low_halves() {
        let key = PositionKey(0x8000_0000_0000_0001_FFFF_FFFF_FFFF_FFFE);
        assert_eq!(columns(key), (i64::MIN + 1, -2));
        assert_eq!(columns(PositionKey(7)), (0, 7));
    }
}
