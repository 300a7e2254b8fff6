//! SCID's `scid.eco`: `CODE "Name" moves *` entries that may continue on following lines,
//! `#` comment lines, extended codes (`B03a`, `A00a1`) and Latin-1 bytes.

use super::line::LinePlayer;
use super::{EcoRow, ParsedSource, play_row};
use crate::diagnostics::{Warning, decode_text};

/// Whether `code` is a SCID code: an ECO code optionally followed by a letter and a digit.
fn is_scid_code(code: &str) -> bool {
    let b = code.as_bytes();
    super::is_eco_code(code.get(..3).unwrap_or(""))
        && match &b[3..] {
            [] => true,
            [l] => l.is_ascii_lowercase(),
            [l, d] => l.is_ascii_lowercase() && d.is_ascii_digit(),
            _ => false,
        }
}

/// Parses `scid.eco`. Malformed entries are skipped with a warning at their first line.
pub fn parse(file: &str, bytes: &[u8]) -> ParsedSource {
    let mut out = ParsedSource::default();
    let mut player = LinePlayer::default();
    let mut pending = String::new();
    let mut start_line = 0u32;
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        // The file is Latin-1 by tradition; UTF-8 lines are accepted too.
        let (text, _) = decode_text(raw);
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if pending.is_empty() {
            start_line = index as u32 + 1;
        } else {
            pending.push(' ');
        }
        pending.push_str(trimmed);
        if trimmed.ends_with('*') {
            entry(&mut player, file, start_line, &std::mem::take(&mut pending), &mut out);
        }
    }
    if !pending.is_empty() {
        out.warnings.push(Warning::at(
            "truncated",
            file,
            start_line,
            "entry has no closing `*`",
            &pending,
        ));
    }
    out
}

fn entry(player: &mut LinePlayer, file: &str, line: u32, text: &str, out: &mut ParsedSource) {
    let malformed = |out: &mut ParsedSource, why: &str| {
        out.warnings.push(Warning::at("malformed", file, line, why.to_string(), text));
    };
    let Some((code, rest)) = text.split_once(char::is_whitespace) else {
        return malformed(out, "expected `CODE \"Name\" moves *`");
    };
    if !is_scid_code(code) {
        out.warnings.push(Warning::at("eco-code", file, line, "bad SCID code", code));
        return;
    }
    let rest = rest.trim_start();
    let Some(after_quote) = rest.strip_prefix('"') else {
        return malformed(out, "expected a quoted name after the code");
    };
    let Some((name, movetext)) = after_quote.split_once('"') else {
        return malformed(out, "unterminated quoted name");
    };
    if let Some(moves) = play_row(player, file, line, movetext, &mut out.warnings) {
        out.rows.push(EcoRow {
            line,
            eco: code[..3].to_string(),
            scid: Some(code.to_string()),
            name: name.to_string(),
            moves,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_lines_comments_and_latin1() {
        let eco = b"# comment\nA00a \"Start position\"  *\nB03a \"Alekhine: 3.d4\"\n  1.e4 Nf6 2.e5 Nd5 3.d4 *\nA00b \"Gr\xfcnfeld-ish\" 1.f3 *\nZ00 \"Bad\" 1.e4 *\nA01 \"Illegal\" 1.e4 e4 *\n";
        let parsed = parse("scid.eco", eco);
        let names: Vec<&str> = parsed.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["Start position", "Alekhine: 3.d4", "Grünfeld-ish"]);
        assert_eq!(parsed.rows[1].line, 3);
        assert_eq!(parsed.rows[1].moves.len(), 5);
        assert_eq!(parsed.rows[1].scid.as_deref(), Some("B03a"));
        let lines: Vec<Option<u32>> = parsed.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![Some(6), Some(7)]);
    }

    #[test]
    fn extended_codes() {
        assert!(is_scid_code("A00a1") && is_scid_code("B03a") && is_scid_code("C20"));
        assert!(!is_scid_code("A00aa") && !is_scid_code("F00") && !is_scid_code("A0"));
    }
}
