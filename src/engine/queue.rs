//! Queue files (`.okbq`): the positions a pipeline's `engine` step would search and that
//! the engine cache does not hold yet, with everything a search needs, so that other
//! machines can run them (`okb engine annotate`, spark/okb_engine.py).
//!
//! Version 1 ([`super::exchange`] framing, magic `OKBQUEUE`) holds a [`Queue`]:
//!
//! - `identity`: the engine the results must come from ([`Identity`]: the binary's
//!   BLAKE3, its `id name`, `Threads`, `Hash`, `MultiPV`, `new_game`, `tt_locality`);
//! - `limits`: how long a search may take and how often it is tried ([`Limits`]; they
//!   never change a result);
//! - `entries`: one [`Entry`] per position, each position once, most played first: the
//!   FEN sent to the engine (move counters `0 1`), the depth, the priority (game count)
//!   and the moves from the start.
//!
//! A queue is split without reading it elsewhere: part `K/N` ([`Part`]) is every N-th
//! entry from the K-th, so each part gets a fair share of the popular (deeper) positions.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::exchange::{self, ExchangeError, Kind};
use super::{EngineCache, EngineConfig, EngineError, EvalSource, Identity, Job, Wanted};

/// The queue file kind.
pub const KIND: Kind = Kind {
    magic: b"OKBQUEUE",
    version: 1,
    what: "an okb engine queue file",
    made_by: "okb engine queue",
};

/// The positions left to search, and the engine to search them with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Queue {
    /// The engine and settings results must be made with.
    pub identity: Identity,
    /// Time limits and attempts per search.
    pub limits: Limits,
    /// The positions, most played first.
    pub entries: Vec<Entry>,
}

/// How searches are run; none of it changes a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Seconds one search may take before the engine is restarted.
    pub position_timeout: f64,
    /// Seconds the `uci`/`isready` handshake may take.
    pub handshake_timeout: f64,
    /// Attempts per position before it is reported as failed.
    pub max_attempts: u32,
    /// Positions in a row failing every attempt before the engine is taken as broken.
    pub max_consecutive_failures: usize,
}

/// One position to search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The FEN sent to the engine (counters `0 1`).
    pub fen: String,
    /// The search depth.
    pub depth: u32,
    /// The position's game count (searches go most played first).
    pub priority: u64,
    /// The moves from the start, separated by spaces.
    pub subtree: String,
}

/// What [`plan`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// The queue: the positions the cache cannot serve.
    pub queue: Queue,
    /// Distinct positions asked for that no evaluation source serves.
    pub total: usize,
    /// Of those, served by the cache.
    pub cached: usize,
    /// Jobs whose FEN does not parse (never queued).
    pub invalid: usize,
}

/// The queue of `jobs` for the engine at `path` with `config`: every position neither
/// `sources` nor `cache` serves ([`Wanted`]: the searches a make would run). Fails when
/// `config` makes results depend on more than the position
/// ([`Identity::check_portable`]).
pub fn plan(
    jobs: Vec<Job>,
    sources: &[EvalSource],
    path: &Path,
    config: &EngineConfig,
    cache: &EngineCache,
) -> Result<Planned, EngineError> {
    config.validate()?;
    let (identity, _) = Identity::of(path, config, cache)?;
    identity.check_portable()?;
    let mut wanted = Wanted::of(jobs, sources, config.multipv);
    wanted.lookup(cache, &identity.key())?;
    let tasks: Vec<super::pool::Task> =
        wanted.take_missing().into_iter().map(|(_, task)| task).collect();
    let cached = wanted.cached.len();
    let total = cached + tasks.len();
    let entries = super::pool::plan(&tasks, false)
        .into_iter()
        .flatten()
        .map(|i| {
            let t = &tasks[i];
            Entry {
                fen: t.fen.clone(),
                depth: t.depth,
                priority: t.priority,
                subtree: t.subtree.clone(),
            }
        })
        .collect();
    let limits = Limits {
        position_timeout: config.position_timeout,
        handshake_timeout: config.handshake_timeout,
        max_attempts: config.max_attempts,
        max_consecutive_failures: config.max_consecutive_failures,
    };
    Ok(Planned {
        queue: Queue { identity, limits, entries },
        total,
        cached,
        invalid: wanted.invalid.len(),
    })
}

