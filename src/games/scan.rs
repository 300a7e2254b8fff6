//! The fast path of PGN reading: a chunk held in memory, read game by game with
//! pgn-reader's exact semantics for the grammar real dumps use, and the movetext past the
//! ply limit skipped a line at a time.
//!
//! A Lichess game is about 2 KB, three quarters of it movetext after ply 15 (`{ [%clk …] }`
//! after every move). pgn-reader skips that tail byte by byte between comments, through
//! its own buffer (a copy of the text). Here the text is not copied, and the tail is
//! skipped one *line* at a time: a line with no `;` whose last `}` follows its last `{`
//! cannot hide its newline inside a comment, so one `memchr` finds where the line ends
//! and two `memrchr` prove it; anything else is walked exactly as pgn-reader walks it.
//!
//! The fast path takes the common grammar only (tag lines `[Name "value"]` without
//! escapes, SAN, move numbers, comments, NAGs, `;` comments, `%` escape lines, the four
//! results written with ASCII dashes). At anything else (a variation, an escaped tag
//! value, castling written with zeros, a long comment, an unterminated tag or comment)
//! it gives the game up with [`Scanned::Unusual`] before its end, and the caller reads that
//! game again with pgn-reader itself ([`super::pgn::read_chunk_at`]): both paths call
//! the same visitor, whose `begin_tags` starts the game afresh. The counts are therefore
//! pgn-reader's, whichever path reads a game (tests compare them on every corpus).

use std::ops::ControlFlow;

use memchr::{memchr, memchr3, memrchr};
use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, SanPlus, Visitor};
use shakmaty::Color;

/// Comments up to this length are read here; longer ones go to pgn-reader, whose
/// behaviour near its buffer's size (32 KiB, [`super::report::MAX_COMMENT_BYTES`] × 2)
/// decides whether a comment is whole or partial.
const MAX_FAST_COMMENT: usize = 8 * 1024;
/// Tag lines up to this length are read here (pgn-reader's own limit is
/// [`super::report::MAX_TAG_LINE_BYTES`]).
const MAX_FAST_TAG_LINE: usize = 2 * 1024;

/// A pgn-reader visitor whose tags and movetext carry nothing (okb's game visitors).
pub(crate) trait Game: Visitor<Tags = (), Movetext = ()> {}

impl<V: Visitor<Tags = (), Movetext = ()>> Game for V {}

/// What the fast path made of the game starting at an offset.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scanned<O> {
    /// The game was read: the visitor's output and where the text after it starts.
    Game(O, usize),
    /// The game uses grammar the fast path leaves to pgn-reader.
    Unusual,
}

/// The offset of the next game at or after `i`: a byte-order mark and whitespace
/// (including `%` escape lines) skipped, as pgn-reader does before each game.
pub(crate) fn game_start(data: &[u8], mut i: usize) -> usize {
    if data[i.min(data.len())..].starts_with(b"\xef\xbb\xbf") {
        i += 3;
    }
    skip_whitespace(data, i, true)
}

/// Reads the game starting at `i` (see [`game_start`]) into `visitor`, whose
/// `begin_tags` must start a game afresh: a game given up half way is read again.
pub(crate) fn read_game<V: Game>(data: &[u8], i: usize, visitor: &mut V) -> Scanned<V::Output> {
    let ControlFlow::Continue(()) = visitor.begin_tags() else { return Scanned::Unusual };
    let Some(i) = read_tags(data, i, visitor) else { return Scanned::Unusual };
    match visitor.begin_movetext(()) {
        ControlFlow::Break(end) => Scanned::Game(end, skip_movetext(data, i)),
        ControlFlow::Continue(()) => read_movetext(data, i, visitor),
    }
}

/// pgn-reader's `skip_whitespace`: spaces, tabs, returns, newlines, and a `%` line
/// after a newline.
fn skip_whitespace(data: &[u8], mut i: usize, mut new_line: bool) -> usize {
    while let Some(&ch) = data.get(i) {
        match ch {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\n' => {
                new_line = true;
                i += 1;
            }
            b'%' if new_line => i = after(data, i + 1, b'\n'),
            _ => break,
        }
    }
    i
}

/// The offset just past the next `needle` at or after `i` (the end if there is none).
fn after(data: &[u8], i: usize, needle: u8) -> usize {
    memchr(needle, &data[i..]).map_or(data.len(), |p| i + p + 1)
}

/// The offset of the next `needle` at or after `i` (the end if there is none).
fn until(data: &[u8], i: usize, needle: u8) -> usize {
    memchr(needle, &data[i..]).map_or(data.len(), |p| i + p)
}

