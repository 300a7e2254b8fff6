//! Reading PGN games with pgn-reader: tags for filters, SAN moves played with shakmaty
//! up to the ply limit, the rest of the movetext skipped by the reader's fast path.
//!
//! Bad input never aborts a file. A game is *skipped* (and counted under a
//! [`BadKind`]) for an illegal or ambiguous SAN within the ply limit, a malformed or
//! overlong tag line, a comment longer than [`MAX_COMMENT_BYTES`], or a truncated last
//! game; text between games that is neither tags nor a termination is counted as
//! garbage. Moves after the ply limit are not checked: they cannot change the tree.
//!
//! Non-UTF-8 tag values (the masters corpus has six Latin-1 files) are read as Latin-1:
//! the only tags okb interprets (ratings, TimeControl, dates, Variant, FEN, Result,
//! titles) are ASCII by nature, so the game's moves and result are trustworthy and the
//! game counts; it is still reported under [`BadKind::NonUtf8Tag`] (effect "kept") so
//! the encoding problem is visible.

use std::cell::Cell;
use std::io::{self, Read};
use std::ops::ControlFlow;

use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, Reader, SanPlus, Visitor};
use shakmaty::san::{San, SanError};
use shakmaty::zobrist::{Zobrist64, Zobrist128};
use shakmaty::{Chess, Color, EnPassantMode, Move, Position};

use super::filter::{CompiledFilter, GameResult, GameTags};
use super::report::{BadGames, BadKind, FilterReason, Location};
use super::scan::{self, Scanned};
use super::tagfix::count_newlines;

pub use super::report::{MAX_COMMENT_BYTES, MAX_TAG_LINE_BYTES};

/// How positions are keyed while a game is played.
pub trait KeyScheme {
    /// The key type.
    type Key: Copy + PartialEq;
    /// Key of `pos`, computed from scratch.
    fn key(pos: &Chess) -> Self::Key;
    /// Key after playing `m` from `before` (not yet played) whose key is `key`, when it
    /// can be updated incrementally (most moves); `None` means "recompute".
    fn update(before: &Chess, key: Self::Key, m: Move) -> Option<Self::Key>;
}

/// okb's identity key ([`crate::position::key`]: 128-bit, legal en passant).
#[derive(Debug)]
pub struct IdentityKeys;

impl KeyScheme for IdentityKeys {
    type Key = u128;
    #[inline]
    fn key(pos: &Chess) -> u128 {
        crate::position::key(pos).0
    }
    #[inline]
    fn update(before: &Chess, key: u128, m: Move) -> Option<u128> {
        // shakmaty only updates quiet piece moves from positions without an en-passant
        // square; their result has none either, so the legal en-passant rule holds.
        before
            .update_zobrist_hash::<Zobrist128>(Zobrist128(key), m, EnPassantMode::Legal)
            .map(|z| z.0)
    }
}

/// Polyglot book keys ([`crate::position::polyglot_key`]: 64-bit, pseudo-legal en passant).
#[derive(Debug)]
pub struct PolyglotKeys;

impl KeyScheme for PolyglotKeys {
    type Key = u64;
    #[inline]
    fn key(pos: &Chess) -> u64 {
        crate::position::polyglot_key(pos)
    }
    #[inline]
    fn update(before: &Chess, key: u64, m: Move) -> Option<u64> {
        before
            .update_zobrist_hash::<Zobrist64>(Zobrist64(key), m, EnPassantMode::PseudoLegal)
            .map(|z| z.0)
    }
}

/// How a game ended for the reader.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GameEnd {
    /// Readable; the visitor holds its tags, keys and moves.
    Done,
    /// Rejected by a filter before its moves were read.
    Filtered(FilterReason),
    /// Unusable.
    Bad(BadKind),
}

