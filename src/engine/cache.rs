//! The persistent engine cache: one SQLite row per analysed position.
//!
//! Rows are keyed by (engine identity, position identity [`position::epd`], multipv,
//! depth). The cache is shared by every pipeline and every rebuild on the machine, and
//! **serves only the exact search asked**: the same engine identity, depth and multipv.
//! A deeper row never answers a shallower request, so the knowledge base stays a
//! function of the pins and the engine, whatever searches this machine ran before;
//! deeper evaluations enter a build only as pinned evaluation sources
//! ([`super::sources`]), okb's own exported ones included.
//!
//! Each [`EngineCache::put`] is its own transaction in WAL mode, so an interrupted run
//! loses at most the searches in flight. A row that cannot be decoded (corrupt, or from
//! an incompatible okb) reads as missing: the position is analysed again and the row
//! overwritten.
//!
//! [`position::epd`]: crate::position::epd

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};

use super::EngineError;
use super::analysis::Analysis;

/// Version of the row encoding; rows written by another version read as missing.
const FORMAT: i64 = 1;

/// Handle on the engine cache database.
pub struct EngineCache {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for EngineCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineCache").field("path", &self.path).finish()
    }
}

impl EngineCache {
    /// Opens (creating if needed) the cache at `path`, creating parent directories.
    pub fn open(path: &Path) -> Result<EngineCache, EngineError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| EngineError::Io {
                context: format!("creating the engine cache directory {}", dir.display()),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|source| EngineError::Cache {
            context: format!("opening {}", path.display()),
            source,
        })?;
        Self::init(conn, path.to_path_buf())
    }

    /// An in-memory cache, for callers that want no persistence.
    pub fn in_memory() -> Result<EngineCache, EngineError> {
        let conn = Connection::open_in_memory().map_err(|source| EngineError::Cache {
            context: "opening an in-memory cache".into(),
            source,
        })?;
        Self::init(conn, PathBuf::from(":memory:"))
    }

    fn init(conn: Connection, path: PathBuf) -> Result<EngineCache, EngineError> {
        let ctx = |what: &str| format!("{what} in {}", path.display());
        // Other okb processes may hold the write lock for one short commit; wait for it.
        conn.busy_timeout(Duration::from_secs(30)).map_err(|source| EngineError::Cache {
            context: ctx("setting the busy timeout"),
            source,
        })?;
        // WAL + NORMAL: a commit survives a killed process (not a power cut), and
        // readers in other pipelines do not block the writer.
        conn.pragma_update(None, "journal_mode", "WAL")
            .and_then(|()| conn.pragma_update(None, "synchronous", "NORMAL"))
            .map_err(|source| EngineError::Cache { context: ctx("enabling WAL"), source })?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS engine_analyses (
                 engine  TEXT    NOT NULL,
                 epd     TEXT    NOT NULL,
                 multipv INTEGER NOT NULL,
                 depth   INTEGER NOT NULL,
                 format  INTEGER NOT NULL,
                 result  BLOB    NOT NULL,
                 PRIMARY KEY (engine, epd, multipv, depth)
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS engine_names (
                 binary_blake3 TEXT PRIMARY KEY,
                 id_name       TEXT NOT NULL
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS engine_speeds (
                 engine       TEXT PRIMARY KEY,
                 seconds_at_10 REAL NOT NULL
             ) WITHOUT ROWID;",
        )
        .map_err(|source| EngineError::Cache { context: ctx("creating tables"), source })?;
        Ok(EngineCache { conn, path })
    }

    /// Where the cache lives (`:memory:` for [`EngineCache::in_memory`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decodable result of the search (`engine`, `epd`, `depth`, `multipv`).
    pub fn get(
        &self,
        engine: &str,
        epd: &str,
        depth: u32,
        multipv: u32,
    ) -> Result<Option<Analysis>, EngineError> {
        let err = |source| EngineError::Cache {
            context: format!("reading {epd} from {}", self.path.display()),
            source,
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT format, result FROM engine_analyses
                 WHERE engine = ?1 AND epd = ?2 AND multipv = ?3 AND depth = ?4",
            )
            .map_err(err)?;
        let mut rows = stmt.query(params![engine, epd, multipv, depth]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            if let Some(analysis) = decode(row.get_ref(0).ok(), row.get_ref(1).ok()) {
                return Ok(Some(analysis));
            }
        }
        Ok(None)
    }

    /// Stores `analysis` for (`engine`, `epd`, `multipv`, `depth`) and commits at once,
    /// replacing any row with the same key (such as a corrupt one).
    pub fn put(
        &self,
        engine: &str,
        epd: &str,
        depth: u32,
        multipv: u32,
        analysis: &Analysis,
    ) -> Result<(), EngineError> {
        let err = |source| EngineError::Cache {
            context: format!("writing {epd} to {}", self.path.display()),
            source,
        };
        let bytes = serde_json::to_vec(analysis).map_err(|e| EngineError::Protocol {
            reason: format!("encoding the result of {epd}: {e}"),
        })?;
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO engine_analyses (engine, epd, multipv, depth, format, result)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut s| s.execute(params![engine, epd, multipv, depth, FORMAT, bytes]))
            .map_err(err)?;
        Ok(())
    }

    /// Stores many results of `engine` with `multipv` in one transaction (results made
    /// elsewhere, `okb engine import`): each row is (epd, depth, analysis) and replaces a
    /// row with the same key. Returns the rows written.
    pub fn put_many<'a>(
        &self,
        engine: &str,
        multipv: u32,
        rows: impl IntoIterator<Item = (&'a str, u32, &'a Analysis)>,
    ) -> Result<usize, EngineError> {
        let err = |source| EngineError::Cache {
            context: format!("importing results into {}", self.path.display()),
            source,
        };
        let tx = self.conn.unchecked_transaction().map_err(err)?;
        let mut written = 0;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO engine_analyses (engine, epd, multipv, depth, format, result)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(err)?;
            for (epd, depth, analysis) in rows {
                let bytes = serde_json::to_vec(analysis).map_err(|e| EngineError::Protocol {
                    reason: format!("encoding the result of {epd}: {e}"),
                })?;
                insert.execute(params![engine, epd, multipv, depth, FORMAT, bytes]).map_err(err)?;
                written += 1;
            }
        }
        tx.commit().map_err(err)?;
        Ok(written)
    }

    /// Number of stored results.
    pub fn len(&self) -> Result<u64, EngineError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM engine_analyses", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|source| EngineError::Cache {
                context: format!("counting rows of {}", self.path.display()),
                source,
            })
    }

    /// Whether the cache holds no result.
    pub fn is_empty(&self) -> Result<bool, EngineError> {
        Ok(self.len()? == 0)
    }

    /// The remembered `id name` of the engine binary with this blake3 hash, so the engine
    /// identity can be computed without starting the engine.
    pub fn engine_name(&self, binary_blake3: &str) -> Result<Option<String>, EngineError> {
        self.conn
            .query_row(
                "SELECT id_name FROM engine_names WHERE binary_blake3 = ?1",
                [binary_blake3],
                |r| r.get(0),
            )
            .optional()
            .map_err(|source| EngineError::Cache {
                context: "reading the engine name".into(),
                source,
            })
    }

    /// The seconds of a depth-10 search by `engine` (an identity) measured on this
    /// machine, if a run has measured it ([`super::estimate`]).
    pub fn speed(&self, engine: &str) -> Result<Option<f64>, EngineError> {
        self.conn
            .query_row("SELECT seconds_at_10 FROM engine_speeds WHERE engine = ?1", [engine], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|source| EngineError::Cache {
                context: "reading the engine speed".into(),
                source,
            })
    }

    /// Remembers the seconds of a depth-10 search by `engine`.
    pub fn set_speed(&self, engine: &str, seconds_at_10: f64) -> Result<(), EngineError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO engine_speeds (engine, seconds_at_10) VALUES (?1, ?2)",
                rusqlite::params![engine, seconds_at_10],
            )
            .map(|_| ())
            .map_err(|source| EngineError::Cache {
                context: "storing the engine speed".into(),
                source,
            })
    }

    /// Remembers the `id name` of the engine binary with this blake3 hash.
    pub fn set_engine_name(&self, binary_blake3: &str, id_name: &str) -> Result<(), EngineError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO engine_names (binary_blake3, id_name) VALUES (?1, ?2)",
                [binary_blake3, id_name],
            )
            .map(|_| ())
            .map_err(|source| EngineError::Cache {
                context: "storing the engine name".into(),
                source,
            })
    }
}

