//! Counts files (`.okbc`): the partial counts of some games, as a portable artifact that
//! `okb count` writes on any machine, `okb count --merge` combines, and a `kind = "counts"`
//! source feeds to the tree like the games it was made from.
//!
//! Layout, version 1:
//!
//! | bytes | content |
//! |---|---|
//! | 0–7 | the magic `OKBCOUNT` |
//! | 8–11 | the format version, u32 little-endian (1) |
//! | 12– | a zstd frame of the postcard encoding of [`FileAggregate`]: the ply limit, the per-position and per-move statistics sorted by position key (then move), bad games by reason, and the game counters |
//!
//! Counts are sums, so merging is associative and commutative: any split of the same
//! games, counted apart and merged, gives the same file as counting them together (the
//! list of files aside).

use std::io::Read;
use std::path::Path;

use serde::de::DeserializeOwned;

use super::aggregate::FileAggregate;
use super::input::StreamBreak;
use super::report::{BadGames, Counters};
use super::runs::{MergePlan, MoveRecord, Opener, PosRecord, Record, SpillFile, write_record};

/// The header of every counts file: the magic `OKBCOUNT` and the format version written
/// (and the only one read).
pub const FRAME: crate::files::framing::Frame = crate::files::framing::Frame {
    magic: b"OKBCOUNT",
    version: 1,
    what: "an okb counts file",
    made_by: "okb count",
};

/// A counts file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CountsError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Not a counts file, another version, or damaged.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Parts counted with different ply limits cannot be merged.
    #[error(
        "{path} was counted to ply {found}, the others to ply {expected}: count every part with the same --max-ply"
    )]
    PlyMismatch {
        /// The odd file.
        path: String,
        /// Its ply limit.
        found: u32,
        /// The first part's.
        expected: u32,
    },
}

/// Checks the magic and version at the start of a counts file read from `path`.
fn check_header(path: &str, bytes: &[u8]) -> Result<(), CountsError> {
    let bad = |message: String| CountsError::Format { path: path.to_string(), message };
    FRAME.check(bytes).map_err(bad)
}

/// The counts in `bytes`, read from `path` (for messages).
pub fn decode(path: &str, bytes: &[u8]) -> Result<FileAggregate, CountsError> {
    let bad = |message: String| CountsError::Format { path: path.to_string(), message };
    check_header(path, bytes)?;
    let body = zstd::stream::decode_all(&bytes[crate::files::framing::Frame::LEN..])
        .map_err(|e| bad(format!("damaged: {e}")))?;
    postcard::from_bytes(&body).map_err(|e| bad(format!("damaged: {e}")))
}

/// Reads the counts file at `path`.
pub fn read(path: &Path) -> Result<FileAggregate, CountsError> {
    let shown = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|source| CountsError::Io { path: shown.clone(), source })?;
    decode(&shown, &bytes)
}

/// A counts file read as a stream, in its layout's order ([`FileAggregate`]'s fields):
/// the header ([`CountsReader::open`]), the positions, then the moves
/// ([`CountsReader::records`] each), then the report ([`CountsReader::finish`]). The
/// statistics pass through without being held, whatever the file's size.
pub struct CountsReader {
    path: String,
    /// Buffered after the decoder: postcard reads a byte at a time, and each read of the
    /// bare decoder is a call into zstd (most of a merge's time before the buffer).
    input:
        std::io::BufReader<zstd::stream::read::Decoder<'static, std::io::BufReader<std::fs::File>>>,
    scratch: Vec<u8>,
    /// The file the counts were made from, as `okb count` named it.
    pub file: String,
    /// The ply limit they were counted to.
    pub max_ply: u32,
}

