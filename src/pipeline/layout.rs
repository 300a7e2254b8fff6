//! Where a project's files live. Every folder and file okb reads or writes beside a
//! pipeline is named here once, so a command, a step and the make cannot disagree on
//! where the cache, the source store or the previous build is (and `--cache` applies to
//! all of them).

use std::path::{Path, PathBuf};

use super::Loaded;

/// The paths of one project, computed from its pipeline and the cache it builds with.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The content-addressed source store: pinned files by hash, months, crawls.
    pub sources: PathBuf,
    /// The build cache (`cache/` beside the pipeline, or the one `--cache` names).
    pub cache: PathBuf,
    /// The stat cache of file hashes, in the build cache.
    pub file_states: PathBuf,
    /// The engine's results, shared by every make of the project.
    pub engine_cache: PathBuf,
    /// The store and manifest the last make replaced, for `okb diff`.
    pub previous: PathBuf,
    /// The store's entries, written by `store:entries` for the store step.
    pub store_entries: PathBuf,
    /// The tree's edges, written by `store:edges` for the store step.
    pub store_edges: PathBuf,
    /// The store file (`[store] path`).
    pub store: PathBuf,
    /// The folder beside the store where a make writes its reports and manifest.
    pub build: PathBuf,
    /// The release manifest, beside the store.
    pub manifest: PathBuf,
}

impl Layout {
    /// The layout of `loaded`.
    pub fn of(loaded: &Loaded) -> Layout {
        let cache = loaded.cache.clone();
        let store = loaded.path(&loaded.pipeline.store.path);
        let build = store.parent().map(Path::to_path_buf).unwrap_or_default();
        let manifest = if store.parent().is_some() {
            build.join("manifest.json")
        } else {
            loaded.path("manifest.json")
        };
        Layout {
            sources: loaded.path("sources"),
            file_states: cache.join(crate::files::states::FILE_NAME),
            engine_cache: cache.join("engine.sqlite"),
            previous: cache.join("previous"),
            store_entries: cache.join("store-entries.sqlite"),
            store_edges: cache.join("store-edges.sqlite"),
            cache,
            store,
            build,
            manifest,
        }
    }

    /// The folder of repertoire `name`'s reports, beside the store.
    pub fn repertoire_dir(&self, name: &str) -> PathBuf {
        self.build.join(format!("repertoire-{name}"))
    }
}
