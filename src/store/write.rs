//! Writing a tree into a fresh store file, atomically, with a changelog against the
//! store it replaces.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, params};

use super::bulk::{BulkInsert, Cell};
use super::changelog::Previous;
use super::read::{ChildFacts, ChildFactsFn, Store};
use super::schema::{
    ANSWERS_INDEXES, CHANGELOG_INDEXES, EDGE_INDEXES, NODE_INDEXES, SCHEMA_VERSION, open_writer,
    schema,
};
use super::{StoreError, sql_file};
use crate::eco::EcoSkeleton;
use crate::engine::Annotations;
use crate::position;
use crate::record::NodeRecord;
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
    /// Node answers written ([`super::answers`]): every node's, or none.
    pub answers: usize,
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
    conn.execute_batch(schema()).map_err(sql_file(&tmp))?;
    let tx = conn.transaction().map_err(sql_file(&tmp))?;
    {
        let mut insert = BulkInsert::new(
            &tx,
            "INSERT INTO opening_entries VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            9,
        )
        .map_err(sql_file(&tmp))?;
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
                .map_err(sql_file(&tmp))?;
        }
    }
    tx.commit().map_err(sql_file(&tmp))?;
    conn.close().map_err(|(_, e)| sql_file(&tmp)(e))?;
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
    /// The tree's edges already written by [`write_edges`] (the `store:edges` step's
    /// part); `None`: written during the store write, on a second core.
    pub edges: Option<&'a Path>,
    /// Node answers are written when the store has more nodes than this
    /// (`[store] answers_above`); `None`: never.
    pub answers_above: Option<u64>,
    /// The store whose changelog and build number this one continues.
    pub log_after: LogAfter<'a>,
}

/// The store a write's changelog continues (its rows are kept, this build's changes are
/// logged against its nodes, and the build number follows its own).
#[derive(Clone, Copy, Debug, Default)]
pub enum LogAfter<'a> {
    /// The store the write replaces, if there is one.
    #[default]
    Replaced,
    /// The store at this path, if there is one (the last finished build, kept apart).
    Store(&'a Path),
    /// None: the log starts at build 1.
    Nothing,
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
    let previous = match parts.log_after {
        LogAfter::Replaced => Some(path),
        LogAfter::Store(previous) => Some(previous),
        LogAfter::Nothing => None,
    };
    let previous = previous.filter(|p| p.exists()).and_then(Previous::open);
    let (records, stub_edges) = with_stubs(tree, records, stubs);
    let ids = NodeIds::of(&records);
    // The entry part already holds the schema and the full entry table:
    // a copy of it is the start of the store (a file copy, where a transfer would
    // re-insert every cell).
    std::fs::copy(entries, &tmp)
        .map_err(|source| StoreError::Io { path: entries.display().to_string(), source })?;
    let mut summary =
        WriteSummary { nodes: records.len(), stubs: stub_edges.len(), ..Default::default() };
    // The rebuild's number is the log's only clock: a wall-clock time would make an
    // interrupted and an uninterrupted rebuild write different stores.
    let build = previous.as_ref().map_or(1, |p| p.build + 1);
    let logged = previous.as_ref().filter(|_| parts.changelog_builds != Some(0));
    let log_part =
        crate::files::temp::path(path.parent().unwrap_or(Path::new("")), "store-log.sqlite");
    let (main, edges, changes) = std::thread::scope(|scope| {
        let side_job = parts.edges.is_none().then(|| scope.spawn(|| write_edges_at(tree, &side)));
        // The changelog is compared and written on another core while the nodes go in.
        let log = (build, parts.changelog_builds);
        let log_job = logged.map(|previous| {
            let (records, order, log_part) = (&records, &ids.order, &log_part);
            scope.spawn(move || previous.write_part(records, order, log, log_part))
        });
        let main = write_main(tree, &records, &ids, build, &tmp, &mut summary);
        let edges = side_job.map(|job| job.join().expect("the edge writer does not panic"));
        let changes = log_job.map(|job| job.join().expect("the changelog writer does not panic"));
        (main, edges, changes)
    });
    let mut conn = main?;
    let edges_part = match edges {
        Some(written) => {
            written?;
            side.as_path()
        }
        None => parts.edges.expect("an edge part when no edge writer ran"),
    };
    summary.edges = copy_part(&mut conn, edges_part, "node_children", EDGE_INDEXES, &tmp)?;
    if let Some(changes) = changes {
        summary.changes = changes?;
        copy_part(&mut conn, &log_part, "node_changelog", CHANGELOG_INDEXES, &tmp)?;
    }
    summary.edges +=
        insert_stub_edges(&mut conn, tree, &ids, &stub_edges).map_err(sql_file(&tmp))?;
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
        conn.execute("INSERT INTO meta VALUES ('coverage', ?1)", [coverage])
            .map_err(sql_file(&tmp))?;
    }
    conn.close().map_err(|(_, e)| sql_file(&tmp)(e))?;
    let _ = std::fs::remove_file(&side);
    let _ = std::fs::remove_file(&log_part);
    if parts.answers_above.is_some_and(|above| records.len() as u64 > above) {
        let facts = |id: &str| ids.find(id).map(|i| child_facts(&records[i]));
        summary.answers = add_answers_with(&tmp, Some(&facts))?;
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(summary)
}

