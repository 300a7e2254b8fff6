//! `okb serve`: the read-only HTTP query API over a built store.
//!
//! A [`Catalog`] answers one-position lookups (`GET /node/fen`, `POST /node/pgn`,
//! `GET /api/cloud-eval`) from the store file, through a cache of hot answers
//! ([`disk`]), so start-up and memory do not grow with the number of nodes; the endpoints
//! that walk the tree answer from the graph held in memory (loaded in the background, for
//! stores of at most [`MAX_WALKED_NODES`] nodes); on a larger store, the ECO and opening
//! trees read the piece of the store below their root ([`disk::Disk::piece`]), and the
//! other walking endpoints answer 503. When a make writes a new store, the
//! server switches to it whole ([`Served`]): requests under way finish on the old one.
//!
//! Every error is JSON (`{"error": "...", "status": N}`): input the OpenAPI document
//! refuses is 400; an unknown position or id, and a well-formed FEN or move line that
//! names no legal position, 404; a body over [`BODY_LIMIT`] 413; user input never yields
//! a 500.

pub mod cloud_eval;
pub mod compress;
pub mod disk;
pub mod eco_tree;
pub mod limits;
pub mod masters;
pub mod openapi;
pub mod page;
pub mod player;
pub mod repertoire;
pub mod structures;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde::Serialize;

use crate::export::openingiq;
use crate::graph::Graph;
use crate::position::{KeyMap, PositionKey};
use crate::store::StoreError;
use crate::store::read::Store;

/// Largest request body accepted (`POST /node/pgn`), in bytes.
pub const BODY_LIMIT: usize = 64 * 1024;
/// Longest `moves` line accepted by `POST /node/pgn`, in characters (any such line, JSON
/// escaped, fits in [`BODY_LIMIT`]).
pub const MAX_LINE: usize = 4000;
/// Search results when `limit` is not given, and the most a request may ask for.
pub const SEARCH_LIMITS: (usize, usize) = (20, 100);

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
    disk: disk::Disk,
    /// The connection the in-memory parts are loaded from, opened with the others so it
    /// reads the same build (taken by the load).
    loader: std::sync::Mutex<Option<Store>>,
    /// The parts answered from memory, loaded once ([`Catalog::walked`]).
    walked: std::sync::OnceLock<Result<Walked, String>>,
    /// How many nodes the store has, counted once on first use (a count reads the whole
    /// position index: start-up does not wait for it).
    nodes: std::sync::OnceLock<Result<u64, String>>,
    /// `"<BLAKE3 of the store file, 32 hex digits>"`: the answers' `ETag`.
    etag: header::HeaderValue,
    /// `GET /` answered as JSON: what the store was built from ([`Catalog::metadata`]),
    /// its `nodes` filled in per answer.
    metadata: serde_json::Value,
    /// The repertoire reports built beside the store (`GET /repertoire/{name}`).
    repertoires: repertoire::Repertoires,
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
    search: crate::search::SearchIndex,
    /// Named openings by file stem (the OpeningIQ export's file names).
    stems: HashMap<String, u32>,
    openapi: Bytes,
    /// `GET /structure/{name}/openings` answers.
    structures: structures::StructureIndex,
    /// The explorer index, if the store has one.
    explorer: Option<masters::Explorer>,
    /// The player collections (`GET /player`; none in a store built without them).
    players: player::Players,
    /// The ply of the deepest position the knowledge base counted games for (the tree's
    /// `max_ply` in practice): an explorer answer for a position deeper than that says so
    /// ([`masters::BeyondDepth`]).
    deepest: u32,
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
    fn in_memory(&self) -> Result<Option<&Walked>, ApiError> {
        if self.nodes()? > MAX_WALKED_NODES {
            return Ok(None);
        }
        self.walked().map(Some)
    }

    /// The piece of the store that a tree below node `root_id`, `max_depth` plies deep
    /// along moves played in at least `min_games` games, reads ([`disk::Disk::piece`]);
    /// `None` when the store has no such node, a 503 when the piece is over
    /// [`disk::MAX_PIECE_NODES`].
    fn piece(
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
    fn lichess_name(&self, pos: &shakmaty::Chess) -> Option<masters::ExplorerOpening> {
        self.find(pos).and_then(|i| masters::move_opening(self.graph.node(i)))
    }
}

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, message: message.into() }
    }

    fn not_found(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::NOT_FOUND, message: message.into() }
    }

    /// The store failed to answer (it went unreadable under the server): a 500.
    fn store(e: StoreError) -> ApiError {
        ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, message: e.to_string() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message, "status": self.status.as_u16() });
        (self.status, [(header::CONTENT_TYPE, "application/json")], body.to_string())
            .into_response()
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> ApiError {
        ApiError::bad_request(r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> ApiError {
        ApiError::bad_request(r.body_text())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(r: BytesRejection) -> ApiError {
        let message = if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            format!("request body over {BODY_LIMIT} bytes")
        } else {
            r.body_text()
        };
        ApiError { status: r.status(), message }
    }
}

type Answer = Result<Response, ApiError>;
type Shared = Current;

/// The catalog being served, replaced whole when a new build is loaded: a request holds
/// the one it started with ([`Current`]) until it ends.
pub struct Served {
    current: std::sync::RwLock<Arc<Catalog>>,
}

impl Served {
    /// Serves `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> Served {
        Served { current: std::sync::RwLock::new(catalog) }
    }

    /// The catalog new requests are answered from.
    pub fn current(&self) -> Arc<Catalog> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Answers new requests from `catalog`; requests under way finish on the one before.
    pub fn replace(&self, catalog: Arc<Catalog>) {
        let old = std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|e| e.into_inner()),
            catalog,
        );
        // Dropped outside the lock: the last reference may free a whole graph.
        drop(old);
    }
}

