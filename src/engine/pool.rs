//! A pool of engine processes working through a priority-ordered queue.
//!
//! Each worker thread owns one engine process (started lazily, so a run with nothing to
//! search starts none) and takes the next unit of work from a shared scheduler. A unit
//! is one position, or with [`EngineConfig::tt_locality`] one subtree in parent-first
//! order. Workers report every finished position over a channel to the calling thread,
//! which alone touches the cache; that keeps SQLite single-threaded and lets each result
//! be committed the moment it exists.
//!
//! Faults are handled per attempt: any error (crash, timeout, garbage) kills that
//! worker's engine, the next attempt starts a fresh one, and after
//! [`EngineConfig::max_attempts`] the position is reported as failed. Only an engine
//! that cannot be spawned at all is fatal, because every worker would fail the same way.
//!
//! ## TT locality
//!
//! The `tt_locality` schedule makes a subtree (the first [`LOCALITY_PLIES`] plies of
//! [`Job::subtree`](super::Job::subtree)) one unit: one engine searches it depth-first,
//! parents before children, and is cleared (`ucinewgame`) only between units, so a
//! parent's hash table is still warm for its children. Measured with `bench/engine
//! --locality` (200 opening-tree positions, depth 16, MultiPV 3, 2 engines, Stockfish
//! 15.1, the quieter of two interleaved rounds):
//!
//! | schedule                                    | nodes        | positions/s |
//! |---------------------------------------------|--------------|-------------|
//! | priority order, `ucinewgame` every position | 116,097,823  | 2.76        |
//! | TT locality, `ucinewgame` per subtree       |  92,071,775  | 3.46 (+25%) |
//! | priority order, never cleared               | ~100,200,000 | 3.16        |
//! | TT locality, never cleared                  |  84,915,995  | 3.72        |
//!
//! It helps, so it is kept, but off by default: with it a position's result depends on
//! which other positions of its subtree were searched before it in the same run, so a
//! run resumed after a limit or a kill, an incremental rebuild, or another pipeline
//! sharing the cache can get different (equally deep) results than one fresh run would.
//! The default makes every result a function of (engine identity, position, depth,
//! multipv) alone, which is what lets the shared cache be canonical. Never clearing is
//! not deterministic at all (node counts differ from run to run).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use shakmaty::Chess;

use super::EngineError;
use super::analysis::Analysis;
use super::policy::EngineConfig;
use super::uci::UciEngine;

/// Plies of the subtree hint that define one locality unit.
pub const LOCALITY_PLIES: usize = 2;

/// One search to run.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    /// The position.
    pub pos: Chess,
    /// The FEN sent to the engine.
    pub fen: String,
    /// Search depth.
    pub depth: u32,
    /// Scheduling priority (higher first).
    pub priority: u64,
    /// Subtree hint: moves from the root separated by spaces.
    pub subtree: String,
}

/// What a worker tells the calling thread.
pub(crate) enum Event {
    /// An engine process is about to be spawned.
    Spawning,
    /// A position is done, successfully or not after all attempts.
    Finished { task: usize, outcome: Result<Analysis, String> },
    /// The engine cannot be started at all; the run stops.
    Fatal(EngineError),
}

/// Why scheduling stopped before the queue was empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    MaxPositions,
    TimeBudget,
    Failing(usize),
    Fatal,
}

/// Orders tasks into units of work, most important first.
///
/// Without locality every task is its own unit, by priority descending; ties go to the
/// shallower position (fewer words in the subtree hint: with equal game counts, e.g. an
/// ECO skeleton without games, the main lines come before their sidelines), then by hint
/// for a deterministic order. With locality, tasks sharing the first
/// [`LOCALITY_PLIES`] plies of their hint form one unit in depth-first order, so a parent
/// is searched right before its children on the same engine; units go by their highest
/// priority.
pub(crate) fn plan(tasks: &[Task], locality: bool) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    if !locality {
        order.sort_by(|&a, &b| {
            let (ta, tb) = (&tasks[a], &tasks[b]);
            let depth = |t: &Task| t.subtree.split_whitespace().count();
            tb.priority
                .cmp(&ta.priority)
                .then_with(|| depth(ta).cmp(&depth(tb)))
                .then_with(|| ta.subtree.cmp(&tb.subtree))
                .then(a.cmp(&b))
        });
        return order.into_iter().map(|i| vec![i]).collect();
    }
    let plies = |i: usize| tasks[i].subtree.split_whitespace().collect::<Vec<_>>();
    // Depth-first: a path sorts right before the paths it prefixes.
    order.sort_by(|&a, &b| plies(a).cmp(&plies(b)).then(a.cmp(&b)));
    let mut units: Vec<(Vec<&str>, u64, Vec<usize>)> = Vec::new();
    for i in order {
        let p = plies(i);
        let key: Vec<&str> = p.iter().take(LOCALITY_PLIES).copied().collect();
        match units.last_mut() {
            Some((k, prio, members)) if *k == key => {
                *prio = (*prio).max(tasks[i].priority);
                members.push(i);
            }
            _ => units.push((key, tasks[i].priority, vec![i])),
        }
    }
    units.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    units.into_iter().map(|(_, _, m)| m).collect()
}

