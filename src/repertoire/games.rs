//! A player collection's games, read for judging: the games a named player played, with
//! the names, date, result, where the game starts in its file, and the position keys of
//! the first plies (as many as the repertoire is deep, plus one).
//!
//! Games that name no listed player are skipped at their tags, before their moves are
//! read, so a collection of many players costs little more than reading its text.

use std::cell::Cell;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::Path;

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use serde::Serialize;
use shakmaty::{Chess, Move, Position};

use super::Side;
use super::players::Matcher;
use crate::games::dedup::fingerprint_of;
use crate::games::filter::GameResult;
use crate::position::{self, KeyMap, PositionKey};

/// One game of a listed player.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayerGame {
    /// The file as shown.
    pub file: String,
    /// 1-based line where its tags start.
    pub line: u64,
    /// Byte offset in the file's (decompressed) text where its tags start.
    #[serde(skip)]
    pub offset: usize,
    /// White tag.
    pub white: String,
    /// Black tag.
    pub black: String,
    /// Date tag as written.
    pub date: String,
    /// Result tag.
    pub result: String,
    /// The listed player (as the collection names them).
    pub player: String,
    /// The side they played.
    pub side: Side,
    /// Position keys after 0, 1, … plies (at most `max_ply + 1`).
    #[serde(skip)]
    pub keys: Vec<PositionKey>,
    /// The moves played (at most `max_ply`).
    #[serde(skip)]
    pub moves: Vec<Move>,
    /// What makes it the same game as another ([`crate::games::dedup`], from its whole
    /// text: the moves above may stop short of its end); `None` without a result.
    #[serde(skip)]
    pub fingerprint: Option<u128>,
}

impl PlayerGame {
    /// The player's score: 1, ½ or 0 (`None` for an unknown result).
    pub fn score(&self) -> Option<f64> {
        let white = match GameResult::from_tag(self.result.as_bytes()) {
            Some(GameResult::WhiteWins) => 1.0,
            Some(GameResult::Draw) => 0.5,
            Some(GameResult::BlackWins) => 0.0,
            _ => return None,
        };
        Some(if self.side == Side::White { white } else { 1.0 - white })
    }

    /// The year of its Date tag.
    pub fn year(&self) -> Option<u32> {
        self.date.get(..4)?.parse().ok()
    }
}

/// The visitor: tags first, then moves only for a listed player's standard game.
struct Collect<'m> {
    matcher: &'m Matcher,
    /// When judging: the repertoire's positions; a game is read until it leaves them.
    book: Option<&'m KeyMap<PositionKey, u32>>,
    max_ply: usize,
    tags: Tags,
    pos: Chess,
    keys: Vec<PositionKey>,
    moves: Vec<Move>,
    illegal: bool,
}

#[derive(Default)]
struct Tags {
    white: String,
    black: String,
    date: String,
    result: String,
    non_standard: bool,
}

