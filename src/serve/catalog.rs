//! The [`Catalog`] of one build: what `okb serve` answers from, opened as one whole so
//! no answer mixes two builds. One-position lookups read the store file ([`super::disk`]);
//! the parts that walk the tree ([`Walked`]) are loaded once in memory, for stores of at
//! most [`MAX_WALKED_NODES`] nodes; the metadata of `GET /` and the `ETag` are read here
//! at open.

use std::collections::HashMap;
use std::path::Path;

use axum::body::Bytes;
use axum::http::{StatusCode, header};

use super::error::ApiError;
use super::{disk, masters, openapi, player, repertoire, structures};
use crate::graph::Graph;
use crate::position::{KeyMap, PositionKey};
use crate::store::StoreError;
use crate::store::read::Store;

/// Everything the server answers from for one build of the store.
///
/// What one position's lookup needs is read from the store file per request
/// ([`disk::Disk`]); opening a catalog reads the store's metadata and hashes the file,
/// so it takes the same time at any number of nodes. The endpoints that walk the tree
/// (ECO and opening trees, the explorer, search, structures, players, the OpenAPI
/// document's examples) answer from [`Walked`], loaded once in memory: in the background
/// from start-up, and only for a store of at most [`MAX_WALKED_NODES`] nodes (on a larger
/// one, the trees below a node are read from disk: [`Catalog::piece`]).
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

/// The most nodes a store may have for the endpoints that walk the tree to be served
/// (they hold the whole graph in memory, about 1.3 KB a node on the masters knowledge
/// base, so at most about 650 MB); above it they answer 503,
/// and the one-position lookups are served from disk alone.
pub const MAX_WALKED_NODES: u64 = 500_000;

