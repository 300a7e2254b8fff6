//! Writing `node_answers` ([`super::answers`]) from a finished store: every node's answer
//! made as [`Store::nodes_by_id`] makes it (a batch of consecutive ids at a time,
//! [`Store::nodes_in_id_range`]), so the rows are the bytes the tables give, whatever
//! wrote the tables (the store step, or a tool that writes a store's rows itself).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};

use rusqlite::params;

use super::answers::{LEVEL, columns};
use super::read::{ChildFactsFn, Store};
use super::schema::open_writer;
use super::{StoreError, sql_file};

/// Nodes a worker answers per batch (the unit of the writer's ordering).
const BATCH: usize = 1024;

/// Nodes whose answers train the dictionary: the first in id order (node ids are hashes
/// of the position, so a spread of the tree).
const TRAINING_NODES: usize = 4096;

/// The most bytes of the dictionary.
const DICTIONARY_BYTES: usize = 32 * 1024;

/// The zstd dictionary of the store's answers, trained on the answers of its first
/// [`TRAINING_NODES`] nodes (deterministic: the same nodes give the same bytes); empty
/// when they are too few or too alike for zstd to train on.
fn train(store: &Path) -> Result<Vec<u8>, StoreError> {
    let reader = Store::open_for_lookups(store)?;
    let mut ids = Vec::with_capacity(TRAINING_NODES);
    reader.each_node_id(|id| {
        ids.push(id);
        ids.len() < TRAINING_NODES
    })?;
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let samples: Vec<Vec<u8>> = reader
        .nodes_by_id(&refs)?
        .iter()
        .map(|node| serde_json::to_vec(node).expect("nodes serialize"))
        .collect();
    Ok(zstd::dict::from_samples(&samples, DICTIONARY_BYTES).unwrap_or_default())
}

fn compressing(e: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("compressing node answers: {e}"))
}

/// One answer row, ready for the part database.
struct Row {
    key: i64,
    check: i64,
    answer: Vec<u8>,
}

/// Writes the `node_answers` table of the store at `store` (complete but for it) into a
/// new part database at `part`, one row per node in node-id order, reading the store with
/// `threads` connections. The rows do not depend on the thread count. Returns how many.
pub fn write_part(store: &Path, part: &Path, threads: usize) -> Result<usize, StoreError> {
    write_part_with(store, part, threads, None)
}

/// [`write_part`], with the children's own columns from `facts` where it knows them
/// ([`Store::nodes_in_id_range_with`]): the same rows, from fewer reads.
pub fn write_part_with(
    store: &Path,
    part: &Path,
    threads: usize,
    facts: Option<&ChildFactsFn<'_>>,
) -> Result<usize, StoreError> {
    let _ = std::fs::remove_file(part);
    let dictionary = train(store)?;
    let mut conn = open_writer(part)?;
    conn.execute_batch(super::schema::ANSWERS_TABLE).map_err(sql_file(part))?;
    let tx = conn.transaction().map_err(sql_file(part))?;
    tx.execute("INSERT INTO node_answers_dictionary VALUES (?1)", [&dictionary])
        .map_err(sql_file(part))?;
    let written = {
        let mut insert =
            tx.prepare("INSERT INTO node_answers VALUES (?1, ?2, ?3)").map_err(sql_file(part))?;
        let mut put = |row: Row| {
            insert
                .execute(params![row.key, row.check, row.answer])
                .map(|_| ())
                .map_err(sql_file(part))
        };
        answer_all(store, &dictionary, facts, threads.max(1), &mut put)?
    };
    // The index is built here, by one sort of the finished table, so that the part has
    // the store's indexes and its copy into the store is SQLite's transfer of cells:
    // without it the copy inserted every row into the store's index at random (its keys
    // are position hashes), a quarter of the store step at 3.5 M nodes.
    tx.execute_batch(super::schema::ANSWERS_INDEXES).map_err(sql_file(part))?;
    tx.commit().map_err(sql_file(part))?;
    conn.close().map_err(|(_, e)| sql_file(part)(e))?;
    Ok(written)
}

