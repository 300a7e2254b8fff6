//! Counts as the build keeps them: a small value with the report, naming two stored
//! sorted runs (positions, moves) that readers stream back. Where runs are stored is the
//! caller's business (the build keeps them as cache blobs, named by hash); this module
//! only merges into a store and describes what was stored.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::report::{BadGames, Counters};
use super::runs::{self, MergePlan, MoveRecord, Opener, PosRecord, Record, RunError};

/// A sorted run kept by a store, by name.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredRun {
    /// Its name in the store (a cache blob's hash).
    pub name: String,
    /// Its records.
    pub records: u64,
}

/// One part of the game counts (a game file's, a counts file's) with its runs stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredCounts {
    /// The file as given.
    pub file: String,
    /// The ply limit it was counted to.
    pub max_ply: u32,
    /// Bad games by reason with first locations.
    pub bad: BadGames,
    /// Games read, counted, bad and filtered by reason.
    pub counters: Counters,
    /// The sorted run of position counts.
    pub positions: StoredRun,
    /// The sorted run of move counts.
    pub moves: StoredRun,
}

impl StoredCounts {
    /// The cache objects holding its runs.
    pub fn objects(&self) -> Vec<String> {
        vec![self.positions.name.clone(), self.moves.name.clone()]
    }
}

/// All parts merged: the `games` step's value.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MergedCounts {
    /// Counts per position, sorted by key.
    pub positions: StoredRun,
    /// Counts per (position, move), sorted by both.
    pub moves: StoredRun,
    /// Bad games by reason.
    pub bad: BadGames,
    /// Games read, counted, filtered.
    pub counters: Counters,
}

impl MergedCounts {
    /// The cache objects holding its runs.
    pub fn objects(&self) -> Vec<String> {
        vec![self.positions.name.clone(), self.moves.name.clone()]
    }
}

/// Stores the bytes a writer writes and names them: the closure is handed the writer.
pub type Store<'s> = dyn Fn(&mut dyn FnMut(&mut dyn Write) -> Result<(), RunError>) -> Result<String, RunError>
    + Sync
    + 's;

/// Merges `positions` and `moves` runs (at once, on two threads) straight into `store`.
pub fn store_both<'a>(
    positions: Vec<Opener<'a, PosRecord>>,
    moves: Vec<Opener<'a, MoveRecord>>,
    plan: &MergePlan,
    store: &Store<'_>,
) -> Result<(StoredRun, StoredRun), RunError> {
    let (p, m) =
        rayon::join(|| store_one(positions, plan, store), || store_one(moves, plan, store));
    Ok((p?, m?))
}

fn store_one<'a, T: Record + 'static>(
    inputs: Vec<Opener<'a, T>>,
    plan: &MergePlan,
    store: &Store<'_>,
) -> Result<StoredRun, RunError> {
    let mut inputs = Some(inputs);
    let mut records = 0;
    let name = store(&mut |w| {
        let inputs = inputs.take().expect("a store writes once");
        runs::merge_runs(inputs, plan, &mut |r| {
            records += 1;
            runs::write_record(w, &r)
        })
    })?;
    Ok(StoredRun { name, records })
}
