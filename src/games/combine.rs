//! Summing runs in a bounded hash map before merging them.
//!
//! The runs of one collection's files share most of their keys (every game starts from
//! the same openings), so summing them in a hash map, read one after another, does the
//! work of a k-way merge with a lookup per record instead of a heap's dozen comparisons,
//! and holds one file handle at a time. Past its budget the map is sorted into a spill
//! run, so the sums end as a few sorted runs that [`super::runs::merge_runs`] merges.

use std::path::PathBuf;

use super::runs::{Opener, Record, RunError, SpillFile, in_memory};
use crate::position::KeyMap;

/// Records summed by key within a memory budget, spilling sorted runs past it.
pub struct Combiner<T: Record> {
    map: KeyMap<T::Key, T>,
    budget: usize,
    spill_dir: PathBuf,
    spills: Vec<SpillFile>,
}

impl<T: Record + 'static> Combiner<T> {
    /// An empty combiner that keeps within `budget` bytes, spilling to `spill_dir`.
    pub fn new(budget: usize, spill_dir: PathBuf) -> Combiner<T> {
        Combiner { map: KeyMap::default(), budget, spill_dir, spills: Vec::new() }
    }

    /// Adds one record, summed with any of the same key.
    pub fn add(&mut self, record: T) -> Result<(), RunError> {
        if self.map.len() == self.map.capacity() && self.would_outgrow() {
            self.spill()?;
        }
        self.map.entry(record.key()).and_modify(|r| r.combine(&record)).or_insert(record);
        Ok(())
    }

    /// Whether the map, grown for one more record, would pass half the budget (the other
    /// half is for the sorted copy a spill makes).
    fn would_outgrow(&self) -> bool {
        let slot = std::mem::size_of::<(T::Key, T)>() + 1;
        let grown_slots = (self.map.capacity().max(16) * 2) * 8 / 7;
        grown_slots * slot > self.budget / 2
    }

    fn sorted(&mut self) -> Vec<T> {
        let mut records: Vec<T> = self.map.drain().map(|(_, r)| r).collect();
        records.sort_unstable_by_key(|r| r.key());
        records
    }

    fn spill(&mut self) -> Result<(), RunError> {
        let records = self.sorted();
        self.spills.push(SpillFile::write(&self.spill_dir, &records)?);
        Ok(())
    }

    /// Sorted runs, each key once per run, of everything added: the spilled ones and the
    /// rest, sorted in memory.
    pub fn finish(mut self) -> Vec<Opener<'static, T>> {
        let rest = self.sorted();
        let mut runs: Vec<Opener<'static, T>> = self.spills.drain(..).map(SpillFile::opener).collect();
        runs.push(in_memory(rest));
        runs
    }
}

/// The runs `inputs`, read one after another and summed by a [`Combiner`] of `budget`
/// bytes: a few sorted runs with the same sums.
pub fn combine<'a, T: Record + 'static>(inputs: Vec<Opener<'a, T>>, budget: usize, spill_dir: PathBuf) -> Result<Vec<Opener<'static, T>>, RunError> {
    let mut combiner = Combiner::new(budget, spill_dir);
    for open in inputs {
        let mut source = open()?;
        while let Some(record) = source()? {
            combiner.add(record)?;
        }
    }
    Ok(combiner.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::runs::{MergePlan, PosRecord, merge_runs};
    use crate::games::stats::Outcomes;
    use crate::position::PositionKey;

    #[test]
    fn a_small_budget_spills_and_the_sums_do_not_change() {
        let dir = tempfile::tempdir().unwrap();
        let run = |step: u128| -> Vec<PosRecord> { (0..2000u128).map(|i| (PositionKey(i * step), Outcomes { white: 1, draws: 0, black: 0 })).collect() };
        let sums = |budget: usize| {
            let inputs = vec![in_memory(run(1)), in_memory(run(2)), in_memory(run(3))];
            let runs = combine(inputs, budget, dir.path().to_path_buf()).unwrap();
            let count = runs.len();
            let plan = MergePlan { fan_in: 64, spill_dir: dir.path().to_path_buf(), combine_budget: None };
            let mut out = Vec::new();
            merge_runs(runs, &plan, &mut |r| {
                out.push(r);
                Ok(())
            })
            .unwrap();
            (count, out)
        };
        let (one, all) = sums(1 << 30);
        assert_eq!(one, 1);
        assert_eq!(all[0].1.white, 3, "key 0 is in every run");
        assert_eq!(all.iter().map(|r| r.1.white).sum::<u64>(), 6000);
        let (many, spilled) = sums(4096);
        assert!(many > 3, "{many} runs");
        assert_eq!(spilled, all);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "spill runs are removed once read");
    }
}
