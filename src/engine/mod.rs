//! Phase 4: Stockfish annotation of tree positions.
//!
//! [`annotate`] takes one [`Job`] per position, serves what it can from the persistent
//! [`EngineCache`], and runs the rest through a pool of UCI engines ([`pool`]), committing
//! each result to the cache as it arrives. The pieces:
//!
//! - [`uci`]: one engine process, its handshake and `info` parsing, with timeouts;
//! - [`pool`]: N engines working through a priority queue, restarting broken engines;
//! - [`policy`]: the `[engine]` configuration and the depth policy;
//! - [`analysis`]: the per-position result okb stores; [`loss`]: what a move loses
//!   against the best move of its position (Lichess's inaccuracy, mistake, blunder);
//! - [`cache`]: the SQLite cache shared by all pipelines and rebuilds;
//! - [`identity`]: what a result is a function of (binary, name, options);
//! - [`wanted`]: which searches are left once evaluation sources and the cache have
//!   served what they can (the one answer for a make, `okb status` and a queue);
//! - [`queue`], [`results`] (framed by [`exchange`]): annotation elsewhere — the
//!   positions a pipeline still needs as a queue file, results made from it on other
//!   machines (`okb engine annotate`), checked and imported into the cache.
//!
//! Determinism: with the defaults (`threads = 1`, `new_game = true`) a result depends
//! only on the engine identity, the position identity, the depth and multipv: the engine
//! is given the position with move counters reset (`0 1`), because Stockfish's
//! evaluation reads the fifty-move counter and the cache key deliberately does not.

pub mod analysis;
pub mod cache;
pub mod estimate;
pub mod exchange;
pub mod identity;
pub mod loss;
pub mod policy;
pub mod pool;
pub mod queue;
pub mod results;
pub mod sources;
pub mod uci;
pub mod wanted;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use shakmaty::EnPassantMode;

pub use analysis::{Analysis, Line};
pub use cache::EngineCache;
pub use identity::Identity;
pub use policy::EngineConfig;
pub use sources::EvalSource;
pub use wanted::Wanted;

use crate::position;
use pool::{Event, Scheduler, Stop, Task};

/// Everything that can go wrong in the engine phase.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum EngineError {
    /// No engine binary was found.
    // The fix is in the message itself, not only in a miette help, because callers
    // may print the error with plain Display.
    #[error(
        "no UCI engine found (looked for {searched}); install Stockfish with `apt-get install stockfish`, or set `[engine] path = \"/path/to/stockfish\"` in pipeline.toml"
    )]
    NotFound {
        /// Where okb looked.
        searched: String,
    },
    /// The engine binary exists but could not be started.
    #[error("cannot start the engine {}: {source}", path.display())]
    #[diagnostic(help(
        "check that the file is an executable UCI engine (`[engine] path` in pipeline.toml)"
    ))]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The engine did not complete the `uci`/`isready` handshake.
    #[error("engine {} failed the UCI handshake: {reason}", path.display())]
    Handshake {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The engine did not answer in time.
    #[error("the engine did not answer within {seconds} s (hung?)")]
    Timeout {
        /// The timeout that expired.
        seconds: f64,
    },
    /// The engine process ended.
    #[error("the engine crashed: it {status}")]
    Crashed {
        /// How it ended.
        status: String,
    },
    /// The engine printed something that is not a usable UCI answer.
    #[error("the engine sent an unusable answer: {reason}")]
    Protocol {
        /// What was wrong.
        reason: String,
    },
    /// An I/O error outside the engine's conversation.
    #[error("{context}: {source}")]
    Io {
        /// What okb was doing.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// An error of the engine cache database.
    #[error("engine cache: {context}: {source}")]
    Cache {
        /// What okb was doing.
        context: String,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// An invalid `[engine]` setting.
    #[error("invalid engine configuration: {reason}")]
    Config {
        /// Which field and why.
        reason: String,
    },
}

/// One position to annotate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The position as a full FEN (an EPD without counters is accepted too).
    pub fen: String,
    /// Search depth (see [`EngineConfig::depth_for`]).
    pub depth: u32,
    /// Scheduling priority, higher first: the node's game count.
    pub priority: u64,
    /// Where the position sits in the tree: the moves from the root separated by spaces
    /// (SAN or UCI, consistently). Used for ordering and, with `tt_locality`, to keep a
    /// subtree on one engine; any string works, only its space-separated prefix matters.
    pub subtree: String,
}

impl Job {
    /// A job for a tree node, with the depth given by the config's depth policy.
    pub fn for_node(
        fen: String,
        is_branching: bool,
        game_count: u64,
        subtree: String,
        config: &EngineConfig,
    ) -> Job {
        Job {
            fen,
            depth: config.depth_for(is_branching, game_count),
            priority: game_count,
            subtree,
        }
    }
}

/// A snapshot of an annotation run, passed to the progress callback.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Distinct positions asked for.
    pub total: usize,
    /// Served from the cache.
    pub cached: usize,
    /// Positions that need an engine search.
    pub to_analyse: usize,
    /// Searched successfully so far.
    pub analysed: usize,
    /// Searches failed so far, after all attempts.
    pub failed: usize,
    /// Jobs whose FEN did not parse (never searched).
    pub invalid: usize,
}