/// Shared scheduling state: the queue and the limits.
pub(crate) struct Scheduler {
    units: VecDeque<Vec<usize>>,
    started: usize,
    max_positions: Option<usize>,
    deadline: Option<Instant>,
    max_consecutive_failures: usize,
    consecutive_failures: usize,
    stop: Option<Stop>,
}

impl Scheduler {
    pub(crate) fn new(
        units: Vec<Vec<usize>>,
        max_positions: Option<usize>,
        deadline: Option<Instant>,
        max_consecutive_failures: usize,
    ) -> Self {
        Scheduler {
            units: units.into(),
            started: 0,
            max_positions,
            deadline,
            max_consecutive_failures,
            consecutive_failures: 0,
            stop: None,
        }
    }

    /// Records the outcome of a position. Done by the worker under the same lock as its
    /// next `next`, so a broken engine stops the run after exactly the configured number
    /// of failures instead of racing the calling thread.
    fn record(&mut self, ok: bool) {
        if ok {
            self.consecutive_failures = 0;
        } else {
            self.consecutive_failures += 1;
            if self.consecutive_failures >= self.max_consecutive_failures {
                self.stop(Stop::Failing(self.consecutive_failures));
            }
        }
    }

    /// Stops handing out work (the first reason given is kept).
    pub(crate) fn stop(&mut self, why: Stop) {
        self.stop.get_or_insert(why);
    }

    /// Positions handed out so far.
    pub(crate) fn started(&self) -> usize {
        self.started
    }

    /// Why scheduling stopped early, if it did.
    pub(crate) fn stop_reason(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// Next task for a worker whose current unit is `local`, and whether it starts a
    /// new unit.
    fn next(&mut self, local: &mut VecDeque<usize>) -> Option<(usize, bool)> {
        if self.stop.is_some() {
            return None;
        }
        if self.max_positions.is_some_and(|max| self.started >= max) {
            self.stop(Stop::MaxPositions);
            return None;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop(Stop::TimeBudget);
            return None;
        }
        let starts_unit = local.is_empty();
        if starts_unit {
            local.extend(self.units.pop_front()?);
        }
        let task = local.pop_front()?;
        self.started += 1;
        Some((task, starts_unit))
    }
}

/// Runs the pool until the queue is empty or scheduling stops, calling `on_event` on
/// the calling thread for every event.
pub(crate) fn run(
    tasks: &[Task],
    scheduler: &Mutex<Scheduler>,
    engine_path: &Path,
    config: &EngineConfig,
    on_event: &mut dyn FnMut(Event, &Mutex<Scheduler>),
) {
    let workers = config.engines.min(tasks.len()).max(1);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            s.spawn(move || worker(tasks, scheduler, engine_path, config, &tx));
        }
        drop(tx);
        for event in rx {
            on_event(event, scheduler);
        }
    });
}

fn lock(scheduler: &Mutex<Scheduler>) -> std::sync::MutexGuard<'_, Scheduler> {
    // A poisoned lock only means another worker panicked; the queue itself is intact.
    scheduler.lock().unwrap_or_else(|p| p.into_inner())
}

fn worker(
    tasks: &[Task],
    scheduler: &Mutex<Scheduler>,
    path: &Path,
    config: &EngineConfig,
    tx: &Sender<Event>,
) {
    let mut engine: Option<UciEngine> = None;
    // Whether the current engine has searched since it started or was last cleared.
    let mut dirty = false;
    let mut local = VecDeque::new();
    loop {
        let next = lock(scheduler).next(&mut local);
        let Some((id, starts_unit)) = next else { break };
        if starts_unit && dirty && config.new_game {
            // Clearing happens per unit: with TT locality a unit's searches share the
            // table, without it every position is a unit and starts clean.
            if let Some(eng) = engine.as_mut() {
                if eng.new_game().is_ok() {
                    dirty = false;
                } else if let Some(broken) = engine.take() {
                    broken.kill();
                }
            }
        }
        let task = &tasks[id];
        let mut reasons = Vec::new();
        let outcome = loop {
            match attempt(&mut engine, &mut dirty, task, path, config, tx) {
                Ok(analysis) => break Ok(analysis),
                Err(fatal @ EngineError::Spawn { .. }) => {
                    let _ = tx.send(Event::Fatal(fatal));
                    return;
                }
                Err(e) => {
                    if let Some(broken) = engine.take() {
                        broken.kill();
                    }
                    reasons.push(e.to_string());
                    if reasons.len() >= config.max_attempts as usize {
                        break Err(format!(
                            "failed {} attempts: {}",
                            reasons.len(),
                            reasons.join("; ")
                        ));
                    }
                }
            }
        };
        lock(scheduler).record(outcome.is_ok());
        if tx.send(Event::Finished { task: id, outcome }).is_err() {
            break;
        }
    }
}

