//! Answers read from the store file per request, for the endpoints that look up one
//! position (`GET /node/fen`, `POST /node/pgn`, `GET /api/cloud-eval`), and, on a store
//! too large to hold in memory, the pieces of it the trees below a node read
//! ([`Disk::piece`]): the server's start-up and memory do not grow with the number of
//! nodes.
//!
//! A lookup takes a read-only connection from a small pool (SQLite connections are not
//! shared between threads; all are opened at once, so they read the same file even after
//! a make replaced it at that path), reads the node by its position key (the store's unique index
//! `opening_nodes_position`), its edges and its transpositions, and serializes them as the
//! whole-store load did, so the bytes are the same; a large store keeps those bytes one
//! row per position ([`crate::store::answers`]), read with one indexed lookup instead.
//! The answers of hot positions are kept in an [`AnswerCache`] bounded in bytes (a large
//! store's as compressed in its rows).

use std::path::Path;
use std::sync::{Condvar, Mutex};

use axum::body::Bytes;

use crate::position::{KeyMap, PositionKey};
use crate::store::StoreError;
use crate::store::answers::Dictionary;
use crate::store::graph::{Cut, Piece};
use crate::store::read::Store;

/// The default budget of the cache of node answers, in MiB (`okb serve --cache-mb`).
/// 128 MiB hold the compressed answers of about 460,000 positions, so that a steady
/// set of 200,000 (bench/serve-large) stays cached through the generations' turnover.
pub const DEFAULT_CACHE_MB: usize = 128;

/// Bytes an entry of the cache costs besides its answer (key, handle, map slot), so that
/// the budget bounds the memory and not only the answers' bytes.
const ENTRY_OVERHEAD: usize = 64;

/// Shards of the answer cache, each with its own lock and a share of the budget, chosen
/// by key: with one lock, its line moved between the cores on every request.
const CACHE_SHARDS: usize = 16;

/// One shard of the answer cache, alone on its cache lines.
#[repr(align(128))]
struct CacheShard(Mutex<AnswerCache>);

/// The most nodes a tree answered from disk may read ([`Disk::piece`]): about 1.3 KB
/// each in memory, so about 130 MB, for at most one tree per pooled connection at once.
pub const MAX_PIECE_NODES: usize = 100_000;

/// Node lookups on one store file.
pub struct Disk {
    /// The store's path, as errors name it.
    path: String,
    idle: Mutex<Vec<Store>>,
    returned: Condvar,
    cache: Box<[CacheShard]>,
    /// The named openings' node ids by file stem, read on first use: one entry per name
    /// of the Lichess taxonomy (about 3,800), whatever the number of nodes.
    stems: std::sync::OnceLock<std::collections::HashMap<String, String>>,
    /// Whether the store has an explorer index, asked once (every explorer answer on a
    /// large store reads it).
    explorer: std::sync::OnceLock<bool>,
    /// The dictionary of the store's node answers if it keeps them one row per position
    /// ([`crate::store::answers`]), read once.
    answers: std::sync::OnceLock<Option<Dictionary>>,
}

impl Disk {
    /// Lookups on the store at `path` over `connections` connections (a lookup does not
    /// yield, so one per server thread is enough), caching up to `cache_bytes` of answers.
    /// The connections read the file without read-ahead ([`crate::files::access`]): a
    /// lookup reads one page, and on a cold store the kernel read about forty for each.
    pub fn open(path: &Path, connections: usize, cache_bytes: usize) -> Result<Disk, StoreError> {
        let stores = crate::files::access::opened_for_random_reads(path, || {
            (0..connections.max(1))
                .map(|_| Store::open_for_lookups(path))
                .collect::<Result<Vec<_>, _>>()
        })?;
        Ok(Disk {
            path: path.display().to_string(),
            idle: Mutex::new(stores),
            returned: Condvar::new(),
            cache: (0..CACHE_SHARDS)
                .map(|_| CacheShard(Mutex::new(AnswerCache::new(cache_bytes / CACHE_SHARDS))))
                .collect(),
            stems: std::sync::OnceLock::new(),
            explorer: std::sync::OnceLock::new(),
            answers: std::sync::OnceLock::new(),
        })
    }

    /// Runs `read` on a pooled connection, waiting for one when all are in use.
    fn with_store<T>(
        &self,
        read: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let store = loop {
            match idle.pop() {
                Some(store) => break store,
                None => idle = self.returned.wait(idle).unwrap_or_else(|e| e.into_inner()),
            }
        };
        drop(idle);
        let result = read(&store);
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(store);
        self.returned.notify_one();
        result
    }

