//! Which searches the engine still has to run: the one answer shared by the engine step
//! ([`super::annotate`]), its line in `okb status` ([`left`]) and `okb engine queue`
//! ([`super::queue::plan`]), so the three can never disagree.
//!
//! Jobs are merged by position identity first (the deepest depth and highest priority
//! win, [`super::merge_jobs`]), so each position is asked one search. A finished position
//! (checkmate or stalemate) needs none: the rules evaluate it ([`Analysis::of_finished`]).
//! Any other position is then served, in this order, by an evaluation source ([`super::sources::best`]), by the
//! engine cache's row for exactly that search (engine identity, depth, MultiPV: a deeper
//! or shallower row does not serve it, see [`super::cache`]), or it is missing: the
//! engine must search it.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::estimate::{self, DEFAULT_SECONDS_AT_10};
use super::pool::Task;
use super::{Analysis, EngineCache, EngineConfig, EngineError, EvalSource, Failure, Job};

/// The jobs' positions sorted by what serves them.
#[derive(Debug)]
pub struct Wanted {
    /// Finished positions (no legal move), evaluated without a search, keyed by
    /// [`crate::position::epd`].
    pub finished: BTreeMap<String, Analysis>,
    /// Positions an evaluation source serves, keyed by [`crate::position::epd`]: the
    /// index of the source and its result.
    pub from_sources: BTreeMap<String, (usize, Analysis)>,
    /// Positions the engine cache serves (after [`Wanted::lookup`]), keyed by epd.
    pub cached: BTreeMap<String, Analysis>,
    /// Positions left for the engine, keyed by epd: before [`Wanted::lookup`] every
    /// position no source serves, after it the ones the cache cannot serve either.
    pub(crate) missing: BTreeMap<String, Task>,
    /// Jobs whose FEN does not parse (never searched), keyed by the FEN.
    pub invalid: BTreeMap<String, Failure>,
    /// The MultiPV every search asks for.
    multipv: u32,
}

impl Wanted {
    /// Merges `jobs` by position and takes what `sources` serve for searches with
    /// `multipv` lines. Needs no engine and no cache: a pipeline whose sources serve
    /// everything never looks for either.
    pub fn of(jobs: Vec<Job>, sources: &[EvalSource], multipv: u32) -> Wanted {
        let (merged, invalid) = super::merge_jobs(jobs);
        let mut wanted = Wanted {
            finished: BTreeMap::new(),
            from_sources: BTreeMap::new(),
            cached: BTreeMap::new(),
            missing: BTreeMap::new(),
            invalid,
            multipv,
        };
        for (epd, task) in merged {
            if let Some(result) = Analysis::of_finished(&task.pos) {
                wanted.finished.insert(epd, result);
                continue;
            }
            match super::sources::best(sources, &epd, &task.pos, task.depth, multipv) {
                Some(served) => {
                    wanted.from_sources.insert(epd, served);
                }
                None => {
                    wanted.missing.insert(epd, task);
                }
            }
        }
        wanted
    }

    /// Moves the missing positions whose exact search by `engine` (an identity key,
    /// [`super::Identity::key`]) is in `cache` to [`Wanted::cached`].
    pub fn lookup(&mut self, cache: &EngineCache, engine: &str) -> Result<(), EngineError> {
        for (epd, task) in std::mem::take(&mut self.missing) {
            match cache.get(engine, &epd, task.depth, self.multipv)? {
                Some(hit) => {
                    self.cached.insert(epd, hit);
                }
                None => {
                    self.missing.insert(epd, task);
                }
            }
        }
        Ok(())
    }

    /// The missing searches: each position's epd and depth, in epd order.
    pub fn missing(&self) -> impl Iterator<Item = (&str, u32)> {
        self.missing.iter().map(|(epd, task)| (epd.as_str(), task.depth))
    }