/// The catalog one request is answered from, taken once per request (the first
/// extractor that asks keeps it in the request's extensions for the others), so that no
/// answer mixes two builds: its `ETag` and its body come from the same one.
pub struct Current(Arc<Catalog>);

fn snapshot(parts: &mut axum::http::request::Parts, served: &Served) -> Arc<Catalog> {
    if let Some(catalog) = parts.extensions.get::<Arc<Catalog>>() {
        return catalog.clone();
    }
    let catalog = served.current();
    parts.extensions.insert(catalog.clone());
    catalog
}

impl axum::extract::FromRequestParts<Arc<Served>> for Current {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        served: &Arc<Served>,
    ) -> Result<Self, Self::Rejection> {
        Ok(Current(snapshot(parts, served)))
    }
}

impl Catalog {
    /// A JSON answer, compressed as the request asked ([`Negotiated`]). Answers change only
    /// when the store does, so each carries the store's hash as its `ETag` with
    /// `Cache-Control: no-cache`: clients revalidate and get `304` (see [`Negotiated`]).
    fn answer(&self, how: &Negotiated, bytes: Bytes) -> Response {
        let mut response = (
            [
                (header::CONTENT_TYPE, header::HeaderValue::from_static("application/json")),
                (header::ETAG, self.etag.clone()),
                (header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache")),
                (header::VARY, header::HeaderValue::from_static("accept-encoding")),
            ],
            bytes.clone(),
        )
            .into_response();
        if let Some((name, compressed)) = compress::encode(how.encoding, &bytes) {
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, header::HeaderValue::from_static(name));
            *response.body_mut() = axum::body::Body::from(compressed);
        }
        response
    }

    /// [`Catalog::answer`] with another content type.
    fn answer_as(&self, how: &Negotiated, bytes: Bytes, content_type: &'static str) -> Response {
        let mut response = self.answer(how, bytes);
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
        response
    }

    fn answer_json(&self, how: &Negotiated, value: &impl Serialize) -> Response {
        self.answer(how, Bytes::from(serde_json::to_vec(value).expect("answers serialize")))
    }
}

/// What a request negotiates: the answer's encoding (`Accept-Encoding`), and, for `GET`
/// and `HEAD`, revalidation: an `If-None-Match` naming the store's `ETag` (or `*`) is
/// answered `304 Not Modified` before any answer is built.
struct Negotiated {
    encoding: compress::Encoding,
}

impl axum::extract::FromRequestParts<Arc<Served>> for Negotiated {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        served: &Arc<Served>,
    ) -> Result<Self, Response> {
        let c = snapshot(parts, served);
        let encoding = compress::Encoding::accepted(&parts.headers);
        let revalidating =
            matches!(parts.method, axum::http::Method::GET | axum::http::Method::HEAD);
        let etag = c.etag.as_bytes();
        let named = |tag: &str| {
            let tag = tag.trim();
            tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).as_bytes() == etag
        };
        let values =
            || parts.headers.get_all(header::IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok());
        if !revalidating || !values().any(|v| v.split(',').any(named)) {
            return Ok(Negotiated { encoding });
        }
        let headers = [
            (header::ETAG, c.etag.clone()),
            (header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache")),
        ];
        Err((StatusCode::NOT_MODIFIED, headers).into_response())
    }
}

/// The routes over the catalog `served`.
pub fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route("/node/fen/{*fen}", get(node_by_fen))
        .route("/node/pgn", post(node_by_pgn))
        .route("/opening/search", get(opening_search))
        .route("/opening/eco/{code}", get(opening_eco))
        .route("/opening/{id}/tree", get(opening_tree))
        .route("/masters", get(masters))
        .route("/masters/pgn/{id}", get(masters_pgn))
        // Lichess's explorer keeps these older paths as aliases, and clients still use
        // them (berserk's get_otb_master_game asks for /master/pgn/{id}).
        .route("/master", get(masters))
        .route("/master/pgn/{id}", get(masters_pgn))
        .route("/lichess", get(lichess))
        .route("/structure/{name}/openings", get(structure_openings))
        .route("/player", get(player_games))
        .route("/repertoire/{name}", get(repertoire_report))
        .route("/api/cloud-eval", get(cloud_eval::answer))
        .route("/openapi.json", get(openapi_document))
        .route("/", get(root))
        .route("/assets/app.js", get(page::script))
        .route("/assets/app.css", get(page::style))
        .fallback(|| async { ApiError::not_found("no such endpoint (see /openapi.json)") })
        .method_not_allowed_fallback(|| async {
            ApiError {
                status: StatusCode::METHOD_NOT_ALLOWED,
                message: "method not allowed (the API is read-only)".into(),
            }
        })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(served)
}