/// A pgn-reader visitor that plays each game up to `max_ply` and keeps, for the game
/// just read, its tags, the keys of the positions reached and the moves played.
///
/// All buffers are reused from game to game: reading allocates nothing per move.
#[derive(Debug)]
pub struct GameVisitor<'f, S: KeyScheme> {
    max_ply: usize,
    filter: Option<&'f CompiledFilter>,
    start_key: S::Key,
    /// Tags of the current game.
    pub tags: GameTags,
    /// Position keys after 0, 1, ... plies (at most `max_ply + 1`).
    pub keys: Vec<S::Key>,
    /// Moves played (at most `max_ply`); `moves[i]` leads from `keys[i]` to `keys[i+1]`.
    pub moves: Vec<Move>,
    /// Termination marker of the movetext, if it was read.
    pub outcome: Option<GameResult>,
    /// Whether a move of the current game was read leniently ([`san_move`]).
    pub lenient_san: bool,
    pos: Chess,
    stop_early: bool,
}

impl<'f, S: KeyScheme> GameVisitor<'f, S> {
    /// A visitor playing `max_ply` plies; with a filter, games failing it are skipped
    /// before their moves are read. Without one (book mode), only the standard-chess
    /// rules (variant, FEN start) apply.
    pub fn new(max_ply: usize, filter: Option<&'f CompiledFilter>) -> Self {
        let pos = Chess::default();
        GameVisitor {
            max_ply,
            filter,
            start_key: S::key(&pos),
            tags: GameTags::default(),
            keys: Vec::with_capacity(max_ply.min(1024) + 1),
            moves: Vec::with_capacity(max_ply.min(1024)),
            outcome: None,
            lenient_san: false,
            pos,
            stop_early: false,
        }
    }

    /// The game's result: the Result tag, else the movetext's termination marker.
    pub fn result(&self) -> Option<GameResult> {
        match self.tags.result {
            Some(r) => Some(r),
            None => self.outcome,
        }
    }
}

impl<S: KeyScheme> Visitor for GameVisitor<'_, S> {
    type Tags = ();
    type Movetext = ();
    type Output = GameEnd;

    fn begin_tags(&mut self) -> ControlFlow<GameEnd, ()> {
        self.tags = GameTags::default();
        self.keys.clear();
        self.moves.clear();
        self.outcome = None;
        self.lenient_san = false;
        ControlFlow::Continue(())
    }

    #[inline]
    fn tag(&mut self, _: &mut (), name: &[u8], value: RawTag<'_>) -> ControlFlow<GameEnd> {
        self.tags.add(name, value.as_bytes());
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<GameEnd, ()> {
        let reason = match self.filter {
            Some(f) => f.check_tags(&self.tags),
            None if self.tags.non_standard_variant => Some(FilterReason::Variant),
            None if self.tags.non_standard_fen => Some(FilterReason::NonStandardStart),
            None => None,
        };
        if let Some(r) = reason {
            return ControlFlow::Break(GameEnd::Filtered(r));
        }
        self.pos = Chess::default();
        self.keys.push(self.start_key);
        // Without a Result tag the termination marker is the result, so read to the end.
        self.stop_early = self.tags.result.is_some();
        ControlFlow::Continue(())
    }

    #[inline]
    fn san(&mut self, _: &mut (), san_plus: SanPlus) -> ControlFlow<GameEnd> {
        if self.moves.len() >= self.max_ply {
            return if self.stop_early {
                ControlFlow::Break(GameEnd::Done)
            } else {
                ControlFlow::Continue(())
            };
        }
        let m = match san_move(san_plus.san, &self.pos) {
            Ok((m, lenient)) => {
                self.lenient_san |= lenient;
                m
            }
            Err(kind) => return ControlFlow::Break(GameEnd::Bad(kind)),
        };
        let key = *self.keys.last().unwrap_or(&self.start_key);
        let updated = S::update(&self.pos, key, m);
        self.pos.play_unchecked(m);
        let next = match updated {
            Some(k) => k,
            None => S::key(&self.pos),
        };
        self.keys.push(next);
        self.moves.push(m);
        ControlFlow::Continue(())
    }

    fn partial_comment(&mut self, _: &mut (), _: RawComment<'_>) -> ControlFlow<GameEnd> {
        ControlFlow::Break(GameEnd::Bad(BadKind::OverlongComment))
    }

    fn comment(&mut self, _: &mut (), comment: RawComment<'_>) -> ControlFlow<GameEnd> {
        // The reader only splits comments longer than what it happens to have buffered;
        // checking the length here makes the limit exact.
        if comment.as_bytes().len() > MAX_COMMENT_BYTES {
            return ControlFlow::Break(GameEnd::Bad(BadKind::OverlongComment));
        }
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, _: &mut (), outcome: Outcome) -> ControlFlow<GameEnd> {
        self.outcome = Some(match outcome {
            Outcome::Known(KnownOutcome::Decisive { winner: Color::White }) => {
                GameResult::WhiteWins
            }
            Outcome::Known(KnownOutcome::Decisive { winner: Color::Black }) => {
                GameResult::BlackWins
            }
            Outcome::Known(KnownOutcome::Draw) => GameResult::Draw,
            Outcome::Unknown => GameResult::Unknown,
        });
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _: ()) -> GameEnd {
        if self.tags.count == 0 && self.outcome.is_none() {
            // Neither tags nor a termination: stray text between games.
            GameEnd::Bad(BadKind::Garbage)
        } else {
            GameEnd::Done
        }
    }
}

