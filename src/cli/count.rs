//! `okb count`: the partial counts of some game files as a portable counts file (`.okbc`,
//! see [`crate::games::counts`]), or several counts files merged into one. Made on any
//! machine (or on a cluster, one part per worker), declared as a `kind = "counts"`
//! source, they build the same tree as the games themselves.

use std::path::PathBuf;

use miette::miette;

use super::output::paint;
use crate::games::aggregate::{AggregateOptions, FileAggregate, aggregate_file_with};
use crate::games::counts;

/// Arguments of `okb count`.
#[derive(Debug, Clone, clap::Args)]
pub struct CountArgs {
    /// Game files (PGN, .zst, .bz2, .gz, BGN), or with --merge, counts files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The counts file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Merge counts files instead of counting games.
    #[arg(long)]
    pub merge: bool,
    /// Plies counted per game: the tree's max_ply in the pipeline that reads the counts.
    #[arg(long, default_value_t = 15)]
    pub max_ply: usize,
}

/// Runs `okb count`.
pub fn run(args: &CountArgs) -> miette::Result<()> {
    let started = std::time::Instant::now();
    let parts: Vec<FileAggregate> = if args.merge {
        args.files.iter().map(|f| counts::read(f).map_err(|e| miette!("{e}"))).collect::<Result<_, _>>()?
    } else {
        args.files.iter().map(|f| count_file(f, args.max_ply)).collect::<Result<_, _>>()?
    };
    let name = args.output.display().to_string();
    let merged = counts::merge_parts(&name, &parts).map_err(|e| miette!("{e}"))?;
    counts::write(&args.output, &merged).map_err(|e| miette!("{e}"))?;
    let c = &merged.counters;
    eprintln!(
        "{} {} ({} games counted of {}, {} positions, {} moves, ply {}) in {:.2}s",
        paint("Finished", "32"),
        args.output.display(),
        c.games_counted,
        c.games_read,
        merged.stats.positions.len(),
        merged.stats.moves.len(),
        merged.max_ply,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Counts one game file, saying so (and about damage) on stderr.
fn count_file(path: &std::path::Path, max_ply: usize) -> miette::Result<FileAggregate> {
    let options = AggregateOptions { max_ply, ..Default::default() };
    let aggregate = aggregate_file_with(path, &Default::default(), &options).map_err(|e| miette!("{}: {e}", path.display()))?;
    let c = &aggregate.counters;
    eprintln!("{} {} ({} games, {} counted, {} bad)", paint("Counted", "32"), path.display(), c.games_read, c.games_counted, c.games_bad);
    if let Some(b) = &aggregate.broken {
        eprintln!("{} {}: {b}; the games before the break are counted", paint("warning", "33"), path.display());
    }
    Ok(aggregate)
}
