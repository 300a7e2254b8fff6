//! What can stop a make.

use crate::dataflow::BuildError;

/// Errors of a make run.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum MakeError {
    /// A source could not be had.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Source(#[from] crate::sources::SourceError),
    /// The build engine failed.
    #[error(transparent)]
    #[diagnostic(code(okb::build))]
    Build(#[from] BuildError),
    /// The store could not be written.
    #[error(transparent)]
    #[diagnostic(code(okb::store))]
    Store(#[from] crate::store::StoreError),
    /// An explorer crawl could not be had.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Crawl(#[from] crate::crawl::CrawlError),
    /// The engine could not be used at all (missing, unstartable, bad settings).
    #[error(transparent)]
    #[diagnostic(
        code(okb::engine),
        help(
            "install Stockfish (`apt-get install stockfish`) or set `path` in [engine] of pipeline.toml; remove [engine] to skip annotation"
        )
    )]
    Engine(#[from] crate::engine::EngineError),
    /// A game source's paths and globs matched no file, and it does not allow that.
    #[error("game source {source_name}: no file matches {}", patterns.join(", "))]
    #[diagnostic(
        code(okb::games),
        help(
            "check the paths (a typo? a disk not mounted?); a source that may be empty says `allow_empty = true` in [sources.{source_name}]"
        )
    )]
    NoGameFiles {
        /// The source.
        source_name: String,
        /// Its paths and globs, as written.
        patterns: Vec<String>,
    },
    /// The pipeline asks for something no step provides.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Pipeline(Box<crate::pipeline::PipelineError>),
    /// A game source could not be read as a whole.
    #[error("game source {source_name}: {error}")]
    #[diagnostic(code(okb::games))]
    Games {
        /// The source.
        source_name: String,
        /// What failed.
        error: crate::games::GamesError,
    },
}