impl Visitor for Collect<'_> {
    type Tags = ();
    type Movetext = ();
    type Output = Option<(String, Side)>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, ()> {
        self.tags = Tags::default();
        ControlFlow::Continue(())
    }

    fn tag(&mut self, _: &mut (), name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        let text = || String::from_utf8_lossy(value.as_bytes()).into_owned();
        match name {
            b"White" => self.tags.white = text(),
            b"Black" => self.tags.black = text(),
            b"Date" => self.tags.date = text(),
            b"Result" => self.tags.result = text(),
            b"FEN" => {
                self.tags.non_standard |= !value
                    .as_bytes()
                    .starts_with(b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -")
            }
            b"Variant" => {
                self.tags.non_standard |= !value.as_bytes().eq_ignore_ascii_case(b"standard")
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<Self::Output, ()> {
        if self.tags.non_standard || self.player().is_none() {
            return ControlFlow::Break(None);
        }
        self.pos = Chess::default();
        self.keys.clear();
        self.moves.clear();
        self.keys.push(position::key(&self.pos));
        self.illegal = false;
        ControlFlow::Continue(())
    }

    fn san(&mut self, _: &mut (), san: SanPlus) -> ControlFlow<Self::Output> {
        if self.moves.len() >= self.max_ply {
            return ControlFlow::Break(self.player());
        }
        let Ok(m) = san.san.to_move(&self.pos) else {
            self.illegal = true;
            return ControlFlow::Break(None);
        };
        let key = position::child_key(&self.pos, *self.keys.last().expect("the start key"), &m);
        self.pos.play_unchecked(m);
        self.keys.push(key);
        self.moves.push(m);
        // Out of the book, the rest of the game cannot change its judgment.
        if self.book.is_some_and(|b| !b.contains_key(&key)) {
            return ControlFlow::Break(self.player());
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _: ()) -> Self::Output {
        if self.illegal { None } else { self.player() }
    }
}

impl Collect<'_> {
    /// The listed player of the game and their side (White first).
    fn player(&self) -> Option<(String, Side)> {
        if let Some(p) = self.matcher.find(&self.tags.white) {
            return Some((p.to_string(), Side::White));
        }
        self.matcher.find(&self.tags.black).map(|p| (p.to_string(), Side::Black))
    }
}

/// The listed players' games of `path` (shown as `shown`), `max_ply` plies of each, or
/// with a `book`, up to the first position outside it. Illegal or non-standard games are
/// left out.
pub fn read_file(
    path: &Path,
    shown: &str,
    matcher: &Matcher,
    max_ply: usize,
    book: Option<&KeyMap<PositionKey, u32>>,
) -> Result<Vec<PlayerGame>, crate::games::GamesError> {
    let mut bytes = Vec::new();
    crate::games::input::open(path)?.read_to_end(&mut bytes).map_err(|source| {
        crate::games::GamesError::Read { path: path.to_path_buf(), line: 0, byte: 0, source }
    })?;
    Ok(read_bytes(&bytes, shown, matcher, max_ply, book))
}

/// [`read_file`] over bytes already read.
pub fn read_bytes(
    bytes: &[u8],
    shown: &str,
    matcher: &Matcher,
    max_ply: usize,
    book: Option<&KeyMap<PositionKey, u32>>,
) -> Vec<PlayerGame> {
    let taken = Cell::new(0);
    let mut reader = Reader::new(crate::games::pgn::CountingSlice::new(bytes, &taken));
    let mut visitor = Collect {
        matcher,
        book,
        max_ply,
        tags: Tags::default(),
        pos: Chess::default(),
        keys: Vec::new(),
        moves: Vec::new(),
        illegal: false,
    };
    let (mut out, mut line, mut counted) = (Vec::new(), 1u64, 0usize);
    while let Ok(true) = reader.has_more() {
        let offset = taken.get() - reader.buffer().len();
        line += crate::games::input::count_newlines(&bytes[counted..offset]);
        counted = offset;
        match reader.read_game(&mut visitor) {
            Ok(Some(Some((player, side)))) => {
                let t = std::mem::take(&mut visitor.tags);
                let (keys, moves) = (visitor.keys.clone(), visitor.moves.clone());
                let result = GameResult::from_tag(t.result.as_bytes());
                let fingerprint = fingerprint_of(&bytes[offset.min(bytes.len())..], result);
                out.push(PlayerGame {
                    file: shown.to_string(),
                    line,
                    offset,
                    white: t.white,
                    black: t.black,
                    date: t.date,
                    result: t.result,
                    player,
                    side,
                    keys,
                    moves,
                    fingerprint,
                });
            }
            Ok(Some(None)) => {}
            Ok(None) => break,
            Err(_) => {
                if reader.skip_game().is_err() {
                    break;
                }
            }
        }
    }
    out
}

/// `games` (in pipeline file order, then each file's order) with, when `deduplicate`, a
/// game the player already has from an earlier copy left out (the first copy is kept,
/// as in the player collections); and how many were left out.
///
/// A copy is the same game ([`crate::games::dedup`]) for the same listed player and side:
/// a collection whose sources list different players keeps each player's game.
pub fn first_copies(games: Vec<PlayerGame>, deduplicate: bool) -> (Vec<PlayerGame>, usize) {
    if !deduplicate {
        return (games, 0);
    }
    let mut seen = std::collections::HashSet::new();
    let before = games.len();
    let kept: Vec<PlayerGame> = games
        .into_iter()
        .filter(|g| g.fingerprint.is_none_or(|f| seen.insert((f, g.player.clone(), g.side))))
        .collect();
    let repeats = before - kept.len();
    (kept, repeats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(line: u64, player: &str, side: Side, fingerprint: Option<u128>) -> PlayerGame {
        PlayerGame {
            file: "f.pgn".into(),
            line,
            offset: 0,
            white: String::new(),
            black: String::new(),
            date: String::new(),
            result: String::new(),
            player: player.into(),
            side,
            keys: Vec::new(),
            moves: Vec::new(),
            fingerprint,
        }
    }

    #[test]
    fn first_copies_keep_a_players_game_once_and_count_the_rest() {
        let games = vec![
            game(1, "A", Side::White, Some(7)),
            game(2, "A", Side::White, Some(7)),
            game(3, "B", Side::Black, Some(7)),
            game(4, "A", Side::White, None),
            game(5, "A", Side::White, None),
            game(6, "A", Side::White, Some(7)),
        ];
        let (kept, repeats) = first_copies(games.clone(), true);
        assert_eq!(kept.iter().map(|g| g.line).collect::<Vec<_>>(), vec![1, 3, 4, 5]);
        assert_eq!(repeats, 2);
        assert_eq!(first_copies(games, false).1, 0);
    }
}
