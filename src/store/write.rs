//! Writing a tree into a fresh store file, atomically, with a changelog against the
//! store it replaces.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, params};

use super::StoreError;
use super::bulk::{BulkInsert, Cell};
use super::schema::{EDGE_INDEXES, NODE_INDEXES, SCHEMA_VERSION, WRITER_PRAGMAS, schema};
use crate::eco::EcoSkeleton;
use crate::engine::Annotations;
use crate::position;
use crate::record::NodeRecord;
use crate::record::column::Column;
use crate::structure::StructureTags;
use crate::tree::Tree;
use crate::validate::report::StubNode;

/// What a store write did.
#[derive(Debug, Default, Clone)]
pub struct WriteSummary {
    /// Nodes written.
    pub nodes: usize,
    /// Edges written.
    pub edges: usize,
    /// Transposition links written.
    pub transpositions: usize,
    /// Field changes logged against the previous store.
    pub changes: usize,
    /// Validation stubs written (nodes and edges included in the counts above).
    pub stubs: usize,
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |source| StoreError::Sqlite { path: path.display().to_string(), source }
}

/// A connection that writes the store, or a part of it, at `path` (see [`WRITER_PRAGMAS`]).
fn open_writer(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path).map_err(sql(path))?;
    conn.execute_batch(WRITER_PRAGMAS).map_err(sql(path))?;
    Ok(conn)
}

/// The `tracked` columns of `record` as text, as the changelog records them.
fn tracked_values(tracked: &[&Column<NodeRecord>], r: &NodeRecord) -> Vec<Option<String>> {
    tracked.iter().map(|column| (column.cell)(r).as_text()).collect()
}

type PreviousStore = (
    HashMap<String, Vec<Option<String>>>,
    Vec<(i64, String, String, Option<String>, Option<String>)>,
    i64,
);

/// Reads the tracked values and the changelog of an existing store, if it is readable.
fn read_previous(path: &Path) -> Option<PreviousStore> {
    let conn =
        Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    let tracked = crate::record::tracked_columns();
    let columns = tracked.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
    let mut stmt = conn.prepare(&format!("SELECT node_id, {columns} FROM opening_nodes")).ok()?;
    let mut values = HashMap::new();
    let rows = stmt
        .query_map([], |row| {
            let id: String = row.get(0)?;
            let mut v = Vec::with_capacity(tracked.len());
            for i in 1..=tracked.len() {
                let cell = super::row::cell_of(row.get_ref(i)?)
                    .map_err(|e| rusqlite::Error::Utf8Error(i, e))?;
                v.push(cell.and_then(Cell::as_text));
            }
            Ok((id, v))
        })
        .ok()?;
    for row in rows {
        let (id, v) = row.ok()?;
        values.insert(id, v);
    }
    let mut stmt = conn
        .prepare(
            "SELECT build, node_id, field, old_value, new_value FROM node_changelog ORDER BY rowid",
        )
        .ok()?;
    let log = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .ok()?
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    let build: i64 = conn
        .query_row("SELECT value FROM meta WHERE key = 'build'", [], |r| r.get::<_, String>(0))
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Some((values, log, build))
}

