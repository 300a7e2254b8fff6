//! A Polyglot book of any size in bounded memory: the book's raw entries are sorted in
//! runs that fit a memory budget, each spilled to an unnamed temporary file, then merged,
//! so a book of a 50 M-node store is written with the memory of one run. The bytes are
//! those of [`super::polyglot::entries_from_stats`] and [`super::polyglot::to_bytes`]
//! over the same moves.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use shakmaty::{Chess, Move};

use super::polyglot::{
    BookEntry, WeightMode, encode_move, raw_weight, scale_weights, sort_entries,
};
use crate::games::stats::Outcomes;
use crate::position::polyglot_key;

/// One move of the book before its weight is scaled: Polyglot key, move, raw weight.
type Raw = (u64, u16, u64);

/// Bytes of a [`Raw`] in a run file: key, move, raw weight, big-endian.
const RAW_LEN: usize = 18;

/// Collects a book's moves in runs of at most a memory budget, then writes the book.
pub struct BookRuns {
    mode: WeightMode,
    /// Where the runs go (unnamed files: nothing is left behind, even by a killed okb).
    dir: PathBuf,
    /// The moves of the run being collected.
    current: Vec<Raw>,
    /// How many moves a run holds.
    run_len: usize,
    /// The runs spilled so far, each sorted by key.
    runs: Vec<File>,
}

impl BookRuns {
    /// A book of weights `mode`, its runs held to `memory_bytes` and spilled into `dir`.
    pub fn new(mode: WeightMode, memory_bytes: usize, dir: &Path) -> BookRuns {
        let run_len = (memory_bytes / size_of::<Raw>()).max(1024);
        BookRuns { mode, dir: dir.to_path_buf(), current: Vec::new(), run_len, runs: Vec::new() }
    }

    /// Runs spilled to disk so far.
    pub fn spilled(&self) -> usize {
        self.runs.len()
    }

    /// Adds move `m` of `pos`, played in `games` (a move whose weight is 0 still counts
    /// towards nothing, as in [`super::polyglot::entries_from_stats`]).
    pub fn add(&mut self, pos: &Chess, m: &Move, games: &Outcomes) -> std::io::Result<()> {
        let raw = raw_weight(pos, games, self.mode);
        if self.current.capacity() == 0 {
            // At its full length at once: grown by doubling, a run could take twice its
            // budget.
            self.current.reserve_exact(self.run_len);
        }
        self.current.push((polyglot_key(pos), encode_move(m), raw));
        if self.current.len() >= self.run_len {
            self.spill()?;
        }
        Ok(())
    }

    /// Sorts the current run by key and writes it to a temporary file.
    fn spill(&mut self) -> std::io::Result<()> {
        self.current.sort_unstable_by_key(|r| r.0);
        let mut out = BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(&self.dir)?);
        for &(key, mv, raw) in &self.current {
            out.write_all(&key.to_be_bytes())?;
            out.write_all(&mv.to_be_bytes())?;
            out.write_all(&raw.to_be_bytes())?;
        }
        let mut file = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        file.rewind()?;
        self.runs.push(file);
        self.current.clear();
        Ok(())
    }

    /// Writes the book to `out`: entries by key, heavier moves first. Returns the number
    /// of entries.
    pub fn finish(mut self, out: &mut impl Write) -> std::io::Result<u64> {
        self.current.sort_unstable_by_key(|r| r.0);
        let mut sources: Vec<Source> =
            vec![Source::Memory(std::mem::take(&mut self.current).into_iter())];
        sources.extend(
            self.runs.drain(..).map(|f| Source::File(BufReader::with_capacity(1 << 20, f))),
        );
        let mut heads = BinaryHeap::new();
        for (index, source) in sources.iter_mut().enumerate() {
            if let Some(raw) = source.next()? {
                heads.push(Reverse((raw, index)));
            }
        }
        let mut group: Vec<(u16, u64)> = Vec::new();
        let mut group_key = None;
        let mut written = 0;
        while let Some(Reverse(((key, mv, raw), index))) = heads.pop() {
            if group_key != Some(key) {
                if let Some(done) = group_key {
                    written += self.write_group(done, &group, out)?;
                }
                group.clear();
                group_key = Some(key);
            }
            group.push((mv, raw));
            if let Some(next) = sources[index].next()? {
                heads.push(Reverse((next, index)));
            }
        }
        if let Some(done) = group_key {
            written += self.write_group(done, &group, out)?;
        }
        Ok(written)
    }

    /// Writes one key's entries: weights scaled over all its moves, in the book's order
    /// ([`sort_entries`]).
    fn write_group(
        &self,
        key: u64,
        moves: &[(u16, u64)],
        out: &mut impl Write,
    ) -> std::io::Result<u64> {
        let mut entries: Vec<BookEntry> = scale_weights(moves, self.mode)
            .into_iter()
            .map(|(mv, weight)| BookEntry { key, mv, weight, learn: 0 })
            .collect();
        sort_entries(&mut entries);
        for entry in &entries {
            out.write_all(&entry.to_bytes())?;
        }
        Ok(entries.len() as u64)
    }
}

