//! Sorted runs of counts and their k-way merge: how Phase 2 stays within its memory
//! budget for any number of games.
//!
//! A run is a stream of records sorted by key, each key once: the positions
//! ([`PosRecord`]) or the moves ([`MoveRecord`]) of some games. Counting spills runs when
//! its maps reach the budget, each game file's runs merge into the file's own run, and the
//! files' runs merge into the collection's; every merge streams, reading a buffer per
//! input, and merges at most `fan_in` inputs at once (more go through intermediate runs
//! in the spill folder), so memory never depends on the number of games or files.
//!
//! Encoding: the position key as 16 bytes little-endian (random bits: a varint would be
//! longer), the move key as 2, then every count as a LEB128 varint (postcard's), so a
//! record takes about 20 bytes (a position) or 30 (a move).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::stats::{MoveStats, Outcomes};
use crate::position::{MoveKey, PositionKey};

/// A position's counts.
pub type PosRecord = (PositionKey, Outcomes);
/// A move's counts from a position.
pub type MoveRecord = (PositionKey, MoveKey, MoveStats);

/// A record of a run: sorted and merged by its key, summed when keys are equal.
pub trait Record: Copy + Send {
    /// What runs are sorted by.
    type Key: Ord + Copy + Send;
    /// The longest encoding.
    const MAX_BYTES: usize;
    /// The sort key.
    fn key(&self) -> Self::Key;
    /// Adds `other`'s counts (same key) to `self`.
    fn combine(&mut self, other: &Self);
    /// Writes the encoding into `out` (at least [`Record::MAX_BYTES`] long); returns its length.
    fn encode(&self, out: &mut [u8]) -> usize;
    /// The record at the start of `bytes` and its length; `None` when `bytes` holds only
    /// part of one (or a malformed one).
    fn decode(bytes: &[u8]) -> Option<(Self, usize)>;
}

fn put_varint(out: &mut [u8], at: &mut usize, mut v: u64) {
    while v >= 0x80 {
        out[*at] = v as u8 | 0x80;
        v >>= 7;
        *at += 1;
    }
    out[*at] = v as u8;
    *at += 1;
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

fn put_key(out: &mut [u8], at: &mut usize, key: PositionKey) {
    out[*at..*at + 16].copy_from_slice(&key.0.to_le_bytes());
    *at += 16;
}

fn get_key(bytes: &[u8], at: &mut usize) -> Option<PositionKey> {
    let raw: [u8; 16] = bytes.get(*at..*at + 16)?.try_into().ok()?;
    *at += 16;
    Some(PositionKey(u128::from_le_bytes(raw)))
}

impl Record for PosRecord {
    type Key = PositionKey;
    const MAX_BYTES: usize = 16 + 3 * 10;

    fn key(&self) -> PositionKey {
        self.0
    }

    fn combine(&mut self, other: &Self) {
        self.1.add(&other.1);
    }

    fn encode(&self, out: &mut [u8]) -> usize {
        let mut at = 0;
        put_key(out, &mut at, self.0);
        for v in [self.1.white, self.1.draws, self.1.black] {
            put_varint(out, &mut at, v);
        }
        at
    }

    fn decode(bytes: &[u8]) -> Option<(Self, usize)> {
        let mut at = 0;
        let key = get_key(bytes, &mut at)?;
        let mut v = || get_varint(bytes, &mut at);
        let outcomes = Outcomes { white: v()?, draws: v()?, black: v()? };
        Some(((key, outcomes), at))
    }
}

impl Record for MoveRecord {
    type Key = (PositionKey, MoveKey);
    const MAX_BYTES: usize = 16 + 2 + 7 * 10;

    fn key(&self) -> (PositionKey, MoveKey) {
        (self.0, self.1)
    }

    fn combine(&mut self, other: &Self) {
        let (a, b) = (&mut self.2, &other.2);
        a.outcomes.add(&b.outcomes);
        a.rating_sum += b.rating_sum;
        a.rated_games += b.rated_games;
        a.opponent_rating_sum += b.opponent_rating_sum;
        a.opponent_rated_games += b.opponent_rated_games;
    }

    fn encode(&self, out: &mut [u8]) -> usize {
        let mut at = 0;
        put_key(out, &mut at, self.0);
        out[at..at + 2].copy_from_slice(&self.1.0.to_le_bytes());
        at += 2;
        for v in self.2.fields() {
            put_varint(out, &mut at, v);
        }
        at
    }

    fn decode(bytes: &[u8]) -> Option<(Self, usize)> {
        let mut at = 0;
        let key = get_key(bytes, &mut at)?;
        let mv = MoveKey(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
        at += 2;
        let stats = MoveStats::from_fields(|| get_varint(bytes, &mut at))?;
        Some(((key, mv, stats), at))
    }
}

/// Writes one record's encoding to `out`.
pub fn write_record<T: Record>(out: &mut dyn Write, record: &T) -> io::Result<()> {
    let mut buf = [0u8; 96];
    let n = record.encode(&mut buf);
    out.write_all(&buf[..n])
}

/// A failure of a merge: an input that could not be read (named as its opener named
/// it), or the output that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Reading the run `input` failed, or it is corrupt.
    #[error("{input}: {source}")]
    Input {
        /// The input's name (a spill file, a step id).
        input: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Writing the merged run failed.
    #[error("writing the merged counts: {0}")]
    Output(#[from] io::Error),
}

/// The records of a run, one at a time (`None` at its end).
pub type Source<'a, T> = Box<dyn FnMut() -> Result<Option<T>, RunError> + Send + 'a>;
/// A run not opened yet: a merge opens only the inputs it is merging.
pub type Opener<'a, T> = Box<dyn FnOnce() -> Result<Source<'a, T>, RunError> + Send + 'a>;

/// An opener of records already in memory (sorted, each key once).
pub fn in_memory<'a, T: Record + 'a>(records: Vec<T>) -> Opener<'a, T> {
    Box::new(move || {
        let mut records = records.into_iter();
        Ok(Box::new(move || Ok(records.next())))
    })
}

/// An opener of the run that `open` reads, called `name` in errors.
pub fn from_reader<'a, T: Record + 'a, R: Read + Send + 'a>(
    name: String,
    open: impl FnOnce() -> io::Result<R> + Send + 'a,
) -> Opener<'a, T> {
    Box::new(move || {
        let inner = open().map_err(|source| RunError::Input { input: name.clone(), source })?;
        let mut reader = RunReader::new(name, inner);
        Ok(Box::new(move || reader.next()))
    })
}

