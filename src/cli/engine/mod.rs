//! `okb engine`: engine annotation on other machines. `queue` writes the searches a
//! pipeline still needs ([`crate::engine::queue`]), `annotate` runs a queue (or a part of
//! it) with Stockfish anywhere, `import` checks results against the pipeline's `[engine]`
//! and puts them in the engine cache, where `okb make` finds them.

pub mod annotate;
pub mod import;
pub mod queue;

use crate::pipeline::Loaded;

/// Arguments of `okb engine`.
#[derive(Debug, Clone, clap::Args)]
pub struct EngineArgs {
    /// What to do.
    #[command(subcommand)]
    pub what: EngineCommand,
}

/// The `okb engine` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum EngineCommand {
    /// Write the searches the engine cache lacks as a queue file for other machines
    ///
    /// Builds what the queue needs (the tree) like `okb make`, then lists every position
    /// the pipeline's [engine] selects that no evaluation source serves and whose search
    /// (at exactly its depth) is not in cache/engine.sqlite, with its depth, and the
    /// engine it must be searched with: the binary's BLAKE3, its name and the settings
    /// that make a result (threads, hash, multipv, new_game, tt_locality). Positions go
    /// most played first. time_budget and max_positions do not apply: the queue holds
    /// every position left.
    ///
    ///   okb engine queue -o queue.okbq
    ///   okb engine queue --profile design -o design.okbq
    #[command(verbatim_doc_comment)]
    Queue(queue::QueueArgs),
    /// Search a queue file's positions (or part K/N) with Stockfish into a results file
    ///
    /// Needs no pipeline and writes no cache: run it anywhere. The engine must be the
    /// binary the queue names (same BLAKE3): `stockfish` on PATH, /usr/games/stockfish,
    /// or --engine. Searches run as in `okb make` (one thread per engine, cleared before
    /// every position), so results equal a local make's.
    ///
    ///   okb engine annotate -o results.okbr queue.okbq
    ///   okb engine annotate --part 3/8 -j 1 -o part-3.okbr queue.okbq   # one of 8 workers
    #[command(verbatim_doc_comment)]
    Annotate(annotate::AnnotateArgs),
    /// Check results files against the pipeline's [engine], then add them to its cache
    ///
    /// Every file must come from the engine binary and settings of the pipeline's
    /// [engine]; a file that differs in any of them (the error names the field), or that
    /// is damaged or truncated, is refused and nothing is imported. After the import,
    /// `okb make` serves those positions from the cache and starts no engine for them.
    ///
    ///   okb engine import results/*.okbr && okb make
    #[command(verbatim_doc_comment)]
    Import(import::ImportArgs),
}

/// Runs `okb engine`; `load` reads the pipeline (not called by `annotate`).
pub fn run(args: &EngineArgs, load: impl Fn() -> miette::Result<Loaded>) -> miette::Result<()> {
    match &args.what {
        EngineCommand::Queue(args) => queue::run(args, &load()?),
        EngineCommand::Annotate(args) => annotate::run(args),
        EngineCommand::Import(args) => import::run(args, &load()?),
    }
}

/// The error for a pipeline without `[engine]`.
fn no_engine(loaded: &Loaded) -> miette::Report {
    miette::miette!(
        code = "okb::engine",
        help = "add an [engine] table (docs/pipeline.md) to annotate positions",
        "{} has no [engine] table, so its make searches no position",
        loaded.file.display()
    )
}