/// Adds the node answers ([`super::answers`]) and the named summary
/// ([`super::named_summary`]) to the otherwise complete store at `tmp`: the answers read
/// from it into a part database on every core, then transferred in with their index; the
/// summary tallied meanwhile in a pass of its own over the nodes (the server's own, so its
/// answers are the bytes it gave from every node). In place: the store step calls it
/// before its rename; a tool that writes a store's rows itself (`bench/large_store.py`,
/// through `examples/store_answers.rs`) calls it last.
pub fn add_answers(tmp: &Path) -> Result<usize, StoreError> {
    add_answers_with(tmp, None)
}

/// [`add_answers`], with the children's own columns from `facts` where it knows them
/// (the store step's, from the records it wrote).
fn add_answers_with(tmp: &Path, facts: Option<&ChildFactsFn<'_>>) -> Result<usize, StoreError> {
    let part =
        crate::files::temp::path(tmp.parent().unwrap_or(Path::new("")), "store-answers.sqlite");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (written, tally) = std::thread::scope(|scope| {
        let tally = scope.spawn(|| Store::open(tmp)?.named_tally());
        let written = super::answers_part::write_part_with(tmp, &part, threads, facts);
        (written, tally.join().expect("the named tally does not panic"))
    });
    written?;
    let mut conn = open_writer(tmp)?;
    // A store of an older schema has neither table.
    conn.execute_batch(super::schema::ANSWERS_TABLE).map_err(sql_file(tmp))?;
    let rows = copy_part(&mut conn, &part, "node_answers", ANSWERS_INDEXES, tmp)?;
    copy_part(&mut conn, &part, "node_answers_dictionary", "", tmp)?;
    super::named_summary::write(&conn, &tmp.display().to_string(), &tally?)?;
    record_node_count(&conn, tmp)?;
    let format = "INSERT OR REPLACE INTO meta VALUES ('answers_format', ?1)";
    conn.execute(format, [super::read::answer_format()]).map_err(sql_file(tmp))?;
    conn.close().map_err(|(_, e)| sql_file(tmp)(e))?;
    let _ = std::fs::remove_file(&part);
    Ok(rows)
}

/// The columns of `record` that its parents' answers show, as its row holds them.
fn child_facts(record: &NodeRecord) -> ChildFacts {
    ChildFacts {
        opening_name: record.opening_name.clone(),
        variation_name: record.variation_name.clone(),
        stockfish_eval: record.stockfish_eval.map(i64::from),
        is_dubious: record.is_dubious,
    }
}

