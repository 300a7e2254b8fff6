//! The `okb` commands, one module each; `main.rs` parses the command line and calls
//! the command's `run`. [`output`] holds what they print alike (cargo's voice).

pub mod alloc;
pub mod book;
pub mod check;
pub mod classify;
pub mod completions;
pub mod clean;
pub mod convert;
pub mod diff;
pub mod fetch;
pub mod graph;
pub mod inspect;
pub mod make;
pub mod openingiq;
pub mod output;
pub mod pin;
pub mod query;
pub mod review;
pub mod serve;
pub mod status;
pub mod structure;
pub mod verify;

use std::path::PathBuf;

use crate::pipeline::Loaded;

/// The store a reader command opens: `--store FILE` if given, else the pipeline's
/// `[store] path`.
pub fn store_path(given: Option<PathBuf>, load: impl Fn() -> miette::Result<Loaded>) -> miette::Result<PathBuf> {
    match given {
        Some(path) => Ok(path),
        None => {
            let loaded = load()?;
            Ok(loaded.path(&loaded.pipeline.store.path))
        }
    }
}
