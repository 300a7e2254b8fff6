//! `okb count`: the partial counts of some game files as a portable counts file (`.okbc`,
//! see [`crate::games::counts`]), or several counts files merged into one. Made on any
//! machine (or on a cluster, one part per worker), declared as a `kind = "counts"`
//! source, they build the same tree as the games themselves.

use std::path::{Path, PathBuf};

use miette::miette;
use rayon::prelude::*;

use super::output::paint;
use crate::games::aggregate::{AggregateOptions, Counted, count_file};
use crate::games::counts;
use crate::games::filter::GameFilter;
use crate::games::runs::MergePlan;

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
    /// Memory for counting and merging, in MiB; past it, sorted runs spill to files
    /// beside the output and are merged from there (the output is the same).
    #[arg(long, default_value_t = 2048, value_name = "MIB")]
    pub memory_budget_mb: usize,
}

/// Runs `okb count`: every part (a game file's counted runs, or a counts file read as
/// a stream) goes to spill files beside the output, and the merge streams them into the
/// output, so memory stays within `--memory-budget-mb` whatever the number of games.
pub fn run(args: &CountArgs) -> miette::Result<()> {
    let started = std::time::Instant::now();
    let dir = args
        .output
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let plan = MergePlan::for_budget(args.memory_budget_mb, dir.clone());
    let mut parts = counts::Parts::default();
    if args.merge {
        parts.add_files(&args.files, &dir).map_err(|e| miette!("{e}"))?;
    } else {
        // Small files hold one chunk each, which one thread reads: count as many files
        // at once as there are threads (each within its share of the memory budget),
        // then add them in the order given.
        let threads = rayon::current_num_threads().max(1);
        for window in args.files.chunks(threads) {
            let counted: Vec<_> =
                window.par_iter().map(|file| count_one(file, args, &plan, window.len())).collect();
            for (file, counted) in window.iter().zip(counted) {
                add_counted(&mut parts, file, counted?, &plan)?;
            }
        }
    }
    let (games, read) = (parts.counters.games_counted, parts.counters.games_read);
    let max_ply = parts.max_ply.unwrap_or(args.max_ply as u32);
    let name = args.output.display().to_string();
    let (positions, moves) = parts.write(&args.output, &name, &plan).map_err(|e| miette!("{e}"))?;
    eprintln!(
        "{} {} ({games} games counted of {read}, {positions} positions, {moves} moves, ply {max_ply}) in {:.2}s",
        paint("Finished", "32"),
        args.output.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Counts one game file, alone or beside `sharing - 1` others (which share the memory
/// budget, and leave the progress bar out: several bars at once would interleave).
fn count_one(
    path: &Path,
    args: &CountArgs,
    plan: &MergePlan,
    sharing: usize,
) -> miette::Result<Counted> {
    let budget_mb = args.memory_budget_mb / sharing;
    count_game_file(path, &GameFilter::default(), args.max_ply, budget_mb, plan, sharing == 1)
}

/// Counts one game file's games that `filter` admits to `max_ply`, within `budget_mb`
/// (at least 1 MiB), spilling runs under `plan`'s folder, with a progress bar when
/// `progress`: the one way `okb count` and `okb state count` count a file.
pub(super) fn count_game_file(
    path: &Path,
    filter: &GameFilter,
    max_ply: usize,
    budget_mb: usize,
    plan: &MergePlan,
    progress: bool,
) -> miette::Result<Counted> {
    let options = AggregateOptions {
        max_ply,
        memory_budget_mb: budget_mb.max(1),
        spill_dir: Some(plan.spill_dir.clone()),
        progress,
        ..Default::default()
    };
    count_file(path, filter, &options).map_err(|e| miette!("{}: {e}", path.display()))
}

/// Adds a counted game file to `parts`, saying so (and about damage) on stderr.
fn add_counted(
    parts: &mut counts::Parts,
    path: &Path,
    counted: Counted,
    plan: &MergePlan,
) -> miette::Result<()> {
    let c = &counted.counters;
    eprintln!(
        "{} {} ({} games, {} counted, {} bad)",
        paint("Counted", "32"),
        path.display(),
        c.games_read,
        c.games_counted,
        c.games_bad
    );
    if let Some(b) = &counted.broken {
        eprintln!(
            "{} {}: {b}; the games before the break are counted",
            paint("warning", "33"),
            path.display()
        );
    }
    let shown = path.display().to_string();
    parts
        .add_runs(
            &shown,
            counted.max_ply,
            counted.positions,
            counted.moves,
            &counted.bad,
            &counted.counters,
            plan,
        )
        .map_err(|e| miette!("{e}"))
}