const READ_BUFFER: usize = 64 << 10;

/// Decodes records from a byte stream, straight from its buffer.
struct RunReader<R> {
    name: String,
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
}

impl<R: Read> RunReader<R> {
    fn new(name: String, inner: R) -> RunReader<R> {
        RunReader {
            name,
            inner,
            buf: vec![0; READ_BUFFER].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
        }
    }

    fn next<T: Record>(&mut self) -> Result<Option<T>, RunError> {
        loop {
            if let Some((record, n)) = T::decode(&self.buf[self.start..self.end]) {
                self.start += n;
                return Ok(Some(record));
            }
            let left = self.end - self.start;
            if self.eof && left == 0 {
                return Ok(None);
            }
            if self.eof || left >= T::MAX_BYTES {
                let what =
                    if self.eof { "ends inside a record" } else { "holds a malformed record" };
                return Err(self.error(io::Error::new(io::ErrorKind::InvalidData, what)));
            }
            self.refill().map_err(|e| self.error(e))?;
        }
    }

    /// Moves what is left to the front and reads until the buffer is full or the stream
    /// ends (the end is read too: a verified stream reports corruption there).
    fn refill(&mut self) -> io::Result<()> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        while self.end < self.buf.len() {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn error(&self, source: io::Error) -> RunError {
        RunError::Input { input: self.name.clone(), source }
    }
}

/// A k-way merge of open runs, combining records with equal keys.
struct Merge<'a, T: Record> {
    sources: Vec<Source<'a, T>>,
    heads: Vec<Option<T>>,
    heap: BinaryHeap<Reverse<(T::Key, usize)>>,
}

