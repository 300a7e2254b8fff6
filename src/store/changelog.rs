//! The changelog of a store write: what changed against the store it replaces.
//!
//! The previous store's nodes are read in node-id order (its node table's key order, a
//! sequential scan) beside this build's records in the same order, so the two are
//! compared as a merge, with neither held whole in memory. The rows go into a part
//! database of their own, written on a second core while the store's nodes are
//! inserted, and copied into the store by SQLite's transfer optimization.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::StoreError;
use super::bulk::{BulkInsert, Cell};
use crate::record::NodeRecord;
use crate::record::column::Column;

/// The store a write replaces, checked readable for its changelog.
pub(super) struct Previous {
    path: String,
    /// Its build number (`meta.build`).
    pub build: i64,
}

impl Previous {
    /// Checks the store at `path`: one whose tracked columns and changelog this version
    /// reads (else the new store starts a new log at build 1).
    pub fn open(path: &Path) -> Option<Previous> {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
        conn.prepare(&select_nodes()).ok()?;
        conn.prepare("SELECT build, node_id, field, old_value, new_value FROM node_changelog")
            .ok()?;
        let build = conn
            .query_row("SELECT value FROM meta WHERE key = 'build'", [], |r| r.get::<_, String>(0))
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Some(Previous { path: path.to_str()?.to_string(), build })
    }