/// Decodes a row; anything unexpected is `None` so the caller re-analyses.
fn decode(format: Option<ValueRef<'_>>, result: Option<ValueRef<'_>>) -> Option<Analysis> {
    match format? {
        ValueRef::Integer(FORMAT) => {}
        _ => return None,
    }
    let bytes = match result? {
        ValueRef::Blob(b) | ValueRef::Text(b) => b,
        _ => return None,
    };
    serde_json::from_slice(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysis(eval: i32, depth: u32) -> Analysis {
        Analysis {
            stockfish_eval: eval,
            stockfish_mate: None,
            stockfish_depth: depth,
            best_move_san: Some("e4".into()),
            best_move_uci: Some("e2e4".into()),
            lines: vec![],
            is_dubious: false,
            is_busted: false,
            nodes: 1,
        }
    }

    const EPD: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";

    #[test]
    fn only_the_exact_search_serves_a_request() {
        let c = EngineCache::in_memory().unwrap();
        c.put("sf", EPD, 20, 3, &analysis(20, 20)).unwrap();
        c.put("sf", EPD, 24, 3, &analysis(24, 24)).unwrap();
        assert!(
            c.get("sf", EPD, 18, 3).unwrap().is_none(),
            "a deeper row must not serve a shallower request"
        );
        assert_eq!(c.get("sf", EPD, 20, 3).unwrap().unwrap().stockfish_eval, 20);
        assert_eq!(c.get("sf", EPD, 24, 3).unwrap().unwrap().stockfish_eval, 24);
        assert!(c.get("sf", EPD, 25, 3).unwrap().is_none());
        assert!(c.get("sf", EPD, 18, 1).unwrap().is_none(), "multipv must match");
        assert!(c.get("other", EPD, 18, 3).unwrap().is_none(), "engine must match");
        assert_eq!(c.len().unwrap(), 2);
    }

    #[test]
    fn corrupt_rows_read_as_missing_and_are_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/engine.sqlite");
        let c = EngineCache::open(&path).unwrap();
        c.put("sf", EPD, 20, 3, &analysis(11, 20)).unwrap();
        c.conn.execute("UPDATE engine_analyses SET result = x'00ff'", []).unwrap();
        assert!(c.get("sf", EPD, 20, 3).unwrap().is_none());
        c.conn.execute("UPDATE engine_analyses SET result = 17", []).unwrap();
        assert!(c.get("sf", EPD, 20, 3).unwrap().is_none());
        c.put("sf", EPD, 20, 3, &analysis(12, 20)).unwrap();
        drop(c);
        let reopened = EngineCache::open(&path).unwrap();
        assert_eq!(reopened.get("sf", EPD, 20, 3).unwrap().unwrap().stockfish_eval, 12);
    }

    #[test]
    fn engine_names_are_remembered() {
        let c = EngineCache::in_memory().unwrap();
        assert_eq!(c.engine_name("abc").unwrap(), None);
        c.set_engine_name("abc", "Stockfish 15.1").unwrap();
        assert_eq!(c.engine_name("abc").unwrap().as_deref(), Some("Stockfish 15.1"));
    }
}
