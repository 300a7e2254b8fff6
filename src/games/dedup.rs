//! Repeated games: what makes two games the same, and which copies are repeats.
//!
//! Two games are the same when their White, Black and Date tags and their result are
//! equal and they play the same moves to the end of the game, as written in SAN (move
//! numbers, check and annotation marks, NAGs, comments and variations left out, castling
//! with zeros read as with O's). Event, Site, Round and the other tags are not compared:
//! in the masters corpus the two copies of a game (one in each player's file) never
//! differ in them, and a game entered twice in two events is still one game.
//!
//! Counting records each counted PGN game's [`GameRef`]: a 128-bit fingerprint (BLAKE3
//! of the above) and where the game is in its file ([`location`]). Merging the sorted
//! references of all files finds the repeats: of each fingerprint, the copy in the file
//! that comes first in the pipeline (then the first in that file) is kept, the others
//! are repeats, which are read again and counted into correction runs the `games` merge
//! subtracts. The moves are taken from the text rather than from the game played, which
//! the counter plays only to the ply limit.
//!
//! The other readers of game files keep a repeated game once by the same fingerprint,
//! taken from the text too: the player collections, a repertoire's judged games and
//! `okb prep`, whose readers stop a game's moves early (at the repertoire's depth, or out
//! of its book) and give [`fingerprint_of`] its Result tag.

use super::filter::GameResult;
use super::runs::Record;

/// A counted game in a file: its fingerprint, the file's index among the files merged
/// (0 in a file's own list) and its [`location`] in the file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GameRef {
    /// The game's fingerprint ([`fingerprint`]).
    pub fingerprint: u128,
    /// The file's index in pipeline order.
    pub file: u32,
    /// Where the game is in its file ([`location`]).
    pub location: u64,
}

/// Where a game is in its file: the chunk it was read in and its offset there. Chunks
/// are cut from the bytes alone, so a file read again gives the same locations.
pub fn location(chunk_index: u64, offset: usize) -> u64 {
    (chunk_index << 40) | offset as u64
}

/// The first location of chunk `index` and the first past it.
pub fn chunk_locations(index: u64) -> std::ops::Range<u64> {
    location(index, 0)..location(index + 1, 0)
}

impl Record for GameRef {
    type Key = (u128, u32, u64);
    const MAX_BYTES: usize = 28;

    fn key(&self) -> Self::Key {
        (self.fingerprint, self.file, self.location)
    }

    // Keys are unique (a location holds one game): nothing to combine.
    fn combine(&mut self, _: &Self) {}

    fn encode(&self, out: &mut [u8]) -> usize {
        out[..16].copy_from_slice(&self.fingerprint.to_le_bytes());
        out[16..20].copy_from_slice(&self.file.to_le_bytes());
        out[20..28].copy_from_slice(&self.location.to_le_bytes());
        28
    }

    fn decode(bytes: &[u8]) -> Option<(Self, usize)> {
        let bytes = bytes.get(..28)?;
        let fingerprint = u128::from_le_bytes(bytes[..16].try_into().ok()?);
        let file = u32::from_le_bytes(bytes[16..20].try_into().ok()?);
        let location = u64::from_le_bytes(bytes[20..28].try_into().ok()?);
        Some((GameRef { fingerprint, file, location }, 28))
    }
}

/// The fingerprint of the game whose text starts `text` (its tags, then its movetext;
/// text after its termination marker is ignored), with result `result`.
pub fn fingerprint(text: &[u8], result: GameResult) -> u128 {
    let mut hash = blake3::Hasher::new();
    let (names, lines) = tags(text);
    for value in names {
        hash.update(&(value.len() as u64).to_le_bytes());
        hash.update(value);
    }
    hash.update(&[result as u8]);
    hash_moves(lines, &mut hash);
    let bytes = hash.finalize();
    u128::from_le_bytes(bytes.as_bytes()[..16].try_into().expect("16 bytes"))
}

/// The fingerprint of a game read by a reader that may stop before its end: with its
/// Result tag's result `tag`, else (as the counter reads a game) its termination
/// marker's. `None` for a game with neither, which is never the same as another.
pub fn fingerprint_of(text: &[u8], tag: Option<GameResult>) -> Option<u128> {
    let result = tag.or_else(|| hash_moves(tags(text).1, &mut blake3::Hasher::new()))?;
    Some(fingerprint(text, result))
}