    /// The `GET /node/fen` answer of `pos`, if the store has the position.
    ///
    /// A store with node answers is cached in their compressed form (about 220 bytes
    /// against 1–3 KB of JSON, so the same budget holds about ten times more positions),
    /// decompressed per request in a few microseconds.
    pub fn node_json(&self, pos: &shakmaty::Chess) -> Result<Option<Bytes>, StoreError> {
        let key = crate::position::key(pos);
        let dictionary = self.answers()?;
        let cached = self.cache_of(key).get(key);
        let kept = match cached {
            Some(bytes) => bytes,
            None => match self.read_kept(pos, key, dictionary.is_some())? {
                Some(bytes) => bytes,
                None => return Ok(None),
            },
        };
        match dictionary {
            Some(dictionary) => Ok(Some(Bytes::from(dictionary.answer(&kept, &self.path)?))),
            None => Ok(Some(kept)),
        }
    }

    /// The bytes the cache keeps for `pos` (whose key is `key`), read from the store and
    /// cached: its row of node answers (compressed) when the store has them, else its
    /// JSON built from the tables.
    fn read_kept(
        &self,
        pos: &shakmaty::Chess,
        key: PositionKey,
        answers: bool,
    ) -> Result<Option<Bytes>, StoreError> {
        let read = match answers {
            true => self.with_store(|store| store.answer(key))?,
            false => {
                let epd = crate::position::epd(pos);
                let node = self.with_store(|store| store.node_by_position(&epd))?;
                node.map(|node| serde_json::to_vec(&node).expect("nodes serialize"))
            }
        };
        let Some(bytes) = read.map(Bytes::from) else { return Ok(None) };
        self.cache_of(key).put(key, bytes.clone());
        Ok(Some(bytes))
    }

    /// The shard of the answer cache that holds `key`'s answer (by its top bits: the
    /// maps inside hash the low ones).
    fn cache_of(&self, key: PositionKey) -> std::sync::MutexGuard<'_, AnswerCache> {
        let shard = &self.cache[(key.0 >> 124) as usize % CACHE_SHARDS];
        shard.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The piece of the store a tree below node `root_id` reads, at most
    /// [`MAX_PIECE_NODES`] nodes.
    pub fn piece(
        &self,
        root_id: &str,
        max_depth: u32,
        min_games: u64,
    ) -> Result<Piece, StoreError> {
        let cut = Cut { root_id, max_depth, min_games, limit: MAX_PIECE_NODES };
        self.with_store(|store| store.piece(cut))
    }

    /// The node id of ECO or SCID code `code`'s root ([`super::eco_tree::root_of`]).
    pub fn eco_root(&self, code: &str) -> Result<Option<String>, StoreError> {
        let nodes = self.with_store(|store| store.entries_coded(code))?;
        let candidates =
            nodes.iter().map(|n| ((n.eco.as_str(), n.is_eco_root, n.ply, n.moves.as_str()), n));
        Ok(super::eco_tree::best_root(code, candidates).map(|n| n.node_id.clone()))
    }

    /// The node id of the named opening whose OpeningIQ file is `<stem>.json`.
    pub fn stem(&self, stem: &str) -> Result<Option<String>, StoreError> {
        let stems = read_once(&self.stems, || {
            Ok(named_stems(&self.with_store(Store::entries_named)?).into_iter().collect())
        })?;
        Ok(stems.get(stem).cloned())
    }

    /// Graph node `node`'s part of the explorer index (its moves among `node.children`)
    /// with the games it names, if it has one; on a store with the index
    /// ([`Disk::has_explorer`]).
    pub fn explorer_node(
        &self,
        node: &crate::graph::Node,
    ) -> Result<Option<super::masters::ReadNode>, StoreError> {
        self.with_store(|store| {
            let Some(index) = store.explorer_node(&node.node_id)? else { return Ok(None) };
            let read =
                super::masters::ReadNode::new(node, index, |games| store.explorer_games(games));
            read.map(Some)
        })
    }

    /// The PGN text of the explorer index's game `id`, if it has one.
    pub fn explorer_pgn(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.with_store(|store| store.explorer_pgn(id))
    }

    /// Whether the store has an explorer index.
    pub fn has_explorer(&self) -> Result<bool, StoreError> {
        read_once(&self.explorer, || self.with_store(Store::has_explorer)).copied()
    }

    /// The dictionary of the store's node answers, if it keeps them one row per position
    /// in the form this okb answers: node answers that another okb wrote in another form
    /// are left alone, and the tables answer (as this okb does) until a make writes them
    /// again.
    fn answers(&self) -> Result<Option<&Dictionary>, StoreError> {
        let usable = |store: &Store| {
            let Some(dictionary) = store.answers_dictionary()? else { return Ok(None) };
            match store.answers_format()? {
                Some(format) if format != crate::store::read::answer_format() => {
                    super::error::log(format_args!(
                        "{:>12} the node answers of {}: another okb wrote them in another form; \
                         answering from its tables until `okb make` writes them again",
                        "Ignoring", self.path
                    ));
                    Ok(None)
                }
                _ => Ok(Some(dictionary)),
            }
        };
        read_once(&self.answers, || self.with_store(usable)).map(Option::as_ref)
    }