fn attempt(
    engine: &mut Option<UciEngine>,
    dirty: &mut bool,
    task: &Task,
    path: &Path,
    config: &EngineConfig,
    tx: &Sender<Event>,
) -> Result<Analysis, EngineError> {
    let eng = match engine {
        Some(e) => e,
        None => {
            let _ = tx.send(Event::Spawning);
            *dirty = false;
            engine.insert(UciEngine::start(path, &config.options(), config.handshake_timeout())?)
        }
    };
    *dirty = true;
    let out = eng.search(&task.fen, task.depth, config.position_timeout())?;
    Analysis::from_search(&task.pos, &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(priority: u64, subtree: &str) -> Task {
        Task {
            pos: Chess::default(),
            fen: String::new(),
            depth: 1,
            priority,
            subtree: subtree.into(),
        }
    }

    #[test]
    fn priority_order_without_locality() {
        let tasks = [task(5, "e4"), task(9, ""), task(5, "d4"), task(7, "e4 e5")];
        assert_eq!(plan(&tasks, false), vec![vec![1], vec![3], vec![2], vec![0]]);
    }

    #[test]
    fn equal_priorities_go_shallow_first() {
        let tasks = [task(0, "a3 a6 b3"), task(0, "e4 e5"), task(0, "e4"), task(0, "a3 a6")];
        assert_eq!(plan(&tasks, false), vec![vec![2], vec![3], vec![1], vec![0]]);
    }

    #[test]
    fn locality_keeps_subtrees_together_parent_first() {
        let tasks = [
            task(3, "e4 e5 Nf3"),
            task(2, "d4 d5"),
            task(9, ""),
            task(4, "e4 e5"),
            task(1, "e4 e5 Nf3 Nc6"),
            task(2, "e4 e5 Bc4"),
            task(8, "e4"),
        ];
        assert_eq!(plan(&tasks, true), vec![vec![2], vec![6], vec![3, 5, 0, 4], vec![1]]);
    }

    #[test]
    fn scheduler_enforces_max_positions() {
        let mut s = Scheduler::new(vec![vec![0], vec![1], vec![2]], Some(2), None, 5);
        let mut local = VecDeque::new();
        assert_eq!(s.next(&mut local), Some((0, true)));
        assert_eq!(s.next(&mut local), Some((1, true)));
        assert_eq!(s.next(&mut local), None);
        assert_eq!(s.stop_reason(), Some(&Stop::MaxPositions));
        assert_eq!(s.started(), 2);
    }

    #[test]
    fn scheduler_marks_unit_starts() {
        let mut s = Scheduler::new(vec![vec![4, 2, 3], vec![1]], None, None, 5);
        let mut local = VecDeque::new();
        let got: Vec<_> = std::iter::from_fn(|| s.next(&mut local)).collect();
        assert_eq!(got, vec![(4, true), (2, false), (3, false), (1, true)]);
    }

    #[test]
    fn scheduler_enforces_time_budget() {
        let mut s = Scheduler::new(vec![vec![0]], None, Some(Instant::now()), 5);
        assert_eq!(s.next(&mut VecDeque::new()), None);
        assert_eq!(s.stop_reason(), Some(&Stop::TimeBudget));
    }

    #[test]
    fn scheduler_stops_after_consecutive_failures_only() {
        let mut s = Scheduler::new(vec![vec![0], vec![1], vec![2], vec![3]], None, None, 2);
        let mut local = VecDeque::new();
        assert_eq!(s.next(&mut local), Some((0, true)));
        s.record(false);
        s.record(true);
        assert_eq!(s.next(&mut local), Some((1, true)));
        s.record(false);
        assert_eq!(s.next(&mut local), Some((2, true)));
        s.record(false);
        assert_eq!(s.next(&mut local), None);
        assert_eq!(s.stop_reason(), Some(&Stop::Failing(2)));
    }
}