    /// Writes the changelog of build `build` into a part database at `part` (the
    /// store's schema, only `node_changelog` filled, with its index): the previous
    /// store's rows of the builds `keep` keeps (`None`: all), then this build's changes
    /// against it, in node-id order: a node's changed fields in the log's field order,
    /// every field a new node has, and each node that is gone. `records` are visited in
    /// `order` (ascending node id). Returns the number of this build's rows.
    pub fn write_part(
        &self,
        records: &[NodeRecord],
        order: &[usize],
        log: (i64, Option<u32>),
        part: &Path,
    ) -> Result<usize, StoreError> {
        let (build, keep) = log;
        let sql = super::sql_file(part);
        let _ = std::fs::remove_file(part);
        let mut conn = super::schema::open_writer(part)?;
        conn.execute_batch(super::schema::schema()).map_err(sql)?;
        let first_kept = keep.map_or(i64::MIN, |keep| build - i64::from(keep) + 1);
        let mut indexed = false;
        if first_kept < build {
            conn.execute("ATTACH DATABASE ?1 AS previous", [&self.path]).map_err(sql)?;
            if kept_whole(&conn, first_kept).map_err(sql)? {
                // The index first: the transfer copies the previous log's index cells too,
                // and this build's rows, in node-id order, join it in one sweep.
                conn.execute_batch(super::schema::CHANGELOG_INDEXES).map_err(sql)?;
                conn.execute(
                    "INSERT INTO node_changelog SELECT * FROM previous.node_changelog",
                    [],
                )
                .map_err(sql)?;
                indexed = true;
            } else {
                conn.execute(
                    "INSERT INTO node_changelog SELECT build, node_id, field, old_value, new_value \
                     FROM previous.node_changelog WHERE build >= ?1 ORDER BY rowid",
                    [first_kept],
                )
                .map_err(sql)?;
            }
            conn.execute("DETACH DATABASE previous", []).map_err(sql)?;
        }
        let tx = conn.transaction().map_err(sql)?;
        let written = self.write_changes(&tx, records, order, build).map_err(|source| {
            StoreError::Sqlite {
                path: format!("{} (against {})", part.display(), self.path),
                source,
            }
        })?;
        if !indexed {
            tx.execute_batch(super::schema::CHANGELOG_INDEXES).map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        conn.close().map_err(|(_, e)| sql(e))?;
        Ok(written)
    }

    /// Inserts this build's changes (see [`Previous::write_part`]); returns how many.
    fn write_changes(
        &self,
        tx: &rusqlite::Transaction<'_>,
        records: &[NodeRecord],
        order: &[usize],
        build: i64,
    ) -> rusqlite::Result<usize> {
        let tracked = crate::record::tracked_columns();
        let conn = Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let mut stmt = conn.prepare(&select_nodes())?;
        let mut old_rows = stmt.query([])?;
        let mut insert =
            BulkInsert::new(tx, "INSERT INTO node_changelog VALUES (?1, ?2, ?3, ?4, ?5)", 5)?;
        let mut log = |id: &str, field: &str, old: Option<String>, new: Option<String>| {
            insert.row(&[
                build.into(),
                id.into(),
                field.into(),
                old.as_ref().into(),
                new.as_ref().into(),
            ])
        };
        let mut written = 0;
        let mut old = old_rows.next()?;
        let mut new = order.iter().map(|&i| &records[i]).peekable();
        loop {
            let old_id =
                old.map(|row| row.get_ref(0)).transpose()?.map(|v| v.as_str()).transpose()?;
            let step = match (old_id, new.peek()) {
                (None, None) => break,
                (Some(id), Some(r)) if id == r.node_id => Step::Both,
                (Some(id), Some(r)) if id < r.node_id.as_str() => Step::Gone,
                (Some(_), None) => Step::Gone,
                _ => Step::New,
            };
            match step {
                Step::Gone => {
                    let id = old_id.expect("a gone node was read");
                    log(id, "node", Some("present".into()), None)?;
                    written += 1;
                }
                Step::New | Step::Both => {
                    let r = new.next().expect("a node to compare");
                    let row = if matches!(step, Step::Both) { old } else { None };
                    for (field, old_text, new_text) in changed_fields(&tracked, row, r)? {
                        log(&r.node_id, field, old_text, new_text)?;
                        written += 1;
                    }
                }
            }
            if !matches!(step, Step::New) {
                old = old_rows.next()?;
            }
        }
        Ok(written)
    }
}

/// Whether the log of the store attached as `previous` is kept whole from build
/// `first_kept` on, in a form SQLite's transfer optimization copies (table and index
/// cells, without decoding a row) to the very rows, rowids and index that the
/// row-by-row copy and a fresh index give: the same table declaration, rowids 1 to n
/// (each write renumbers its log from 1), and a first row, the oldest (each write
/// appends its build after the rows it keeps), at least `first_kept`. A previous log
/// that fails any of these is copied row by row.
fn kept_whole(conn: &Connection, first_kept: i64) -> rusqlite::Result<bool> {
    use rusqlite::OptionalExtension;
    let declared = |schema: &str| {
        conn.query_row(
            &format!("SELECT sql FROM {schema}.sqlite_schema WHERE type = 'table' AND name = 'node_changelog'"),
            [],
            |r| r.get::<_, String>(0),
        )
        .optional()
    };
    let ours = declared("main")?;
    if ours.is_none() || ours != declared("previous")? {
        return Ok(false);
    }
    // A count (SQLite reads the smallest b-tree's leaves for it, not the rows) and two
    // reads at the edge of the table's b-tree.
    let rows: i64 =
        conn.query_row("SELECT count(*) FROM previous.node_changelog", [], |r| r.get(0))?;
    if rows == 0 {
        return Ok(true);
    }
    let last: i64 =
        conn.query_row("SELECT max(rowid) FROM previous.node_changelog", [], |r| r.get(0))?;
    let (first, oldest): (i64, i64) = conn.query_row(
        "SELECT rowid, build FROM previous.node_changelog ORDER BY rowid LIMIT 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(first == 1 && last == rows && oldest >= first_kept)
}

/// What the merge does with the next ids.
enum Step {
    /// The previous node is gone.
    Gone,
    /// The record is a new node.
    New,
    /// Both hold the node.
    Both,
}

/// The previous node columns the log compares, in node-id order.
fn select_nodes() -> String {
    let columns: Vec<&str> = crate::record::tracked_columns().iter().map(|c| c.name).collect();
    format!("SELECT node_id, {} FROM opening_nodes ORDER BY node_id", columns.join(", "))
}

/// A changed field: its name, old and new value as text.
type Changed = (&'static str, Option<String>, Option<String>);

/// The changed fields of record `r` against its previous row `old` (`None`: a new node).
fn changed_fields(
    tracked: &[&Column<NodeRecord>],
    old: Option<&rusqlite::Row<'_>>,
    r: &NodeRecord,
) -> rusqlite::Result<Vec<Changed>> {
    let mut changed = Vec::new();
    for (f, column) in tracked.iter().enumerate() {
        let new_cell = (column.cell)(r);
        let old_cell = match old {
            Some(row) => Some(
                super::row::cell_of(row.get_ref(f + 1)?)
                    .map_err(|e| rusqlite::Error::Utf8Error(f + 1, e))?
                    .unwrap_or(Cell::Null),
            ),
            None => None,
        };
        // Equal cells have equal texts; only unequal ones are written out to compare,
        // since the log compares texts (an integer and a real can read the same).
        if old_cell == Some(new_cell) {
            continue;
        }
        let (old_text, new_text) = (old_cell.and_then(Cell::as_text), new_cell.as_text());
        let unchanged = match old_cell {
            Some(_) => old_text == new_text,
            None => new_text.is_none(),
        };
        if !unchanged {
            changed.push((column.name, old_text, new_text));
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use crate::eco::{EcoFormat, merge::MergeInput};

    fn tree(tsv: &str) -> crate::tree::Tree {
        let parsed = crate::eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let input = MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed };
        let skeleton = crate::eco::merge(std::slice::from_ref(&input), true);
        crate::tree::build(&skeleton, None, &Default::default())
    }

    /// A previous log kept whole is transferred, not copied row by row; both must give
    /// the same store, byte for byte. The row-by-row copy is forced by renumbering the
    /// previous log's rows (same rows, same order), which the transfer refuses.
    #[test]
    fn a_log_transferred_whole_gives_the_store_its_row_by_row_copy_gives() {
        let small = "eco\tname\tpgn\nA00\tA\t1. e4\nB00\tB: x\t1. d4 d5 2. c4\n";
        let large = "eco\tname\tpgn\nA00\tA\t1. e4\nA01\tC\t1. e4 e5 2. Nf3 Nc6\nB00\tB: y\t1. d4 d5 2. c4\n";
        let (small, large) = (tree(small), tree(large));
        let dir = tempfile::tempdir().unwrap();
        let skeleton = {
            let tsv = "eco\tname\tpgn\nA00\tA\t1. e4\n";
            let parsed = crate::eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
            let input =
                MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed };
            crate::eco::merge(std::slice::from_ref(&input), true)
        };
        let entries = dir.path().join("entries.sqlite");
        crate::store::write::write_entries(&skeleton, &entries).unwrap();
        let write = |tree, path: &std::path::Path| {
            crate::store::write::write(tree, &entries, None, None, &[], path).unwrap()
        };
        let (whole, renumbered) = (dir.path().join("whole.sqlite"), dir.path().join("rows.sqlite"));
        write(&small, &whole);
        assert!(write(&large, &whole).changes > 0);
        std::fs::copy(&whole, &renumbered).unwrap();
        let conn = rusqlite::Connection::open(&renumbered).unwrap();
        conn.execute("UPDATE node_changelog SET rowid = rowid + 1000", []).unwrap();
        drop(conn);
        let first = write(&small, &whole);
        let second = write(&small, &renumbered);
        assert!(first.changes > 0 && first.changes == second.changes);
        let conn = rusqlite::Connection::open(&whole).unwrap();
        let builds: Vec<(i64, i64)> = conn
            .prepare("SELECT build, count(*) FROM node_changelog GROUP BY build ORDER BY build")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(builds.iter().map(|b| b.0).collect::<Vec<_>>(), vec![2, 3]);
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        drop(conn);
        assert!(std::fs::read(&whole).unwrap() == std::fs::read(&renumbered).unwrap());
    }
}
