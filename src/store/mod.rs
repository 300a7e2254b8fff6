//! The embedded store: an SQLite database with the technical design's relational schema.
//!
//! [`write`](mod@write) turns a built [`Tree`](crate::tree::Tree) into a database file atomically
//! (built beside the target, then renamed), carrying over and extending the
//! `node_changelog` of the database it replaces. [`read`] answers queries.

pub mod answers;
pub mod answers_part;
mod bulk;
mod changelog;
pub mod explorer;
pub mod graph;
pub mod named_summary;
pub mod players;
pub mod postgres;
pub mod read;
pub mod row;
pub mod scan;
pub mod schema;
pub mod write;

/// The error of an SQLite call on the store (or part) at `path`, for `map_err`: the
/// path is written out only when the call fails.
fn sql(path: &str) -> impl Fn(rusqlite::Error) -> StoreError + Copy + '_ {
    move |source| StoreError::Sqlite { path: path.to_string(), source }
}

/// [`sql`] for a path held as a [`Path`](std::path::Path).
fn sql_file(path: &std::path::Path) -> impl Fn(rusqlite::Error) -> StoreError + Copy + '_ {
    move |source| StoreError::Sqlite { path: path.display().to_string(), source }
}

/// Whether the store on `conn` (`path` names it in errors) has table `name`: the tables
/// a store has only when built with them (the explorer index, player collections, node
/// answers, the named summary), or that a store of an older schema lacks.
fn has_table(conn: &rusqlite::Connection, path: &str, name: &str) -> Result<bool, StoreError> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [name],
        |r| r.get(0),
    )
    .map_err(sql(path))
}

/// The `column` of the one row of `table` in the store on `conn` (`path` names it in
/// errors); `None` without the table or the row.
fn single_blob(
    conn: &rusqlite::Connection,
    path: &str,
    table: &str,
    column: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    use rusqlite::OptionalExtension;
    if !has_table(conn, path, table)? {
        return Ok(None);
    }
    conn.query_row(&format!("SELECT {column} FROM {table}"), [], |r| r.get(0))
        .optional()
        .map_err(sql(path))
}

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("store {path}: {source}")]
    Sqlite {
        /// The database file.
        path: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A file operation failed.
    #[error("store {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The store does not exist yet.
    #[error("no store at {0}: run `okb make` first")]
    Missing(String),
    /// The store opened but its contents make no sense (e.g. no start position).
    #[error("store {0} is unusable: rebuild it with `okb make`")]
    Corrupt(String),
}
