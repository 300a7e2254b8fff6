//! The `[engine]` section of pipeline.toml: which engine, how many, and how deep.
//!
//! Every field has a default, so an empty `[engine]` section (or none) is valid.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::EngineError;
use super::uci::EngineOptions;

/// Engine annotation settings (`[engine]` in pipeline.toml).
///
/// ```toml
/// [engine]
/// path = "/usr/games/stockfish"   # default: `stockfish` on PATH, then /usr/games/stockfish
/// engines = 2                     # default: one per core
/// threads = 1
/// hash = 16                       # MiB per engine
/// multipv = 3
/// depth_branching = 22
/// depth_leaf = 18
/// depth_popular = 26
/// popular_games = 1000
/// max_positions = 5000            # default: no limit
/// time_budget = 3600              # seconds, default: no limit
/// position_timeout = 300          # seconds per position
/// handshake_timeout = 10          # seconds for uci/isready
/// max_attempts = 3                # per position, then it is reported as failed
/// max_consecutive_failures = 20   # then the engine is considered broken
/// sources = ["evals"]             # lichess-evals sources to take evaluations from first
/// new_game = true                 # ucinewgame between units: reproducible results
/// tt_locality = false             # subtree per engine, ~25% faster, weaker determinism
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// Engine binary. `None` looks for `stockfish` on PATH, then `/usr/games/stockfish`.
    pub path: Option<PathBuf>,
    /// Number of engine processes run in parallel.
    pub engines: usize,
    /// `Threads` per engine. More than one makes results nondeterministic.
    pub threads: u32,
    /// `Hash` per engine, in MiB.
    pub hash: u32,
    /// Number of lines (`MultiPV`) kept per position.
    pub multipv: u32,
    /// Search depth of positions with more than one move in the tree.
    pub depth_branching: u32,
    /// Search depth of leaves and single-move nodes.
    pub depth_leaf: u32,
    /// Search depth of positions reached by at least `popular_games` games.
    pub depth_popular: u32,
    /// Game count from which a position gets `depth_popular`.
    pub popular_games: u64,
    /// Stop scheduling engine searches after this many (cache hits do not count).
    pub max_positions: Option<usize>,
    /// Stop scheduling engine searches after this many seconds.
    pub time_budget: Option<f64>,
    /// Seconds one search may take before the engine is declared hung and restarted.
    pub position_timeout: f64,
    /// Seconds the `uci`/`isready` handshake may take.
    pub handshake_timeout: f64,
    /// Attempts per position (the first try included) before it is recorded as failed.
    pub max_attempts: u32,
    /// Clear the engine (`ucinewgame`: hash and history tables) before every unit of
    /// work, so a result does not depend on what the engine searched before and exports
    /// are byte-identical across runs. Turning it off lets the table carry over between
    /// unrelated positions: fewer nodes, but results then depend on scheduling.
    pub new_game: bool,
    /// Make each subtree (the first plies of [`Job::subtree`](super::Job::subtree)) one
    /// unit of work: one engine searches it parents first without clearing in between,
    /// so a parent's hash table serves its children. With `new_game` the result of a
    /// position then depends on the other uncached positions of its subtree in the same
    /// run (still deterministic for the same jobs and cache). See [`pool`](super::pool)
    /// for the measurement.
    pub tt_locality: bool,
    /// Stop the phase after this many positions in a row failed on every attempt, since
    /// then the engine itself is broken and retrying the rest only burns time.
    pub max_consecutive_failures: usize,
    /// Annotate only tree nodes reached by at least this many games (0: every node,
    /// the ECO skeleton's included).
    pub min_games: u64,
    /// Annotate only tree nodes at most this many plies from the start (none: all).
    pub max_ply: Option<u32>,
    /// Evaluation sources (names of `kind = "lichess-evals"` sources), in order of
    /// preference: a node takes the deepest of their evaluations that is at least as deep
    /// as its depth and has `multipv` lines, and the engine searches only the rest.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            path: None,
            engines: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads: 1,
            hash: 16,
            multipv: 3,
            depth_branching: 22,
            depth_leaf: 18,
            depth_popular: 26,
            popular_games: 1000,
            max_positions: None,
            time_budget: None,
            position_timeout: 300.0,
            handshake_timeout: 10.0,
            max_attempts: 3,
            new_game: true,
            tt_locality: false,
            max_consecutive_failures: 20,
            min_games: 0,
            max_ply: None,
            sources: Vec::new(),
        }
    }
}