/// Parses a FEN from a URL: `_` and `+` stand for spaces, as in Lichess URLs. Text the
/// document's `Fen` pattern refuses is a 400; a well-formed FEN that is no legal position
/// names nothing, a 404 (so a client that honours the pattern never sees a 400).
fn parse_url_fen(text: &str) -> Result<shakmaty::Chess, ApiError> {
    if !openapi::PATTERNS.fen.is_match(text) {
        let shown = crate::diagnostics::shorten(text, 100);
        return Err(ApiError::bad_request(format!(
            "invalid FEN {shown:?}: not of the form the Fen pattern of /openapi.json describes"
        )));
    }
    let text = text.replace(['_', '+'], " ");
    crate::position::parse_fen(&text)
        .map_err(|e| ApiError::not_found(format!("no such position: {e}")))
}

/// The OpenAPI document, with examples from the build when the store is small enough to
/// walk ([`Catalog::walked`]), else without.
async fn openapi_document(how: Negotiated, Current(c): Shared) -> Answer {
    let bytes = match c.walked() {
        Ok(w) => w.openapi.clone(),
        Err(e) if e.status == StatusCode::SERVICE_UNAVAILABLE && c.nodes()? > MAX_WALKED_NODES => {
            Bytes::from(
                serde_json::to_vec_pretty(&openapi::document_for(&openapi::Examples::default()))
                    .expect("the OpenAPI document serializes"),
            )
        }
        Err(e) => return Err(e),
    };
    Ok(c.answer(&how, bytes))
}

fn node_answer(catalog: &Catalog, how: &Negotiated, pos: &shakmaty::Chess, asked: &str) -> Answer {
    match catalog.disk.node_json(pos).map_err(ApiError::store)? {
        Some(bytes) => Ok(catalog.answer(how, bytes)),
        None => {
            Err(ApiError::not_found(format!("position {asked:?} is not in the knowledge base")))
        }
    }
}

async fn node_by_fen(
    how: Negotiated,
    Current(c): Shared,
    fen: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(fen) = fen?;
    let pos = parse_url_fen(&fen)?;
    node_answer(&c, &how, &pos, &fen)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PgnBody {
    moves: String,
}

async fn node_by_pgn(
    how: Negotiated,
    Current(c): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body?;
    let request: PgnBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(format!("body must be {{\"moves\": \"1. e4 e5 …\"}}: {e}"))
    })?;
    if request.moves.chars().count() > MAX_LINE {
        return Err(ApiError::bad_request(format!("moves must be at most {MAX_LINE} characters")));
    }
    if !openapi::PATTERNS.san_line.is_match(&request.moves) {
        let shown = crate::diagnostics::shorten(&request.moves, 100);
        return Err(ApiError::bad_request(format!(
            "moves {shown:?} is not a line of SAN moves (1. e4 e5 2. Nf3) as the SanLine pattern of /openapi.json describes"
        )));
    }
    // Well-formed moves that cannot be played lead to no position: 404, like a position
    // outside the knowledge base.
    let pos = crate::eco::line::position_after(&request.moves)
        .map_err(|e| ApiError::not_found(format!("no such position: {e}")))?;
    node_answer(&c, &how, &pos, &request.moves)
}

#[derive(Deserialize)]
struct SearchParams {
    q: Option<String>,
    limit: Option<usize>,
}

async fn opening_search(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    let q = params.q.unwrap_or_default();
    if q.trim().is_empty() || q.chars().count() > crate::search::MAX_QUERY {
        return Err(ApiError::bad_request(format!(
            "q must be 1 to {} characters, not only spaces",
            crate::search::MAX_QUERY
        )));
    }
    let limit = params.limit.unwrap_or(SEARCH_LIMITS.0);
    if limit == 0 || limit > SEARCH_LIMITS.1 {
        return Err(ApiError::bad_request(format!("limit must be 1 to {}", SEARCH_LIMITS.1)));
    }
    let w = c.walked()?;
    let results = w.search.search(&w.graph, &q, limit);
    Ok(c.answer_json(&how, &crate::search::SearchAnswer { query: q, results }))
}

#[derive(Deserialize)]
struct EcoParams {
    depth: Option<u32>,
    min_games: Option<u64>,
}

/// An ECO code (`B90`) or a SCID code (`B03a`, `A00a1`).
fn is_code(code: &str) -> bool {
    code.is_ascii()
        && (3..=6).contains(&code.len())
        && crate::eco::is_eco_code(&code[..3])
        && code[3..].bytes().all(|b| b.is_ascii_alphanumeric())
}

