//! The [`Catalog`] of one build: what `okb serve` answers from, opened as one whole so
//! no answer mixes two builds. One-position lookups read the store file ([`super::disk`]);
//! the parts that walk the tree ([`Walked`]) are loaded once in memory, for stores of at
//! most `--in-memory-nodes` nodes ([`MAX_WALKED_NODES`] by default); larger stores keep
//! only their named positions in memory ([`Named`]); the metadata of `GET /` and the
//! `ETag` are read here at open.

use std::path::Path;

use axum::http::{StatusCode, header};

use super::error::ApiError;
use super::named::{ExplorerExamples, Named};
use super::{disk, masters, repertoire};
use crate::graph::Graph;
use crate::graph::tally::NamedTally;
use crate::position::{KeyMap, PositionKey};
use crate::store::StoreError;
use crate::store::read::Store;

/// Everything the server answers from for one build of the store.
///
/// What one position's lookup needs is read from the store file per request
/// ([`disk::Disk`]); opening a catalog reads the store's metadata and hashes the file,
/// so it takes the same time at any number of nodes. The endpoints that walk the tree
/// (ECO and opening trees, the explorer) answer from [`Walked`], loaded once in memory in
/// the background from start-up, for a store of at most `in_memory_nodes` nodes; on a
/// larger one, the trees below a node and the explorer's node (with its part of the
/// explorer index) are read from disk ([`Catalog::piece`]). Search, structures, players and the OpenAPI document answer
/// from [`Named`] at any size.
pub struct Catalog {
    /// The store file.
    pub store_path: std::path::PathBuf,
    /// The store file's identity when it was opened (a new build is a new file).
    identity: FileIdentity,
    /// One-position lookups, from the store file.
    pub(super) disk: disk::Disk,
    /// The connection the in-memory parts are loaded from, opened with the others so it
    /// reads the same build (taken by the load).
    loader: std::sync::Mutex<Option<Store>>,
    /// The parts answered from memory, loaded once ([`Catalog::walked`]).
    walked: std::sync::OnceLock<Result<Walked, String>>,
    /// The most nodes for which the whole graph is held in memory.
    in_memory_nodes: u64,
    /// The named positions of a store over `in_memory_nodes`, read once ([`Catalog::named`]).
    named: std::sync::OnceLock<Result<Named, String>>,
    /// How many nodes the store has, counted once on first use (a count reads the whole
    /// position index: start-up does not wait for it).
    nodes: std::sync::OnceLock<Result<u64, String>>,
    /// `"<BLAKE3 of the store file, 32 hex digits>"`: the answers' `ETag`.
    pub(super) etag: header::HeaderValue,
    /// `GET /` answered as JSON: what the store was built from ([`Catalog::metadata`]),
    /// its `nodes` filled in per answer.
    pub(super) metadata: serde_json::Value,
    /// The repertoire reports built beside the store (`GET /repertoire/{name}`).
    pub(super) repertoires: repertoire::Repertoires,
}

/// The value of `cell`, initialized by `init` if no one did; a request that has to wait
/// for it lets the runtime move other requests off its thread.
fn once<T>(cell: &std::sync::OnceLock<T>, init: impl FnOnce() -> T) -> &T {
    match cell.get() {
        Some(value) => value,
        None => tokio::task::block_in_place(|| cell.get_or_init(init)),
    }
}

/// The most nodes a store may have for the whole graph to be held in memory by default
/// (`okb serve --in-memory-nodes`; about 1.3 KB a node on the masters knowledge base, so
/// at most about 650 MB); above it, the trees and the explorer read the store file per
/// request, and search, structures and players answer from [`Named`].
pub const MAX_WALKED_NODES: u64 = crate::store::answers::LARGE_STORE_NODES;

/// The parts of a catalog answered from memory: the whole graph and what is derived
/// from it.
pub struct Walked {
    /// The knowledge base.
    pub graph: Graph,
    /// Node index by position key: a lookup hashes the parsed position instead of
    /// formatting its EPD text.
    by_key: KeyMap<PositionKey, u32>,
    /// The explorer index, if the store has one.
    pub(super) explorer: Option<masters::Explorer>,
    /// The named positions and what is tallied over every node, built from the graph.
    pub(super) named: Named,
}

