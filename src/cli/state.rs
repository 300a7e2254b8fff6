//! `okb state`: a counts state kept as a folder (`games::state::folder`), grown a month
//! at a time by several machines: `init` makes it, `count` cuts some of a month's files
//! into slices by shard, `merge` merges one shard with its slices, `commit` adds the
//! month. spark/okb_state.py runs them on a Spark cluster; a `kind = "counts-state"`
//! source builds a tree from the folder.

use std::path::{Path, PathBuf};

use miette::miette;
use rayon::prelude::*;

use super::output::paint;
use crate::games::aggregate::Counted;
use crate::games::filter::GameFilter;
use crate::games::runs::{self, MergePlan, Opener, Record, RunError, Source};
use crate::games::state::folder::{Settings, StateFolder};
use crate::games::state::merge::RunGroups;
use crate::games::state::staging::{self, Sliced, Staged};

/// Arguments of `okb state`.
#[derive(Debug, Clone, clap::Args)]
pub struct StateArgs {
    /// What to do.
    #[command(subcommand)]
    pub what: StateCommand,
}

/// The `okb state` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum StateCommand {
    /// Make an empty state folder (nothing to do if it exists with the same settings)
    ///
    ///   okb state init --state /mnt/shared/lichess-state --shards 256 --max-ply 15
    ///   okb state init --state st --shards 64 --max-ply 12 --filter 'min_rating = 1800'
    #[command(verbatim_doc_comment)]
    Init(InitArgs),
    /// Count game files into a slices folder: their counts cut by the state's shards
    ///
    /// Writes one slice per shard the games touch and counted.json (the files with their
    /// BLAKE3, the counters). Counted with the state's max_ply and filter. A month's files
    /// may be counted on several machines, into a slices folder each.
    ///
    ///   okb state count --state st -o staging/2024-01/part-0 2024-01-a.pgn.zst
    #[command(verbatim_doc_comment)]
    Count(CountArgs),
    /// Merge one shard of the state with its slices from every slices folder
    ///
    /// Reads only that shard, writes the new shard and its hot cut into the state folder
    /// and notes it pending; the state is unchanged until `okb state commit`. Run it again
    /// (a task retried) and it writes the same shard.
    ///
    ///   okb state merge --state st --shard 17 --min-games 5 staging/2024-01/part-*
    #[command(verbatim_doc_comment)]
    Merge(MergeArgs),
    /// Add the month to the state once every touched shard is merged
    ///
    /// Writes the new manifest at once (a month already in the state is refused) and
    /// removes the shards it replaced.
    ///
    ///   okb state commit --state st --month 2024-01 staging/2024-01/part-*
    #[command(verbatim_doc_comment)]
    Commit(CommitArgs),
}

/// Arguments of `okb state init`.
#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// The state folder.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// Shards the keys are cut into (a merge holds about two shards in memory).
    #[arg(long, default_value_t = 256)]
    pub shards: usize,
    /// Plies counted per game: the tree's max_ply in the pipeline that reads the state.
    #[arg(long, default_value_t = 15)]
    pub max_ply: usize,
    /// The game filter, as a source's [filter] table writes it ('min_rating = 1800').
    #[arg(long, value_name = "TOML")]
    pub filter: Option<String>,
}

/// Arguments of `okb state count`.
#[derive(Debug, Clone, clap::Args)]
pub struct CountArgs {
    /// The state folder whose settings (shards, max_ply, filter) the files are counted with.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// The slices folder to write.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Memory for counting, in MiB; past it, sorted runs spill to the slices folder.
    #[arg(long, default_value_t = 2048, value_name = "MIB")]
    pub memory_budget_mb: usize,
    /// Game files (PGN, .zst, .bz2, .gz, BGN).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Arguments of `okb state merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The state folder.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// The shard to merge (0 to shards - 1).
    #[arg(long)]
    pub shard: usize,
    /// The tree's min_games: the merge writes the hot cut a build at it reads.
    #[arg(long)]
    pub min_games: u64,
    /// The month's slices folders.
    #[arg(required = true, value_name = "SLICES")]
    pub slices: Vec<PathBuf>,
}

/// Arguments of `okb state commit`.
#[derive(Debug, Clone, clap::Args)]
pub struct CommitArgs {
    /// The state folder.
    #[arg(long, value_name = "DIR")]
    pub state: PathBuf,
    /// The month's name in the state (2024-01).
    #[arg(long)]
    pub month: String,
    /// The month's slices folders (those its shards were merged with).
    #[arg(required = true, value_name = "SLICES")]
    pub slices: Vec<PathBuf>,
}

/// Runs `okb state`.
pub fn run(args: &StateArgs) -> miette::Result<()> {
    let started = std::time::Instant::now();
    match &args.what {
        StateCommand::Init(a) => init(a)?,
        StateCommand::Count(a) => count(a)?,
        StateCommand::Merge(a) => merge(a)?,
        StateCommand::Commit(a) => commit(a)?,
    }
    eprintln!("{} in {:.2}s", paint("Finished", "32"), started.elapsed().as_secs_f64());
    Ok(())
}