/// Records the node count in the store's metadata (`nodes`), which
/// [`Store::node_count`] reads: counting a large store's rows at start-up read gigabytes
/// of a cold file (13 s at 50 M nodes).
fn record_node_count(conn: &Connection, tmp: &Path) -> Result<(), StoreError> {
    let count = "INSERT OR REPLACE INTO meta SELECT 'nodes', count(*) FROM opening_nodes";
    conn.execute(count, []).map(|_| ()).map_err(sql_file(tmp))
}

/// Adds the named summary ([`super::named_summary`]) alone to the complete store at
/// `tmp`, in place: for a store whose node answers an older okb added
/// (`examples/store_answers.rs --summary`).
pub fn add_named_summary(tmp: &Path) -> Result<(), StoreError> {
    let tally = Store::open(tmp)?.named_tally()?;
    let conn = open_writer(tmp)?;
    super::named_summary::write(&conn, &tmp.display().to_string(), &tally)?;
    record_node_count(&conn, tmp)?;
    conn.close().map_err(|(_, e)| sql_file(tmp)(e))
}

/// The records with a record per usable validation stub appended (after the tree's
/// nodes, so tree indices stay record indices; their parents count them as children),
/// and the stubs' edges.
fn with_stubs<'r, 's>(
    tree: &Tree,
    records: &'r [NodeRecord],
    stubs: &'s [StubNode],
) -> (std::borrow::Cow<'r, [NodeRecord]>, Vec<StubEdge<'s>>) {
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
    (records, stub_edges)
}

/// Copies `table` of the part database at `part` (the edges from [`write_edges`], the
/// changelog) into the store: SQLite's transfer of table and index cells (`indexes`,
/// created first, as the part has them) into the still empty table. Returns the number
/// of rows.
fn copy_part(
    conn: &mut Connection,
    part: &Path,
    table: &str,
    indexes: &str,
    tmp: &Path,
) -> Result<usize, StoreError> {
    let part_text = part.to_str().ok_or_else(|| StoreError::Io {
        path: part.display().to_string(),
        source: std::io::Error::other("path is not UTF-8"),
    })?;
    conn.execute("ATTACH DATABASE ?1 AS side", [part_text]).map_err(sql_file(tmp))?;
    let tx = conn.transaction().map_err(sql_file(tmp))?;
    tx.execute_batch(indexes).map_err(sql_file(tmp))?;
    let rows = tx
        .execute(&format!("INSERT INTO main.{table} SELECT * FROM side.{table}"), [])
        .map_err(sql_file(tmp))?;
    tx.commit().map_err(sql_file(tmp))?;
    conn.execute("DETACH DATABASE side", []).map_err(sql_file(tmp))?;
    Ok(rows)
}

/// The main database (at `tmp`, a copy of the entry part): nodes, transpositions,
/// `pawn_structures` and `meta` (of rebuild `build`), with their indexes.
fn write_main(
    tree: &Tree,
    records: &[NodeRecord],
    ids: &NodeIds<'_>,
    build: i64,
    tmp: &Path,
    summary: &mut WriteSummary,
) -> Result<Connection, StoreError> {
    let mut conn = open_writer(tmp)?;
    let tx = conn.transaction().map_err(sql_file(tmp))?;
    insert_nodes(&tx, records, ids).map_err(sql_file(tmp))?;
    summary.transpositions = insert_transpositions(&tx, tree, ids).map_err(sql_file(tmp))?;
    insert_structures(&tx).map_err(sql_file(tmp))?;
    {
        let mut meta = tx.prepare("INSERT INTO meta VALUES (?1, ?2)").map_err(sql_file(tmp))?;
        meta.execute(params!["schema_version", SCHEMA_VERSION.to_string()])
            .map_err(sql_file(tmp))?;
        meta.execute(params!["build", build.to_string()]).map_err(sql_file(tmp))?;
        meta.execute(params!["okb_version", env!("CARGO_PKG_VERSION")]).map_err(sql_file(tmp))?;
    }
    tx.execute_batch(NODE_INDEXES).map_err(sql_file(tmp))?;
    tx.commit().map_err(sql_file(tmp))?;
    Ok(conn)
}