async fn structure_openings(
    how: Negotiated,
    Current(c): Shared,
    name: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(name) = name?;
    let w = c.walked()?;
    match w.structures.answer(&name) {
        Some(bytes) => Ok(c.answer(&how, bytes)),
        None => Err(ApiError::not_found(format!(
            "no pawn structure is named {name:?} (known: {})",
            w.structures.names().join(", ")
        ))),
    }
}

async fn opening_eco(
    how: Negotiated,
    Current(c): Shared,
    code: Result<UrlPath<String>, PathRejection>,
    params: Result<Query<EcoParams>, QueryRejection>,
) -> Answer {
    let (UrlPath(code), Query(params)) = (code?, params?);
    if !is_code(&code) {
        return Err(ApiError::bad_request(format!(
            "{code:?} is not an ECO code (A00–E99) or SCID code (B03a)"
        )));
    }
    let depth = params.depth.unwrap_or(eco_tree::DEFAULT_DEPTH);
    if depth > eco_tree::MAX_DEPTH {
        return Err(ApiError::bad_request(format!(
            "depth must be at most {}",
            eco_tree::MAX_DEPTH
        )));
    }
    let min_games = params.min_games.unwrap_or(0);
    if min_games > eco_tree::MAX_MIN_GAMES {
        return Err(ApiError::bad_request(format!(
            "min_games must be at most {}",
            eco_tree::MAX_MIN_GAMES
        )));
    }
    let tree_of = |graph: &Graph, root: u32| {
        let tree = eco_tree::tree(graph, root, depth, min_games);
        c.answer_json(&how, &eco_tree::EcoTreeAnswer { code: code.clone(), depth, min_games, tree })
    };
    let no_root = || ApiError::not_found(format!("no opening has code {code}"));
    if let Some(w) = c.in_memory()? {
        let root = eco_tree::root_of(&w.graph, &code).ok_or_else(no_root)?;
        return Ok(tree_of(&w.graph, root));
    }
    let root = tokio::task::block_in_place(|| c.disk.eco_root(&code))
        .map_err(ApiError::store)?
        .ok_or_else(no_root)?;
    let graph = c.piece(&root, depth, min_games)?.ok_or_else(no_root)?;
    Ok(tree_of(&graph, graph.root))
}

#[derive(Deserialize)]
struct TreeParams {
    max_depth: Option<u32>,
}

async fn opening_tree(
    how: Negotiated,
    Current(c): Shared,
    id: Result<UrlPath<String>, PathRejection>,
    params: Result<Query<TreeParams>, QueryRejection>,
) -> Answer {
    let (UrlPath(id), Query(params)) = (id?, params?);
    let max_depth = params.max_depth.unwrap_or(openingiq::DEFAULT_MAX_DEPTH);
    if max_depth > openingiq::MAX_API_DEPTH {
        return Err(ApiError::bad_request(format!(
            "max_depth must be at most {}",
            openingiq::MAX_API_DEPTH
        )));
    }
    let file_of = |graph: &Graph, root: u32| {
        c.answer_json(&how, &openingiq::opening_file(graph, root, max_depth))
    };
    let unknown = || ApiError::not_found(format!("no node id or named opening {id:?}"));
    if let Some(w) = c.in_memory()? {
        let index =
            w.graph.find_id(&id).or_else(|| w.stems.get(&id).copied()).ok_or_else(unknown)?;
        return Ok(file_of(&w.graph, index));
    }
    let graph = match c.piece(&id, max_depth, 0)? {
        Some(graph) => graph,
        None => {
            let root = tokio::task::block_in_place(|| c.disk.stem(&id))
                .map_err(ApiError::store)?
                .ok_or_else(unknown)?;
            c.piece(&root, max_depth, 0)?.ok_or_else(unknown)?
        }
    };
    Ok(file_of(&graph, graph.root))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MastersParams {
    fen: Option<String>,
    play: Option<String>,
    moves: Option<usize>,
    since: Option<String>,
    until: Option<String>,
    top_games: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LichessParams {
    variant: Option<String>,
    fen: Option<String>,
    play: Option<String>,
    moves: Option<usize>,
    speeds: Option<String>,
    ratings: Option<String>,
    since: Option<String>,
    until: Option<String>,
    top_games: Option<usize>,
    recent_games: Option<usize>,
    /// A yes answers the games per month (`history`); see [`flag`] for the spellings.
    history: Option<String>,
}

/// A position an explorer request asks for, with its name.
struct Asked {
    /// The position.
    pos: shakmaty::Chess,
    /// Its opening by Lichess's rule ([`masters::ExplorerAnswer::opening`]).
    opening: Option<masters::ExplorerOpening>,
}

/// The position after `play` (comma-separated UCI moves) from `fen` (default: the start),
/// named as Lichess's explorer names it: by the last position on the way, `fen`'s
/// included, that the Lichess taxonomy names.
fn explorer_position(
    c: &Explore<'_>,
    fen: Option<&str>,
    play: Option<&str>,
) -> Result<Asked, ApiError> {
    let mut pos = match fen {
        Some(fen) => parse_url_fen(fen)?,
        None => shakmaty::Chess::default(),
    };
    let mut opening = c.lichess_name(&pos)?;
    if let Some(play) = play
        && !openapi::PATTERNS.uci_line.is_match(play)
    {
        let shown = crate::diagnostics::shorten(play, 100);
        return Err(ApiError::bad_request(format!(
            "play {shown:?} is not comma-separated UCI moves (e2e4,c7c5)"
        )));
    }
    for (i, text) in play.iter().flat_map(|p| p.split(',')).filter(|t| !t.is_empty()).enumerate() {
        // Well-formed but illegal: the line leads to no position (404, as for a FEN).
        let m = text
            .parse::<shakmaty::uci::UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "no such position: play: move {} ({text}) is not a legal UCI move here",
                    i + 1
                ))
            })?;
        shakmaty::Position::play_unchecked(&mut pos, m);
        opening = c.lichess_name(&pos)?.or(opening);
    }
    Ok(Asked { pos, opening })
}