    /// The missing positions' tasks in epd order, taken out of `self`.
    pub(crate) fn take_missing(&mut self) -> Vec<(String, Task)> {
        std::mem::take(&mut self.missing).into_iter().collect()
    }
}

/// What is left of the engine step, as `okb status` says it.
#[derive(Clone, Debug, PartialEq)]
pub struct Left {
    /// Jobs asked (one per selected tree node).
    pub jobs: usize,
    /// Distinct positions no evaluation source serves (the cache's and the engine's).
    pub positions: usize,
    /// The searches the cache lacks: epd and depth.
    pub missing: BTreeMap<String, u32>,
    /// Their wall time on `[engine] engines` engines at this machine's measured speed.
    pub eta: Duration,
}

/// What is left of the searches `jobs` ask with `config`, given `sources` and the engine
/// cache at `cache_path`. The cache is opened, and the engine's identity worked out, only
/// when the sources leave something to search.
pub fn left(
    jobs: Vec<Job>,
    sources: &[EvalSource],
    config: &EngineConfig,
    cache_path: &Path,
) -> Result<Left, EngineError> {
    let count = jobs.len();
    let mut wanted = Wanted::of(jobs, sources, config.multipv);
    if wanted.missing.is_empty() {
        return Ok(Left {
            jobs: count,
            positions: 0,
            missing: BTreeMap::new(),
            eta: Duration::ZERO,
        });
    }
    let cache = EngineCache::open(cache_path)?;
    let (identity, _, _) =
        super::engine_identity(&config.path.clone().unwrap_or_default(), config, &cache)?;
    wanted.lookup(&cache, &identity)?;
    let missing: BTreeMap<String, u32> =
        wanted.missing().map(|(epd, depth)| (epd.to_string(), depth)).collect();
    let seconds = cache.speed(&identity)?.unwrap_or(DEFAULT_SECONDS_AT_10);
    let eta = estimate::wall_time(missing.values().copied(), seconds, config.engines);
    Ok(Left { jobs: count, positions: missing.len() + wanted.cached.len(), missing, eta })
}