impl EngineConfig {
    /// The search depth for a tree node: popular nodes (≥ `popular_games` games) get
    /// `depth_popular`, other branching nodes `depth_branching`, the rest `depth_leaf`.
    pub fn depth_for(&self, is_branching: bool, game_count: u64) -> u32 {
        if game_count >= self.popular_games {
            self.depth_popular
        } else if is_branching {
            self.depth_branching
        } else {
            self.depth_leaf
        }
    }

    /// Whether the engine step takes a node reached by `game_count` games, `ply` plies
    /// from the start (`min_games`, `max_ply`).
    pub fn selects(&self, game_count: u64, ply: usize) -> bool {
        game_count >= self.min_games && self.max_ply.is_none_or(|max| ply <= max as usize)
    }

    /// The UCI options set on every engine.
    pub fn options(&self) -> EngineOptions {
        EngineOptions { threads: self.threads, hash_mb: self.hash, multipv: self.multipv }
    }

    /// Per-position timeout as a [`Duration`].
    pub fn position_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.position_timeout)
    }

    /// Handshake timeout as a [`Duration`].
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.handshake_timeout)
    }

    /// Rejects values that cannot work, naming the field.
    pub fn validate(&self) -> Result<(), EngineError> {
        let bad = |field: &str, why: &str| {
            Err(EngineError::Config { reason: format!("[engine] {field}: {why}") })
        };
        let positive_secs = |v: f64| v.is_finite() && v > 0.0 && v < 1e9;
        if self.engines == 0 {
            return bad("engines", "must be at least 1");
        }
        if self.threads == 0 {
            return bad("threads", "must be at least 1");
        }
        if self.hash == 0 {
            return bad("hash", "must be at least 1 (MiB)");
        }
        if self.multipv == 0 {
            return bad("multipv", "must be at least 1");
        }
        for (field, depth) in [
            ("depth_branching", self.depth_branching),
            ("depth_leaf", self.depth_leaf),
            ("depth_popular", self.depth_popular),
        ] {
            if depth == 0 || depth > 245 {
                return bad(field, "must be between 1 and 245");
            }
        }
        if !positive_secs(self.position_timeout) {
            return bad("position_timeout", "must be a positive number of seconds");
        }
        if !positive_secs(self.handshake_timeout) {
            return bad("handshake_timeout", "must be a positive number of seconds");
        }
        if self.time_budget.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
            return bad("time_budget", "must be a non-negative number of seconds");
        }
        if self.max_attempts == 0 {
            return bad("max_attempts", "must be at least 1");
        }
        if self.max_consecutive_failures == 0 {
            return bad("max_consecutive_failures", "must be at least 1");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_policy_defaults() {
        let c = EngineConfig::default();
        assert_eq!(c.depth_for(true, 10), 22);
        assert_eq!(c.depth_for(false, 10), 18);
        assert_eq!(c.depth_for(false, 999), 18);
        assert_eq!(c.depth_for(false, 1000), 26);
        assert_eq!(c.depth_for(true, 5000), 26);
        assert_eq!(c.multipv, 3);
        assert_eq!(c.threads, 1);
        c.validate().unwrap();
    }

    #[test]
    fn toml_section_fills_missing_fields_with_defaults() {
        let c: EngineConfig =
            toml::from_str("path = \"/opt/sf\"\ndepth_leaf = 12\ntime_budget = 60").unwrap();
        assert_eq!(c.path, Some(PathBuf::from("/opt/sf")));
        assert_eq!(c.depth_leaf, 12);
        assert_eq!(c.time_budget, Some(60.0));
        assert_eq!(c.depth_branching, 22);
        assert_eq!(c.max_positions, None);
        let empty: EngineConfig = toml::from_str("").unwrap();
        assert_eq!(empty, EngineConfig::default());
    }

    #[test]
    fn unknown_fields_and_bad_values_are_rejected() {
        assert!(toml::from_str::<EngineConfig>("dept_leaf = 12").is_err());
        let c = EngineConfig { multipv: 0, ..EngineConfig::default() };
        let err = c.validate().unwrap_err().to_string();
        assert!(err.contains("multipv"), "{err}");
        let c = EngineConfig { position_timeout: -1.0, ..EngineConfig::default() };
        assert!(c.validate().is_err());
    }
}