/// Writes the `opening_entries` rows of `skeleton` (every entry, named and interpolated)
/// with their index into a part database at `path`: a store with the full schema and
/// only that table filled, which [`write()`] copies to start the store from. The part
/// depends on the skeleton alone, so it is written while the tree is still being built,
/// and reused when only the tree changes. Returns the number of rows.
pub fn write_entries(skeleton: &EcoSkeleton, path: &Path) -> Result<usize, StoreError> {
    use rayon::prelude::*;
    let io = |source| StoreError::Io { path: path.display().to_string(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = crate::files::temp::for_file(path);
    let entries = &skeleton.entries;
    let ids: Vec<String> = entries.par_iter().map(|e| position::node_id(&e.epd)).collect();
    let mut conn = open_writer(&tmp)?;
    conn.execute_batch(schema()).map_err(sql(&tmp))?;
    let tx = conn.transaction().map_err(sql(&tmp))?;
    {
        let mut insert = BulkInsert::new(
            &tx,
            "INSERT INTO opening_entries VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            9,
        )
        .map_err(sql(&tmp))?;
        let mut aliases = Vec::new();
        // Primary-key order makes every insert an append to the b-tree.
        for i in id_order(&ids) {
            let e = &entries[i];
            aliases.clear();
            serde_json::to_writer(&mut aliases, &e.aliases).expect("string map serializes");
            let from = e.from.map(|index| &ids[index as usize]);
            insert
                .row(&[
                    (&ids[i]).into(),
                    (&e.src).into(),
                    (&e.eco).into(),
                    e.scid.as_ref().into(),
                    (&e.name).into(),
                    (&e.movetext).into(),
                    e.is_eco_root.into(),
                    from.into(),
                    std::str::from_utf8(&aliases).expect("JSON is UTF-8").into(),
                ])
                .map_err(sql(&tmp))?;
        }
    }
    tx.commit().map_err(sql(&tmp))?;
    conn.close().map_err(|(_, e)| sql(&tmp)(e))?;
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(entries.len())
}

/// Writes `tree` (annotated by `annotations`, its terminal nodes tagged by `structures`),
/// the entry rows of the part database `entries` (from [`write_entries`]) and the
/// validation `stubs` to the store at `path`, replacing it atomically. A stub whose
/// parent is not a tree position, or whose position is, is left out (a report from
/// another tree).
///
/// The store starts as a copy of the entry part. Two connections then fill it on two
/// cores: a side database receives the edge rows and their index while the main one
/// receives the nodes and theirs; the edge table is copied in with `INSERT INTO …
/// SELECT *`, which SQLite performs as a cell-by-cell transfer of table and index
/// without re-encoding rows (its "xfer optimization": same schema and indexes, empty
/// target).
pub fn write(
    tree: &Tree,
    entries: &Path,
    annotations: Option<&Annotations>,
    structures: Option<&StructureTags>,
    stubs: &[StubNode],
    path: &Path,
) -> Result<WriteSummary, StoreError> {
    let records = NodeRecord::tagged(tree, annotations, structures);
    write_records(tree, &records, entries, stubs, Parts::default(), path)
}

/// The optional parts of a store beside the tree.
#[derive(Clone, Copy, Debug, Default)]
pub struct Parts<'a> {
    /// The explorer index of the tree ([`super::explorer`]).
    pub explorer: Option<&'a crate::explorer_index::ExplorerIndex>,
    /// The player collections' games ([`super::players`]).
    pub players: Option<&'a crate::repertoire::collection::Collections>,
    /// What each game source's games cover, as JSON (the `coverage` row of `meta`, which
    /// the API's metadata shows).
    pub coverage: Option<&'a str>,
    /// How many builds' changes the changelog keeps (`[store] changelog_builds`; `None`:
    /// all of them).
    pub changelog_builds: Option<u32>,
}

/// [`write()`] with the tree's records already built ([`NodeRecord::tagged`], in tree
/// order), for a caller that shares them with the CSV export; with the optional `parts`
/// given.
pub fn write_records(
    tree: &Tree,
    records: &[NodeRecord],
    entries: &Path,
    stubs: &[StubNode],
    parts: Parts<'_>,
    path: &Path,
) -> Result<WriteSummary, StoreError> {
    let io = |source| StoreError::Io { path: path.display().to_string(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    // Both named by the process that writes them, so a killed make's are swept away.
    let tmp = crate::files::temp::for_file(path);
    let side =
        crate::files::temp::path(path.parent().unwrap_or(Path::new("")), "store-side.sqlite");
    let previous = if path.exists() { read_previous(path) } else { None };
    // Stubs come after the tree's nodes, so tree indices stay record indices.
    let mut records = std::borrow::Cow::Borrowed(records);
    let mut stub_edges = Vec::new();
    for stub in stubs {
        let Some(parent) = tree.find(&stub.parent_epd) else { continue };
        if tree.find(&stub.epd).is_some() {
            continue;
        }
        let records = records.to_mut();
        let parent_record = &mut records[parent as usize];
        parent_record.children += 1;
        parent_record.is_branching_node = parent_record.children >= 2;
        stub_edges.push(StubEdge { parent, child: records.len(), stub });
        records.push(NodeRecord::stub(stub));
    }
    let ids = NodeIds::of(&records);
    // The entry part already holds the schema and the full entry table:
    // a copy of it is the start of the store (a file copy, where a transfer would
    // re-insert every cell).
    std::fs::copy(entries, &tmp)
        .map_err(|source| StoreError::Io { path: entries.display().to_string(), source })?;
    let mut summary =
        WriteSummary { nodes: records.len(), stubs: stub_edges.len(), ..Default::default() };

    let (main, side_rows) = std::thread::scope(|scope| {
        let side_job = scope.spawn(|| write_side(tree, &ids, &stub_edges, &side));
        let log = Changelog { previous: previous.as_ref(), keep: parts.changelog_builds };
        let main = write_main(tree, &records, &ids, log, &tmp, &mut summary);
        (main, side_job.join().expect("the side writer does not panic"))
    });
    let mut conn = main?;
    summary.edges = side_rows?;
    let side_text =
        side.to_str().ok_or_else(|| io(std::io::Error::other("store path is not UTF-8")))?;
    conn.execute("ATTACH DATABASE ?1 AS side", [side_text]).map_err(sql(&tmp))?;
    let tx = conn.transaction().map_err(sql(&tmp))?;
    tx.execute_batch(EDGE_INDEXES).map_err(sql(&tmp))?;
    tx.execute_batch("INSERT INTO node_children SELECT * FROM side.node_children;")
        .map_err(sql(&tmp))?;
    tx.commit().map_err(sql(&tmp))?;
    conn.execute("DETACH DATABASE side", []).map_err(sql(&tmp))?;
    if let Some(index) = parts.explorer {
        super::explorer::write(
            &mut conn,
            &tmp.display().to_string(),
            &ids.text[..tree.nodes.len()],
            index,
        )?;
    }
    if let Some(players) = parts.players {
        super::players::write(&mut conn, &tmp.display().to_string(), players)?;
    }
    if let Some(coverage) = parts.coverage {
        conn.execute("INSERT INTO meta VALUES ('coverage', ?1)", [coverage]).map_err(sql(&tmp))?;
    }
    conn.close().map_err(|(_, e)| sql(&tmp)(e))?;
    let _ = std::fs::remove_file(&side);
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(summary)
}

/// What the changelog is written from: the store this one replaces, and how many builds'
/// changes to keep (`None`: all).
#[derive(Clone, Copy)]
struct Changelog<'a> {
    previous: Option<&'a PreviousStore>,
    keep: Option<u32>,
}

/// The main database (at `tmp`, a copy of the entry part): nodes, transpositions, the
/// changelog, `pawn_structures` and `meta`, with their indexes.
fn write_main(
    tree: &Tree,
    records: &[NodeRecord],
    ids: &NodeIds<'_>,
    log: Changelog<'_>,
    tmp: &Path,
    summary: &mut WriteSummary,
) -> Result<Connection, StoreError> {
    let previous = log.previous;
    let mut conn = open_writer(tmp)?;
    // The rebuild's number is the log's only clock: a wall-clock time would make an
    // interrupted and an uninterrupted rebuild write different stores.
    let build = previous.map_or(1, |p| p.2 + 1);
    let tx = conn.transaction().map_err(sql(tmp))?;
    {
        let mut insert_node =
            BulkInsert::new(&tx, &super::row::node_insert(), super::row::stored_count())
                .map_err(sql(tmp))?;
        let mut cells = Vec::new();
        // Primary-key order makes every insert an append to the b-tree.
        for r in ids.order.iter().map(|&i| &records[i]) {
            cells.clear();
            super::row::node_cells(r, &mut cells);
            insert_node.row(&cells).map_err(sql(tmp))?;
        }
        let mut insert_transposition =
            BulkInsert::new(&tx, "INSERT INTO node_transpositions VALUES (?1, ?2, ?3)", 3)
                .map_err(sql(tmp))?;
        for (target, a, b) in tree.transpositions() {
            let (a, b) = (ids.text[a as usize], ids.text[b as usize]);
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            insert_transposition
                .row(&[a.into(), b.into(), ids.text[target as usize].into()])
                .map_err(sql(tmp))?;
            summary.transpositions += 1;
        }
        write_changelog(&tx, records, ids, log, build, summary).map_err(sql(tmp))?;
        insert_structures(&tx).map_err(sql(tmp))?;
        let mut meta = tx.prepare("INSERT INTO meta VALUES (?1, ?2)").map_err(sql(tmp))?;
        meta.execute(params!["schema_version", SCHEMA_VERSION.to_string()]).map_err(sql(tmp))?;
        meta.execute(params!["build", build.to_string()]).map_err(sql(tmp))?;
        meta.execute(params!["okb_version", env!("CARGO_PKG_VERSION")]).map_err(sql(tmp))?;
    }
    tx.execute_batch(NODE_INDEXES).map_err(sql(tmp))?;
    tx.commit().map_err(sql(tmp))?;
    Ok(conn)
}

/// The changelog: the rows of the previous store's last `keep − 1` builds, then this
/// build's changes against the previous store (every tracked field that differs, and
/// each node that is gone).
fn write_changelog(
    tx: &rusqlite::Transaction<'_>,
    records: &[NodeRecord],
    ids: &NodeIds<'_>,
    log: Changelog<'_>,
    build: i64,
    summary: &mut WriteSummary,
) -> rusqlite::Result<()> {
    let Some((old_values, old_log, _)) = log.previous else { return Ok(()) };
    if log.keep == Some(0) {
        return Ok(());
    }
    let first_kept = log.keep.map_or(i64::MIN, |keep| build - i64::from(keep) + 1);
    let mut insert =
        BulkInsert::new(tx, "INSERT INTO node_changelog VALUES (?1, ?2, ?3, ?4, ?5)", 5)?;
    for row in old_log.iter().filter(|row| row.0 >= first_kept) {
        insert.row(&[
            row.0.into(),
            (&row.1).into(),
            (&row.2).into(),
            row.3.as_ref().into(),
            row.4.as_ref().into(),
        ])?;
    }
    let tracked = crate::record::tracked_columns();
    for r in records {
        let new_values = tracked_values(&tracked, r);
        let old = old_values.get(&r.node_id);
        for (f, field) in tracked.iter().map(|c| c.name).enumerate() {
            let old_value = old.and_then(|o| o[f].as_ref());
            let new_value = new_values[f].as_ref();
            if (old.is_some() && old_value == new_value) || (old.is_none() && new_value.is_none()) {
                continue;
            }
            insert.row(&[
                build.into(),
                (&r.node_id).into(),
                (*field).into(),
                old_value.into(),
                new_value.into(),
            ])?;
            summary.changes += 1;
        }
    }
    let current: std::collections::HashSet<&str> = ids.text.iter().copied().collect();
    let mut removed: Vec<&String> =
        old_values.keys().filter(|id| !current.contains(id.as_str())).collect();
    removed.sort();
    for id in removed {
        insert.row(&[build.into(), id.into(), "node".into(), "present".into(), Cell::Null])?;
        summary.changes += 1;
    }
    Ok(())
}

/// The ids of the records to write, by record index, and the record indices in id order.
struct NodeIds<'a> {
    text: Vec<&'a str>,
    order: Vec<usize>,
}

impl<'a> NodeIds<'a> {
    fn of(records: &'a [NodeRecord]) -> NodeIds<'a> {
        let text: Vec<&str> = records.iter().map(|r| r.node_id.as_str()).collect();
        let order = id_order(&text);
        NodeIds { text, order }
    }
}

/// Indices of `ids` in ascending order. A node id is a UUID written in lowercase hex
/// with dashes at fixed places, so its text order is the order of its 128-bit value,
/// which sorts several times faster than the text.
fn id_order<S: AsRef<str>>(ids: &[S]) -> Vec<usize> {
    let values: Option<Vec<(u128, usize)>> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| Some((uuid::Uuid::try_parse(id.as_ref()).ok()?.as_u128(), i)))
        .collect();
    match values {
        Some(mut values) => {
            values.sort_unstable();
            values.into_iter().map(|(_, i)| i).collect()
        }
        None => {
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by(|&a, &b| ids[a].as_ref().cmp(ids[b].as_ref()));
            order
        }
    }
}

/// A stub's edge from its tree parent.
struct StubEdge<'a> {
    parent: u32,
    child: usize,
    stub: &'a StubNode,
}