impl std::fmt::Display for Left {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.positions == 0 {
            return write!(
                f,
                "0 of {} positions left: the evaluation sources cover them all",
                self.jobs
            );
        }
        write!(
            f,
            "{} of {} positions left, ≈ {}",
            self.missing.len(),
            self.positions,
            estimate::human(self.eta)
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::evals::Selection;
    use crate::evals::dump::parse_line;
    use crate::position;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const D4: &str = "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";
    const C4: &str = "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1";
    const NF3: &str = "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1";
    const E4_E5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    /// The depth every case asks for.
    const DEPTH: u32 = 5;

    fn epd(fen: &str) -> String {
        position::epd(&position::parse_fen(fen).unwrap())
    }

    fn job(fen: &str, depth: u32) -> Job {
        Job { fen: fen.into(), depth, priority: 1, subtree: String::new() }
    }

    /// A cache row that no engine made: if it served a request the engine would not
    /// search that position, which the assertions on the searched set would catch.
    fn row(depth: u32) -> Analysis {
        Analysis {
            stockfish_eval: 12345,
            stockfish_mate: None,
            stockfish_depth: depth,
            best_move_san: None,
            best_move_uci: None,
            lines: vec![],
            is_dubious: false,
            is_busted: false,
            nodes: 1,
        }
    }

    /// One evaluation source: 1.d4 at depth 30, 1.c4 at depth 4 (one line each).
    fn sources() -> Vec<EvalSource> {
        let mut selection = Selection::default();
        for (fen, line, depth) in [(D4, "d7d5", 30), (C4, "e7e5", 4)] {
            let text = format!(
                r#"{{"fen":"{}","evals":[{{"pvs":[{{"cp":10,"line":"{line}"}}],"knodes":5,"depth":{depth}}}]}}"#,
                epd(fen)
            );
            let entry = parse_line(text.as_bytes()).unwrap();
            selection.evals.entry(epd(fen)).or_default().extend(entry.evals);
        }
        vec![EvalSource {
            name: "evals".into(),
            label: "evals@0123456789ab".into(),
            selection: Arc::new(selection),
        }]
    }

    /// The engine step's run, its `okb status` line and `okb engine queue` ask Stockfish
    /// for the same searches in every case: nothing cached (start), cached shallower
    /// (1.e4), served by a source (1.d4), cached deeper (1.e4 e5: the cache serves only
    /// the exact search), cached exactly (1.Nf3), and a transposition asked at two
    /// depths of which the source covers only the shallower (1.c4: the deeper is asked).
    #[test]
    fn make_status_and_queue_ask_the_same_searches() {
        let stockfish = PathBuf::from("/usr/games/stockfish");
        assert!(
            stockfish.is_file(),
            "Stockfish at /usr/games/stockfish (tests/setup.sh installs it)"
        );
        let dir = tempfile::tempdir().unwrap();
        let cache_path = dir.path().join("engine.sqlite");
        let config = EngineConfig {
            path: Some(stockfish.clone()),
            engines: 1,
            multipv: 1,
            ..EngineConfig::default()
        };
        let cache = EngineCache::open(&cache_path).unwrap();
        let (engine, _, _) = super::super::engine_identity(&stockfish, &config, &cache).unwrap();
        for (fen, depth) in [(E4, DEPTH - 2), (E4_E5, DEPTH + 4), (NF3, DEPTH)] {
            cache.put(&engine, &epd(fen), depth, 1, &row(depth)).unwrap();
        }
        let sources = sources();
        let jobs: Vec<Job> = [START, E4, D4, E4_E5, NF3]
            .iter()
            .map(|f| job(f, DEPTH))
            .chain([job(C4, 3), job(C4, DEPTH)])
            .collect();
        let expected: BTreeSet<(String, u32)> =
            [START, E4, E4_E5, C4].iter().map(|f| (epd(f), DEPTH)).collect();

        let mut wanted = Wanted::of(jobs.clone(), &sources, 1);
        wanted.lookup(&cache, &engine).unwrap();
        let missing: BTreeSet<(String, u32)> =
            wanted.missing().map(|(e, d)| (e.to_string(), d)).collect();
        assert_eq!(missing, expected);
        assert_eq!(wanted.from_sources.keys().cloned().collect::<Vec<_>>(), vec![epd(D4)]);
        assert_eq!(wanted.cached.keys().cloned().collect::<Vec<_>>(), vec![epd(NF3)]);

        let left = left(jobs.clone(), &sources, &config, &cache_path).unwrap();
        assert_eq!(left.missing.clone().into_iter().collect::<BTreeSet<_>>(), expected);
        assert!(left.to_string().starts_with("4 of 5 positions left, ≈ "), "{left}");

        let planned =
            super::super::queue::plan(jobs.clone(), &sources, &stockfish, &config, &cache).unwrap();
        let queued: BTreeSet<(String, u32)> =
            planned.queue.entries.iter().map(|e| (epd(&e.fen), e.depth)).collect();
        assert_eq!(queued, expected);
        assert_eq!((planned.total, planned.cached, planned.queue.entries.len()), (5, 1, 4));

        let report = super::super::annotate(jobs, &config, &cache, &sources, &|_| {}).unwrap();
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        assert_eq!((report.analysed, report.cached, report.results.len()), (expected.len(), 1, 6));
        assert_eq!(report.origins.keys().cloned().collect::<Vec<_>>(), vec![epd(D4)]);
        // The engine searched exactly the expected set: as many searches, each now cached.
        for (epd, depth) in &expected {
            let searched =
                cache.get(&engine, epd, *depth, 1).unwrap().expect("searched and cached");
            assert_ne!(
                searched.stockfish_eval, 12345,
                "{epd} was served by a row of another search"
            );
        }
    }
}
