//! A large store's named summary (`named_summary`, one row): the [`NamedTally`] of its
//! nodes, which `okb serve` needs for its answers by name (search, structures, the
//! OpenAPI document) and would otherwise read from every node of the store at start-up
//! (about 70 s and 22 GB of pages at 50 M nodes, evicting the pages lookups need).
//!
//! Written with the node answers ([`super::write::add_answers`]), so a store over `[store]
//! answers_above` nodes has it; the server of a store without it (smaller, or written by
//! an older okb) reads every node as before ([`tally`]). The row is the tally's JSON
//! ([`NamedTally::summary`], whose bytes follow from the nodes alone), compressed.

use rusqlite::Connection;

use super::{StoreError, sql};
use crate::graph::tally::NamedTally;

/// The table (created with its row, so a store without a summary has no table).
pub const TABLE: &str = "CREATE TABLE IF NOT EXISTS named_summary (summary BLOB NOT NULL);";

/// The zstd level of the row (about 10 MB of JSON over the whole taxonomies, 1.3 MB at
/// this level in 0.2 s; level 19 saved a quarter more in 5.6 s of every large store's
/// write).
const LEVEL: i32 = 9;

/// The tally of every node of the store on `conn` (`path` names it in errors), read in
/// one pass in the table's order ([`super::graph::each_outline`]), an evaluated FEN read
/// only for a position played more than the evaluated ones kept so far.
pub fn tally(conn: &Connection, path: &str) -> Result<NamedTally, StoreError> {
    let mut tally = NamedTally::default();
    let mut failed = None;
    super::graph::each_outline(conn, path, |node, evaluated| {
        let evaluated_fen = || {
            let fen = evaluated.then(|| super::graph::evaluated_fen(conn, path, &node.node_id));
            fen?.unwrap_or_else(|e| {
                failed.get_or_insert(e);
                None
            })
        };
        tally.add_outline(&node, evaluated_fen);
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(tally),
    }
}

/// Writes `tally` as the store's summary (replacing any) through `conn`, a writer of the
/// store at `path`.
pub fn write(conn: &Connection, path: &str, tally: &NamedTally) -> Result<(), StoreError> {
    let err = sql(path);
    let compressed = zstd::bulk::compress(&tally.summary(), LEVEL)
        .map_err(|e| StoreError::Corrupt(format!("{path}: compressing the named summary: {e}")))?;
    conn.execute_batch(TABLE).map_err(err)?;
    conn.execute("DELETE FROM named_summary", []).map_err(err)?;
    conn.execute("INSERT INTO named_summary VALUES (?1)", [compressed]).map_err(err)?;
    Ok(())
}

/// The summary of the store on `conn`, if it has one this okb reads.
pub fn read(conn: &Connection, path: &str) -> Result<Option<NamedTally>, StoreError> {
    let row = super::single_blob(conn, path, "named_summary", "summary")?;
    let Some(compressed) = row else { return Ok(None) };
    let corrupt =
        |e: &dyn std::fmt::Display| StoreError::Corrupt(format!("{path}: named summary: {e}"));
    let json = zstd::stream::decode_all(&compressed[..]).map_err(|e| corrupt(&e))?;
    NamedTally::from_summary(&json).map_err(|e| corrupt(&e))
}
