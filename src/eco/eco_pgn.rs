//! pgn-extract's `eco.pgn`: PGN games whose tags `ECO`, `Opening`, `Variation` and
//! `SubVariation` name the line their movetext plays.

use super::line::LinePlayer;
use super::{EcoRow, ParsedSource, is_eco_code, play_row};
use crate::diagnostics::{Warning, decode_text};

/// Parses `eco.pgn`. Entries with a bad code or an illegal move are skipped with a warning.
pub fn parse(file: &str, bytes: &[u8]) -> ParsedSource {
    let (text, _) = decode_text(bytes);
    let mut out = ParsedSource::default();
    let mut player = LinePlayer::default();
    let mut game = Game::default();
    let mut in_comment = false;
    for (index, line) in text.lines().enumerate() {
        let line_no = index as u32 + 1;
        let mut rest = line.trim();
        if in_comment {
            match rest.find('}') {
                Some(end) => {
                    in_comment = false;
                    rest = rest[end + 1..].trim();
                }
                None => continue,
            }
        }
        if rest.starts_with('[') {
            if !game.movetext.is_empty() {
                game.finish(&mut player, file, &mut out);
            }
            if game.line == 0 {
                game.line = line_no;
            }
            match parse_tag(rest) {
                Some((name, value)) => {
                    game.tags.push((name.to_string(), value.to_string()));
                }
                None => out.warnings.push(Warning::at(
                    "malformed",
                    file,
                    line_no,
                    "malformed tag",
                    rest,
                )),
            }
            continue;
        }
        // Strip `{...}` comments, which may open on this line and close later.
        let mut moves = String::new();
        let mut chars = rest;
        while let Some(open) = chars.find('{') {
            moves.push_str(&chars[..open]);
            match chars[open..].find('}') {
                Some(close) => chars = &chars[open + close + 1..],
                None => {
                    in_comment = true;
                    chars = "";
                }
            }
        }
        moves.push_str(chars);
        if !moves.trim().is_empty() {
            if game.line == 0 {
                game.line = line_no;
            }
            game.movetext.push(' ');
            game.movetext.push_str(moves.trim());
            let ended = moves
                .split_whitespace()
                .last()
                .is_some_and(|t| matches!(t, "*" | "1-0" | "0-1" | "1/2-1/2"));
            if ended {
                game.finish(&mut player, file, &mut out);
            }
        }
    }
    if !game.movetext.trim().is_empty() || !game.tags.is_empty() {
        out.warnings.push(Warning::at(
            "truncated",
            file,
            game.line,
            "last game has no result",
            game.movetext.trim(),
        ));
    }
    out
}

fn parse_tag(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?.trim();
    let (name, value) = inner.split_once(char::is_whitespace)?;
    let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
    Some((name, value))
}

#[derive(Default)]
struct Game {
    line: u32,
    tags: Vec<(String, String)>,
    movetext: String,
}

impl Game {
    fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    fn finish(&mut self, player: &mut LinePlayer, file: &str, out: &mut ParsedSource) {
        let game = std::mem::take(self);
        let eco = game.tag("ECO").unwrap_or("");
        if !is_eco_code(eco) {
            out.warnings.push(Warning::at(
                "eco-code",
                file,
                game.line,
                "bad or missing ECO tag",
                eco,
            ));
            return;
        }
        let Some(opening) = game.tag("Opening") else {
            out.warnings.push(Warning::at(
                "malformed",
                file,
                game.line,
                "missing Opening tag",
                eco,
            ));
            return;
        };
        let mut name = opening.to_string();
        if let Some(variation) = game.tag("Variation") {
            name = format!("{name}: {variation}");
        }
        if let Some(sub) = game.tag("SubVariation") {
            name = format!("{name}, {sub}");
        }
        if let Some(moves) = play_row(player, file, game.line, &game.movetext, &mut out.warnings) {
            out.rows.push(EcoRow {
                line: game.line,
                eco: eco.to_string(),
                scid: None,
                name,
                moves,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_the_line() {
        let pgn = "{\nheader comment\n}\n\n[ECO \"A00\"]\n[Opening \"Polish\"]\n[Variation \"Tuebingen variation\"]\n\n1. b4 Nh6 *\n\n[ECO \"C60\"]\n[Opening \"Ruy Lopez\"]\n\n1. e4 e5 2. Nf3 Nc6 {comment} 3. Bb5 *\n\n[ECO \"C99\"]\n[Opening \"Broken\"]\n\n1. e4 e4 *\n";
        let parsed = parse("eco.pgn", pgn.as_bytes());
        let names: Vec<&str> = parsed.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["Polish: Tuebingen variation", "Ruy Lopez"]);
        assert_eq!(parsed.rows[0].line, 5);
        assert_eq!(parsed.rows[1].moves.len(), 5);
        assert_eq!(parsed.warnings.len(), 1);
        assert_eq!(parsed.warnings[0].line, Some(16));
    }
}