impl Queue {
    /// The entries of `part`.
    pub fn part(&self, part: Part) -> Vec<&Entry> {
        self.entries.iter().skip(part.index - 1).step_by(part.count).collect()
    }

    /// The settings to search this queue with the engine at `path`, `engines` at a time.
    pub fn config(&self, path: PathBuf, engines: usize) -> EngineConfig {
        let (i, l) = (&self.identity, &self.limits);
        EngineConfig {
            path: Some(path),
            engines,
            threads: i.threads,
            hash: i.hash,
            multipv: i.multipv,
            new_game: i.new_game,
            tt_locality: i.tt_locality,
            position_timeout: l.position_timeout,
            handshake_timeout: l.handshake_timeout,
            max_attempts: l.max_attempts,
            max_consecutive_failures: l.max_consecutive_failures,
            ..EngineConfig::default()
        }
    }
}

impl Entry {
    /// The annotation job of this entry.
    pub fn job(&self) -> Job {
        Job {
            fen: self.fen.clone(),
            depth: self.depth,
            priority: self.priority,
            subtree: self.subtree.clone(),
        }
    }
}

/// Reads the queue file at `path`.
pub fn read(path: &Path) -> Result<Queue, ExchangeError> {
    exchange::read(KIND, path)
}

/// Writes `queue` to `path`.
pub fn write(path: &Path, queue: &Queue) -> Result<(), ExchangeError> {
    exchange::write(KIND, path, queue)
}

/// One of N equal parts of a queue: `K/N`, K from 1 to N.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// K, 1-based.
    pub index: usize,
    /// N.
    pub count: usize,
}

impl Part {
    /// The whole queue: part 1/1.
    pub const ALL: Part = Part { index: 1, count: 1 };
}

impl std::str::FromStr for Part {
    type Err = String;

    fn from_str(text: &str) -> Result<Part, String> {
        let bad = || {
            format!(
                "`{text}` is not a part: write K/N with 1 ≤ K ≤ N, e.g. 3/8 for the third of eight parts"
            )
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) =
            (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Part { index, count })
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(n: usize) -> Queue {
        let identity = Identity {
            binary_blake3: "ab".into(),
            id_name: "Stockfish".into(),
            threads: 1,
            hash: 16,
            multipv: 3,
            new_game: true,
            tt_locality: false,
        };
        let limits = Limits {
            position_timeout: 300.0,
            handshake_timeout: 10.0,
            max_attempts: 3,
            max_consecutive_failures: 20,
        };
        let entries = (0..n)
            .map(|i| Entry {
                fen: format!("fen {i}"),
                depth: 8,
                priority: i as u64,
                subtree: String::new(),
            })
            .collect();
        Queue { identity, limits, entries }
    }

    #[test]
    fn parts_cover_the_queue_once_and_evenly() {
        let q = queue(10);
        let mut seen: Vec<String> = Vec::new();
        for k in 1..=3 {
            let part = q.part(Part { index: k, count: 3 });
            assert!((3..=4).contains(&part.len()), "{part:?}");
            seen.extend(part.iter().map(|e| e.fen.clone()));
        }
        seen.sort();
        let mut all: Vec<String> = q.entries.iter().map(|e| e.fen.clone()).collect();
        all.sort();
        assert_eq!(seen, all);
        assert!(
            q.part(Part { index: 3, count: 12 }).len() == 1
                && q.part(Part { index: 12, count: 12 }).is_empty()
        );
    }

    #[test]
    fn parts_parse_as_k_of_n() {
        assert_eq!("2/5".parse::<Part>(), Ok(Part { index: 2, count: 5 }));
        for bad in ["0/5", "6/5", "5", "a/b", "1/0"] {
            assert!(bad.parse::<Part>().is_err(), "{bad}");
        }
    }

    #[test]
    fn queues_round_trip() {
        let q = queue(5);
        let bytes = exchange::encode(KIND, &q);
        assert_eq!(exchange::decode::<Queue>(KIND, "q", &bytes).unwrap(), q);
        let err = exchange::decode::<Queue>(super::super::results::KIND, "q.okbq", &bytes)
            .unwrap_err()
            .to_string();
        assert!(err.contains("q.okbq") && err.contains("okb engine annotate"), "{err}");
    }
}