/// What tells one store file from another at the same path: a build replaces the file
/// (a new inode), and its size and time change with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    inode: u64,
    device: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    /// The identity of the file at `path`, `None` when there is none.
    pub fn of(path: &Path) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            inode: meta.ino(),
            device: meta.dev(),
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl Catalog {
    /// Opens the store at `path`, caching up to `cache_bytes` of node answers, holding
    /// the whole graph in memory if it has at most `in_memory_nodes` nodes. The in-memory
    /// parts are loaded on first use ([`Catalog::walked`], [`Catalog::named`]). The
    /// answers' `ETag` covers `answering_code` (the answering code's fingerprint).
    pub fn open(
        path: &Path,
        cache_bytes: usize,
        in_memory_nodes: u64,
        answering_code: &str,
    ) -> Result<Catalog, StoreError> {
        let missing = || StoreError::Missing(path.display().to_string());
        // Everything below must read one build: if the file was replaced meanwhile, the
        // identities differ and the open starts again.
        loop {
            let identity = FileIdentity::of(path).ok_or_else(missing)?;
            let loader = Store::open(path)?;
            // One connection per thread that may answer at once: the runtime's workers and
            // one that a loading request hands its work to.
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
            let disk = disk::Disk::open(path, threads + 1, cache_bytes)?;
            let repertoires = repertoire::Repertoires::load(path)?;
            let etag = store_etag(path, answering_code, &repertoires)?;
            let metadata = Catalog::metadata(&loader)?;
            if FileIdentity::of(path) != Some(identity) {
                continue;
            }
            return Ok(Catalog {
                store_path: path.to_path_buf(),
                identity,
                disk,
                loader: std::sync::Mutex::new(Some(loader)),
                walked: std::sync::OnceLock::new(),
                in_memory_nodes,
                named: std::sync::OnceLock::new(),
                nodes: std::sync::OnceLock::new(),
                etag,
                metadata,
                repertoires,
            });
        }
    }

    /// The parts answered from memory, loaded by the first caller (the others wait); an
    /// error when the store is too large for them or they failed to load.
    pub fn walked(&self) -> Result<&Walked, ApiError> {
        let loaded = once(&self.walked, || self.load_walked());
        loaded.as_ref().map_err(|message| ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.clone(),
        })
    }

    /// Whether the store is small enough for its whole graph to be held in memory (a
    /// store whose nodes cannot be counted is taken to be, so that its load reports why).
    pub fn holds_whole_graph(&self) -> bool {
        self.nodes().map_or(true, |nodes| nodes <= self.in_memory_nodes)
    }

    /// Loads the parts answered from memory (blocking): the whole graph of a small store,
    /// the named positions of a larger one; so that the first request that needs them
    /// does not wait. Returns whether they loaded.
    pub fn load_in_memory_parts(&self) -> bool {
        match self.holds_whole_graph() {
            true => self.walked.get_or_init(|| self.load_walked()).is_ok(),
            false => self.named.get_or_init(|| self.load_named()).is_ok(),
        }
    }

    /// The store's connection opened with the others, taken by the one load that reads it.
    fn take_loader(&self) -> Result<Store, String> {
        self.loader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| "the store's in-memory parts failed to load before".to_string())
    }

    fn load_walked(&self) -> Result<Walked, String> {
        let nodes = self.nodes().map_err(|e| e.message)?;
        if nodes > self.in_memory_nodes {
            return Err(format!(
                "this store has {nodes} nodes, more than the {} okb serve holds in memory (--in-memory-nodes), \
                 and this answer needs the whole graph in memory",
                self.in_memory_nodes
            ));
        }
        let store = self.take_loader()?;
        Walked::load(&store, &self.store_path, &self.repertoires).map_err(|e| e.to_string())
    }

    fn load_named(&self) -> Result<Named, String> {
        let store = self.take_loader()?;
        let started = std::time::Instant::now();
        let (named, from) =
            Named::load(&store, &self.store_path, &self.repertoires).map_err(|e| e.to_string())?;
        // Which path a large store took, and its time: a pass over every node takes
        // a minute at tens of millions of nodes, the summary a fraction of a second.
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        super::error::log(format_args!("{:>12} named positions {from} in {ms:.0} ms", "Read"));
        Ok(named)
    }

    /// The named positions and what is tallied over every node: from the graph of a store
    /// held in memory, else read once from the store file (a request that comes first
    /// waits for the read).
    pub fn named(&self) -> Result<&Named, ApiError> {
        if let Some(w) = self.in_memory()? {
            return Ok(&w.named);
        }
        let loaded = once(&self.named, || self.load_named());
        loaded.as_ref().map_err(|message| ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.clone(),
        })
    }

    /// The in-memory parts when the store is small enough to hold them
    /// (`in_memory_nodes`); `None` for a larger store, whose trees are read from disk
    /// ([`Catalog::piece`]).
    pub(super) fn in_memory(&self) -> Result<Option<&Walked>, ApiError> {
        if self.nodes()? > self.in_memory_nodes {
            return Ok(None);
        }
        self.walked().map(Some)
    }

    /// The piece of the store that a tree below node `root_id`, `max_depth` plies deep
    /// along moves played in at least `min_games` games, reads ([`disk::Disk::piece`]);
    /// `None` when the store has no such node, a 503 when the piece is over
    /// [`disk::MAX_PIECE_NODES`].
    pub(super) fn piece(
        &self,
        root_id: &str,
        max_depth: u32,
        min_games: u64,
    ) -> Result<Option<Graph>, ApiError> {
        use crate::store::graph::Piece;
        let read = tokio::task::block_in_place(|| self.disk.piece(root_id, max_depth, min_games));
        match read.map_err(ApiError::store)? {
            Piece::Read(graph) => Ok(Some(graph)),
            Piece::Missing => Ok(None),
            Piece::TooLarge => Err(ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "the tree below node {root_id} to depth {max_depth} holds more than {} nodes, \
                     the most okb serve reads from disk for one answer: ask for a smaller depth \
                     (or a larger min_games)",
                    disk::MAX_PIECE_NODES
                ),
            }),
        }
    }

    /// The most nodes for which the whole graph is held in memory (`--in-memory-nodes`).
    pub fn in_memory_nodes(&self) -> u64 {
        self.in_memory_nodes
    }

    /// How many nodes the store has (counted on first use).
    pub fn nodes(&self) -> Result<u64, ApiError> {
        let counted = once(&self.nodes, || self.disk.node_count().map_err(|e| e.to_string()));
        counted
            .clone()
            .map_err(|message| ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, message })
    }

    /// The store file's identity when it was opened.
    pub fn identity(&self) -> FileIdentity {
        self.identity
    }

    /// The build number the store's metadata gives.
    pub fn build(&self) -> Option<u64> {
        self.metadata.get("build").and_then(|b| b.as_u64())
    }
}