/// A `Read` over a byte slice that publishes how much it has handed out, so the
/// position of each game can be recovered from outside the pgn-reader.
pub(crate) struct CountingSlice<'a> {
    data: &'a [u8],
    taken: &'a Cell<usize>,
}

impl<'a> CountingSlice<'a> {
    /// A reader over `data` that records in `taken` how many bytes it has handed out.
    pub(crate) fn new(data: &'a [u8], taken: &'a Cell<usize>) -> Self {
        CountingSlice { data, taken }
    }
}

impl Read for CountingSlice<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let start = self.taken.get();
        let n = buf.len().min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.taken.set(start + n);
        Ok(n)
    }
}

/// Where a chunk of text came from, to turn byte offsets into `file:line`.
#[derive(Copy, Clone, Debug)]
pub struct ChunkOrigin<'a> {
    /// File name as reported.
    pub file: &'a str,
    /// 1-based line of the chunk's first byte.
    pub first_line: u64,
    /// Whether the chunk ends its file (so its last game may be truncated).
    pub last: bool,
    /// Lines of tag lines repaired before reading ([`super::input::Chunk::repaired_tags`]).
    pub repaired_tags: &'a [u64],
}

impl<'a> ChunkOrigin<'a> {
    /// The origin of `chunk`, a chunk of `file`.
    pub fn of(file: &'a str, chunk: &'a super::input::Chunk) -> Self {
        ChunkOrigin {
            file,
            first_line: chunk.first_line,
            last: chunk.last,
            repaired_tags: &chunk.repaired_tags,
        }
    }

    /// Records a `repaired-tag` warning in `bad` for each repaired tag line.
    pub fn record_repairs(&self, bad: &mut BadGames) {
        for &line in self.repaired_tags {
            bad.record(BadKind::RepairedTag, Location { file: self.file.to_string(), line });
        }
    }
}

/// The move `san` names in `pos`, read as python-chess and polyglot read it: a capture
/// written without `x` (`Bc4` for Bxc4, `dc6`) is the capture when that is unambiguous,
/// and the `bool` says the SAN was read leniently. An ambiguous or impossible move is bad.
pub fn san_move(san: San, pos: &Chess) -> Result<(Move, bool), BadKind> {
    let bad = |e| match e {
        SanError::AmbiguousSan => BadKind::AmbiguousSan,
        SanError::IllegalSan => BadKind::IllegalSan,
    };
    match san.to_move(pos) {
        Ok(m) => Ok((m, false)),
        Err(SanError::IllegalSan) => match san {
            San::Normal { role, file, rank, capture: false, to, promotion } => {
                let capture = San::Normal { role, file, rank, capture: true, to, promotion };
                capture.to_move(pos).map(|m| (m, true)).map_err(bad)
            }
            _ => Err(BadKind::IllegalSan),
        },
        Err(e) => Err(bad(e)),
    }
}