/// A game's White, Black and Date tag values, and the lines after its tags.
fn tags(text: &[u8]) -> ([&[u8]; 3], impl Iterator<Item = &[u8]>) {
    let mut lines = text.split(|&b| b == b'\n').peekable();
    let (mut white, mut black, mut date): (&[u8], &[u8], &[u8]) = (b"", b"", b"");
    while let Some(line) = lines.next_if(|l| is_tag_line(l) || l.trim_ascii().is_empty()) {
        if let Some((name, value)) = tag(line) {
            match name {
                b"White" => white = value,
                b"Black" => black = value,
                b"Date" => date = value,
                _ => {}
            }
        }
    }
    ([white, black, date], lines)
}

/// Hashes the moves of a movetext's `lines`; the result its termination marker gives
/// (`None` when it has none: the text ends, or the next game's tags start, first).
fn hash_moves<'a>(
    lines: impl Iterator<Item = &'a [u8]>,
    hash: &mut blake3::Hasher,
) -> Option<GameResult> {
    let mut movetext = MoveText::default();
    for line in lines {
        if is_tag_line(line) && !movetext.inside() || !movetext.line(line, hash) {
            break;
        }
    }
    movetext.end
}

fn is_tag_line(line: &[u8]) -> bool {
    line.trim_ascii_start().starts_with(b"[")
}

/// A tag line's name and value (between its first and last quote).
fn tag(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = line.trim_ascii().strip_prefix(b"[")?;
    let name_end = line.iter().position(|b| b.is_ascii_whitespace() || *b == b'"')?;
    let first = line.iter().position(|&b| b == b'"')?;
    let last = line.iter().rposition(|&b| b == b'"')?;
    Some((&line[..name_end], line.get(first + 1..last).unwrap_or_default()))
}

/// The state of reading a movetext line by line: inside a comment, how deep in
/// variations.
#[derive(Default)]
struct MoveText {
    comment: bool,
    depth: u32,
    /// The result of the termination marker, once read.
    end: Option<GameResult>,
}

impl MoveText {
    /// Whether a comment or a variation is open (a line starting with `[` is then no tag).
    fn inside(&self) -> bool {
        self.comment || self.depth > 0
    }