/// The spellings of a yes and a no that Lichess's explorer accepts for a boolean
/// parameter: clients write Python's `True` (berserk) or a form's `on` as well as `true`.
const FLAG_SPELLINGS: ([&str; 5], [&str; 5]) =
    (["true", "True", "on", "1", "yes"], ["false", "False", "off", "0", "no"]);

/// A boolean parameter `name` written `text`, in any of the [`FLAG_SPELLINGS`]; else a
/// 400 naming them.
fn flag(name: &str, text: &str) -> Result<bool, ApiError> {
    let (yes, no) = FLAG_SPELLINGS;
    if yes.contains(&text) {
        return Ok(true);
    }
    if no.contains(&text) {
        return Ok(false);
    }
    let shown = crate::diagnostics::shorten(text, 100);
    Err(ApiError::bad_request(format!(
        "{name} must be one of {} (yes) or {} (no), not {shown:?}",
        yes.join(", "),
        no.join(", ")
    )))
}

/// `value` if within `max`, else a 400 naming `name`.
fn at_most(
    name: &str,
    value: Option<usize>,
    default: usize,
    max: usize,
) -> Result<usize, ApiError> {
    let value = value.unwrap_or(default);
    if value > max {
        return Err(ApiError::bad_request(format!("{name} must be at most {max}")));
    }
    Ok(value)
}

/// A `since`/`until` year.
fn year(name: &str, text: &str) -> Result<u16, ApiError> {
    text.trim().parse::<u16>().ok().filter(|y| *y <= 9999).ok_or_else(|| {
        ApiError::bad_request(format!("{name} must be a year such as 1990, not {text:?}"))
    })
}

/// A `since`/`until` month (`YYYY-MM`) as `year * 12 + month - 1`.
fn month(name: &str, text: &str) -> Result<u32, ApiError> {
    let bad = || {
        ApiError::bad_request(format!(
            "{name} must be a month such as 2013-01 (YYYY-MM), not {text:?}"
        ))
    };
    let (year, m) = text.trim().split_once('-').ok_or_else(bad)?;
    // Four digits, as the OpenAPI document's pattern says (0000-01 included).
    if year.len() != 4 || !year.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (y, m) = (year.parse::<u32>().map_err(|_| bad())?, m.parse::<u32>().map_err(|_| bad())?);
    if !(1..=12).contains(&m) {
        return Err(bad());
    }
    Ok(y * 12 + m - 1)
}

/// The inclusive range `since..=until` (`None`: neither given). A `since` after `until`
/// is an empty range that admits no game, as on Lichess (whose ranges bound a key scan),
/// not an error: both are well-formed values.
fn range<T: Copy>(since: Option<T>, until: Option<T>, lowest: T, highest: T) -> Option<(T, T)> {
    (since.is_some() || until.is_some())
        .then(|| (since.unwrap_or(lowest), until.unwrap_or(highest)))
}

/// `speeds` (comma-separated Lichess speed names) as a mask of `1 << code`; `None`:
/// not given.
fn speeds(text: Option<&str>) -> Result<Option<u16>, ApiError> {
    let mut speeds = None;
    for name in text.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let code = crate::explorer_index::speed_code(name).ok_or_else(|| {
            ApiError::bad_request(format!(
                "speeds: unknown speed {name:?} (one of {})",
                crate::explorer_index::SPEEDS.join(", ")
            ))
        })?;
        speeds = Some(speeds.unwrap_or(0u16) | 1 << code);
    }
    Ok(speeds)
}