/// Calls `put` with every node's answer row, in node-id order: one thread reads the ids
/// in batches of [`BATCH`], `threads` workers answer them, and the batches are put in
/// their order. A few batches at a time are in flight, whatever the store's size.
fn answer_all(
    store: &Path,
    dictionary: &[u8],
    facts: Option<&ChildFactsFn<'_>>,
    threads: usize,
    put: &mut dyn FnMut(Row) -> Result<(), StoreError>,
) -> Result<usize, StoreError> {
    type Done = (usize, Result<Vec<Row>, StoreError>);
    let (work_tx, work_rx) = mpsc::sync_channel::<(usize, Vec<String>)>(threads);
    // Shared by the workers alone: once they stop, the reader's sends fail and it stops.
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = mpsc::sync_channel::<Done>(2 * threads);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || read_batches(store, &work_tx));
        for _ in 0..threads {
            let (done_tx, work_rx) = (done_tx.clone(), Arc::clone(&work_rx));
            scope.spawn(move || answer_batches(store, dictionary, facts, &work_rx, &done_tx));
        }
        drop((done_tx, work_rx));
        // Batches arrive in any order: each is put once all before it are.
        let (mut next, mut waiting, mut written) = (0, BTreeMap::new(), 0);
        for (n, rows) in done_rx {
            waiting.insert(n, rows?);
            while let Some(rows) = waiting.remove(&next) {
                written += rows.len();
                rows.into_iter().try_for_each(&mut *put)?;
                next += 1;
            }
        }
        let batches = reader.join().expect("the id reader does not panic")?;
        if next < batches {
            let shown = store.display();
            return Err(StoreError::Corrupt(format!(
                "{shown}: node answers stopped at batch {next} of {batches}"
            )));
        }
        Ok(written)
    })
}

/// Sends the store's node ids to `work` in numbered batches; returns how many batches.
fn read_batches(
    store: &Path,
    work: &mpsc::SyncSender<(usize, Vec<String>)>,
) -> Result<usize, StoreError> {
    let reader = Store::open_for_lookups(store)?;
    let (mut batch, mut sent, mut stopped) = (Vec::with_capacity(BATCH), 0, false);
    reader.each_node_id(|id| {
        batch.push(id);
        if batch.len() == BATCH {
            stopped = work.send((sent, std::mem::take(&mut batch))).is_err();
            sent += 1;
        }
        !stopped
    })?;
    if !batch.is_empty() && !stopped && work.send((sent, batch)).is_ok() {
        sent += 1;
    }
    Ok(sent)
}

/// A worker: answers the batches it takes from `work` until there are none.
fn answer_batches(
    store: &Path,
    dictionary: &[u8],
    facts: Option<&ChildFactsFn<'_>>,
    work: &Mutex<mpsc::Receiver<(usize, Vec<String>)>>,
    done: &mpsc::SyncSender<(usize, Result<Vec<Row>, StoreError>)>,
) {
    let compressor = |reader| {
        let compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, dictionary);
        compressor.map(|c| (reader, c)).map_err(compressing)
    };
    let mut tools = Store::open_for_lookups(store).and_then(compressor);
    loop {
        let job = work.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((n, ids)) = job else { return };
        let rows = match &mut tools {
            Ok((reader, compressor)) => answer_batch(reader, compressor, facts, &ids),
            Err(e) => Err(StoreError::Corrupt(e.to_string())),
        };
        let failed = rows.is_err();
        if done.send((n, rows)).is_err() || failed {
            return;
        }
    }
}

/// The answer rows of the nodes `ids`.
fn answer_batch(
    store: &Store,
    compressor: &mut zstd::bulk::Compressor<'_>,
    facts: Option<&ChildFactsFn<'_>>,
    ids: &[String],
) -> Result<Vec<Row>, StoreError> {
    let (Some(first), Some(last)) = (ids.first(), ids.last()) else { return Ok(Vec::new()) };
    let nodes = store.in_one_read(|store| store.nodes_in_id_range_with(first, last, facts))?;
    if nodes.len() != ids.len() {
        return Err(StoreError::Corrupt(format!(
            "nodes {first} to {last}: {} ids listed, {} rows read",
            ids.len(),
            nodes.len()
        )));
    }
    nodes
        .iter()
        .map(|node| {
            let pos = crate::position::parse_fen(&node.node.fen).map_err(|e| {
                StoreError::Corrupt(format!(
                    "node {}: FEN {}: {e}",
                    node.node.node_id, node.node.fen
                ))
            })?;
            let (key, check) = columns(crate::position::key(&pos));
            let json = serde_json::to_vec(node).expect("nodes serialize");
            let answer = compressor.compress(&json).map_err(compressing)?;
            Ok(Row { key, check, answer })
        })
        .collect()
}