impl CountsReader {
    /// Opens the counts file at `path` and reads its header.
    pub fn open(path: &Path) -> Result<CountsReader, CountsError> {
        let shown = path.display().to_string();
        let io = |source| CountsError::Io { path: shown.clone(), source };
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut header = Vec::with_capacity(crate::files::framing::Frame::LEN);
        file.by_ref()
            .take(crate::files::framing::Frame::LEN as u64)
            .read_to_end(&mut header)
            .map_err(io)?;
        check_header(&shown, &header)?;
        let input = std::io::BufReader::with_capacity(
            1 << 16,
            zstd::stream::read::Decoder::new(file).map_err(io)?,
        );
        let mut reader = CountsReader {
            path: shown,
            input,
            scratch: vec![0; 64 << 10],
            file: String::new(),
            max_ply: 0,
        };
        reader.file = reader.next()?;
        reader.max_ply = reader.next()?;
        Ok(reader)
    }

    /// The next value of the stream.
    fn next<T: DeserializeOwned>(&mut self) -> Result<T, CountsError> {
        let CountsReader { path, input, scratch, .. } = self;
        match postcard::from_io((input, &mut scratch[..])) {
            Ok((value, _)) => Ok(value),
            Err(e) => {
                Err(CountsError::Format { path: path.clone(), message: format!("damaged: {e}") })
            }
        }
    }

    /// Hands the records of the next sequence (the positions, then the moves) to `out`;
    /// returns how many there were. Records out of key order (or a key twice) are damage,
    /// since every merge relies on the order. A failure of `out` ends the reading with its
    /// error.
    pub fn records<T: Record + DeserializeOwned, E: From<CountsError>>(
        &mut self,
        out: &mut dyn FnMut(T) -> Result<(), E>,
    ) -> Result<u64, E> {
        let n: usize = self.next()?;
        let mut last: Option<T::Key> = None;
        for _ in 0..n {
            let record: T = self.next()?;
            if last.is_some_and(|k| k >= record.key()) {
                return Err(CountsError::Format {
                    path: self.path.clone(),
                    message: "damaged: statistics out of key order".into(),
                }
                .into());
            }
            last = Some(record.key());
            out(record)?;
        }
        Ok(n as u64)
    }

    /// The report after the statistics: bad games and counters.
    pub fn finish(mut self) -> Result<(BadGames, Counters), CountsError> {
        let bad = self.next()?;
        let counters = self.next()?;
        let _broken: Option<StreamBreak> = self.next()?;
        Ok((bad, counters))
    }
}

