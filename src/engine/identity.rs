//! The engine identity: what makes one engine result interchangeable with another.
//!
//! A result depends on the engine binary (its BLAKE3), its `id name`, and the UCI
//! options okb sets (`Threads`, `Hash`, `MultiPV`); [`Identity::key`] hashes them into the
//! key of the engine cache's rows. Two more settings decide whether a result depends on
//! anything else: `new_game` (clear the engine between positions) and `tt_locality`
//! (search a subtree on one engine). They are kept here so that results made elsewhere
//! (`okb engine annotate`) can be checked field by field before they enter the cache.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{EngineCache, EngineConfig, EngineError, uci};

/// Everything a result is a function of, besides the position, depth and MultiPV count
/// (which the cache keys by themselves).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// BLAKE3 of the engine binary, hex.
    pub binary_blake3: String,
    /// The engine's `id name` (`Stockfish 15.1`).
    pub id_name: String,
    /// `Threads` per engine.
    pub threads: u32,
    /// `Hash` per engine, MiB.
    pub hash: u32,
    /// `MultiPV`: lines kept per position.
    pub multipv: u32,
    /// `ucinewgame` before every unit of work ([`EngineConfig::new_game`]).
    pub new_game: bool,
    /// Subtrees searched on one engine ([`EngineConfig::tt_locality`]).
    pub tt_locality: bool,
}

/// One field in which two identities differ, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The field (`binary_blake3`, `multipv`, …), as `[engine]` or the file names it.
    pub field: &'static str,
    /// Its value on the side that was checked (a results file).
    pub found: String,
    /// Its value on the side it must equal (the pipeline's `[engine]`).
    pub expected: String,
}

impl Identity {
    /// The identity of the engine at `path` run with `config`. The `id name` comes from
    /// `cache` when a run has remembered it for this binary; otherwise the engine is
    /// started once to learn it. Returns the identity and the engines started (0 or 1).
    pub fn of(
        path: &Path,
        config: &EngineConfig,
        cache: &EngineCache,
    ) -> Result<(Identity, usize), EngineError> {
        let binary = hash_binary(path)?;
        let (id_name, spawned) = match cache.engine_name(&binary)? {
            Some(name) => (name, 0),
            None => {
                let engine =
                    uci::UciEngine::start(path, &config.options(), config.handshake_timeout())?;
                let name = engine.name().to_string();
                drop(engine);
                cache.set_engine_name(&binary, &name)?;
                (name, 1)
            }
        };
        let identity = Identity {
            binary_blake3: binary,
            id_name,
            threads: config.threads,
            hash: config.hash,
            multipv: config.multipv,
            new_game: config.new_game,
            tt_locality: config.tt_locality,
        };
        Ok((identity, spawned))
    }

    /// The engine cache's key for results of this identity: a hex BLAKE3 of the name, the
    /// binary's hash and the UCI options (unchanged since okb's first engine cache, so
    /// existing caches stay valid).
    pub fn key(&self) -> String {
        let text = format!(
            "okb-engine-identity-v1\nname={}\nbinary={}\nThreads={}\nHash={}\nMultiPV={}\n",
            self.id_name, self.binary_blake3, self.threads, self.hash, self.multipv
        );
        blake3::hash(text.as_bytes()).to_hex().to_string()
    }

    /// The first field in which `self` (found) differs from `expected`, if any.
    pub fn difference(&self, expected: &Identity) -> Option<Difference> {
        let fields: [(&'static str, String, String); 7] = [
            ("binary_blake3", self.binary_blake3.clone(), expected.binary_blake3.clone()),
            ("id_name", self.id_name.clone(), expected.id_name.clone()),
            ("threads", self.threads.to_string(), expected.threads.to_string()),
            ("hash", self.hash.to_string(), expected.hash.to_string()),
            ("multipv", self.multipv.to_string(), expected.multipv.to_string()),
            ("new_game", self.new_game.to_string(), expected.new_game.to_string()),
            ("tt_locality", self.tt_locality.to_string(), expected.tt_locality.to_string()),
        ];
        fields
            .into_iter()
            .find(|(_, found, expected)| found != expected)
            .map(|(field, found, expected)| Difference { field, found, expected })
    }

    /// Whether a result depends on this identity, the position, the depth and MultiPV
    /// alone, so that it can be computed anywhere, in any split: `new_game = true` and
    /// `tt_locality = false`. The error names the setting that prevents it.
    pub fn check_portable(&self) -> Result<(), EngineError> {
        let why = if !self.new_game {
            "new_game = false lets a result depend on the positions the engine searched before it"
        } else if self.tt_locality {
            "tt_locality = true lets a result depend on the other positions of its subtree in the same run"
        } else {
            return Ok(());
        };
        Err(EngineError::Config {
            reason: format!(
                "[engine] {why}, so results made on other machines would not equal a local run's; use the defaults (new_game = true, tt_locality = false) to annotate elsewhere"
            ),
        })
    }
}

/// The hex BLAKE3 of the file at `path` (an engine binary).
pub fn hash_binary(path: &Path) -> Result<String, EngineError> {
    let io = |source| EngineError::Io {
        context: format!("hashing the engine binary {}", path.display()),
        source,
    };
    let mut hasher = blake3::Hasher::new();
    let mut file = std::fs::File::open(path).map_err(io)?;
    std::io::copy(&mut file, &mut hasher).map_err(io)?;
    Ok(hasher.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity {
            binary_blake3: "ab".into(),
            id_name: "Stockfish 15.1".into(),
            threads: 1,
            hash: 16,
            multipv: 3,
            new_game: true,
            tt_locality: false,
        }
    }

    #[test]
    fn the_key_is_the_first_engine_cache_key() {
        let text = "okb-engine-identity-v1\nname=Stockfish 15.1\nbinary=ab\nThreads=1\nHash=16\nMultiPV=3\n";
        assert_eq!(identity().key(), blake3::hash(text.as_bytes()).to_hex().to_string());
    }

    #[test]
    fn differences_name_the_field() {
        assert_eq!(identity().difference(&identity()), None);
        let other = Identity { multipv: 1, ..identity() };
        let d = other.difference(&identity()).unwrap();
        assert_eq!((d.field, d.found.as_str(), d.expected.as_str()), ("multipv", "1", "3"));
        assert!(
            Identity { tt_locality: true, ..identity() }
                .check_portable()
                .unwrap_err()
                .to_string()
                .contains("tt_locality")
        );
        identity().check_portable().unwrap();
    }
}