impl Walked {
    /// Loads the whole graph of `store` (the store at `path`, with `repertoires` beside it)
    /// and what is derived from it.
    fn load(
        store: &Store,
        path: &Path,
        repertoires: &repertoire::Repertoires,
    ) -> Result<Walked, StoreError> {
        let graph = store.graph()?;
        let by_key = super::named::key_index(&graph, path)?;
        let explorer = store
            .explorer()?
            .map(|loaded| masters::Explorer::new(&graph, loaded, path))
            .transpose()?;
        let mut named = NamedTally::default();
        graph.nodes.iter().for_each(|node| named.add(node));
        let examples = ExplorerExamples {
            served: explorer.is_some(),
            game_ids: explorer.iter().flat_map(|e| e.some_id()).map(str::to_string).collect(),
        };
        let named = Named::from_tally(named, store, path, repertoires, examples)?;
        Ok(Walked { graph, by_key, explorer, named })
    }
}

impl Catalog {
    /// The store's metadata: okb's version, the schema, the build number, the node count
    /// (filled in later), and what each game source's games cover (how many, the dates they span).
    fn metadata(store: &Store) -> Result<serde_json::Value, StoreError> {
        let meta = store.meta()?;
        let number = |key: &str| meta.get(key).and_then(|v| v.parse::<u64>().ok());
        let coverage: serde_json::Map<String, serde_json::Value> =
            meta.get("coverage").and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default();
        let sources: serde_json::Map<String, serde_json::Value> = coverage
            .into_iter()
            .map(|(name, games)| (name, serde_json::json!({ "games": games })))
            .collect();
        Ok(serde_json::json!({
            "okb_version": meta.get("okb_version"),
            "schema_version": number("schema_version"),
            "build": number("build"),
            // Filled per answer ([`Catalog::nodes`]); here for its place among the keys.
            "nodes": null,
            "sources": sources,
        }))
    }

