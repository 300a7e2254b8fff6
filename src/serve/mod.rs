//! `okb serve`: the read-only HTTP query API over a built store.
//!
//! A [`Catalog`] answers one-position lookups (`GET /node/fen`, `POST /node/pgn`,
//! `GET /api/cloud-eval`) from the store file, through a cache of hot answers
//! ([`disk`]), so start-up and memory do not grow with the number of nodes; the endpoints
//! that walk the tree answer from the graph held in memory (loaded in the background, for
//! stores of at most `--in-memory-nodes`, [`MAX_WALKED_NODES`] by default); on a larger
//! store, the ECO and opening trees read the piece of the store below their root
//! ([`disk::Disk::piece`]), the explorer its node and that node's part of the explorer
//! index with the games it names, search, structures and players answer from the named
//! positions read once ([`named`]). When a make writes a new store, the server switches
//! to it whole ([`Served`]): requests under way finish on the old one.
//!
//! Every error is JSON (`{"error": "...", "status": N}`): input the OpenAPI document
//! refuses is 400; an unknown position or id, and a well-formed FEN or move line that
//! names no legal position, 404; a body over [`BODY_LIMIT`] 413; user input never yields
//! a 500.

mod catalog;
pub mod cloud_eval;
pub mod compress;
pub mod disk;
pub mod eco_tree;
mod error;
mod explore;
mod handlers;
pub mod limits;
pub mod masters;
pub mod named;
mod negotiate;
pub mod openapi;
pub mod page;
pub mod player;
mod query;
pub mod repertoire;
pub mod structures;
mod swap;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::routing::{get, post};

pub use catalog::{Catalog, FileIdentity, MAX_WALKED_NODES, Walked};
pub use error::ApiError;
pub use swap::{Current, Served};

use crate::store::StoreError;
use handlers::{
    node_by_fen, node_by_pgn, openapi_document, opening_eco, opening_search, opening_tree,
    repertoire_report, root, structure_openings,
};

/// Largest request body accepted (`POST /node/pgn`), in bytes.
pub const BODY_LIMIT: usize = 64 * 1024;
/// Longest `moves` line accepted by `POST /node/pgn`, in characters (any such line, JSON
/// escaped, fits in [`BODY_LIMIT`]).
pub const MAX_LINE: usize = 4000;
/// Search results when `limit` is not given, and the most a request may ask for.
pub const SEARCH_LIMITS: (usize, usize) = (20, 100);

/// The routes over the catalog `served`.
pub fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route("/node/fen/{*fen}", get(node_by_fen))
        .route("/node/pgn", post(node_by_pgn))
        .route("/opening/search", get(opening_search))
        .route("/opening/eco/{code}", get(opening_eco))
        .route("/opening/{id}/tree", get(opening_tree))
        .route("/masters", get(explore::masters))
        .route("/masters/pgn/{id}", get(explore::masters_pgn))
        // Lichess's explorer keeps these older paths as aliases, and clients still use
        // them (berserk's get_otb_master_game asks for /master/pgn/{id}).
        .route("/master", get(explore::masters))
        .route("/master/pgn/{id}", get(explore::masters_pgn))
        .route("/lichess", get(explore::lichess))
        .route("/structure/{name}/openings", get(structure_openings))
        .route("/player", get(explore::player_games))
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
    /// The most nodes a store may have for its whole graph to be held in memory.
    pub in_memory_nodes: u64,
    /// The fingerprint of the code that makes the answers, which the `ETag` covers beside
    /// the store: another okb may answer the same store with other bytes.
    pub answering_code: &'a str,
}

/// Opens the store at `store` and serves it until Ctrl-C (the metadata says what
/// `project` says of its sources, when the store is the project's own), switching to
/// each new build a make writes there ([`swap::watch`]). Progress goes to stderr: the open
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
        let catalog = Catalog::open(
            store,
            options.cache_bytes,
            options.in_memory_nodes,
            options.answering_code,
        )?;
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
            .spawn_scoped(scope, move || swap::watch(store, &watched, open, stopped))
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
