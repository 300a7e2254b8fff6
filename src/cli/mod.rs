//! The `okb` commands, one module each; `main.rs` parses the command line and calls
//! the command's `run`. [`output`] holds what they print alike (cargo's voice).

pub mod alloc;
pub mod book;
pub mod check;
pub mod classify;
pub mod clean;
pub mod completions;
pub mod convert;
pub mod count;
pub mod crawl;
pub mod diff;
pub mod engine;
pub mod export;
pub mod fetch;
pub mod graph;
pub mod inspect;
pub mod make;
pub mod openingiq;
pub mod output;
pub mod pin;
pub mod prep;
pub mod query;
pub mod review;
pub mod serve;
pub mod state;
pub mod status;
pub mod structure;
pub mod verify;

use std::path::PathBuf;

use crate::pipeline::Loaded;

/// The store file a reader command opens, kept while the command runs.
pub struct StoreFile {
    /// The SQLite file.
    pub path: PathBuf,
    /// A PostgreSQL knowledge base's local copy, removed when the command ends.
    _copy: Option<crate::store::postgres::read::LocalCopy>,
}

/// The store a reader command opens: `--store FILE` or `--store postgres://…` if given,
/// else the pipeline's `[store] path`. A PostgreSQL knowledge base is copied into a
/// temporary SQLite file first, so every answer comes from the same code.
pub fn store_path(
    given: Option<PathBuf>,
    load: impl Fn() -> miette::Result<Loaded>,
) -> miette::Result<StoreFile> {
    match given {
        Some(path) if crate::store::postgres::is_url(&path.to_string_lossy()) => {
            let target = crate::store::postgres::PgTarget::from_reader_url(&path.to_string_lossy())
                .map_err(|e| miette::miette!("{e}"))?;
            let copy = crate::store::postgres::read::LocalCopy::new(&target)
                .map_err(|e| miette::miette!("{e}"))?;
            Ok(StoreFile { path: copy.path(), _copy: Some(copy) })
        }
        Some(path) => Ok(StoreFile { path, _copy: None }),
        None => {
            let loaded = load()?;
            Ok(StoreFile { path: loaded.layout().store, _copy: None })
        }
    }
}
