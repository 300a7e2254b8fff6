//! Counts as the build keeps them: a small value with the report, naming two stored
//! sorted runs (positions, moves) that readers stream back. Where runs are stored is the
//! caller's business (the build keeps them as cache blobs, named by hash); this module
//! only merges into a store and describes what was stored.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::dedup::GameRef;
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
    /// The sorted run of its counted games' [`GameRef`]s (PGN game files only): what
    /// finds repeated games ([`super::dedup`]).
    pub games: Option<StoredRun>,
}

impl StoredCounts {
    /// The cache objects holding its runs.
    pub fn objects(&self) -> Vec<String> {
        let games = self.games.iter().map(|g| g.name.clone());
        [self.positions.name.clone(), self.moves.name.clone()].into_iter().chain(games).collect()
    }
}

/// The repeated games of a collection ([`super::dedup`]), counted again: the `duplicates`
/// step's value, which the `games` merge subtracts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Repeats {
    /// The repeats of each game file that has any, as (step id, their sorted locations in
    /// the file, [`super::dedup::location`]), in pipeline order.
    pub files: Vec<(String, Vec<u64>)>,
    /// The repeats' position counts, sorted (`None`: no repeat).
    pub positions: Option<StoredRun>,
    /// The repeats' move counts, sorted.
    pub moves: Option<StoredRun>,
}

impl Repeats {
    /// The cache objects holding its runs.
    pub fn objects(&self) -> Vec<String> {
        [&self.positions, &self.moves].into_iter().flatten().map(|r| r.name.clone()).collect()
    }

    /// The number of repeats.
    pub fn count(&self) -> u64 {
        self.files.iter().map(|(_, at)| at.len() as u64).sum()
    }
}

/// Writes the sorted `games` to `store`.
pub fn store_games(games: &[GameRef], store: &Store<'_>) -> Result<StoredRun, RunError> {
    let name = store(&mut |w| {
        for game in games {
            runs::write_record(w, game)?;
        }
        Ok(())
    })?;
    Ok(StoredRun { name, records: games.len() as u64 })
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
    /// Games read, counted (each distinct game once), filtered.
    pub counters: Counters,
    /// Counted games left out as repeats of one counted already ([`super::dedup`]).
    pub repeated: u64,
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

/// Merges `positions` and `moves` runs into `store` as [`store_both`] does, less the
/// counts of `minus` (runs of games among them: every key of theirs is in the merge),
/// leaving out the records nothing is left of.
pub fn store_both_minus<'a>(
    positions: Vec<Opener<'a, PosRecord>>,
    moves: Vec<Opener<'a, MoveRecord>>,
    minus: (Opener<'a, PosRecord>, Opener<'a, MoveRecord>),
    plan: &MergePlan,
    store: &Store<'_>,
) -> Result<(StoredRun, StoredRun), RunError> {
    let (minus_positions, minus_moves) = minus;
    let (p, m) = rayon::join(
        || store_minus(positions, Some(minus_positions), plan, store),
        || store_minus(moves, Some(minus_moves), plan, store),
    );
    Ok((p?, m?))
}

fn store_one<'a, T: Subtract + 'static>(
    inputs: Vec<Opener<'a, T>>,
    plan: &MergePlan,
    store: &Store<'_>,
) -> Result<StoredRun, RunError> {
    store_minus(inputs, None, plan, store)
}

fn store_minus<'a, T: Subtract + 'static>(
    inputs: Vec<Opener<'a, T>>,
    minus: Option<Opener<'a, T>>,
    plan: &MergePlan,
    store: &Store<'_>,
) -> Result<StoredRun, RunError> {
    let (mut inputs, mut minus) = (Some(inputs), minus);
    let mut records = 0;
    let name = store(&mut |w| {
        let inputs = inputs.take().expect("a store writes once");
        let mut less = Less::open(minus.take())?;
        runs::merge_runs(inputs, plan, &mut |mut r| {
            if !less.apply(&mut r)? {
                return Ok(());
            }
            records += 1;
            runs::write_record(w, &r)
        })?;
        less.finish()
    })?;
    Ok(StoredRun { name, records })
}

/// A record whose counts can be taken away.
pub trait Subtract: Record {
    /// Takes `other`'s counts (same key, counted into `self`) away from `self`.
    fn subtract(&mut self, other: &Self);
    /// Whether no game is left in it.
    fn is_empty(&self) -> bool;
}

impl Subtract for PosRecord {
    fn subtract(&mut self, other: &Self) {
        let (a, b) = (&mut self.1, &other.1);
        a.white -= b.white;
        a.draws -= b.draws;
        a.black -= b.black;
    }

    fn is_empty(&self) -> bool {
        self.1.white + self.1.draws + self.1.black == 0
    }
}

impl Subtract for MoveRecord {
    fn subtract(&mut self, other: &Self) {
        let (a, b) = (&mut self.2, &other.2);
        a.outcomes.white -= b.outcomes.white;
        a.outcomes.draws -= b.outcomes.draws;
        a.outcomes.black -= b.outcomes.black;
        a.rating_sum -= b.rating_sum;
        a.rated_games -= b.rated_games;
        a.opponent_rating_sum -= b.opponent_rating_sum;
        a.opponent_rated_games -= b.opponent_rated_games;
    }

    fn is_empty(&self) -> bool {
        let o = &self.2.outcomes;
        o.white + o.draws + o.black == 0
    }
}

/// The run subtracted from a merge, read in step with it.
struct Less<'a, T: Record> {
    source: Option<runs::Source<'a, T>>,
    head: Option<T>,
}

impl<'a, T: Subtract> Less<'a, T> {
    fn open(minus: Option<Opener<'a, T>>) -> Result<Less<'a, T>, RunError> {
        let Some(open) = minus else { return Ok(Less { source: None, head: None }) };
        let mut source = open()?;
        let head = source()?;
        Ok(Less { source: Some(source), head })
    }

    /// Subtracts from `record` (the merge's next) what the run holds of its key;
    /// whether anything is left of it.
    fn apply(&mut self, record: &mut T) -> std::io::Result<bool> {
        let Some(head) = self.head.filter(|h| h.key() <= record.key()) else { return Ok(true) };
        if head.key() < record.key() {
            return Err(not_counted());
        }
        record.subtract(&head);
        let source = self.source.as_mut().expect("a head comes from a source");
        self.head = source().map_err(std::io::Error::other)?;
        Ok(!record.is_empty())
    }

    /// Fails if some of the subtracted run was not in the merge.
    fn finish(&self) -> Result<(), RunError> {
        match self.head {
            Some(_) => Err(RunError::Output(not_counted())),
            None => Ok(()),
        }
    }
}

/// The error of a repeat whose counts the merge does not hold (a bug, never bad input).
fn not_counted() -> std::io::Error {
    std::io::Error::other("a repeated game's counts are not among the merged counts")
}