/// The node rows, in primary-key order, which makes every insert an append to the b-tree.
fn insert_nodes(
    tx: &rusqlite::Transaction<'_>,
    records: &[NodeRecord],
    ids: &NodeIds<'_>,
) -> rusqlite::Result<()> {
    let mut insert = BulkInsert::new(tx, &super::row::node_insert(), super::row::stored_count())?;
    let mut cells = Vec::new();
    for r in ids.order.iter().map(|&i| &records[i]) {
        cells.clear();
        super::row::node_cells(r, &mut cells);
        insert.row(&cells)?;
    }
    Ok(())
}

/// The transposition links, each pair once (lower id first). Returns how many.
fn insert_transpositions(
    tx: &rusqlite::Transaction<'_>,
    tree: &Tree,
    ids: &NodeIds<'_>,
) -> rusqlite::Result<usize> {
    let mut insert = BulkInsert::new(tx, "INSERT INTO node_transpositions VALUES (?1, ?2, ?3)", 3)?;
    let mut count = 0;
    for (target, a, b) in tree.transpositions() {
        let (a, b) = (ids.text[a as usize], ids.text[b as usize]);
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        insert.row(&[a.into(), b.into(), ids.text[target as usize].into()])?;
        count += 1;
    }
    Ok(count)
}

/// The ids of the records to write, by record index, and the record indices in id order.
struct NodeIds<'a> {
    text: Vec<&'a str>,
    order: Vec<usize>,
    /// The ids' 128-bit values in `order`, when every id is a UUID: what [`NodeIds::find`]
    /// searches (a search of the texts read a string at random per step).
    values: Option<Vec<u128>>,
}

impl<'a> NodeIds<'a> {
    fn of(records: &'a [NodeRecord]) -> NodeIds<'a> {
        let text: Vec<&str> = records.iter().map(|r| r.node_id.as_str()).collect();
        match uuid_order(&text) {
            Some(sorted) => {
                let (values, order) = sorted.into_iter().unzip();
                NodeIds { text, order, values: Some(values) }
            }
            None => NodeIds { order: text_order(&text), text, values: None },
        }
    }

    /// The record index of node `id`.
    fn find(&self, id: &str) -> Option<usize> {
        let at = match &self.values {
            Some(values) => values.binary_search(&uuid::Uuid::try_parse(id).ok()?.as_u128()),
            None => self.order.binary_search_by(|&i| self.text[i].cmp(id)),
        };
        Some(self.order[at.ok()?])
    }
}

/// Indices of `ids` in ascending order. A node id is a UUID written in lowercase hex
/// with dashes at fixed places, so its text order is the order of its 128-bit value,
/// which sorts several times faster than the text.
fn id_order<S: AsRef<str>>(ids: &[S]) -> Vec<usize> {
    match uuid_order(ids) {
        Some(sorted) => sorted.into_iter().map(|(_, i)| i).collect(),
        None => text_order(ids),
    }
}

/// The ids' 128-bit values with their indices, ascending; `None` unless every id is a
/// UUID.
fn uuid_order<S: AsRef<str>>(ids: &[S]) -> Option<Vec<(u128, usize)>> {
    let mut values: Vec<(u128, usize)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| Some((uuid::Uuid::try_parse(id.as_ref()).ok()?.as_u128(), i)))
        .collect::<Option<_>>()?;
    values.sort_unstable();
    Some(values)
}

/// Indices of `ids` in the order of their texts.
fn text_order<S: AsRef<str>>(ids: &[S]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|&a, &b| ids[a].as_ref().cmp(ids[b].as_ref()));
    order
}

/// The edge insert, shared by the tree's edges and the validation stubs' edges.
const INSERT_EDGE: &str =
    "INSERT INTO node_children VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