/// Where an explorer request's answer comes from: the graph in memory, or, on a store
/// too large for it (and without an explorer index, which is read into memory), the
/// node and its moves read from the store file.
enum Explore<'a> {
    Memory(&'a Walked),
    Disk(&'a Catalog),
}

impl Catalog {
    /// Where this store's explorer answers come from; a 503 for a store too large to
    /// hold in memory that has an explorer index.
    fn explore(&self) -> Result<Explore<'_>, ApiError> {
        if let Some(w) = self.in_memory()? {
            return Ok(Explore::Memory(w));
        }
        if tokio::task::block_in_place(|| self.disk.has_explorer()).map_err(ApiError::store)? {
            return Err(ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "this store has more than {MAX_WALKED_NODES} nodes and an explorer index, which okb serve holds in memory only for smaller stores"
                ),
            });
        }
        Ok(Explore::Disk(self))
    }
}

impl Explore<'_> {
    /// The Lichess taxonomy's own name of `pos` ([`Walked::lichess_name`]).
    fn lichess_name(
        &self,
        pos: &shakmaty::Chess,
    ) -> Result<Option<masters::ExplorerOpening>, ApiError> {
        match self {
            Explore::Memory(w) => Ok(w.lichess_name(pos)),
            Explore::Disk(c) => {
                let node = tokio::task::block_in_place(|| c.disk.node(pos));
                Ok(node.map_err(ApiError::store)?.as_ref().and_then(masters::move_opening))
            }
        }
    }
}

/// A filter on a store without the explorer index is refused.
fn explorer_answer(
    c: &Catalog,
    e: &Explore<'_>,
    how: &Negotiated,
    asked: Asked,
    q: &masters::Query,
) -> Answer {
    let indexed = matches!(e, Explore::Memory(w) if w.explorer.is_some());
    if (!q.filter.is_all() || q.history) && !indexed {
        return Err(ApiError::bad_request(
            "this store has no explorer index, so since, until, speeds, ratings and history cannot be applied: add [explorer] to pipeline.toml and run okb make",
        ));
    }
    let (mut answer, deepest) = match e {
        Explore::Memory(w) => {
            let index = w.find(&asked.pos);
            (
                masters::answer(&w.graph, w.explorer.as_ref(), index, asked.opening, q),
                Some(w.deepest),
            )
        }
        Explore::Disk(c) => {
            let node = tokio::task::block_in_place(|| c.disk.node(&asked.pos));
            let answer = match node.map_err(ApiError::store)? {
                // The node and its moves: the answer reads their counts and names.
                Some(node) => match c.piece(&node.node_id, 1, 0)? {
                    Some(graph) => {
                        masters::answer(&graph, None, Some(graph.root), asked.opening, q)
                    }
                    None => masters::answer(&Graph::default(), None, None, asked.opening, q),
                },
                None => masters::answer(&Graph::default(), None, None, asked.opening, q),
            };
            // A store read from disk does not know its deepest counted ply without a
            // scan of every node: it does not say `okbBeyondDepth`.
            (answer, None)
        }
    };
    // Zero counts, either outside the tree or on a named position past the counted plies.
    if answer.white + answer.draws + answer.black == 0
        && let Some(deepest) = deepest
    {
        answer.okb_beyond_depth = masters::BeyondDepth::of(&asked.pos, deepest);
    }
    Ok(c.answer_json(how, &answer))
}

async fn masters(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<MastersParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    let e = c.explore()?;
    let asked = explorer_position(&e, params.fen.as_deref(), params.play.as_deref())?;
    let moves = at_most("moves", params.moves, masters::DEFAULT_MOVES, masters::MAX_MOVES)?;
    let top_games = at_most(
        "topGames",
        params.top_games,
        masters::MASTERS_TOP_GAMES,
        masters::MASTERS_TOP_GAMES,
    )?;
    let since = params.since.as_deref().map(|t| year("since", t)).transpose()?;
    let until = params.until.as_deref().map(|t| year("until", t)).transpose()?;
    let years = range(since, until, 0, u16::MAX);
    let filter = masters::Filter { years, ..Default::default() };
    explorer_answer(
        &c,
        &e,
        &how,
        asked,
        &masters::Query { filter, moves, top_games, recent_games: None, history: false },
    )
}

async fn lichess(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<LichessParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    if let Some(v) = params.variant.as_deref().filter(|v| *v != "standard") {
        return Err(ApiError::bad_request(format!(
            "variant {v:?} is not available: okb's knowledge base is standard chess"
        )));
    }
    let e = c.explore()?;
    let asked = explorer_position(&e, params.fen.as_deref(), params.play.as_deref())?;
    let moves = at_most("moves", params.moves, masters::DEFAULT_MOVES, masters::MAX_MOVES)?;
    let top_games = at_most(
        "topGames",
        params.top_games,
        masters::LICHESS_TOP_GAMES,
        masters::LICHESS_TOP_GAMES,
    )?;
    let (recent_default, recent_max) = masters::LICHESS_RECENT_GAMES;
    let recent_games = at_most("recentGames", params.recent_games, recent_default, recent_max)?;
    let since = params.since.as_deref().map(|t| month("since", t)).transpose()?;
    let until = params.until.as_deref().map(|t| month("until", t)).transpose()?;
    let months = range(since, until, 0, u32::MAX);
    let speeds = speeds(params.speeds.as_deref())?;
    let mut ratings = None;
    for text in
        params.ratings.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty())
    {
        let groups = crate::explorer_index::RATING_GROUPS;
        let at =
            text.parse::<u32>().ok().and_then(|r| groups.iter().position(|&g| g == r)).ok_or_else(
                || {
                    let list: Vec<String> = groups.iter().map(u32::to_string).collect();
                    ApiError::bad_request(format!(
                        "ratings: {text:?} is not a rating group (one of {})",
                        list.join(", ")
                    ))
                },
            )?;
        ratings = Some(ratings.unwrap_or(0u16) | 1 << (at + 1));
    }
    let filter = masters::Filter { months, speeds, ratings, ..Default::default() };
    let history =
        params.history.as_deref().map(|t| flag("history", t)).transpose()?.unwrap_or(false);
    explorer_answer(
        &c,
        &e,
        &how,
        asked,
        &masters::Query { filter, moves, top_games, recent_games: Some(recent_games), history },
    )
}