fn init(args: &InitArgs) -> miette::Result<()> {
    let filter: GameFilter = match &args.filter {
        Some(text) => {
            toml::from_str(text).map_err(|e| miette!("--filter {text:?}: {}", e.message()))?
        }
        None => GameFilter::default(),
    };
    filter.compile().map_err(|e| miette!("--filter: {e}"))?;
    let settings = Settings { shards: args.shards, max_ply: args.max_ply, filter };
    let folder = StateFolder::init(&args.state, &settings).map_err(|e| miette!("{e}"))?;
    let months = plural(folder.manifest.state.months.len(), "month");
    eprintln!(
        "{} {} ({} shards, max_ply {}, {months})",
        paint("Ready", "32"),
        args.state.display(),
        settings.shards,
        settings.max_ply
    );
    Ok(())
}

fn count(args: &CountArgs) -> miette::Result<()> {
    let folder = StateFolder::open(&args.state).map_err(|e| miette!("{e}"))?;
    let settings = folder.manifest.settings.clone();
    let plan = MergePlan::for_budget(args.memory_budget_mb, args.output.join("spill"));
    let sharing = args.files.len().min(rayon::current_num_threads()).max(1);
    let counted: Vec<(PathBuf, Counted)> = args
        .files
        .par_iter()
        .map(|file| {
            count_one(file, &settings, &plan, args.memory_budget_mb / sharing)
                .map(|c| (file.clone(), c))
        })
        .collect::<miette::Result<_>>()?;
    let mut sliced = Sliced { settings, ..Default::default() };
    let (mut positions, mut moves) = (Vec::new(), Vec::new());
    for (file, c) in counted {
        let hash =
            crate::files::hash::hash_file(&file).map_err(|e| miette!("{}: {e}", file.display()))?;
        eprintln!(
            "{} {} ({} games, {} counted, {} bad)",
            paint("Counted", "32"),
            file.display(),
            c.counters.games_read,
            c.counters.games_counted,
            c.counters.games_bad
        );
        sliced.files.push((file.display().to_string(), hash));
        sliced.bad.merge(&c.bad);
        sliced.counters.merge(&c.counters);
        positions.extend(c.positions);
        moves.extend(c.moves);
    }
    let failed = |e: RunError| miette!("{}: {e}", args.output.display());
    let (positions, moves) = rayon::join(|| merged(positions, &plan), || merged(moves, &plan));
    let mut groups =
        RunGroups::new(positions.map_err(failed)?, moves.map_err(failed)?).map_err(failed)?;
    let sliced =
        staging::write_slices(&args.output, sliced, &mut groups).map_err(|e| miette!("{e}"))?;
    drop(groups);
    let _ = std::fs::remove_dir(args.output.join("spill"));
    let bytes: u64 = sliced.slices.iter().map(|s| s.bytes).sum();
    eprintln!(
        "{} {} ({} slices, {:.1} MB)",
        paint("Sliced", "32"),
        args.output.display(),
        sliced.slices.len(),
        bytes as f64 / 1e6
    );
    Ok(())
}

/// Counts one game file with the state's settings, within `budget_mb`.
fn count_one(
    path: &Path,
    settings: &Settings,
    plan: &MergePlan,
    budget_mb: usize,
) -> miette::Result<Counted> {
    // No progress bar: files are counted side by side, and their bars would interleave.
    super::count::count_game_file(path, &settings.filter, settings.max_ply, budget_mb, plan, false)
}

/// Sorted runs merged into one, read back as a stream.
fn merged<T: Record + 'static>(
    runs: Vec<Opener<'static, T>>,
    plan: &MergePlan,
) -> Result<Source<'static, T>, RunError> {
    if runs.is_empty() {
        return runs::in_memory(Vec::new())();
    }
    runs::spill_merged(runs, plan)?()
}

fn open_all(folder: &StateFolder, dirs: &[PathBuf]) -> miette::Result<Vec<Staged>> {
    dirs.iter().map(|dir| Staged::open(dir, folder).map_err(|e| miette!("{e}"))).collect()
}

fn merge(args: &MergeArgs) -> miette::Result<()> {
    let folder = StateFolder::open(&args.state).map_err(|e| miette!("{e}"))?;
    let staged = open_all(&folder, &args.slices)?;
    staging::check_new(&folder, "this month", &staged).map_err(|e| miette!("{e}"))?;
    match staging::merge_shard(&folder, args.shard, &staged, Some(args.min_games))
        .map_err(|e| miette!("{e}"))?
    {
        Some(shard) => eprintln!(
            "{} shard {} ({} positions, {} pairs, {:.1} MB)",
            paint("Merged", "32"),
            args.shard,
            shard.groups,
            shard.moves,
            shard.bytes as f64 / 1e6
        ),
        None => eprintln!(
            "{} shard {}: no game of the month falls in it",
            paint("Skipped", "33"),
            args.shard
        ),
    }
    Ok(())
}

fn commit(args: &CommitArgs) -> miette::Result<()> {
    let mut folder = StateFolder::open(&args.state).map_err(|e| miette!("{e}"))?;
    let staged = open_all(&folder, &args.slices)?;
    staging::commit(&mut folder, &args.month, &staged).map_err(|e| miette!("{e}"))?;
    let (positions, pairs, bytes) = folder.manifest.state.size();
    let months = plural(folder.manifest.state.months.len(), "month");
    eprintln!(
        "{} {} to {} ({months}, {positions} positions, {pairs} pairs, {:.1} MB)",
        paint("Committed", "32"),
        args.month,
        args.state.display(),
        bytes as f64 / 1e6
    );
    Ok(())
}

/// `1 month`, `2 months`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
