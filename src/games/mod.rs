//! Phase 2: the move tree's statistics from game collections.
//!
//! The pipeline is: [`input`] (paths, globs, decompression, splitting a stream into
//! chunks at game boundaries) → [`pgn`] or [`bgn`] (one game at a time, played with
//! shakmaty up to the ply limit) → [`filter`] (which games count) → [`aggregate`]
//! (per-file counts in hash maps, spilled over a memory budget) → sorted [`runs`], merged
//! k ways into [`stats::GameStats`] or, in a build, into [`stored`] runs that the tree
//! reads back as streams. `book` is a separate one-shot path that counts exactly like
//! `polyglot make-book`. Problems with single games never abort a file: they are counted
//! in a [`report::BadGames`] report.

pub mod aggregate;
pub mod bgn;
pub mod counts;
pub mod dedup;
pub mod filter;
pub mod input;
pub mod pgn;
pub mod report;
pub mod runs;
mod scan;
pub mod state;
pub mod stats;
pub mod stored;
mod table;
pub mod tagfix;

use std::path::PathBuf;

/// Failure of Phase 2 as a whole (a file that cannot be read, a bad glob, a full disk).
///
/// Problems inside single games are not errors: they go to [`report::BadGames`].
#[derive(Debug, thiserror::Error)]
pub enum GamesError {
    /// A glob pattern in a source's `paths` is malformed.
    #[error("invalid glob pattern {pattern:?}: {message}")]
    Glob {
        /// The pattern as written.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// A path or pattern matched no file.
    #[error("{pattern}: no such file (or the pattern matches nothing)")]
    NoMatch {
        /// The path or pattern as written.
        pattern: String,
    },
    /// A file could not be opened or its compression header read.
    #[error("{}: cannot open: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Reading or decompressing a file failed part way.
    #[error("{}:{line}: read error at byte {byte} of the decompressed text (corrupt compressed data or I/O failure): {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The line reached when the error happened (1-based).
        line: u64,
        /// The decompressed bytes read before the error.
        byte: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A temporary spill run could not be written or read back.
    #[error("spill file {}: {source}", path.display())]
    Spill {
        /// The spill file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The merged counts (the merge's output, no spill file) could not be written: a
    /// full disk, most often.
    #[error("writing the merged counts: {source}")]
    MergedCounts {
        /// The underlying error.
        source: std::io::Error,
    },
    /// A filter setting is invalid.
    #[error(transparent)]
    Filter(#[from] filter::FilterError),
    /// An output file could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