/// The tag lines from `i`; `None` for a form left to pgn-reader, or when the visitor
/// stops at a tag (pgn-reader then skips the game; so does it on the second reading).
fn read_tags<V: Game>(data: &[u8], mut i: usize, visitor: &mut V) -> Option<usize> {
    while data.get(i) == Some(&b'[') {
        let line = &data[i + 1..];
        let quote = memchr3(b'"', b'\n', b']', line).filter(|&q| line[q] == b'"')?;
        let name_end = if quote > 0 && line[quote - 1] == b' ' { quote - 1 } else { quote };
        let value = quote + 1;
        let close = value
            + memchr3(b'\\', b'"', b'\n', &line[value..]).filter(|&d| line[value + d] == b'"')?;
        if close >= MAX_FAST_TAG_LINE {
            return None;
        }
        if visitor.tag(&mut (), &line[..name_end], RawTag(&line[value..close])).is_break() {
            return None;
        }
        i = skip_ket(data, i + 1 + close + 1);
    }
    Some(i)
}

/// pgn-reader's `skip_ket`: the rest of a tag line after its value.
fn skip_ket(data: &[u8], mut i: usize) -> usize {
    while let Some(&ch) = data.get(i) {
        match ch {
            b' ' | b'\t' | b'\r' => i += 1,
            b']' => return skip_whitespace(data, i + 1, false),
            b'\n' => return skip_whitespace(data, i + 1, true),
            _ => break,
        }
    }
    i
}

/// pgn-reader's `is_token_end`.
fn is_token_end(byte: u8) -> bool {
    matches!(
        byte,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b'{'
            | b'}'
            | b'('
            | b')'
            | b'!'
            | b'?'
            | b'$'
            | b';'
            | b'.'
            | b'*'
    )
}