/// The parts of a catalog answered from memory: the whole graph and what is derived
/// from it.
pub struct Walked {
    /// The knowledge base.
    pub graph: Graph,
    /// Node index by position key: a lookup hashes the parsed position instead of
    /// formatting its EPD text.
    by_key: KeyMap<PositionKey, u32>,
    pub(super) search: crate::search::SearchIndex,
    /// Named openings by file stem (the OpeningIQ export's file names).
    pub(super) stems: HashMap<String, u32>,
    pub(super) openapi: Bytes,
    /// `GET /structure/{name}/openings` answers.
    pub(super) structures: structures::StructureIndex,
    /// The explorer index, if the store has one.
    pub(super) explorer: Option<masters::Explorer>,
    /// The player collections (`GET /player`; none in a store built without them).
    pub(super) players: player::Players,
    /// The ply of the deepest position the knowledge base counted games for (the tree's
    /// `max_ply` in practice): an explorer answer for a position deeper than that says so
    /// ([`masters::BeyondDepth`]).
    pub(super) deepest: u32,
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
    /// Opens the store at `path`, caching up to `cache_bytes` of node answers. The
    /// in-memory parts are loaded on first use ([`Catalog::walked`]).
    pub fn open(path: &Path, cache_bytes: usize) -> Result<Catalog, StoreError> {
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
            let etag = store_etag(path, &repertoires)?;
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

    /// Loads the parts answered from memory (blocking), so that the first request that
    /// needs them does not wait; returns whether they loaded.
    pub fn load_in_memory_parts(&self) -> bool {
        self.walked.get_or_init(|| self.load_walked()).is_ok()
    }

    fn load_walked(&self) -> Result<Walked, String> {
        let nodes = self.nodes().map_err(|e| e.message)?;
        if nodes > MAX_WALKED_NODES {
            return Err(format!(
                "this store has {nodes} nodes, more than the {MAX_WALKED_NODES} okb serve holds in memory for the endpoints that walk the tree; \
                 GET /node/fen, POST /node/pgn and GET /api/cloud-eval answer from disk at any size"
            ));
        }
        let store = self
            .loader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or("the store's in-memory parts failed to load before")?;
        Walked::load(&store, &self.store_path, &self.repertoires).map_err(|e| e.to_string())
    }

    /// The in-memory parts when the store is small enough to hold them
    /// ([`MAX_WALKED_NODES`]); `None` for a larger store, whose trees are read from disk
    /// ([`Catalog::piece`]).
    pub(super) fn in_memory(&self) -> Result<Option<&Walked>, ApiError> {
        if self.nodes()? > MAX_WALKED_NODES {
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
        let players = player::Players::new(store.players()?.unwrap_or_default());
        let graph = store.graph()?;
        let stems =
            crate::export::named::of_graph(&graph).into_iter().map(|n| (n.stem, n.node)).collect();
        let mut by_key = KeyMap::default();
        for (index, node) in graph.nodes.iter().enumerate() {
            let pos = crate::position::parse_fen(&node.epd)
                .map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))?;
            by_key.insert(crate::position::key(&pos), index as u32);
        }
        let structures = structures::StructureIndex::new(store.structures()?, &graph);
        let explorer = store
            .explorer()?
            .map(|loaded| masters::Explorer::new(&graph, loaded, path))
            .transpose()?;
        let mut examples = examples(&graph, &by_key, &stems, &structures);
        if let Some(e) = &explorer {
            examples.explorer = true;
            examples.game_ids = e.some_id().map(str::to_string).into_iter().collect();
        }
        examples.players = players.some_player().map(str::to_string).into_iter().collect();
        examples.repertoires = repertoires.names().iter().map(|n| n.to_string()).collect();
        Ok(Walked {
            deepest: graph
                .nodes
                .iter()
                .filter(|n| n.games.white + n.games.draws + n.games.black > 0)
                .map(|n| n.ply)
                .max()
                .unwrap_or(0),
            explorer,
            players,
            structures,
            by_key,
            search: crate::search::SearchIndex::new(&graph),
            stems,
            graph,
            openapi: Bytes::from(
                serde_json::to_vec_pretty(&openapi::document_for(&examples))
                    .expect("the OpenAPI document serializes"),
            ),
        })
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

/// The store file's BLAKE3 as a strong `ETag`; with repertoire reports (which a make
/// may change without the store), the BLAKE3 of that hash and the reports.
fn store_etag(
    path: &Path,
    repertoires: &repertoire::Repertoires,
) -> Result<header::HeaderValue, StoreError> {
    let hashed = || {
        crate::files::hash_own_file(path)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))
    };
    let mut hash = match hash_in_manifest(path) {
        Some(hash) => hash,
        None => hashed()?,
    };
    if !repertoires.names().is_empty() {
        let mut hasher = blake3::Hasher::new();
        hasher.update(hash.as_bytes());
        for bytes in repertoires.bytes() {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        hash = hasher.finalize().to_hex().to_string();
    }
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

/// A few ids, stems and codes of the build for the OpenAPI document's examples.
fn examples(
    graph: &Graph,
    by_key: &KeyMap<PositionKey, u32>,
    stems: &HashMap<String, u32>,
    structures: &structures::StructureIndex,
) -> openapi::Examples {
    const SHOWN: usize = 3;
    let start = by_key
        .get(&crate::position::key(&shakmaty::Chess::default()))
        .map(|&i| graph.nodes[i as usize].node_id.clone());
    let mut stems: Vec<String> = stems.keys().cloned().collect();
    stems.sort();
    stems.truncate(SHOWN);
    let mut eco_codes: Vec<String> =
        graph.nodes.iter().filter_map(|n| n.entry.as_ref().map(|e| e.eco.clone())).collect();
    eco_codes.sort();
    eco_codes.dedup();
    eco_codes.truncate(SHOWN);
    let evaluated = evaluated_examples(graph, SHOWN);
    openapi::Examples {
        node_ids: start.into_iter().collect(),
        stems,
        eco_codes,
        structures: structures.names().to_vec(),
        evaluated,
        ..Default::default()
    }
}

/// Up to `shown` positions whose evaluation `GET /api/cloud-eval` answers with a move:
/// the most played first, then the shortest lines (the start position first in a build
/// without games); each one's line and FEN.
fn evaluated_examples(graph: &Graph, shown: usize) -> Vec<(String, String)> {
    let mut evaluated: Vec<&crate::graph::Node> = graph
        .nodes
        .iter()
        .filter(|n| n.engine.as_ref().is_some_and(|e| e.lines.iter().any(|l| !l.pv_uci.is_empty())))
        .collect();
    evaluated.sort_by(|a, b| {
        b.games
            .games()
            .cmp(&a.games.games())
            .then(a.ply.cmp(&b.ply))
            .then_with(|| a.epd.cmp(&b.epd))
    });
    evaluated.into_iter().take(shown).map(|n| (n.moves.clone(), n.fen.clone())).collect()
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
