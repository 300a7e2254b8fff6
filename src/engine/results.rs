//! Results files (`.okbr`): engine results made from a queue ([`super::queue`]) on any
//! machine, to be imported into a project's engine cache (`okb engine import`).
//!
//! Version 1 ([`super::exchange`] framing, magic `OKBRSLTS`) holds a [`Results`]: the
//! [`Identity`] of the engine that made them, and per position its [`position::epd`],
//! the depth asked for (the cache row's depth) and the [`Analysis`]; positions whose
//! search failed on every attempt are listed with the reason and imported as nothing
//! (the next `okb make` searches them).
//!
//! Import checks before it writes: the identity must equal the pipeline's field by field
//! (binary, name, options, `new_game`, `tt_locality`), and every position must be a
//! position identity okb would have written; then a file's results go into the cache in
//! one transaction.
//!
//! [`position::epd`]: crate::position::epd

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::exchange::{self, ExchangeError, Kind};
use super::queue::Entry;
use super::{Analysis, AnnotationReport, EngineCache, EngineError, Identity};
use crate::position;

/// The results file kind.
pub const KIND: Kind = Kind {
    magic: b"OKBRSLTS",
    version: 1,
    what: "an okb engine results file",
    made_by: "okb engine annotate",
};

/// Engine results of some positions, and the engine they come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// The engine and settings that made them.
    pub identity: Identity,
    /// One per position searched.
    pub results: Vec<Done>,
    /// Positions whose search failed on every attempt.
    pub failures: Vec<Failed>,
}

/// The result of one position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Done {
    /// The position identity ([`position::epd`]).
    pub epd: String,
    /// The depth asked for.
    pub depth: u32,
    /// What the engine found.
    pub analysis: Analysis,
}

/// A position whose search failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failed {
    /// The position identity, or the FEN when it does not parse.
    pub epd: String,
    /// Why, with each attempt's error.
    pub reason: String,
}

impl Results {
    /// The results of `entries` (a queue's part) from an annotation run's `report`.
    pub fn collect(identity: Identity, entries: &[&Entry], report: &AnnotationReport) -> Results {
        let (mut results, mut failures) = (Vec::new(), Vec::new());
        for entry in entries {
            let epd = position::parse_fen(&entry.fen)
                .map(|p| position::epd(&p))
                .unwrap_or_else(|_| entry.fen.clone());
            if let Some(analysis) = report.results.get(&epd) {
                results.push(Done { epd, depth: entry.depth, analysis: analysis.clone() });
            } else if let Some(failure) =
                report.failures.get(&epd).or_else(|| report.failures.get(&entry.fen))
            {
                failures.push(Failed { epd, reason: failure.reason.clone() });
            }
        }
        Results { identity, results, failures }
    }

    /// Checks that these results, read from `path`, may enter a cache whose pipeline
    /// runs the engine `expected`: the same identity, and well-formed positions.
    pub fn check(&self, path: &str, expected: &Identity) -> Result<(), ExchangeError> {
        if let Some(d) = self.identity.difference(expected) {
            return Err(ExchangeError::Mismatch {
                path: path.to_string(),
                field: d.field,
                found: d.found,
                expected: d.expected,
            });
        }
        let bad = |message: String| ExchangeError::Format { path: path.to_string(), message };
        for done in &self.results {
            let canonical = position::parse_fen(&done.epd).ok().map(|p| position::epd(&p));
            if canonical.as_deref() != Some(done.epd.as_str()) {
                return Err(bad(format!(
                    "damaged: `{}` is not a position identity okb writes",
                    done.epd
                )));
            }
            if done.depth == 0 || done.analysis.lines.len() > self.identity.multipv as usize {
                return Err(bad(format!(
                    "damaged: the result of `{}` has depth {} and {} lines",
                    done.epd,
                    done.depth,
                    done.analysis.lines.len()
                )));
            }
        }
        Ok(())
    }

    /// Writes the results into `cache` in one transaction and remembers the engine's
    /// name for its binary (so `okb make` need not start it to learn the identity).
    /// Returns the rows written.
    pub fn import(&self, cache: &EngineCache) -> Result<usize, EngineError> {
        let rows = self.results.iter().map(|d| (d.epd.as_str(), d.depth, &d.analysis));
        let written = cache.put_many(&self.identity.key(), self.identity.multipv, rows)?;
        cache.set_engine_name(&self.identity.binary_blake3, &self.identity.id_name)?;
        Ok(written)
    }
}

/// Reads the results file at `path`.
pub fn read(path: &Path) -> Result<Results, ExchangeError> {
    exchange::read(KIND, path)
}

/// Writes `results` to `path`.
pub fn write(path: &Path, results: &Results) -> Result<(), ExchangeError> {
    exchange::write(KIND, path, results)
}
