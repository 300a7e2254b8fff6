//! Switching to a new build whole: [`Served`] holds the catalog new requests are
//! answered from, [`Current`] the one a request started with (so an answer's `ETag` and
//! body come from one build), and [`watch`] opens each new store a make writes and
//! swaps it in, while requests under way finish on the old one.

use std::path::Path;
use std::sync::Arc;

use super::catalog::{Catalog, FileIdentity};
use super::error::log;
use crate::store::StoreError;

/// The extractor of the catalog a request is answered from (see [`Current`]).
pub(super) type Shared = Current;

/// The catalog being served, replaced whole when a new build is loaded: a request holds
/// the one it started with ([`Current`]) until it ends.
pub struct Served {
    /// Read on every request by every worker: an `ArcSwap` load writes no line the other
    /// workers read (a lock's reader count would bounce between the cores).
    current: arc_swap::ArcSwap<Catalog>,
}

impl Served {
    /// Serves `catalog`.
    pub fn new(catalog: Arc<Catalog>) -> Served {
        Served { current: arc_swap::ArcSwap::new(catalog) }
    }

    /// The catalog new requests are answered from.
    pub fn current(&self) -> Arc<Catalog> {
        self.current.load_full()
    }

    /// Answers new requests from `catalog`; requests under way finish on the one before.
    pub fn replace(&self, catalog: Arc<Catalog>) {
        // The old one is dropped here, after the swap: the last reference may free a
        // whole graph, which no request waits on.
        drop(self.current.swap(catalog));
    }
}

/// The catalog one request is answered from, taken once per request (the first
/// extractor that asks keeps it in the request's extensions for the others), so that no
/// answer mixes two builds: its `ETag` and its body come from the same one.
pub struct Current(pub(super) Arc<Catalog>);

pub(super) fn snapshot(parts: &mut axum::http::request::Parts, served: &Served) -> Arc<Catalog> {
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

/// How often [`watch`] looks at the store file.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Watches the store at `store` and serves each new build `open` opens there: a make
/// writes the store under another name and renames it into place, then writes the
/// manifest and the repertoire reports beside it, so a switch waits until neither the
/// store nor the manifest changed for one look. A store that fails to open is reported
/// and the build before stays served.
pub(super) fn watch(
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
                // A build whose whole graph is held is loaded before it is served, so its
                // first answers do not wait; a larger one is served at once and its named
                // positions, one pass over its file, are read after (a request that needs
                // them first waits for them).
                let catalog = Arc::new(catalog);
                let whole = catalog.holds_whole_graph();
                if whole {
                    catalog.load_in_memory_parts();
                }
                let build = catalog.build();
                served.replace(catalog.clone());
                if !whole {
                    let load = move || {
                        catalog.load_in_memory_parts();
                    };
                    let _ = std::thread::Builder::new().name("okb-named".into()).spawn(load);
                }
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
