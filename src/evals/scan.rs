//! Streaming a dump and keeping the positions asked for.
//!
//! A real dump holds hundreds of millions of lines, so most lines are rejected without
//! being parsed: the FEN is cut out of the line's fixed prefix ([`super::dump::fen_of`])
//! and its first three fields (placement, side to move, castling) looked up in a hash set
//! of the wanted positions. Only a hit, or a line that does not start the usual way, is
//! parsed in full and its FEN normalised to okb's identity (the legal en-passant rule).
//! The decompressed stream is cut into chunks of whole lines by one thread and the
//! chunks scanned on every core; memory is a few chunks plus the positions kept.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::BuildHasherDefault;
use std::path::Path;
use std::sync::mpsc;

use rayon::iter::{ParallelBridge, ParallelIterator};
use rustc_hash::FxHasher;
use serde::{Deserialize, Serialize};

use super::dump::{self, Eval};
use crate::games::GamesError;
use crate::games::input::{Boundary, Chunk, Chunker};
use crate::position;

/// Chunks read ahead of the scanners: memory is this many chunks of [`CHUNK_BYTES`].
const READ_AHEAD: usize = 4;
/// Bytes of whole lines per chunk.
const CHUNK_BYTES: usize = 4 << 20;
/// Malformed lines reported one by one; the rest are counted.
const REPORTED_MALFORMED: usize = 100;

/// What a scan kept and saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// The evaluations of the wanted positions found, keyed by [`position::epd`]
    /// (several lines of one position, after normalisation, are merged in file order).
    pub evals: BTreeMap<String, Vec<Eval>>,
    /// Lines read (blank lines included).
    pub lines: u64,
    /// Malformed lines: the first [`REPORTED_MALFORMED`] with line number and reason.
    pub malformed: Vec<(u64, String)>,
    /// All malformed lines, reported or not.
    pub malformed_count: u64,
}

type FxSet<T> = HashSet<T, BuildHasherDefault<FxHasher>>;

/// The positions asked for, by identity and by the three fields a line is matched on.
struct Wanted<'a> {
    prefixes: FxSet<&'a [u8]>,
    epds: &'a BTreeSet<String>,
}

/// The first three FEN fields (placement, side, castling) of `fen`.
fn three_fields(fen: &[u8]) -> &[u8] {
    let mut spaces = 0;
    for (i, &b) in fen.iter().enumerate() {
        if b == b' ' {
            spaces += 1;
            if spaces == 3 {
                return &fen[..i];
            }
        }
    }
    fen
}

/// What one chunk gave.
struct ChunkResult {
    index: u64,
    found: Vec<(String, Vec<Eval>)>,
    malformed: Vec<(u64, String)>,
    lines: u64,
}

/// Reads the dump at `path` (plain or compressed, by magic bytes) and keeps the
/// evaluations of the positions in `wanted` (identities as [`position::epd`] writes
/// them). A broken stream (truncated or corrupt compression) is an error naming the
/// file and line; a malformed line is recorded and skipped.
pub fn scan(path: &Path, wanted: &BTreeSet<String>) -> Result<Selection, GamesError> {
    let want = Wanted { prefixes: wanted.iter().map(|e| three_fields(e.as_bytes())).collect(), epds: wanted };
    let mut chunker = Chunker::open(path, CHUNK_BYTES, Boundary::Line)?;
    let (tx, rx) = mpsc::sync_channel::<Chunk>(READ_AHEAD);
    let (read, mut results) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> Result<(), GamesError> {
            while let Some(chunk) = chunker.next_chunk()? {
                if tx.send(chunk).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let results: Vec<ChunkResult> = rx.into_iter().par_bridge().map(|c| scan_chunk(&c, &want)).collect();
        (reader.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), results)
    });
    read?;
    results.sort_by_key(|r| r.index);
    let mut selection = Selection::default();
    for r in results {
        selection.lines += r.lines;
        selection.malformed_count += r.malformed.len() as u64;
        let room = REPORTED_MALFORMED.saturating_sub(selection.malformed.len());
        selection.malformed.extend(r.malformed.into_iter().take(room));
        for (epd, evals) in r.found {
            selection.evals.entry(epd).or_default().extend(evals);
        }
    }
    Ok(selection)
}

/// Scans the lines of one chunk.
fn scan_chunk(chunk: &Chunk, want: &Wanted<'_>) -> ChunkResult {
    let mut result = ChunkResult { index: chunk.index, found: Vec::new(), malformed: Vec::new(), lines: 0 };
    let mut data: &[u8] = &chunk.data;
    while !data.is_empty() {
        let end = memchr::memchr(b'\n', data).unwrap_or(data.len());
        let line = data[..end].strip_suffix(b"\r").unwrap_or(&data[..end]);
        let number = chunk.first_line + result.lines;
        data = data.get(end + 1..).unwrap_or_default();
        result.lines += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let candidate = match dump::fen_of(line) {
            Some(fen) => want.prefixes.contains(three_fields(fen)),
            // Not the usual layout: only a full parse can tell.
            None => true,
        };
        if !candidate {
            continue;
        }
        match keep(line, want) {
            Ok(Some(found)) => result.found.push(found),
            Ok(None) => {}
            Err(reason) => result.malformed.push((number, reason)),
        }
    }
    result
}

/// Parses a candidate line; `Some` when its position is wanted.
fn keep(line: &[u8], want: &Wanted<'_>) -> Result<Option<(String, Vec<Eval>)>, String> {
    let entry = dump::parse_line(line)?;
    let pos = position::parse_fen(&entry.fen).map_err(|e| format!("fen {:?}: {e}", entry.fen))?;
    let epd = position::epd(&pos);
    Ok(want.epds.contains(&epd).then(|| (epd, entry.evals)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_fields_cut_before_en_passant() {
        assert_eq!(three_fields(b"8/8/8/8/8/8/8/K6k w - e3"), b"8/8/8/8/8/8/8/K6k w -");
        assert_eq!(three_fields(b"8/8 w"), b"8/8 w");
    }
}