/// Reads one run of a counts file (the positions or the moves) into a spill file in
/// `dir`, so a part is read once and merged from disk. Returns the spill and its length.
fn spill_sequence<T: Record + DeserializeOwned>(
    reader: &mut CountsReader,
    dir: &Path,
) -> Result<(SpillFile, u64), CountsError> {
    let spill = SpillFile::create(dir).map_err(|e| CountsError::Io {
        path: dir.display().to_string(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let io = |source| CountsError::Io { path: spill.path().display().to_string(), source };
    let mut w = std::io::BufWriter::with_capacity(
        1 << 18,
        std::fs::File::create(spill.path()).map_err(io)?,
    );
    let n = reader.records(&mut |r: T| write_record(&mut w, &r).map_err(io))?;
    std::io::Write::flush(&mut w).map_err(io)?;
    Ok((spill, n))
}

/// A counts file read into spill files: its two sequences and its report.
struct Spilled {
    path: String,
    max_ply: u32,
    positions: Opener<'static, PosRecord>,
    moves: Opener<'static, MoveRecord>,
    /// Records in `positions` and in `moves`.
    lengths: (u64, u64),
    bad: BadGames,
    counters: Counters,
}

impl Spilled {
    fn read(path: &Path, dir: &Path) -> Result<Spilled, CountsError> {
        let mut reader = CountsReader::open(path)?;
        let (path, max_ply) = (reader.path.clone(), reader.max_ply);
        let (positions, n_positions) = spill_sequence::<PosRecord>(&mut reader, dir)?;
        let (moves, n_moves) = spill_sequence::<MoveRecord>(&mut reader, dir)?;
        let (bad, counters) = reader.finish()?;
        Ok(Spilled {
            path,
            max_ply,
            positions: positions.opener(),
            moves: moves.opener(),
            lengths: (n_positions, n_moves),
            bad,
            counters,
        })
    }
}

/// Sorted runs of counts on their way into a counts file, and the report that goes with
/// them.
#[derive(Default)]
pub struct Parts {
    /// Position runs.
    pub positions: Vec<Opener<'static, PosRecord>>,
    /// Move runs.
    pub moves: Vec<Opener<'static, MoveRecord>>,
    /// Bad games of every part.
    pub bad: BadGames,
    /// Counters of every part.
    pub counters: Counters,
    /// The parts' ply limit (the first part's; the others must match it).
    pub max_ply: Option<u32>,
    /// Records in each part's position and move run, in the order added: with one part,
    /// [`Parts::write`] copies its runs into the file without merging them again.
    lengths: Vec<(u64, u64)>,
}

impl Parts {
    /// Checks that `found` (the ply limit of `path`) matches the parts' so far.
    fn same_ply(&mut self, path: &str, found: u32) -> Result<(), CountsError> {
        match self.max_ply {
            Some(expected) if expected != found => {
                Err(CountsError::PlyMismatch { path: path.into(), found, expected })
            }
            _ => {
                self.max_ply = Some(found);
                Ok(())
            }
        }
    }

    /// Adds the counts files `paths`, each read once as a stream into spill files in
    /// `dir`, several at a time (reading is decompressing, a core's work per file).
    pub fn add_files(
        &mut self,
        paths: &[std::path::PathBuf],
        dir: &Path,
    ) -> Result<(), CountsError> {
        use rayon::prelude::*;
        let spilled: Vec<Result<Spilled, CountsError>> =
            paths.par_iter().map(|path| Spilled::read(path, dir)).collect();
        for part in spilled {
            let part = part?;
            self.same_ply(&part.path, part.max_ply)?;
            self.positions.push(part.positions);
            self.moves.push(part.moves);
            self.lengths.push(part.lengths);
            self.bad.merge(&part.bad);
            self.counters.merge(&part.counters);
        }
        Ok(())
    }

    /// Adds counted runs (those of `okb count`'s game files), merged into one spill file
    /// each at once (a file's last run is in memory), checking their ply limit.
    #[allow(clippy::too_many_arguments)]
    pub fn add_runs(
        &mut self,
        path: &str,
        max_ply: u32,
        positions: Vec<Opener<'static, PosRecord>>,
        moves: Vec<Opener<'static, MoveRecord>>,
        bad: &BadGames,
        counters: &Counters,
        plan: &MergePlan,
    ) -> Result<(), CountsError> {
        self.same_ply(path, max_ply)?;
        let failed = |e: crate::games::runs::RunError| CountsError::Io {
            path: path.into(),
            source: std::io::Error::other(e.to_string()),
        };
        // The two sequences merge at once, on two threads.
        let (positions, moves) =
            rayon::join(|| merge_to_spill(positions, plan), || merge_to_spill(moves, plan));
        let ((positions, n_positions), (moves, n_moves)) =
            (positions.map_err(failed)?, moves.map_err(failed)?);
        self.positions.push(positions);
        self.moves.push(moves);
        self.lengths.push((n_positions, n_moves));
        self.bad.merge(bad);
        self.counters.merge(counters);
        Ok(())
    }

    /// Merges every run and writes the counts file `path` (named `name` inside), never
    /// holding the counts: each sequence is merged into a spill file first (a counts file
    /// states its length before its records; a single part's runs are merged already),
    /// then copied into the file's zstd stream.
    /// Returns the number of positions and moves written.
    pub fn write(
        self,
        path: &Path,
        name: &str,
        plan: &MergePlan,
    ) -> Result<(u64, u64), CountsError> {
        let out = path.display().to_string();
        let io = |source: std::io::Error| CountsError::Io { path: out.clone(), source };
        let runs = |e: crate::games::runs::RunError| CountsError::Io {
            path: out.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        let ((positions, n_pos), (moves, n_moves)) = match self.lengths[..] {
            // One part (`okb count` of one game file): its runs are already merged.
            [(n_pos, n_moves)] if self.positions.len() == 1 && self.moves.len() == 1 => {
                let (mut positions, mut moves) = (self.positions, self.moves);
                let one = "one run each";
                ((positions.pop().expect(one), n_pos), (moves.pop().expect(one), n_moves))
            }
            _ => {
                // The two sequences merge at once, on two threads.
                let (positions, moves) = rayon::join(
                    || merge_to_spill(self.positions, plan),
                    || merge_to_spill(self.moves, plan),
                );
                (positions.map_err(runs)?, moves.map_err(runs)?)
            }
        };
        // Dropped on an error, the file leaves nothing under `path`.
        let mut file = crate::files::write::AtomicFile::create(path).map_err(io)?;
        {
            std::io::Write::write_all(&mut file, &FRAME.header()).map_err(io)?;
            // Buffered before the encoder: each write into it is a call into zstd.
            let mut z = std::io::BufWriter::with_capacity(
                1 << 16,
                zstd::stream::write::Encoder::new(&mut file, 3).map_err(io)?,
            );
            let mut put = |bytes: &[u8]| std::io::Write::write_all(&mut z, bytes).map_err(io);
            put(&postcard_bytes(&name))?;
            put(&postcard_bytes(&self.max_ply.unwrap_or(0)))?;
            copy_run::<PosRecord>(positions, n_pos, &mut put, &runs)?;
            copy_run::<MoveRecord>(moves, n_moves, &mut put, &runs)?;
            put(&postcard_bytes(&self.bad))?;
            put(&postcard_bytes(&self.counters))?;
            put(&postcard_bytes(&None::<StreamBreak>))?;
            z.into_inner().map_err(|e| io(e.into_error()))?.finish().map_err(io)?;
        }
        file.sync_data().map_err(io)?;
        file.commit().map_err(io)?;
        Ok((n_pos, n_moves))
    }
}

/// `value`'s postcard bytes.
fn postcard_bytes<T: serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    postcard::to_allocvec(value).expect("serializing to memory does not fail")
}

/// `runs` merged into one spill file, and its number of records.
fn merge_to_spill<T: Record + 'static>(
    runs: Vec<Opener<'static, T>>,
    plan: &MergePlan,
) -> Result<(Opener<'static, T>, u64), crate::games::runs::RunError> {
    let spill = SpillFile::create(&plan.spill_dir)?;
    let file = std::fs::File::create(spill.path()).map_err(crate::games::runs::RunError::Output)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 18, file);
    let mut n = 0u64;
    crate::games::runs::merge_runs(runs, plan, &mut |r| {
        n += 1;
        write_record(&mut w, &r)
    })?;
    std::io::Write::flush(&mut w)?;
    Ok((spill.opener(), n))
}

/// Writes a run as a counts file's sequence: its length, then each record (postcard).
fn copy_run<T: Record + serde::Serialize>(
    run: Opener<'static, T>,
    n: u64,
    put: &mut dyn FnMut(&[u8]) -> Result<(), CountsError>,
    failed: &dyn Fn(crate::games::runs::RunError) -> CountsError,
) -> Result<(), CountsError> {
    put(&postcard_bytes(&(n as usize)))?;
    let mut source = run().map_err(failed)?;
    let mut bytes = Vec::with_capacity(64);
    while let Some(record) = source().map_err(failed)? {
        bytes.clear();
        bytes = postcard::to_extend(&record, bytes).expect("serializing to memory does not fail");
        put(&bytes)?;
    }
    Ok(())
}