async fn masters_pgn(Current(c): Shared, id: Result<UrlPath<String>, PathRejection>) -> Answer {
    let UrlPath(id) = id?;
    let text = match &c.walked()?.explorer {
        Some(e) => e.pgn(&id).map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: e.to_string(),
        })?,
        None => None,
    };
    let text = text.ok_or_else(|| ApiError::not_found(format!("no game has id {id:?}")))?;
    Ok(([(header::CONTENT_TYPE, "application/x-chess-pgn")], format!("{text}\n")).into_response())
}

/// `GET /`: the explorer page for a browser, the store's metadata for a client that asks
/// for JSON (`Accept: application/json` without `text/html`).
async fn root(how: Negotiated, Current(c): Shared, headers: header::HeaderMap) -> Answer {
    let accepts = |kind: &str| {
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains(kind))
    };
    if accepts("application/json") && !accepts("text/html") {
        let mut metadata = c.metadata.clone();
        metadata["nodes"] = c.nodes()?.into();
        return Ok(c.answer_json(&how, &metadata));
    }
    Ok(page::index().await)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlayerParams {
    player: Option<String>,
    color: Option<String>,
    variant: Option<String>,
    fen: Option<String>,
    play: Option<String>,
    modes: Option<String>,
    speeds: Option<String>,
    since: Option<String>,
    until: Option<String>,
    moves: Option<usize>,
    recent_games: Option<usize>,
}

/// `modes` (comma-separated `rated`, `casual`) as (rated, casual); `None`: not given.
fn modes(text: Option<&str>) -> Result<Option<(bool, bool)>, ApiError> {
    let mut modes = None;
    for name in text.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let (rated, casual) = modes.unwrap_or((false, false));
        modes = Some(match name {
            "rated" => (true, casual),
            "casual" => (rated, true),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "modes: unknown mode {name:?} (rated, casual)"
                )));
            }
        });
    }
    Ok(modes)
}

async fn player_games(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<PlayerParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    let player = params.player.filter(|p| !p.trim().is_empty()).ok_or_else(|| {
        ApiError::bad_request("player is required: a listed player of a player collection")
    })?;
    let side = match params.color.as_deref() {
        Some("white") => crate::repertoire::Side::White,
        Some("black") => crate::repertoire::Side::Black,
        other => {
            return Err(ApiError::bad_request(format!(
                "color must be white or black, not {}",
                other.map_or("missing".into(), |o| format!("{o:?}"))
            )));
        }
    };
    if let Some(v) = params.variant.as_deref().filter(|v| *v != "standard") {
        return Err(ApiError::bad_request(format!(
            "variant {v:?} is not available: okb's player collections are standard chess"
        )));
    }
    let w = c.walked()?;
    let asked =
        explorer_position(&Explore::Memory(w), params.fen.as_deref(), params.play.as_deref())?;
    let moves = at_most("moves", params.moves, masters::MAX_MOVES, masters::MAX_MOVES)?;
    let recent_games =
        at_most("recentGames", params.recent_games, player::RECENT_GAMES, player::RECENT_GAMES)?;
    let since = params.since.as_deref().map(|t| month("since", t)).transpose()?;
    let until = params.until.as_deref().map(|t| month("until", t)).transpose()?;
    let query = player::PlayerQuery {
        player,
        side,
        modes: modes(params.modes.as_deref())?,
        speeds: speeds(params.speeds.as_deref())?,
        months: range(since, until, 0, u32::MAX),
        moves,
        recent_games,
    };
    let answer = w.players.answer(&w.graph, |p| w.find(p), &asked.pos, asked.opening, &query);
    let mut line = serde_json::to_vec(&answer).expect("answers serialize");
    line.push(b'\n');
    Ok(c.answer_as(&how, Bytes::from(line), "application/x-ndjson"))
}

async fn repertoire_report(
    how: Negotiated,
    Current(c): Shared,
    name: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(name) = name?;
    match c.repertoires.get(&name) {
        Some(bytes) => Ok(c.answer(&how, bytes)),
        None => {
            let names = c.repertoires.names();
            let known = if names.is_empty() {
                "none was built beside this store".to_string()
            } else {
                format!("known: {}", names.join(", "))
            };
            Err(ApiError::not_found(format!("no repertoire is named {name:?} ({known})")))
        }
    }
}

