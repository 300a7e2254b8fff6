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

use super::aggregate::{FileAggregate, merge, merge_reports};
use super::input::StreamBreak;
use super::report::{BadGames, Counters};

/// The magic at the start of every counts file.
pub const MAGIC: &[u8; 8] = b"OKBCOUNT";
/// The format version written (and the only one read).
pub const VERSION: u32 = 1;

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
    #[error("{path} was counted to ply {found}, the others to ply {expected}: count every part with the same --max-ply")]
    PlyMismatch {
        /// The odd file.
        path: String,
        /// Its ply limit.
        found: u32,
        /// The first part's.
        expected: u32,
    },
}

/// The bytes of a counts file holding `counts`.
pub fn encode(counts: &FileAggregate) -> Vec<u8> {
    let body = postcard::to_allocvec(counts).expect("serializing to memory does not fail");
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend(zstd::bulk::compress(&body, 3).expect("compressing to memory does not fail"));
    out
}

/// Checks the magic and version at the start of a counts file read from `path`.
fn check_header(path: &str, bytes: &[u8]) -> Result<(), CountsError> {
    let bad = |message: String| CountsError::Format { path: path.to_string(), message };
    if bytes.len() < 12 || &bytes[..8] != MAGIC {
        return Err(bad("not an okb counts file (it does not start with OKBCOUNT); make one with `okb count`".into()));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("four bytes"));
    if version != VERSION {
        return Err(bad(format!("counts format version {version}; this okb reads version {VERSION}")));
    }
    Ok(())
}

/// The counts in `bytes`, read from `path` (for messages).
pub fn decode(path: &str, bytes: &[u8]) -> Result<FileAggregate, CountsError> {
    let bad = |message: String| CountsError::Format { path: path.to_string(), message };
    check_header(path, bytes)?;
    let body = zstd::stream::decode_all(&bytes[12..]).map_err(|e| bad(format!("damaged: {e}")))?;
    postcard::from_bytes(&body).map_err(|e| bad(format!("damaged: {e}")))
}

/// Reads the counts file at `path`.
pub fn read(path: &Path) -> Result<FileAggregate, CountsError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| CountsError::Io { path: shown.clone(), source })?;
    decode(&shown, &bytes)
}

/// Writes `counts` to `path` (complete or not at all).
pub fn write(path: &Path, counts: &FileAggregate) -> Result<(), CountsError> {
    crate::dataflow::cache::write_atomic(path, &encode(counts)).map_err(|source| CountsError::Io { path: path.display().to_string(), source })
}

/// `parts` merged into one (named `name`); every part must have the same ply limit.
pub fn merge_parts(name: &str, parts: &[FileAggregate]) -> Result<FileAggregate, CountsError> {
    let expected = parts.first().map_or(0, |p| p.max_ply);
    if let Some(odd) = parts.iter().find(|p| p.max_ply != expected) {
        return Err(CountsError::PlyMismatch { path: odd.file.clone(), found: odd.max_ply, expected });
    }
    let refs: Vec<&FileAggregate> = parts.iter().collect();
    let (bad, counters) = merge_reports(&refs);
    Ok(FileAggregate { file: name.to_string(), max_ply: expected, stats: merge(&refs), bad, counters, ..Default::default() })
}

/// A counts file read as a stream, in its layout's order ([`FileAggregate`]'s fields):
/// the header ([`CountsReader::open`]), the positions, then the moves
/// ([`CountsReader::records`] each), then the report ([`CountsReader::finish`]). The
/// statistics pass through without being held, whatever the file's size.
pub struct CountsReader {
    path: String,
    input: zstd::stream::read::Decoder<'static, std::io::BufReader<std::fs::File>>,
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
        let mut header = Vec::with_capacity(12);
        file.by_ref().take(12).read_to_end(&mut header).map_err(io)?;
        check_header(&shown, &header)?;
        let input = zstd::stream::read::Decoder::new(file).map_err(io)?;
        let mut reader = CountsReader { path: shown, input, scratch: vec![0; 64 << 10], file: String::new(), max_ply: 0 };
        reader.file = reader.next()?;
        reader.max_ply = reader.next()?;
        Ok(reader)
    }

    /// The next value of the stream.
    fn next<T: DeserializeOwned>(&mut self) -> Result<T, CountsError> {
        let CountsReader { path, input, scratch, .. } = self;
        match postcard::from_io((input, &mut scratch[..])) {
            Ok((value, _)) => Ok(value),
            Err(e) => Err(CountsError::Format { path: path.clone(), message: format!("damaged: {e}") }),
        }
    }

    /// Hands the records of the next sequence (the positions, then the moves) to `out`;
    /// returns how many there were. A failure of `out` ends the reading with its error.
    pub fn records<T: DeserializeOwned, E: From<CountsError>>(&mut self, out: &mut dyn FnMut(T) -> Result<(), E>) -> Result<u64, E> {
        let n: usize = self.next()?;
        for _ in 0..n {
            out(self.next()?)?;
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
