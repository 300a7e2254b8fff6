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
    /// Malformed lines: the first [`REPORTED_MALFORMED`] with line number and what was
    /// skipped, and why (the line, or an evaluation whose principal variation is illegal).
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
    let want = Wanted {
        prefixes: wanted.iter().map(|e| three_fields(e.as_bytes())).collect(),
        epds: wanted,
    };
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
        let results: Vec<ChunkResult> =
            rx.into_iter().par_bridge().map(|c| scan_chunk(&c, &want)).collect();
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
    let mut result =
        ChunkResult { index: chunk.index, found: Vec::new(), malformed: Vec::new(), lines: 0 };
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
            Ok((found, problems)) => {
                result.found.extend(found);
                if !problems.is_empty() {
                    result.malformed.push((number, problems.join("; ")));
                }
            }
            Err(reason) => result.malformed.push((number, format!("line skipped: {reason}"))),
        }
    }
    result
}

/// A candidate line read: its position and evaluations when the position is wanted, and
/// the principal variations left out.
type Kept = (Option<(String, Vec<Eval>)>, Vec<String>);

/// Parses a candidate line: its evaluations when its position is wanted (those with an
/// illegal principal variation left out), and what was left out.
fn keep(line: &[u8], want: &Wanted<'_>) -> Result<Kept, String> {
    let entry = dump::parse_line(line)?;
    let pos = position::parse_fen(&entry.fen).map_err(|e| format!("fen {:?}: {e}", entry.fen))?;
    let epd = position::epd(&pos);
    if !want.epds.contains(&epd) {
        return Ok((None, Vec::new()));
    }
    let mut problems = Vec::new();
    let mut evals = Vec::with_capacity(entry.evals.len());
    for (i, eval) in entry.evals.into_iter().enumerate() {
        // An evaluation missing a line is not the search it claims (its best move would
        // be its second best): it is left out whole, never shortened.
        match eval
            .pvs
            .iter()
            .enumerate()
            .find_map(|(j, pv)| illegal_move(&pos, &pv.line).map(|why| (j, why)))
        {
            Some((j, why)) => {
                problems.push(format!("evaluation skipped: evals[{i}].pvs[{j}]: {why}"))
            }
            None => evals.push(eval),
        }
    }
    Ok(((!evals.is_empty()).then_some((epd, evals)), problems))
}

/// The first move of `line` (UCI, from `pos`) that is not a legal move there, and why.
fn illegal_move(pos: &shakmaty::Chess, line: &str) -> Option<String> {
    use shakmaty::Position;
    let mut pos = pos.clone();
    for (k, text) in line.split_ascii_whitespace().enumerate() {
        let uci: shakmaty::uci::UciMove = match text.parse() {
            Ok(uci) => uci,
            Err(_) => return Some(format!("move {} {text:?} is not a UCI move", k + 1)),
        };
        match uci.to_move(&pos) {
            Ok(m) => pos.play_unchecked(m),
            Err(_) => {
                return Some(format!(
                    "move {} {text} is not legal in {}",
                    k + 1,
                    position::epd(&pos)
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_illegal_move_anywhere_in_a_line_is_named() {
        let start = shakmaty::Chess::default();
        assert_eq!(illegal_move(&start, "e2e4 e7e5 g1f3"), None);
        assert_eq!(illegal_move(&start, ""), None);
        let why = illegal_move(&start, "e2e4 e7e5 e4e5").unwrap();
        assert!(
            why.starts_with(
                "move 3 e4e5 is not legal in rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq"
            ),
            "{why}"
        );
        assert!(
            illegal_move(&start, "e2e4 xx").unwrap().contains("move 2 \"xx\" is not a UCI move")
        );
    }

    #[test]
    fn three_fields_cut_before_en_passant() {
        assert_eq!(three_fields(b"8/8/8/8/8/8/8/K6k w - e3"), b"8/8/8/8/8/8/8/K6k w -");
        assert_eq!(three_fields(b"8/8 w"), b"8/8 w");
    }
}