    /// Hashes the moves of `line`; false once the game's termination marker is read.
    fn line(&mut self, line: &[u8], hash: &mut blake3::Hasher) -> bool {
        if line.starts_with(b"%") && !self.comment {
            return true;
        }
        let mut i = 0;
        while i < line.len() {
            let b = line[i];
            if self.comment {
                self.comment = b != b'}';
                i += 1;
                continue;
            }
            match b {
                b'{' => self.comment = true,
                b';' => return true,
                b'(' => self.depth += 1,
                b')' => self.depth = self.depth.saturating_sub(1),
                b if b.is_ascii_whitespace() => {}
                _ => {
                    let end = line[i..]
                        .iter()
                        .position(|c| c.is_ascii_whitespace() || b"{};()".contains(c))
                        .map_or(line.len(), |n| i + n);
                    if self.depth == 0 {
                        self.end = token(&line[i..end], hash);
                        if self.end.is_some() {
                            return false;
                        }
                    }
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
        true
    }
}

/// Hashes a movetext token if it is a move; the result a termination marker gives.
fn token(word: &[u8], hash: &mut blake3::Hasher) -> Option<GameResult> {
    let marker = match word {
        b"1-0" => Some(GameResult::WhiteWins),
        b"0-1" => Some(GameResult::BlackWins),
        b"1/2-1/2" | b"\xc2\xbd-\xc2\xbd" => Some(GameResult::Draw),
        b"*" => Some(GameResult::Unknown),
        _ => None,
    };
    if marker.is_some() || word.starts_with(b"$") {
        return marker;
    }
    let castles = |w: &[u8]| w.starts_with(b"0-0");
    let san = if castles(word) {
        word
    } else {
        word.trim_ascii_start_matches(|b: u8| b.is_ascii_digit() || b == b'.')
    };
    let san = san.trim_ascii_end_matches(|b: u8| b"+#!?".contains(&b));
    for &b in san {
        hash.update(&[if b == b'0' && castles(word) { b'O' } else { b }]);
    }
    if !san.is_empty() {
        hash.update(b" ");
    }
    None
}

/// Trimming by a predicate, for byte strings.
trait TrimMatches {
    fn trim_ascii_start_matches(&self, f: impl Fn(u8) -> bool) -> &Self;
    fn trim_ascii_end_matches(&self, f: impl Fn(u8) -> bool) -> &Self;
}

impl TrimMatches for [u8] {
    fn trim_ascii_start_matches(&self, f: impl Fn(u8) -> bool) -> &[u8] {
        let start = self.iter().position(|&b| !f(b)).unwrap_or(self.len());
        &self[start..]
    }

    fn trim_ascii_end_matches(&self, f: impl Fn(u8) -> bool) -> &[u8] {
        let end = self.iter().rposition(|&b| !f(b)).map_or(0, |i| i + 1);
        &self[..end]
    }
}

/// The repeats among games sorted by ([`GameRef::fingerprint`], file, location): every
/// game whose fingerprint an earlier one has, as (file, location), in that order.
pub fn repeats(sorted: impl Iterator<Item = GameRef>) -> Vec<(u32, u64)> {
    let mut last = None;
    let mut repeats = Vec::new();
    for game in sorted {
        if last == Some(game.fingerprint) {
            repeats.push((game.file, game.location));
        }
        last = Some(game.fingerprint);
    }
    repeats
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(text: &str) -> u128 {
        fingerprint(text.as_bytes(), GameResult::WhiteWins)
    }

    #[test]
    fn the_same_game_written_differently_has_one_fingerprint() {
        let a = "[Event \"A\"]\r\n[White \"X\"]\r\n[Black \"Y\"]\r\n[Date \"2000.01.01\"]\r\n\r\n1.e4 e5 2.Nf3 Nc6 3.Bb5+ 1-0\r\n\r\n[Event \"next\"]\r\n";
        let b = "[Event \"B\"]\n[Site \"S\"]\n[White \"X\"]\n[Black \"Y\"]\n[Date \"2000.01.01\"]\n\n1. e4 {best} e5 (1... c5 2. Nf3) 2. Nf3! $1 Nc6\n3. Bb5 1-0\n";
        assert_eq!(fp(a), fp(b));
        assert_ne!(fp(a), fp(&b.replace("Bb5", "Bc4")), "moves differ");
        assert_ne!(fp(a), fp(&b.replace("2000", "2001")), "dates differ");
        assert_ne!(fp(a), fingerprint(a.as_bytes(), GameResult::Draw), "results differ");
        assert_ne!(fp(a), fp(&a.replace("3.Bb5+", "3.Bb5 a6")), "a move past the others");
        assert_eq!(fp("[White \"X\"]\n\n1. O-O 1-0\n"), fp("[White \"X\"]\n\n1. 0-0 1-0\n"));
    }

    #[test]
    fn without_a_result_tag_the_termination_marker_gives_the_result() {
        let text =
            b"[White \"X\"]\n\n1. e4 {a comment: 1-0} (1. d4 0-1) e5 1/2-1/2\n\n[White \"Y\"]\n";
        let tagged = Some(GameResult::WhiteWins);
        assert_eq!(fingerprint_of(text, tagged), Some(fingerprint(text, GameResult::WhiteWins)));
        assert_eq!(fingerprint_of(text, None), Some(fingerprint(text, GameResult::Draw)));
        assert_eq!(fingerprint_of(b"[White \"X\"]\n\n1. e4 e5\n", None), None, "cut short");
    }

    #[test]
    fn repeats_are_every_copy_after_the_first() {
        let g = |fingerprint, file, location| GameRef { fingerprint, file, location };
        let mut games = vec![g(5, 1, 9), g(5, 0, 7), g(3, 2, 0), g(5, 0, 2), g(4, 1, 1)];
        games.sort_by_key(Record::key);
        assert_eq!(repeats(games.into_iter()), vec![(0, 7), (1, 9)]);
        let mut out = [0u8; 28];
        let r = g(u128::MAX - 3, 7, location(3, 99));
        let n = r.encode(&mut out);
        assert_eq!(GameRef::decode(&out[..n]), Some((r, 28)));
    }
}