/// A position that could not be annotated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The FEN of the job.
    pub fen: String,
    /// Why, including the error of each attempt.
    pub reason: String,
}

/// What [`annotate`] did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotationReport {
    /// Engine identity the results belong to (see [`engine_identity`]).
    pub engine_identity: String,
    /// The engine's `id name`.
    pub engine_name: String,
    /// Results keyed by [`position::epd`], from the cache or fresh.
    pub results: BTreeMap<String, Analysis>,
    /// Failures keyed by [`position::epd`] (or by the FEN text when it does not parse).
    pub failures: BTreeMap<String, Failure>,
    /// Positions served from the cache.
    pub cached: usize,
    /// Finished positions (checkmate, stalemate), evaluated without a search.
    #[serde(default)]
    pub finished: usize,
    /// Positions served by each evaluation source (in `sources` order): the depths of
    /// the evaluations taken.
    pub from_sources: Vec<(String, Vec<u32>)>,
    /// The positions an evaluation source served, keyed by [`position::epd`], with the
    /// source's label ([`EvalSource::label`]).
    pub origins: BTreeMap<String, String>,
    /// Positions searched in this run.
    pub analysed: usize,
    /// Positions that failed.
    pub failed: usize,
    /// Positions not scheduled because a limit was reached; a later run continues with
    /// them, since everything finished is already in the cache.
    pub left: usize,
    /// Why scheduling stopped early (`None` when everything was scheduled).
    pub stopped: Option<String>,
    /// Engine processes spawned (0 when everything came from the cache).
    pub engines_started: usize,
    /// Nodes searched in this run.
    pub nodes: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// The output of the annotation phase: what the store and exports read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotations {
    /// The engine's `id name`.
    pub engine_name: String,
    /// Results keyed by [`position::epd`].
    pub results: BTreeMap<String, Analysis>,
    /// Positions that failed after all attempts, keyed by [`position::epd`].
    pub failures: BTreeMap<String, Failure>,
    /// Where each result came from when okb's engine did not make it: the evaluation
    /// source's `<name>@<pin>`, keyed by [`position::epd`] (a result not listed here is
    /// the engine's, `engine_name`).
    pub origins: BTreeMap<String, String>,
}

impl Annotations {
    /// Where the result of `epd` came from: an evaluation source's `<name>@<pin>`, or
    /// the engine's name.
    pub fn origin(&self, epd: &str) -> Option<&str> {
        if !self.results.contains_key(epd) {
            return None;
        }
        Some(self.origins.get(epd).map_or(self.engine_name.as_str(), String::as_str))
    }
}

/// Finds the engine binary: `configured` if given (a bare name is looked up on PATH),
/// otherwise `stockfish` on PATH, then `/usr/games/stockfish`.
pub fn resolve_engine(configured: Option<&Path>) -> Result<PathBuf, EngineError> {
    let on_path = |name: &Path| {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    };
    match configured {
        Some(p) if p.components().count() == 1 && !p.is_absolute() => on_path(p)
            .ok_or_else(|| EngineError::NotFound { searched: format!("{} on PATH", p.display()) }),
        Some(p) => {
            if p.is_file() {
                Ok(p.to_path_buf())
            } else {
                Err(EngineError::NotFound { searched: p.display().to_string() })
            }
        }
        None => on_path(Path::new("stockfish"))
            .or_else(|| Some(PathBuf::from("/usr/games/stockfish")).filter(|p| p.is_file()))
            .ok_or_else(|| EngineError::NotFound {
                searched: "`stockfish` on PATH and /usr/games/stockfish".into(),
            }),
    }
}

/// The engine identity's cache key (see [`Identity::key`]), with the engine's `id name`
/// and the number of engine processes spawned to learn the name (0 once the cache
/// remembers it for this binary).
pub fn engine_identity(
    path: &Path,
    config: &EngineConfig,
    cache: &EngineCache,
) -> Result<(String, String, usize), EngineError> {
    let (identity, spawned) = Identity::of(path, config, cache)?;
    Ok((identity.key(), identity.id_name, spawned))
}

