//! The games' texts: a game's PGN text cut from its file, its reference fields and id read
//! from the text (so the same game in two files has one id), and the compressed blocks
//! `GET /masters/pgn/{id}` reads a game's text from.

use super::GameRef;
use super::slice::mode_of;
use crate::games::filter::{GameResult, GameTags};

/// Games per compressed PGN block.
pub const BLOCK_GAMES: usize = 256;

/// The text of the game starting at `offset`: its tag lines and movetext, up to the next
/// tag line after the movetext, `\r\n` as `\n`, blank space around trimmed.
pub fn game_text(data: &[u8], offset: usize) -> String {
    let rest = &data[offset.min(data.len())..];
    let mut end = rest.len();
    let mut in_movetext = false;
    let mut at = 0;
    for line in rest.split_inclusive(|&b| b == b'\n') {
        let t = line.trim_ascii();
        if t.starts_with(b"[") && in_movetext {
            end = at;
            break;
        }
        if !t.is_empty() && !t.starts_with(b"[") {
            in_movetext = true;
        }
        at += line.len();
    }
    let text = decode(&rest[..end]);
    text.replace("\r\n", "\n").trim().to_string()
}

/// UTF-8, or Latin-1 when not.
fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// The tag pairs of a game's text (its leading tag lines), values unquoted and unescaped.
pub fn tag_pairs(text: &str) -> Vec<(&str, String)> {
    let mut pairs = Vec::new();
    for line in text.lines() {
        let Some(inner) = line.trim().strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            if !line.trim().is_empty() {
                break;
            }
            continue;
        };
        let Some((name, value)) = inner.split_once(' ') else { continue };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value)
            .replace("\\\"", "\"")
            .replace("\\\\", "\\");
        pairs.push((name, value));
    }
    pairs
}

/// A game's reference fields read from its text alone (the tags the readers would have
/// collected are read again from its tag lines), for readers that keep only the text;
/// the same id and fields as the index gives the game.
pub fn reference_of_text(text: &str) -> GameRef {
    let mut tags = GameTags::default();
    for (name, value) in tag_pairs(text) {
        tags.add(name.as_bytes(), value.as_bytes());
    }
    describe(text, &tags, tags.result).0
}

/// A game's reference fields from its text and tags, and the BLAKE3 of the text.
pub(super) fn describe(text: &str, tags: &GameTags, result: Option<GameResult>) -> (GameRef, u128) {
    let mut r = GameRef::default();
    let (mut site, mut time) = (String::new(), String::new());
    for (name, value) in tag_pairs(text) {
        match name {
            "White" => r.white = value,
            "Black" => r.black = value,
            "Site" => site = value,
            "Event" => r.mode = mode_of(&value),
            "UTCTime" | "Time" => time = value,
            _ => {}
        }
    }
    let hash = blake3::hash(text.as_bytes());
    let lichess = site
        .strip_prefix("https://lichess.org/")
        .or_else(|| site.strip_prefix("http://lichess.org/"));
    r.id = match lichess {
        Some(id) if id.len() == 8 && id.bytes().all(|b| b.is_ascii_alphanumeric()) => {
            id.to_string()
        }
        _ => base62_id(hash.as_bytes()),
    };
    r.white_rating = tags.white_elo.unwrap_or(0) as u16;
    r.black_rating = tags.black_elo.unwrap_or(0) as u16;
    if let Some(d) = tags.date
        && d.earliest / 10000 == d.latest / 10000
    {
        r.year = (d.earliest / 10000) as u16;
        if d.earliest / 100 == d.latest / 100 {
            r.month = (d.earliest / 100 % 100) as u8;
        }
        let day = if d.earliest == d.latest { d.earliest % 100 } else { 0 };
        r.played = u64::from(r.year) * 10_000_000_000
            + u64::from(r.month) * 100_000_000
            + u64::from(day) * 1_000_000;
    }
    let digits: String = time.chars().filter(char::is_ascii_digit).take(6).collect();
    if digits.len() == 6 && r.played > 0 {
        r.played += digits.parse::<u64>().unwrap_or(0);
    }
    r.winner = match result {
        Some(GameResult::WhiteWins) => 1,
        Some(GameResult::BlackWins) => 2,
        _ => 0,
    };
    r.speed = tags.speed.map_or(0, |s| s as u8 + 1);
    let mut h = [0u8; 16];
    h.copy_from_slice(&hash.as_bytes()[..16]);
    (r, u128::from_le_bytes(h))
}

/// The first 8 base-62 digits of `bytes` read as a number.
pub(super) fn base62_id(bytes: &[u8]) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    (0..8)
        .map(|_| {
            let d = DIGITS[(n % 62) as usize];
            n /= 62;
            char::from(d)
        })
        .collect()
}

/// The PGN text of game `game` from its decompressed block `block`.
pub fn game_pgn(game: &GameRef, block: &[u8]) -> Option<String> {
    let bytes = block.get(game.start as usize..(game.start + game.len) as usize)?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// Decompresses a PGN block.
pub fn decompress(block: &[u8]) -> std::io::Result<Vec<u8>> {
    zstd::stream::decode_all(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_text_stops_at_the_next_game() {
        let data = b"[Event \"a\"]\r\n[Site \"https://lichess.org/abcdefgh\"]\r\n\r\n1. e4 e5 1-0\r\n\r\n[Event \"b\"]\n\n1. d4 0-1\n";
        let text = game_text(data, 0);
        assert_eq!(text, "[Event \"a\"]\n[Site \"https://lichess.org/abcdefgh\"]\n\n1. e4 e5 1-0");
        let (r, _) = describe(&text, &GameTags::default(), Some(GameResult::WhiteWins));
        assert_eq!((r.id.as_str(), r.winner), ("abcdefgh", 1));
        let at = data.windows(11).position(|w| w == b"[Event \"b\"]").unwrap();
        let other = game_text(data, at);
        assert!(other.starts_with("[Event \"b\"]"), "{other}");
        let (r, _) = describe(&other, &GameTags::default(), Some(GameResult::Draw));
        assert_eq!(r.id.len(), 8);
        assert!(r.id.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
