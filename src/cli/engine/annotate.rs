//! `okb engine annotate`: search a queue file's positions (or one part of them) with
//! Stockfish on this machine, through the same engine pool as `okb make`, into a results
//! file. Reads no pipeline and writes no cache, so it runs anywhere (a Spark executor).

use std::path::{Path, PathBuf};
use std::time::Instant;

use miette::miette;

use crate::cli::output::paint;
use crate::engine::identity::hash_binary;
use crate::engine::queue::{self, Part, Queue};
use crate::engine::results::{self, Results};
use crate::engine::{AnnotationReport, EngineCache, resolve_engine};

/// Arguments of `okb engine annotate`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnnotateArgs {
    /// The queue file (from `okb engine queue`).
    #[arg(value_name = "QUEUE")]
    pub queue: PathBuf,
    /// The results file to write (.okbr).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Search only part K of N: every N-th position from the K-th (K from 1 to N).
    #[arg(long, value_name = "K/N", default_value = "1/1")]
    pub part: Part,
    /// The engine binary; it must be the one the queue names (same BLAKE3)
    /// [default: `stockfish` on PATH, then /usr/games/stockfish].
    #[arg(long, value_name = "PATH")]
    pub engine: Option<PathBuf>,
    /// Engine processes run at once [default: one per core].
    #[arg(short = 'j', long, value_name = "N")]
    pub engines: Option<usize>,
}

/// Runs `okb engine annotate`.
pub fn run(args: &AnnotateArgs) -> miette::Result<()> {
    let started = Instant::now();
    let queue = queue::read(&args.queue).map_err(miette::Report::new)?;
    let path = resolve_engine(args.engine.as_deref()).map_err(miette::Report::new)?;
    check_binary(&queue, &args.queue, &path)?;
    let entries = queue.part(args.part);
    let engines = args
        .engines
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let config = queue.config(path, engines.min(entries.len().max(1)));
    // The binary is the queue's, so its name is too: no engine starts just to say it.
    let cache = EngineCache::in_memory().map_err(miette::Report::new)?;
    cache
        .set_engine_name(&queue.identity.binary_blake3, &queue.identity.id_name)
        .map_err(miette::Report::new)?;
    let report = search(&entries, &config, &cache)?;
    let results = Results::collect(queue.identity.clone(), &entries, &report);
    results::write(&args.output, &results).map_err(miette::Report::new)?;
    eprintln!(
        "{} {} (part {} of {}: {} positions, {} analysed, {} failed, {} engines started) in {:.2}s",
        paint("Finished", "32"),
        args.output.display(),
        args.part,
        args.queue.display(),
        entries.len(),
        results.results.len(),
        results.failures.len(),
        report.engines_started,
        started.elapsed().as_secs_f64()
    );
    for failure in &results.failures {
        eprintln!("{} {}: {}", paint("warning", "33"), failure.epd, failure.reason);
    }
    match &report.stopped {
        Some(why) => Err(miette!(
            "stopped early ({why}): {} positions not searched; the {} results are in {}",
            report.left,
            results.results.len(),
            args.output.display()
        )),
        None => Ok(()),
    }
}

/// Refuses an engine other than the queue's: its results could never be imported.
fn check_binary(queue: &Queue, queue_path: &Path, engine: &Path) -> miette::Result<()> {
    let found = hash_binary(engine).map_err(miette::Report::new)?;
    if found == queue.identity.binary_blake3 {
        return Ok(());
    }
    Err(miette!(
        code = "okb::engine::identity",
        help = "give the queue's engine binary with --engine (ship it with the job), or make the queue with this engine",
        "{} asks for the engine binary with BLAKE3 {} ({}), but {} has BLAKE3 {found}",
        queue_path.display(),
        queue.identity.binary_blake3,
        queue.identity.id_name,
        engine.display()
    ))
}

/// Searches `entries` on the engine pool, with a progress bar on a terminal.
fn search(
    entries: &[&queue::Entry],
    config: &crate::engine::EngineConfig,
    cache: &EngineCache,
) -> miette::Result<AnnotationReport> {
    let jobs = entries.iter().map(|e| e.job()).collect();
    let bar = crate::progress::start(entries.len() as u64, "engine positions");
    let report = crate::engine::annotate(jobs, config, cache, &[], &|p| {
        bar.set((p.analysed + p.failed) as u64);
        bar.set_message(format!("engine positions ({} failed)", p.failed));
    });
    drop(bar);
    report.map_err(miette::Report::new)
}