/// A stub's edge from its tree parent.
struct StubEdge<'a> {
    parent: u32,
    child: usize,
    stub: &'a StubNode,
}

/// Writes the tree's edges (`node_children`, in primary-key order, so that every insert,
/// and later every transferred cell, is an append) with their index into a part database
/// at `path` with the store's schema, which [`write_records`] copies into the store
/// (`Parts::edges`). The part depends on the tree alone, so the `store:edges` step
/// writes it while the node records are made. Returns the number of edges.
pub fn write_edges(tree: &Tree, path: &Path) -> Result<usize, StoreError> {
    // Written beside the target and renamed: a killed make leaves no half part behind.
    let tmp = crate::files::temp::for_file(path);
    let edges = write_edges_at(tree, &tmp)?;
    std::fs::rename(&tmp, path)
        .map_err(|source| StoreError::Io { path: path.display().to_string(), source })?;
    Ok(edges)
}

/// [`write_edges`] into a fresh file at `path`.
fn write_edges_at(tree: &Tree, path: &Path) -> Result<usize, StoreError> {
    let _ = std::fs::remove_file(path);
    let mut conn = open_writer(path)?;
    conn.execute_batch(schema()).map_err(sql_file(path))?;
    let tx = conn.transaction().map_err(sql_file(path))?;
    let ids: Vec<String> = {
        use rayon::prelude::*;
        tree.nodes.par_iter().map(|n| position::node_id(&n.epd)).collect()
    };
    let mut edges = 0;
    {
        let mut insert_edge = BulkInsert::new(&tx, INSERT_EDGE, 10).map_err(sql_file(path))?;
        for i in id_order(&ids) {
            let mut children: Vec<(usize, &crate::tree::Edge)> =
                tree.nodes[i].children.iter().enumerate().collect();
            children.sort_by(|a, b| a.1.uci.cmp(&b.1.uci));
            for (rank, edge) in children {
                let s = edge.stats.unwrap_or_default();
                let avg = (s.rated_games > 0)
                    .then(|| (s.rating_sum as f64 / s.rated_games as f64 * 10.0).round() / 10.0);
                insert_edge
                    .row(&[
                        ids[i].as_str().into(),
                        ids[edge.child as usize].as_str().into(),
                        (&edge.san).into(),
                        (&edge.uci).into(),
                        Cell::Int(rank as i64),
                        Cell::Int(s.outcomes.games() as i64),
                        Cell::Int(s.outcomes.white as i64),
                        Cell::Int(s.outcomes.draws as i64),
                        Cell::Int(s.outcomes.black as i64),
                        avg.into(),
                    ])
                    .map_err(sql_file(path))?;
                edges += 1;
            }
        }
    }
    tx.execute_batch(EDGE_INDEXES).map_err(sql_file(path))?;
    tx.commit().map_err(sql_file(path))?;
    conn.close().map_err(|(_, e)| sql_file(path)(e))?;
    Ok(edges)
}

/// The validation stubs' edges, ranked after their parent's tree moves (a stub is what
/// the tree lacks, not what is played most). Returns how many.
fn insert_stub_edges(
    conn: &mut Connection,
    tree: &Tree,
    ids: &NodeIds<'_>,
    stub_edges: &[StubEdge<'_>],
) -> rusqlite::Result<usize> {
    let tx = conn.transaction()?;
    {
        let mut insert = BulkInsert::new(&tx, INSERT_EDGE, 10)?;
        let mut next_rank: HashMap<u32, usize> = HashMap::new();
        for e in stub_edges {
            let rank = next_rank
                .entry(e.parent)
                .or_insert_with(|| tree.nodes[e.parent as usize].children.len());
            let o = e.stub.outcomes;
            insert.row(&[
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
            ])?;
            *rank += 1;
        }
    }
    tx.commit()?;
    Ok(stub_edges.len())
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
