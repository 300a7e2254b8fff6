//! The changelog of a store write: what changed against the store it replaces.
//!
//! The previous store's nodes are read in node-id order (its node table's key order, a
//! sequential scan) beside this build's records in the same order, so the two are
//! compared as a merge, with neither held whole in memory. The comparison runs on its
//! own thread while the writer inserts the nodes, and hands its rows over in batches
//! through a bounded channel.

use std::borrow::Cow;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender};

use rusqlite::{Connection, OpenFlags, Statement};

use super::bulk::Cell;
use crate::record::NodeRecord;
use crate::record::column::Column;

/// The store a write replaces, checked readable for its changelog.
pub(super) struct Previous {
    path: String,
    /// Its build number (`meta.build`).
    pub build: i64,
}

/// One changelog row of this build: a tracked field of a node that changed (`old` and
/// `new` as text, as the log records them), or a node that is gone (field `node`).
pub(super) struct Change<'a> {
    pub node_id: Cow<'a, str>,
    pub field: &'static str,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// Rows handed over at once: one channel message per batch keeps the hand-over cheap.
const BATCH: usize = 1024;

/// Batches in flight: bounds what the comparison holds ahead of the writer.
const BATCHES: usize = 64;

/// A batch of changes, or the reason the comparison stopped.
pub(super) type Batch<'a> = Result<Vec<Change<'a>>, rusqlite::Error>;

impl Previous {
    /// Opens the store at `path` read-only, if it is a store whose tracked columns and
    /// changelog this version reads (else the new store starts a new log at build 1).
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

    /// Its file, as SQLite's `ATTACH` takes it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Compares the previous nodes with `records` (visited in `order`, ascending node
    /// id), sending the changes in batches: a node's changed fields in the log's field
    /// order, new nodes with every field they have, and gone nodes.
    pub fn compare<'a>(
        &self,
        records: &'a [NodeRecord],
        order: &[usize],
        out: &SyncSender<Batch<'a>>,
    ) {
        if let Err(e) = self.compare_into(records, order, out) {
            let _ = out.send(Err(e));
        }
    }

    fn compare_into<'a>(
        &self,
        records: &'a [NodeRecord],
        order: &[usize],
        out: &SyncSender<Batch<'a>>,
    ) -> rusqlite::Result<()> {
        let tracked = crate::record::tracked_columns();
        let conn = Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        let mut stmt: Statement<'_> = conn.prepare(&select_nodes())?;
        let mut old_rows = stmt.query([])?;
        let mut batch = Vec::with_capacity(BATCH);
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
                    let id = old_id.expect("a gone node was read").to_string();
                    batch.push(Change {
                        node_id: Cow::Owned(id),
                        field: "node",
                        old: Some("present".into()),
                        new: None,
                    });
                }
                Step::New | Step::Both => {
                    let r = new.next().expect("a node to compare");
                    let row = if matches!(step, Step::Both) { old } else { None };
                    changed_fields(&tracked, row, r, &mut batch)?;
                }
            }
            if !matches!(step, Step::New) {
                old = old_rows.next()?;
            }
            if batch.len() >= BATCH && out.send(Ok(std::mem::take(&mut batch))).is_err() {
                return Ok(());
            }
        }
        if !batch.is_empty() {
            let _ = out.send(Ok(batch));
        }
        Ok(())
    }
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

/// The changes of record `r` against its previous row `old` (`None`: a new node).
fn changed_fields<'a>(
    tracked: &[&Column<NodeRecord>],
    old: Option<&rusqlite::Row<'_>>,
    r: &'a NodeRecord,
    batch: &mut Vec<Change<'a>>,
) -> rusqlite::Result<()> {
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
            batch.push(Change {
                node_id: Cow::Borrowed(&r.node_id),
                field: column.name,
                old: old_text,
                new: new_text,
            });
        }
    }
    Ok(())
}

/// A bounded channel for [`Previous::compare`]'s batches.
pub(super) fn channel<'a>() -> (SyncSender<Batch<'a>>, Receiver<Batch<'a>>) {
    std::sync::mpsc::sync_channel(BATCHES)
}