/// The movetext from `i` until the visitor stops or the game ends.
fn read_movetext<V: Game>(data: &[u8], mut i: usize, visitor: &mut V) -> Scanned<V::Output> {
    macro_rules! visit {
        ($flow:expr, $next:expr) => {{
            let next = $next;
            if let ControlFlow::Break(end) = $flow {
                return Scanned::Game(end, skip_movetext(data, next));
            }
            i = next;
        }};
    }
    while let Some(&ch) = data.get(i) {
        match ch {
            b'{' => {
                let Some(len) = memchr(b'}', &data[i + 1..]) else { return Scanned::Unusual };
                if len > MAX_FAST_COMMENT {
                    return Scanned::Unusual;
                }
                visit!(
                    visitor.comment(&mut (), RawComment(&data[i + 1..i + 1 + len])),
                    i + len + 2
                );
            }
            b'\n' => {
                i += 1;
                match data.get(i) {
                    Some(b'%') => i = until(data, i + 1, b'\n'),
                    Some(b'[' | b'\n') => break,
                    Some(b'\r') => {
                        i += 1;
                        if data.get(i) == Some(&b'\n') {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            b';' => i = until(data, i + 1, b'\n'),
            b'0' => match data.get(i + 1) {
                Some(b'-') if data.get(i + 2) == Some(&b'1') => {
                    visit!(
                        visitor.outcome(
                            &mut (),
                            Outcome::Known(KnownOutcome::Decisive { winner: Color::Black })
                        ),
                        i + 3
                    )
                }
                // "0-0" castling, other dashes: pgn-reader's.
                Some(b'-' | 0xe2) | None => return Scanned::Unusual,
                Some(_) => i += 1,
            },
            b'1' => match data.get(i + 1) {
                Some(b'-') if data.get(i + 2) == Some(&b'0') => {
                    visit!(
                        visitor.outcome(
                            &mut (),
                            Outcome::Known(KnownOutcome::Decisive { winner: Color::White })
                        ),
                        i + 3
                    )
                }
                Some(b'-') => i += 2,
                Some(b'/') if data[i + 1..].starts_with(b"/2-1/2") => {
                    visit!(visitor.outcome(&mut (), Outcome::Known(KnownOutcome::Draw)), i + 7)
                }
                Some(b'/' | 0xe2) => return Scanned::Unusual,
                _ => i = move_number(data, i + 1),
            },
            b'2'..=b'9' => i = move_number(data, i + 1),
            b'$' => {
                let from = i + 1;
                i = data[from..]
                    .iter()
                    .position(|&b| is_token_end(b))
                    .map_or(data.len(), |e| from + e);
            }
            b'!' | b'?' => i += if matches!(data.get(i + 1), Some(b'!' | b'?')) { 2 } else { 1 },
            b'*' => visit!(visitor.outcome(&mut (), Outcome::Unknown), i + 1),
            b' ' | b'\t' | b'\r' | b'.' => i += 1,
            b'(' | b')' | 0xc2 => return Scanned::Unusual,
            _ => match SanPlus::from_ascii_prefix(&data[i..]) {
                Ok((san, len)) => {
                    let next = i + len;
                    if data.get(next).is_none_or(|&b| is_token_end(b)) {
                        visit!(visitor.san(&mut (), san), next);
                    } else {
                        i = next;
                    }
                }
                Err(_) => {
                    let from = i + 1;
                    i = data[from..]
                        .iter()
                        .position(|&b| is_token_end(b))
                        .map_or(data.len(), |e| from + e);
                }
            },
        }
    }
    Scanned::Game(visitor.end_game(()), i)
}

/// The rest of a move number: its digits, then dots and spaces.
fn move_number(data: &[u8], mut i: usize) -> usize {
    while data.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    while matches!(data.get(i), Some(b'.' | b' ')) {
        i += 1;
    }
    i
}

/// pgn-reader's `skip_movetext` from `i` (outside any comment): the offset where the
/// next game's whitespace starts. Lines that cannot hide their newline in a comment
/// are skipped whole.
pub(crate) fn skip_movetext(data: &[u8], mut i: usize) -> usize {
    while i < data.len() {
        let newline = until(data, i, b'\n');
        let line = &data[i..newline];
        let plain = memchr(b';', line).is_none()
            && memrchr(b'{', line)
                .is_none_or(|open| memrchr(b'}', line).is_some_and(|close| close > open));
        i = if plain { newline } else { exact_newline(data, i) };
        // At a newline outside any comment, or at the end.
        i += 1;
        match data.get(i) {
            Some(b'%') => i = until(data, i + 1, b'\n'),
            Some(b'\n' | b'[') => return i,
            Some(b'\r') => {
                i += 1;
                if data.get(i) == Some(&b'\n') {
                    return i;
                }
            }
            _ => {}
        }
    }
    data.len()
}

/// pgn-reader's walk of a movetext being skipped, from `i` outside any comment to the
/// next newline outside one (or the end).
fn exact_newline(data: &[u8], mut i: usize) -> usize {
    while i < data.len() {
        let Some(p) = memchr3(b'\n', b'{', b';', &data[i..]) else { return data.len() };
        i += p;
        match data[i] {
            b'\n' => return i,
            b'{' => i = after(data, i + 1, b'}'),
            _ => i = until(data, i + 1, b'\n'),
        }
    }
    data.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pgn-reader's own skip, for comparison.
    fn reader_skip(data: &[u8]) -> usize {
        struct Skipper;
        impl Visitor for Skipper {
            type Tags = ();
            type Movetext = ();
            type Output = ();
            fn begin_tags(&mut self) -> ControlFlow<(), ()> {
                ControlFlow::Continue(())
            }
            fn begin_movetext(&mut self, _: ()) -> ControlFlow<(), ()> {
                ControlFlow::Break(())
            }
            fn end_game(&mut self, _: ()) {}
        }
        let mut text = b"[A \"b\"]\n".to_vec();
        let head = text.len();
        text.extend_from_slice(data);
        let mut reader = pgn_reader::Reader::new(&text[..]);
        reader.read_game(&mut Skipper).unwrap();
        // The pending skip runs at the next game's start, with its whitespace.
        reader.has_more().unwrap();
        let buffered = reader.buffer().len();
        text.len() - reader.into_inner().len() - buffered - head
    }

    #[test]
    fn skipping_ends_where_pgn_reader_ends() {
        let cases: &[&[u8]] = &[
            b"1. e4 { [%clk 0:01:00] } e5 1-0\n\n[Event \"next\"]",
            b"1. e4 { a comment\n\nwith a blank line } e5 1-0\n\nnext",
            b"1. e4 { ] } 1-0\n[Event \"next\"]",
            b"1. e4 ; line comment { not one\n2. d4 1-0\n\n",
            b"1. e4 {\n[not a tag] } 1-0\r\n\r\n[E \"x\"]",
            b"1. e4\n%escape { line\n2. d4 1-0\n\n",
            b"1. e4 } stray { open\n\n} closed 1-0\n\n",
            b"1. e4 ( 1. d4\n\n) 1-0\n\n",
            b"1. e4 1-0",
            b"",
            b"\n\n",
            b"1. e4 { unterminated\n\n",
            b"1-0 { result in a comment }\n1. e4\n\n",
            b"1. e4\n\r\n2. d4",
            b"1. e4\n\rx\n\n",
        ];
        for case in cases {
            let ours = game_start(case, skip_movetext(case, 0));
            assert_eq!(ours, reader_skip(case), "{:?}", String::from_utf8_lossy(case));
        }
    }
}