    /// Adds what the project `loaded` (whose store this is) says of its engine (`max_ply`)
    /// and of its sources: each
    /// one's kind, URL and pin, and how its bytes were fetched (when, from where,
    /// upstream's Last-Modified and ETag) from the records in its `sources/` folder. Only
    /// a source fetched as one file has such a record.
    pub fn with_project(mut self, loaded: &crate::pipeline::Loaded) -> Catalog {
        // The page says why an eval is empty beyond the engine's reach (issue 44 item 15).
        if let Some(engine) = &loaded.pipeline.engine {
            self.metadata["engine"] = serde_json::json!({ "max_ply": engine.max_ply });
        }
        let Some(sources) = self.metadata.get_mut("sources").and_then(|s| s.as_object_mut()) else {
            return self;
        };
        for (name, spec) in &loaded.pipeline.sources {
            let entry = sources.entry(name.clone()).or_insert_with(|| serde_json::json!({}));
            entry["kind"] = spec.kind().name().into();
            if let Some(url) = spec.url() {
                entry["url"] = url.into();
            }
            let Some(pin) = spec.blake3() else { continue };
            entry["blake3"] = pin.into();
            if let Some(record) = crate::sources::fetched::read(&loaded.path("sources"), pin) {
                let at = crate::sources::fetched::utc(record.fetched_at);
                entry["fetched"] = serde_json::json!({ "at": at, "from": record.from, "last_modified": record.last_modified, "etag": record.etag });
            }
        }
        self
    }
}

/// A strong `ETag` for every answer from the store at `path`: the BLAKE3 of the store's
/// BLAKE3, the fingerprint of the code that answers (an okb that adds a field answers the
/// same store with other bytes, so a client's cached answer must not be confirmed by a
/// 304) and the repertoire reports (which a make may change without the store).
fn store_etag(
    path: &Path,
    answering_code: &str,
    repertoires: &repertoire::Repertoires,
) -> Result<header::HeaderValue, StoreError> {
    let hashed = || {
        crate::files::hash_own_file(path)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))
    };
    let store = match hash_in_manifest(path) {
        Some(hash) => hash,
        None => hashed()?,
    };
    let mut hasher = blake3::Hasher::new();
    for part in [store.as_bytes(), answering_code.as_bytes()] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    for bytes in repertoires.bytes() {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    let hash = hasher.finalize().to_hex().to_string();
    let tag = format!("\"{}\"", &hash[..32]);
    Ok(header::HeaderValue::from_str(&tag).expect("hex digits are a valid header value"))
}

/// The store's BLAKE3 as the release manifest beside it records it (`store.blake3`), when
/// the manifest describes this very file: its name and size, and a manifest written
/// after it (a make writes the store, then the manifest). Hashing a store reads all of
/// it, which at tens of millions of nodes would take longer than the rest of start-up.
fn hash_in_manifest(path: &Path) -> Option<String> {
    let manifest = path.parent()?.join("manifest.json");
    let store = std::fs::metadata(path).ok()?;
    if std::fs::metadata(&manifest).ok()?.modified().ok()? < store.modified().ok()? {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).ok()?).ok()?;
    let entry = &value["store"];
    let named = Path::new(entry["path"].as_str()?).file_name()? == path.file_name()?;
    let hash = entry["blake3"].as_str()?;
    let hex = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    (named && hex && entry["bytes"].as_u64()? == store.len()).then(|| hash.to_string())
}

impl Walked {
    /// The node of position `pos`, if the knowledge base has it.
    pub fn find(&self, pos: &shakmaty::Chess) -> Option<u32> {
        self.by_key.get(&crate::position::key(pos)).copied()
    }

    /// The Lichess taxonomy's own name of `pos`, if it names the position (every
    /// position it names is a node: the tree holds the taxonomies' lines).
    pub(super) fn lichess_name(&self, pos: &shakmaty::Chess) -> Option<masters::ExplorerOpening> {
        self.find(pos).and_then(|i| masters::move_opening(self.graph.node(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_etag_changes_with_the_store_and_with_the_answering_code_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.sqlite"), dir.path().join("b.sqlite"));
        std::fs::write(&a, b"one build").unwrap();
        std::fs::write(&b, b"another build").unwrap();
        let none = repertoire::Repertoires::default();
        let tag = |path: &Path, code: &str| store_etag(path, code, &none).unwrap();
        assert_eq!(tag(&a, "code 1"), tag(&a, "code 1"), "the same store and code: the same tag");
        assert_ne!(tag(&a, "code 1"), tag(&a, "code 2"), "another okb answers with other bytes");
        assert_ne!(tag(&a, "code 1"), tag(&b, "code 1"));
        let text = tag(&a, "code 1").to_str().unwrap().to_string();
        assert!(text.len() == 34 && text.starts_with('"') && text.ends_with('"'), "{text}");
    }
}
