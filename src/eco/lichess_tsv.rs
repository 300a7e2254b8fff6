//! The lichess-org/chess-openings TSV files: a header `eco name pgn`, then one row per line.

use super::{EcoRow, ParsedSource, is_eco_code, play_row};
use crate::diagnostics::Warning;

/// Parses one TSV file. Rows with a wrong column count, a bad ECO code, an illegal move or
/// bytes that are not UTF-8 are skipped with a warning.
pub fn parse(file: &str, bytes: &[u8]) -> ParsedSource {
    let mut out = ParsedSource::default();
    let mut player = super::line::LinePlayer::default();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = index as u32 + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(raw) else {
            let shown = String::from_utf8_lossy(raw);
            out.warnings.push(Warning::at(
                "encoding",
                file,
                line_no,
                "row is not valid UTF-8",
                &shown,
            ));
            continue;
        };
        let columns: Vec<&str> = text.split('\t').collect();
        if index == 0 && columns.first() == Some(&"eco") {
            continue;
        }
        if columns.len() != 3 {
            out.warnings.push(Warning::at(
                "columns",
                file,
                line_no,
                format!(
                    "expected 3 tab-separated columns (eco, name, pgn), found {}",
                    columns.len()
                ),
                text,
            ));
            continue;
        }
        let (eco, name, pgn) = (columns[0].trim(), columns[1].trim(), columns[2].trim());
        if !is_eco_code(eco) {
            out.warnings.push(Warning::at("eco-code", file, line_no, "bad ECO code", eco));
            continue;
        }
        if let Some(moves) = play_row(&mut player, file, line_no, pgn, &mut out.warnings) {
            out.rows.push(EcoRow {
                line: line_no,
                eco: eco.to_string(),
                scid: None,
                name: name.to_string(),
                moves,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_rows_are_skipped_with_file_and_line() {
        let tsv = b"eco\tname\tpgn\nB00\tKing's Pawn\t1. e4\nX99\tBad\t1. d4\nB01\tTwo columns\nC20\tIllegal\t1. e4 e4\nB02\tLatin \xe9\t1. e4 Nf6\n";
        let parsed = parse("b.tsv", tsv);
        assert_eq!(parsed.rows.len(), 1);
        assert_eq!(parsed.rows[0].name, "King's Pawn");
        let kinds: Vec<(&str, Option<u32>)> =
            parsed.warnings.iter().map(|w| (w.kind.as_str(), w.line)).collect();
        assert_eq!(
            kinds,
            vec![
                ("eco-code", Some(3)),
                ("columns", Some(4)),
                ("illegal-move", Some(5)),
                ("encoding", Some(6))
            ]
        );
        assert!(parsed.warnings[2].to_string().starts_with("b.tsv:5: move 2 (e4) is illegal"));
    }
}
