//! Exports: one module per output format. Each turns the built knowledge base into the
//! bytes of one or more files; writing them is the build engine's job, so every export is
//! cached and restored like any other step output.

pub mod bgn;
pub mod book;
pub mod csv;
pub mod eco_json;
pub mod lichess_evals;
pub mod named;
pub mod neo4j;
pub mod openingiq;
pub mod packed;
pub mod pgn;
pub mod polyglot;
pub mod polyglot_runs;

pub use crate::files::ExportFile;