impl<'a, T: Record> Merge<'a, T> {
    fn open(openers: Vec<Opener<'a, T>>) -> Result<Merge<'a, T>, RunError> {
        let mut merge = Merge {
            sources: Vec::with_capacity(openers.len()),
            heads: Vec::new(),
            heap: BinaryHeap::new(),
        };
        for (i, open) in openers.into_iter().enumerate() {
            let mut source = open()?;
            let head = source()?;
            if let Some(h) = &head {
                merge.heap.push(Reverse((h.key(), i)));
            }
            merge.sources.push(source);
            merge.heads.push(head);
        }
        Ok(merge)
    }

    /// The next record of the merged run.
    fn next(&mut self) -> Result<Option<T>, RunError> {
        let Some(mut record) = self.pop()? else { return Ok(None) };
        let key = record.key();
        while self.heap.peek().is_some_and(|Reverse((k, _))| *k == key) {
            let same = self.pop()?.expect("a peeked run has a head");
            record.combine(&same);
        }
        Ok(Some(record))
    }

    fn pop(&mut self) -> Result<Option<T>, RunError> {
        let Some(mut top) = self.heap.peek_mut() else { return Ok(None) };
        let i = top.0.1;
        let record = self.heads[i].take().expect("a run in the heap has a head");
        match (self.sources[i])()? {
            // The run's next record takes its place at the top: one sift down, where a
            // pop and a push would take two.
            Some(next) => {
                top.0.0 = next.key();
                self.heads[i] = Some(next);
            }
            None => drop(std::collections::binary_heap::PeekMut::pop(top)),
        }
        Ok(Some(record))
    }
}

/// How a merge may use memory and disk.
#[derive(Clone, Debug)]
pub struct MergePlan {
    /// Most inputs merged at once (each holds a 64 KiB buffer and a file handle).
    pub fan_in: usize,
    /// Where intermediate runs go.
    pub spill_dir: PathBuf,
}

impl MergePlan {
    /// The fan-in a budget of `budget_mb` MiB allows (two merges run at once: positions
    /// and moves, and their buffers take an eighth of the budget), between 16 and 256
    /// (file handles are limited too).
    pub fn for_budget(budget_mb: usize, spill_dir: PathBuf) -> MergePlan {
        let fan_in = (budget_mb.saturating_mul(1 << 20) / 8 / (2 * READ_BUFFER)).clamp(16, 256);
        MergePlan { fan_in, spill_dir }
    }
}

/// Merges the runs `inputs` into one, handing each merged record to `out` in key order.
/// Past `plan.fan_in` inputs, groups are merged into intermediate runs first.
pub fn merge_runs<'a, T: Record + 'a>(
    mut inputs: Vec<Opener<'a, T>>,
    plan: &MergePlan,
    out: &mut dyn FnMut(T) -> io::Result<()>,
) -> Result<(), RunError> {
    if inputs.len() == 1 {
        // Nothing to merge: the run streams through.
        let mut source = inputs.pop().expect("one input")()?;
        while let Some(record) = source()? {
            out(record)?;
        }
        return Ok(());
    }
    let fan_in = plan.fan_in.max(2);
    while inputs.len() > fan_in {
        let groups = inputs.len().div_ceil(fan_in);
        let size = inputs.len().div_ceil(groups);
        let mut next = Vec::with_capacity(groups);
        while !inputs.is_empty() {
            let rest = inputs.split_off(size.min(inputs.len()));
            let group = std::mem::replace(&mut inputs, rest);
            next.push(spill_merged(group, plan)?);
        }
        inputs = next;
    }
    let mut merge = Merge::open(inputs)?;
    while let Some(record) = merge.next()? {
        out(record)?;
    }
    Ok(())
}

/// Merges position runs and move runs at once (on two threads: they are independent).
pub fn merge_both<'a>(
    positions: Vec<Opener<'a, PosRecord>>,
    moves: Vec<Opener<'a, MoveRecord>>,
    plan: &MergePlan,
    positions_out: &mut (dyn FnMut(PosRecord) -> io::Result<()> + Send),
    moves_out: &mut (dyn FnMut(MoveRecord) -> io::Result<()> + Send),
) -> Result<(), RunError> {
    let (p, m) = rayon::join(
        || merge_runs(positions, plan, positions_out),
        || merge_runs(moves, plan, moves_out),
    );
    p.and(m)
}

/// Merges `group` into an intermediate run in the spill folder; returns its opener (the
/// file is removed once read, or when the opener is dropped).
pub fn spill_merged<'a, T: Record + 'a>(
    group: Vec<Opener<'a, T>>,
    plan: &MergePlan,
) -> Result<Opener<'a, T>, RunError> {
    let spill = SpillFile::create(&plan.spill_dir)?;
    let file = File::create(&spill.0).map_err(|source| spill.error(source))?;
    let mut w = BufWriter::with_capacity(1 << 18, file);
    merge_runs(group, plan, &mut |r| write_record(&mut w, &r)).map_err(|e| match e {
        RunError::Output(source) => spill.error(source),
        input => input,
    })?;
    w.flush().map_err(|source| spill.error(source))?;
    drop(w);
    Ok(spill.opener())
}