/// A sorted run being merged: the last one still in memory, or a spilled one.
enum Source {
    Memory(std::vec::IntoIter<Raw>),
    File(BufReader<File>),
}

impl Source {
    fn next(&mut self) -> std::io::Result<Option<Raw>> {
        match self {
            Source::Memory(raws) => Ok(raws.next()),
            Source::File(file) => {
                let mut bytes = [0u8; RAW_LEN];
                match file.read_exact(&mut bytes) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(e),
                }
                let key = u64::from_be_bytes(bytes[0..8].try_into().expect("8 bytes"));
                let mv = u16::from_be_bytes([bytes[8], bytes[9]]);
                let raw = u64::from_be_bytes(bytes[10..18].try_into().expect("8 bytes"));
                Ok(Some((key, mv, raw)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::polyglot::{entries_from_stats, to_bytes};
    use crate::games::stats::MoveStats;
    use crate::position::MoveKey;
    use shakmaty::Position;

    /// Every legal move of positions a few plies deep, with made-up counts, written by a
    /// run of 1,024 moves at a time: the bytes of the in-memory book, in both weight
    /// modes, including the halving of weights above 65535.
    #[test]
    fn books_written_in_runs_equal_the_in_memory_book() {
        let mut positions = vec![Chess::default()];
        for _ in 0..3 {
            let next: Vec<Chess> = positions
                .iter()
                .flat_map(|p| {
                    p.legal_moves().into_iter().take(6).map(move |m| {
                        let mut q = p.clone();
                        q.play_unchecked(m);
                        q
                    })
                })
                .collect();
            positions.extend(next);
        }
        let mut moves: Vec<(Chess, Move, Outcomes)> = Vec::new();
        let mut seed = 7u64;
        for pos in &positions {
            for m in pos.legal_moves() {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let big = if seed >> 60 == 0 { 70_000 } else { 0 };
                let outcomes = Outcomes {
                    white: (seed >> 20) % 9 + big,
                    draws: (seed >> 30) % 4,
                    black: (seed >> 40) % 7,
                };
                moves.push((pos.clone(), m, outcomes));
            }
        }
        assert!(moves.len() > 5_000, "several runs: {}", moves.len());
        let dir = tempfile::tempdir().unwrap();
        for mode in [WeightMode::Polyglot, WeightMode::Games] {
            let items = moves.iter().map(|(p, m, o)| {
                (p, MoveKey::new(m), MoveStats { outcomes: *o, ..Default::default() })
            });
            let expected = to_bytes(&entries_from_stats(items, mode));
            let mut runs = BookRuns::new(mode, 0, dir.path());
            for (p, m, o) in &moves {
                runs.add(p, m, o).unwrap();
            }
            assert!(runs.spilled() >= 4);
            let mut out = Vec::new();
            let written = runs.finish(&mut out).unwrap();
            assert_eq!(written as usize * 16, out.len());
            assert!(out == expected, "{mode:?}: {} bytes against {}", out.len(), expected.len());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no run left behind");
    }
}