/// The origin ([`Annotations::origins`]) of a finished position's evaluation: the rules
/// of chess, no engine and no source.
pub const FINISHED_ORIGIN: &str = "game over (no search)";

/// Annotates `jobs`: finished positions by the rules, then evaluation sources, then the
/// engine cache, then engine searches by priority, each committed to `cache` as it
/// finishes.
///
/// Jobs for the same position (same [`position::epd`]) are merged, keeping the deepest
/// depth and highest priority. A finished position (checkmate or stalemate) is evaluated
/// without a search ([`Analysis::of_finished`], origin [`FINISHED_ORIGIN`]). A position
/// an evaluation source covers ([`sources::best`])
/// takes that evaluation; the cache serves only the exact search asked (engine identity,
/// depth, MultiPV), so the results are a function of the pins and the engine (what is
/// left to search is [`Wanted`]'s answer, as for `okb status` and a queue). The engine
/// is looked for only when something is left to search: a pipeline whose sources cover
/// every position builds without it. Engine faults never fail the phase: a position
/// whose search crashes, hangs or returns garbage `max_attempts` times is reported in
/// [`AnnotationReport::failures`]. Errors are returned for a missing or unstartable
/// engine, an invalid configuration and cache (SQLite) errors. `progress` is called on
/// the calling thread after every position.
pub fn annotate(
    jobs: Vec<Job>,
    config: &EngineConfig,
    cache: &EngineCache,
    sources: &[EvalSource],
    progress: &dyn Fn(Progress),
) -> Result<AnnotationReport, EngineError> {
    let start = Instant::now();
    config.validate()?;
    let mut report = AnnotationReport {
        engine_identity: String::new(),
        engine_name: String::new(),
        results: BTreeMap::new(),
        failures: BTreeMap::new(),
        cached: 0,
        finished: 0,
        from_sources: sources.iter().map(|s| (s.name.clone(), Vec::new())).collect(),
        origins: BTreeMap::new(),
        analysed: 0,
        failed: 0,
        left: 0,
        stopped: None,
        engines_started: 0,
        nodes: 0,
        elapsed: Duration::ZERO,
    };
    let mut wanted = Wanted::of(jobs, sources, config.multipv);
    report.failures = std::mem::take(&mut wanted.invalid);
    report.failed = report.failures.len();
    report.finished = wanted.finished.len();
    for (epd, analysis) in std::mem::take(&mut wanted.finished) {
        report.origins.insert(epd.clone(), FINISHED_ORIGIN.to_string());
        report.results.insert(epd, analysis);
    }
    for (epd, (i, analysis)) in std::mem::take(&mut wanted.from_sources) {
        report.from_sources[i].1.push(analysis.stockfish_depth);
        report.origins.insert(epd.clone(), sources[i].label.clone());
        report.results.insert(epd, analysis);
    }
    let to_search = wanted.missing().count();
    if to_search == 0 {
        progress(Progress {
            total: report.results.len() + report.failed,
            invalid: report.failed,
            ..Progress::default()
        });
        report.elapsed = start.elapsed();
        return Ok(report);
    }
    let path = resolve_engine(config.path.as_deref()).map_err(|e| match e {
        EngineError::NotFound { searched } => EngineError::NotFound {
            searched: format!("{searched}, for {to_search} positions no evaluation source covers"),
        },
        other => other,
    })?;
    let (identity, name, spawned) = engine_identity(&path, config, cache)?;
    (report.engine_identity, report.engine_name, report.engines_started) =
        (identity, name, spawned);
    wanted.lookup(cache, &report.engine_identity)?;
    report.cached = wanted.cached.len();
    report.results.append(&mut wanted.cached);
    let (epds, tasks): (Vec<String>, Vec<Task>) = wanted.take_missing().into_iter().unzip();
    let mut snapshot = Progress {
        total: report.results.len() + tasks.len() + report.failed,
        cached: report.cached
            + report.finished
            + report.from_sources.iter().map(|(_, d)| d.len()).sum::<usize>(),
        to_analyse: tasks.len(),
        analysed: 0,
        failed: 0,
        invalid: report.failed,
    };
    progress(snapshot);
    if !tasks.is_empty() {
        let search = Search { tasks: &tasks, epds: &epds, path: &path, config, cache, start };
        search.run(&mut report, &mut snapshot, progress)?;
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Jobs merged by position identity (the deepest depth and highest priority win), keyed
/// by [`position::epd`]; jobs whose FEN does not parse are failures, keyed by their FEN.
pub(crate) fn merge_jobs(jobs: Vec<Job>) -> (BTreeMap<String, Task>, BTreeMap<String, Failure>) {
    let mut merged: BTreeMap<String, Task> = BTreeMap::new();
    let mut failures = BTreeMap::new();
    for job in jobs {
        let pos = match position::parse_fen(&job.fen) {
            Ok(pos) => pos,
            Err(e) => {
                failures.insert(job.fen.clone(), Failure { fen: job.fen, reason: e.to_string() });
                continue;
            }
        };
        let epd = position::epd(&pos);
        match merged.get_mut(&epd) {
            Some(t) => {
                t.depth = t.depth.max(job.depth);
                t.priority = t.priority.max(job.priority);
            }
            None => {
                let fen = format!(
                    "{} 0 1",
                    shakmaty::fen::Epd::from_position(&pos, EnPassantMode::Legal)
                );
                merged.insert(
                    epd,
                    Task {
                        pos,
                        fen,
                        depth: job.depth,
                        priority: job.priority,
                        subtree: job.subtree,
                    },
                );
            }
        }
    }
    (merged, failures)
}

/// The searches of one annotation: the positions not in the cache, and where results go.
struct Search<'a> {
    tasks: &'a [Task],
    /// The identity of each task's position.
    epds: &'a [String],
    path: &'a Path,
    config: &'a EngineConfig,
    cache: &'a EngineCache,
    /// When the phase started (the time budget counts from here).
    start: Instant,
}

impl Search<'_> {
    /// Searches the tasks on the engine pool within the budgets, committing each result
    /// to the cache as it arrives.
    fn run(
        &self,
        report: &mut AnnotationReport,
        snapshot: &mut Progress,
        progress: &dyn Fn(Progress),
    ) -> Result<(), EngineError> {
        // Fields apart, so that the event closure borrows only what it uses.
        let Search { tasks, epds, path, config, cache, start } = *self;
        let deadline = config.time_budget.map(|t| start + Duration::from_secs_f64(t));
        let scheduler = Mutex::new(Scheduler::new(
            pool::plan(tasks, config.tt_locality),
            config.max_positions,
            deadline,
            config.max_consecutive_failures,
        ));
        let (mut fatal, mut cache_error) = (None, None);
        let multipv = config.multipv;
        pool::run(tasks, &scheduler, path, config, &mut |event, scheduler| match event {
            Event::Spawning => report.engines_started += 1,
            Event::Fatal(e) => {
                lock(scheduler).stop(Stop::Fatal);
                fatal.get_or_insert(e);
            }
            Event::Finished { task, outcome } => {
                let epd = &epds[task];
                match outcome {
                    Ok(analysis) => {
                        if let Err(e) = cache.put(
                            &report.engine_identity,
                            epd,
                            tasks[task].depth,
                            multipv,
                            &analysis,
                        ) {
                            lock(scheduler).stop(Stop::Fatal);
                            cache_error.get_or_insert(e);
                        }
                        report.nodes += analysis.nodes;
                        report.results.insert(epd.clone(), analysis);
                        report.analysed += 1;
                        snapshot.analysed += 1;
                    }
                    Err(reason) => {
                        report
                            .failures
                            .insert(epd.clone(), Failure { fen: tasks[task].fen.clone(), reason });
                        report.failed += 1;
                        snapshot.failed += 1;
                    }
                }
                progress(*snapshot);
            }
        });
        if let Some(e) = fatal.or(cache_error) {
            return Err(e);
        }
        let scheduler = scheduler.into_inner().unwrap_or_else(|p| p.into_inner());
        report.left = tasks.len() - scheduler.started();
        report.stopped = scheduler.stop_reason().map(|why| match why {
            Stop::MaxPositions => {
                format!("max_positions = {} reached", config.max_positions.unwrap_or(0))
            }
            Stop::TimeBudget => {
                format!("time_budget = {} s reached", config.time_budget.unwrap_or(0.0))
            }
            Stop::Failing(n) => {
                format!("{n} positions in a row failed on every attempt; the engine looks broken")
            }
            Stop::Fatal => "the engine could not be started".into(),
        });
        Ok(())
    }
}

fn lock(scheduler: &Mutex<Scheduler>) -> std::sync::MutexGuard<'_, Scheduler> {
    scheduler.lock().unwrap_or_else(|p| p.into_inner())
}