/// The side database: the same schema, holding only the edge rows (in primary key
/// order, so that every insert, and later every transferred cell, is an append) and
/// their index. Returns the number of edges.
fn write_side(
    tree: &Tree,
    ids: &NodeIds<'_>,
    stub_edges: &[StubEdge<'_>],
    side: &Path,
) -> Result<usize, StoreError> {
    let mut conn = open_writer(side)?;
    conn.execute_batch(schema()).map_err(sql(side))?;
    let tx = conn.transaction().map_err(sql(side))?;
    let mut edges = 0;
    {
        let mut insert_edge = BulkInsert::new(
            &tx,
            "INSERT INTO node_children VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            10,
        )
        .map_err(sql(side))?;
        // Stubs (after the tree's nodes) have no children of their own.
        for &i in ids.order.iter().filter(|&&i| i < tree.nodes.len()) {
            let node = &tree.nodes[i];
            let mut children: Vec<(usize, &crate::tree::Edge)> =
                node.children.iter().enumerate().collect();
            children.sort_by(|a, b| a.1.uci.cmp(&b.1.uci));
            for (rank, edge) in children {
                let s = edge.stats.unwrap_or_default();
                let avg = (s.rated_games > 0)
                    .then(|| (s.rating_sum as f64 / s.rated_games as f64 * 10.0).round() / 10.0);
                insert_edge
                    .row(&[
                        ids.text[i].into(),
                        ids.text[edge.child as usize].into(),
                        (&edge.san).into(),
                        (&edge.uci).into(),
                        Cell::Int(rank as i64),
                        Cell::Int(s.outcomes.games() as i64),
                        Cell::Int(s.outcomes.white as i64),
                        Cell::Int(s.outcomes.draws as i64),
                        Cell::Int(s.outcomes.black as i64),
                        avg.into(),
                    ])
                    .map_err(sql(side))?;
                edges += 1;
            }
        }
        // Ranked after the tree's moves: a stub is what the tree lacks, not what is played most.
        let mut next_rank: HashMap<u32, usize> = HashMap::new();
        for e in stub_edges {
            let rank = next_rank
                .entry(e.parent)
                .or_insert_with(|| tree.nodes[e.parent as usize].children.len());
            let o = e.stub.outcomes;
            insert_edge
                .row(&[
                    ids.text[e.parent as usize].into(),
                    ids.text[e.child].into(),
                    (&e.stub.san).into(),
                    (&e.stub.uci).into(),
                    Cell::Int(*rank as i64),
                    Cell::Int(o.games() as i64),
                    Cell::Int(o.white as i64),
                    Cell::Int(o.draws as i64),
                    Cell::Int(o.black as i64),
                    Cell::Null,
                ])
                .map_err(sql(side))?;
            *rank += 1;
            edges += 1;
        }
    }
    tx.execute_batch(EDGE_INDEXES).map_err(sql(side))?;
    tx.commit().map_err(sql(side))?;
    conn.close().map_err(|(_, e)| sql(side)(e))?;
    Ok(edges)
}

/// The `pawn_structures` rows: every structure okb names, and Unknown.
fn insert_structures(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let mut insert = tx.prepare("INSERT INTO pawn_structures VALUES (?1, ?2, ?3, ?4)")?;
    for s in crate::structure::STRUCTURES.iter().chain([&crate::structure::UNKNOWN]) {
        let plans = |p: &[&str]| serde_json::to_string(p).expect("plans serialize");
        insert.execute(params![
            s.name,
            s.description,
            plans(s.white_plans),
            plans(s.black_plans)
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_order_is_text_order() {
        let epds = [
            "a",
            "b",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -",
            "x y z",
            "",
            "0",
            "ff",
        ];
        let ids: Vec<String> =
            (0..500).map(|i| position::node_id(&format!("{}{i}", epds[i % epds.len()]))).collect();
        let mut by_text: Vec<usize> = (0..ids.len()).collect();
        by_text.sort_by(|&a, &b| ids[a].cmp(&ids[b]));
        assert_eq!(id_order(&ids), by_text);
        // Not UUIDs: plain text order.
        assert_eq!(id_order(&["b", "a", "c"]), vec![1, 0, 2]);
    }
}