    /// How many nodes the store has.
    pub fn node_count(&self) -> Result<u64, StoreError> {
        self.with_store(Store::node_count)
    }

    /// The graph node of `pos` without its edges, if the store has the position.
    pub fn node(&self, pos: &shakmaty::Chess) -> Result<Option<crate::graph::Node>, StoreError> {
        let epd = crate::position::epd(pos);
        self.with_store(|store| store.graph_node(&epd))
    }
}

/// The value of `cell`, read by `read` the first time; a read that fails is not kept, so
/// the next call reads again.
fn read_once<T>(
    cell: &std::sync::OnceLock<T>,
    read: impl FnOnce() -> Result<T, StoreError>,
) -> Result<&T, StoreError> {
    if let Some(value) = cell.get() {
        return Ok(value);
    }
    let value = read()?;
    Ok(cell.get_or_init(|| value))
}

/// Serialized answers by position, at most about `budget` bytes in all: two generations,
/// the young one filled until it holds half the budget, then aged, dropping the old one.
/// An answer read from the old generation moves back to the young, so what is asked
/// again stays, and what is not asked for one generation goes (a cheap stand-in for least
/// recently used, with one lock and no per-read bookkeeping).
pub struct AnswerCache {
    budget: usize,
    young: KeyMap<PositionKey, Bytes>,
    young_bytes: usize,
    old: KeyMap<PositionKey, Bytes>,
}

impl AnswerCache {
    /// An empty cache of `budget` bytes (0: nothing is kept).
    pub fn new(budget: usize) -> AnswerCache {
        AnswerCache { budget, young: KeyMap::default(), young_bytes: 0, old: KeyMap::default() }
    }

    /// The answer cached for `key`.
    pub fn get(&mut self, key: PositionKey) -> Option<Bytes> {
        if let Some(bytes) = self.young.get(&key) {
            return Some(bytes.clone());
        }
        let bytes = self.old.remove(&key)?;
        self.put(key, bytes.clone());
        Some(bytes)
    }

    /// Keeps `bytes` as the answer for `key`, unless it alone is over half the budget.
    pub fn put(&mut self, key: PositionKey, bytes: Bytes) {
        let cost = bytes.len() + ENTRY_OVERHEAD;
        let half = self.budget / 2;
        if cost > half {
            return;
        }
        if self.young_bytes + cost > half {
            self.old = std::mem::take(&mut self.young);
            self.young_bytes = 0;
        }
        if self.young.insert(key, bytes).is_none() {
            self.young_bytes += cost;
        }
    }

    /// The bytes the cache holds, by its own count (answers plus their overhead).
    pub fn held(&self) -> usize {
        let cost = |map: &KeyMap<PositionKey, Bytes>| {
            map.values().map(|b| b.len() + ENTRY_OVERHEAD).sum::<usize>()
        };
        cost(&self.young) + cost(&self.old)
    }
}

/// The named openings among `nodes` (a store's [`Store::entries_named`]) as the OpeningIQ
/// export names its files: each file stem with its node's id, in stem order.
pub fn named_stems(nodes: &[crate::store::read::EntryNode]) -> Vec<(String, String)> {
    let named = crate::export::named::select(nodes.iter().enumerate().map(|(i, n)| {
        crate::export::named::Candidate {
            node: i as u32,
            eco: &n.eco,
            name: &n.name,
            ply: n.ply as usize,
            movetext: &n.moves,
        }
    }));
    named.into_iter().map(|o| (o.stem, nodes[o.node as usize].node_id.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u128) -> PositionKey {
        PositionKey(n)
    }

    #[test]
    fn the_cache_stays_within_its_budget_and_keeps_what_is_asked_again() {
        let mut cache = AnswerCache::new(10 * (100 + ENTRY_OVERHEAD));
        let answer = Bytes::from(vec![b'x'; 100]);
        for n in 0..1000 {
            cache.put(key(n), answer.clone());
            // Position 0 is asked after every new answer: it is never dropped.
            assert!(cache.get(key(0)).is_some(), "position 0 dropped after {n}");
            assert!(
                cache.held() <= 10 * (100 + ENTRY_OVERHEAD),
                "{} bytes after {n}",
                cache.held()
            );
        }
        assert!(cache.get(key(1)).is_none(), "an answer not asked again is dropped");
        assert!(cache.get(key(999)).is_some(), "the latest answer is kept");
    }

    #[test]
    fn an_answer_over_half_the_budget_is_not_kept() {
        let mut cache = AnswerCache::new(100);
        cache.put(key(1), Bytes::from(vec![0; 60]));
        assert!(cache.get(key(1)).is_none());
        assert_eq!(cache.held(), 0);
    }
}