static SPILLS: AtomicU64 = AtomicU64::new(0);

/// Number of spill files written by this process so far (for tests and diagnostics).
pub fn spill_files_written() -> u64 {
    SPILLS.load(Ordering::Relaxed)
}

/// A spill file, removed when dropped.
pub struct SpillFile(PathBuf);

impl SpillFile {
    /// A new file in `dir`, with a temporary name ([`crate::files::temp::path`]), so the
    /// make after a killed one sweeps it away.
    pub fn create(dir: &Path) -> Result<SpillFile, RunError> {
        SPILLS.fetch_add(1, Ordering::Relaxed);
        let path = crate::files::temp::path(dir, "run");
        std::fs::create_dir_all(dir)
            .map_err(|source| RunError::Input { input: dir.display().to_string(), source })?;
        Ok(SpillFile(path))
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes the sorted records `records` to a new spill file in `dir`.
    pub fn write<T: Record>(dir: &Path, records: &[T]) -> Result<SpillFile, RunError> {
        let spill = SpillFile::create(dir)?;
        let written = (|| {
            let mut w = BufWriter::with_capacity(1 << 18, File::create(&spill.0)?);
            for r in records {
                write_record(&mut w, r)?;
            }
            w.flush()
        })();
        written.map_err(|source| spill.error(source))?;
        Ok(spill)
    }

    fn error(&self, source: io::Error) -> RunError {
        RunError::Input { input: self.0.display().to_string(), source }
    }

    /// Reads the file back as a run; it is removed when the run is dropped.
    pub fn opener<'a, T: Record + 'a>(self) -> Opener<'a, T> {
        let name = self.0.display().to_string();
        from_reader(name, move || Ok(Kept { file: File::open(&self.0)?, _spill: self }))
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A reader that keeps its spill file until it is dropped.
struct Kept {
    file: File,
    _spill: SpillFile,
}

impl Read for Kept {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(k: u128, white: u64) -> PosRecord {
        (PositionKey(k), Outcomes { white, draws: 0, black: 0 })
    }

    fn merged(inputs: Vec<Vec<PosRecord>>, fan_in: usize, dir: &Path) -> Vec<PosRecord> {
        let plan = MergePlan { fan_in, spill_dir: dir.to_path_buf() };
        let mut out = Vec::new();
        merge_runs(inputs.into_iter().map(in_memory).collect(), &plan, &mut |r| {
            out.push(r);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn merges_combine_equal_keys_at_any_fan_in() {
        let dir = tempfile::tempdir().unwrap();
        let runs: Vec<Vec<PosRecord>> = (0..9u128)
            .map(|i| vec![pos(1, 1), pos(10 + i, i as u64), pos(u128::MAX - i % 2, 1)])
            .collect();
        let all = merged(runs.clone(), 64, dir.path());
        assert_eq!(all[0], pos(1, 9));
        assert_eq!(all.len(), 1 + 9 + 2);
        assert_eq!(all.last(), Some(&pos(u128::MAX, 5)), "the even runs");
        assert_eq!(merged(runs, 2, dir.path()), all, "through intermediate runs");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "intermediate runs are removed"
        );
    }

    #[test]
    fn records_round_trip_and_a_torn_stream_is_an_error() {
        let stats = MoveStats {
            outcomes: Outcomes { white: 3, draws: 1 << 40, black: 0 },
            rating_sum: u64::MAX,
            rated_games: 2,
            opponent_rating_sum: 5000,
            opponent_rated_games: 2,
        };
        let records = vec![
            (PositionKey(7), MoveKey(300), stats),
            (PositionKey(u128::MAX), MoveKey(1), MoveStats::default()),
        ];
        let mut bytes = Vec::new();
        for r in &records {
            write_record(&mut bytes, r).unwrap();
        }
        let read = |bytes: Vec<u8>| {
            let mut source =
                from_reader::<MoveRecord, _>("run".into(), move || Ok(io::Cursor::new(bytes)))()
                    .unwrap();
            std::iter::from_fn(|| source().transpose()).collect::<Result<Vec<_>, _>>()
        };
        assert_eq!(read(bytes.clone()).unwrap(), records);
        bytes.pop();
        assert!(matches!(read(bytes), Err(RunError::Input { .. })));
    }
}
