//! Phase 1: the ECO skeleton.
//!
//! Each taxonomy file is parsed on its own ([`lichess_tsv`], [`scid_eco`], [`eco_pgn`])
//! into [`ParsedSource`] rows that have already been played on a board, so a bad row is
//! reported with its file and line and skipped. [`merge()`] then joins the sources by
//! position and fills the gaps between named lines with interpolated entries.

pub mod eco_pgn;
pub mod lichess_tsv;
pub mod line;
pub mod merge;
pub mod scid_eco;

use serde::{Deserialize, Serialize};

use crate::diagnostics::Warning;
use crate::position::MoveKey;

pub use merge::{EcoEntry, EcoSkeleton, merge};

/// Which taxonomy a file is written in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EcoFormat {
    /// lichess-org/chess-openings TSV (`eco`, `name`, `pgn`): the authority.
    LichessTsv,
    /// SCID's `scid.eco`.
    Scid,
    /// pgn-extract's `eco.pgn`.
    PgnExtract,
}

impl EcoFormat {
    /// The name this source's entries carry in `src` and in `aliases`.
    pub fn src_name(self) -> &'static str {
        match self {
            EcoFormat::LichessTsv => "eco_tsv",
            EcoFormat::Scid => "scid",
            EcoFormat::PgnExtract => "pgn_extract",
        }
    }
}

/// One named line of a taxonomy file, already played out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcoRow {
    /// 1-based line where the row starts.
    pub line: u32,
    /// Three-character ECO code (`B03`).
    pub eco: String,
    /// SCID's extended code (`B03a`, `A00a1`), for SCID rows.
    pub scid: Option<String>,
    /// The opening's name as this source writes it.
    pub name: String,
    /// The line's moves from the start position.
    pub moves: Vec<MoveKey>,
}

/// A parsed taxonomy file: its good rows, in file order, and what was wrong with the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedSource {
    /// Rows that parsed and played legally.
    pub rows: Vec<EcoRow>,
    /// Rows that were skipped, and why.
    pub warnings: Vec<Warning>,
}

/// Parses `bytes` of a taxonomy file named `file` (for messages) in `format`.
pub fn parse(format: EcoFormat, file: &str, bytes: &[u8]) -> ParsedSource {
    match format {
        EcoFormat::LichessTsv => lichess_tsv::parse(file, bytes),
        EcoFormat::Scid => scid_eco::parse(file, bytes),
        EcoFormat::PgnExtract => eco_pgn::parse(file, bytes),
    }
}

/// Whether `code` is a plain ECO code: a letter A–E and two digits.
pub fn is_eco_code(code: &str) -> bool {
    let b = code.as_bytes();
    b.len() == 3 && (b'A'..=b'E').contains(&b[0]) && b[1].is_ascii_digit() && b[2].is_ascii_digit()
}

/// Plays a row's movetext, turning a failure into a warning at `file:line`.
fn play_row(
    player: &mut line::LinePlayer,
    file: &str,
    line: u32,
    movetext: &str,
    warnings: &mut Vec<Warning>,
) -> Option<Vec<MoveKey>> {
    let tokens = line::move_tokens(movetext);
    match player.play(&tokens) {
        Ok(moves) => Some(moves.iter().map(MoveKey::new).collect()),
        Err(e) => {
            warnings.push(Warning::at(
                "illegal-move",
                file,
                line,
                format!("move {} ({}) is illegal: {}", e.ply + 1, e.token, e.reason),
                movetext,
            ));
            None
        }
    }
}