/// The routes over the catalog `served`, with CORS for `cors` (an origin, or `*`) when given.
pub fn app(served: Arc<Served>, cors: Option<header::HeaderValue>) -> Router {
    match cors {
        Some(origin) => router(served).layer(axum::middleware::from_fn(move |request, next| {
            page::cors(origin.clone(), request, next)
        })),
        None => router(served),
    }
}

/// How `okb serve` serves a store: its address, CORS, connection limits and cache.
pub struct Options<'a> {
    /// Address to listen on.
    pub addr: SocketAddr,
    /// The origin allowed to call the API from a browser (or `*`).
    pub cors: Option<&'a str>,
    /// Timeouts and the connection cap.
    pub limits: limits::Limits,
    /// The budget of the cache of node answers, in bytes.
    pub cache_bytes: usize,
}

/// Opens the store at `store` and serves it until Ctrl-C (the metadata says what
/// `project` says of its sources, when the store is the project's own), switching to
/// each new build a make writes there ([`watch`]). Progress goes to stderr: the open
/// time, the address actually bound (useful with port 0), each switch.
pub fn run(
    store: &Path,
    project: Option<&crate::pipeline::Loaded>,
    options: Options<'_>,
) -> miette::Result<()> {
    use miette::{IntoDiagnostic, WrapErr};
    let cors = options
        .cors
        .map(|origin| {
            header::HeaderValue::from_str(origin)
                .map_err(|_| miette::miette!("--cors {origin:?} is not a valid origin"))
        })
        .transpose()?;
    let started = std::time::Instant::now();
    let open = move || -> Result<Catalog, StoreError> {
        let catalog = Catalog::open(store, options.cache_bytes)?;
        Ok(match project {
            Some(loaded) => catalog.with_project(loaded),
            None => catalog,
        })
    };
    let catalog = Arc::new(open().map_err(|e| miette::miette!("{e}"))?);
    eprintln!(
        "{:>12} {} in {:.0} ms",
        "Opened",
        store.display(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    let served = Arc::new(Served::new(catalog.clone()));
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().into_diagnostic()?;
    let stopped = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The in-memory parts load while the first answers are served from disk.
        scope.spawn(move || catalog.load_in_memory_parts());
        let (watched, stopped) = (served.clone(), &stopped);
        std::thread::Builder::new()
            .name("okb-watch".into())
            .spawn_scoped(scope, move || watch(store, &watched, open, stopped))
            .into_diagnostic()?;
        let result = runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind(options.addr)
                .await
                .into_diagnostic()
                .wrap_err_with(|| format!("binding {}", options.addr))?;
            let bound = listener.local_addr().into_diagnostic()?;
            eprintln!("{:>12} on http://{bound} (Ctrl-C stops)", "Listening");
            let shutdown = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            limits::serve(listener, app(served, cors), options.limits, shutdown).await;
            Ok(())
        });
        stopped.store(true, std::sync::atomic::Ordering::Relaxed);
        result
    })
}

/// How often [`watch`] looks at the store file.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Watches the store at `store` and serves each new build `open` opens there: a make
/// writes the store under another name and renames it into place, then writes the
/// manifest and the repertoire reports beside it, so a switch waits until neither the
/// store nor the manifest changed for one look. A store that fails to open is reported
/// and the build before stays served.
fn watch(
    store: &Path,
    served: &Served,
    open: impl Fn() -> Result<Catalog, StoreError>,
    stopped: &std::sync::atomic::AtomicBool,
) {
    let manifest = store.parent().unwrap_or(Path::new(".")).join("manifest.json");
    let look = || (FileIdentity::of(store), FileIdentity::of(&manifest));
    let mut seen = look();
    while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(WATCH_EVERY);
        let now = look();
        if now == seen {
            continue;
        }
        std::thread::sleep(WATCH_EVERY);
        if look() != now {
            continue;
        }
        seen = now;
        let current = served.current();
        if now.0.is_none() || now.0 == Some(current.identity()) {
            continue;
        }
        let started = std::time::Instant::now();
        match open() {
            Ok(catalog) => {
                catalog.load_in_memory_parts();
                let build = catalog.build();
                served.replace(Arc::new(catalog));
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                log(format_args!(
                    "{:>12} to build {} of {} in {ms:.0} ms",
                    "Switched",
                    shown(build),
                    store.display()
                ));
            }
            Err(e) => log(format_args!(
                "{:>12} build {}: the new store did not open: {e}",
                "Kept",
                shown(current.build())
            )),
        }
    }
}

/// A build number as the log shows it.
fn shown(build: Option<u64>) -> String {
    build.map_or_else(|| "?".to_string(), |b| b.to_string())
}

/// A line on stderr; a closed stderr (a supervisor that stopped reading) does not stop
/// the server, unlike `eprintln!`, which panics.
fn log(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