/// Reads every game of `data` (whole games, as cut by [`super::input::Chunker`]) and
/// calls `on_game` with the visitor and the outcome of each readable or filtered game.
/// Bad games are recorded in `bad` with their location and not passed on.
///
/// Returns the number of games seen (read, filtered or bad; garbage excluded).
pub fn read_chunk<S: KeyScheme>(
    data: &[u8],
    origin: ChunkOrigin<'_>,
    visitor: &mut GameVisitor<'_, S>,
    bad: &mut BadGames,
    mut on_game: impl FnMut(&GameVisitor<'_, S>, GameEnd),
) -> u64 {
    read_chunk_at(data, origin, visitor, bad, |v, end, _| on_game(v, end))
}

/// [`read_chunk`], also telling `on_game` the byte offset in `data` where each game
/// starts (for writers that copy games through, like `okb classify`).
pub fn read_chunk_at<S: KeyScheme>(
    data: &[u8],
    origin: ChunkOrigin<'_>,
    visitor: &mut GameVisitor<'_, S>,
    bad: &mut BadGames,
    on_game: impl FnMut(&GameVisitor<'_, S>, GameEnd, usize),
) -> u64 {
    read_chunk_with(Reading::Fast, data, origin, visitor, bad, on_game)
}

/// Which reader reads the games of a chunk. Both give the same games, moves, results,
/// offsets and reports; the tests hold them to it on every corpus.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// okb's in-memory reader for the common grammar, which skips the movetext past the
    /// ply limit a line at a time, and hands any other game to pgn-reader.
    Fast,
    /// pgn-reader for every game: the reference the fast reader is held to.
    PgnReader,
}

/// [`read_chunk_at`] with the reader chosen.
pub fn read_chunk_with<S: KeyScheme>(
    reading: Reading,
    data: &[u8],
    origin: ChunkOrigin<'_>,
    visitor: &mut GameVisitor<'_, S>,
    bad: &mut BadGames,
    mut on_game: impl FnMut(&GameVisitor<'_, S>, GameEnd, usize),
) -> u64 {
    let locate = |offset: usize| Location {
        file: origin.file.to_string(),
        line: origin.first_line + count_newlines(&data[..offset.min(data.len())]),
    };
    let record = |bad: &mut BadGames, kind: BadKind, offset: usize| {
        if bad.wants_example(kind) {
            bad.record(kind, locate(offset));
        } else {
            bad.count_only(kind);
        }
    };
    origin.record_repairs(bad);
    let (body, tail) = match origin.last.then(|| truncated_tail(data)).flatten() {
        Some(t) => (&data[..t], Some(t)),
        None => (data, None),
    };
    let mut games = 0u64;
    let mut at = scan::game_start(body, 0);
    while at < body.len() {
        // pgn-reader looks for a byte-order mark and whitespace twice before a game (once
        // to see whether there is one, once to read it); the game is located at the first.
        let start = scan::game_start(body, at);
        let scanned = match reading {
            Reading::Fast => scan::read_game(body, start, visitor),
            Reading::PgnReader => Scanned::Unusual,
        };
        let (read, next) = match scanned {
            // The next game is located as pgn-reader's has_more() locates it.
            Scanned::Game(end, next) => (Ok(Some(end)), Some(scan::game_start(body, next))),
            Scanned::Unusual => read_one_game(body, at, visitor),
        };
        match read {
            Ok(None) => break,
            Ok(Some(GameEnd::Bad(BadKind::Garbage))) => record(bad, BadKind::Garbage, at),
            Ok(Some(GameEnd::Bad(kind))) => {
                games += 1;
                record(bad, kind, at);
            }
            Ok(Some(end)) => {
                games += 1;
                if visitor.tags.non_utf8 {
                    record(bad, BadKind::NonUtf8Tag, at);
                }
                if visitor.lenient_san {
                    record(bad, BadKind::LenientSan, at);
                }
                on_game(visitor, end, at);
            }
            Err(kind) => {
                games += 1;
                record(bad, kind, at);
            }
        }
        let Some(next) = next else { break };
        at = next;
    }
    if let Some(t) = tail {
        games += 1;
        record(bad, BadKind::Truncated, t);
    }
    games
}

/// One game read by pgn-reader from offset `at` of `body` (what the fast path leaves to
/// it): the game, or the kind of a game it could not read, and the offset in `body` where
/// the next game starts, as `has_more()` finds it (`None` if reading stopped).
fn read_one_game<S: KeyScheme>(
    body: &[u8],
    at: usize,
    visitor: &mut GameVisitor<'_, S>,
) -> (Result<Option<GameEnd>, BadKind>, Option<usize>) {
    let taken = Cell::new(0);
    let mut reader = Reader::build(CountingSlice { data: &body[at..], taken: &taken })
        .set_supported_tag_line_length(MAX_TAG_LINE_BYTES)
        .set_supported_comment_length(MAX_COMMENT_BYTES)
        .finish();
    let read = match reader.read_game(visitor) {
        Ok(game) => Ok(game),
        Err(e) => Err(if e.to_string().contains("comment") {
            BadKind::Truncated
        } else {
            BadKind::BadTag
        }),
    };
    // has_more() finishes a game left part-read (skipped after the ply limit); after an
    // error, skip_game() drops the rest of the broken game so that its remaining tags and
    // moves are not read as a game of their own.
    let finished = match read {
        Ok(_) => reader.has_more().is_ok(),
        Err(_) => reader.skip_game().is_ok(),
    };
    (read, finished.then(|| at + taken.get() - reader.buffer().len()))
}

/// If the text ends inside a game (no termination marker after its last tag block),
/// the offset where that game starts.
fn truncated_tail(data: &[u8]) -> Option<usize> {
    // NUL padding occurs at the end of real files (two masters files end with it).
    let end =
        data.len() - data.iter().rev().take_while(|b| b.is_ascii_whitespace() || **b == 0).count();
    if end == 0 {
        return None;
    }
    // Walk lines backwards from the end, only as far as the last tag block: chunks are
    // megabytes long, the last game is a few hundred bytes.
    let line_start = |i: usize| data[..i].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let is_marker_line = |s: usize, e: usize| {
        let line = data[s..e].trim_ascii_end();
        !line.starts_with(b"[")
            && [&b"1-0"[..], b"0-1", b"1/2-1/2", b"*", "½-½".as_bytes()]
                .iter()
                .any(|m| line.ends_with(m))
    };
    let mut e = end;
    let mut s = line_start(e);
    // Movetext lines after the last tag line: any termination marker means complete.
    while data.get(s) != Some(&b'[') {
        if is_marker_line(s, e) {
            return None;
        }
        if s == 0 {
            return None;
        }
        e = s - 1;
        s = line_start(e);
    }
    // Now at the last tag line; go up to the first tag line of its block.
    let mut game_start = s;
    while game_start > 0 {
        let prev = line_start(game_start - 1);
        if data.get(prev) != Some(&b'[') {
            break;
        }
        game_start = prev;
    }
    Some(game_start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::type_complexity)]
    fn read_all(
        text: &[u8],
        max_ply: usize,
    ) -> (Vec<(GameEnd, usize, Option<GameResult>)>, BadGames, u64) {
        let filter = CompiledFilter::default();
        let mut v = GameVisitor::<IdentityKeys>::new(max_ply, Some(&filter));
        let mut bad = BadGames::default();
        let mut out = Vec::new();
        let origin = ChunkOrigin { file: "t.pgn", first_line: 1, last: true, repaired_tags: &[] };
        let n = read_chunk(text, origin, &mut v, &mut bad, |v, end| {
            out.push((end, v.moves.len(), v.result()))
        });
        (out, bad, n)
    }

    #[test]
    fn plays_up_to_the_ply_limit_and_keys_match_position_key() {
        let text =
            b"[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. O-O Nf6 5. d4 exd4 6. e5 1-0\n";
        let filter = CompiledFilter::default();
        let mut v = GameVisitor::<IdentityKeys>::new(9, Some(&filter));
        let mut bad = BadGames::default();
        let origin = ChunkOrigin { file: "t.pgn", first_line: 1, last: true, repaired_tags: &[] };
        let mut checked = false;
        read_chunk(text, origin, &mut v, &mut bad, |v, end| {
            assert_eq!(end, GameEnd::Done);
            assert_eq!(v.moves.len(), 9);
            let mut pos = Chess::default();
            for (i, m) in v.moves.iter().enumerate() {
                assert_eq!(v.keys[i], crate::position::key(&pos).0);
                pos.play_unchecked(*m);
            }
            assert_eq!(v.keys[9], crate::position::key(&pos).0);
            checked = true;
        });
        assert!(checked);
        assert!(bad.is_empty());
    }

    #[test]
    fn en_passant_keys_follow_the_identity_rule() {
        // 3. exd6 e.p. is legal after 2... d5: keys must split exactly as position::key.
        let text = b"[Result \"*\"]\n\n1. e4 Nf6 2. e5 d5 3. exd6 e6 4. a3 Nc6 5. b4 Ne5 6. b5 a5 7. bxa6 *\n";
        let mut v = GameVisitor::<IdentityKeys>::new(40, None);
        let mut pv = GameVisitor::<PolyglotKeys>::new(40, None);
        let mut bad = BadGames::default();
        let origin = ChunkOrigin { file: "t.pgn", first_line: 1, last: true, repaired_tags: &[] };
        read_chunk(text, origin, &mut v, &mut bad, |v, _| {
            let mut pos = Chess::default();
            for (i, m) in v.moves.iter().enumerate() {
                assert_eq!(v.keys[i], crate::position::key(&pos).0, "ply {i}");
                pos.play_unchecked(*m);
            }
        });
        read_chunk(text, origin, &mut pv, &mut bad, |v, _| {
            let mut pos = Chess::default();
            for (i, m) in v.moves.iter().enumerate() {
                assert_eq!(v.keys[i], crate::position::polyglot_key(&pos), "ply {i}");
                pos.play_unchecked(*m);
            }
            assert_eq!(v.moves.len(), 13);
        });
    }

    #[test]
    fn bad_games_are_located_and_reading_goes_on() {
        let text = b"[Event \"ok\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n\
[Event \"illegal\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n\n\
this is garbage\n\n\
[Event \"ok2\"]\n[Result \"0-1\"]\n\n1. d4 d5 0-1\n\n\
[Event \"cut\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3\n";
        let (games, bad, n) = read_all(text, 10);
        assert_eq!(games.len(), 2);
        assert_eq!(n, 4);
        assert_eq!(bad.kinds[&BadKind::IllegalSan].examples[0].line, 6);
        assert_eq!(bad.kinds[&BadKind::Garbage].examples[0].line, 11);
        assert_eq!(bad.kinds[&BadKind::Truncated].examples[0].line, 18);
    }

    #[test]
    fn result_comes_from_the_movetext_without_a_result_tag() {
        let (games, _, _) = read_all(b"[Event \"x\"]\n\n1. e4 e5 2. Nf3 Nc6 0-1\n", 2);
        assert_eq!(games, vec![(GameEnd::Done, 2, Some(GameResult::BlackWins))]);
    }

    #[test]
    fn truncated_tail_detection() {
        assert_eq!(truncated_tail(b"[A \"b\"]\n\n1. e4 1-0\n\n"), None);
        assert_eq!(truncated_tail(b"[A \"b\"]\n\n1. e4 1-0\n\n[A \"c\"]\n\n1. e4"), Some(20));
        assert_eq!(truncated_tail(b"[A \"b\"]\n\n1. e4 1-0\n\n[A \"c\"]\n"), Some(20));
        assert_eq!(truncated_tail(b"[A \"b\"]\n\n1. e4 1-0\n\nstray words\n"), None);
        assert_eq!(truncated_tail(b"   \n"), None);
    }
}
