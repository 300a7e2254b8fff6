//! BGN: one JSON game object per line (source kind `bgn`, optionally bzip2/gzip/zstd
//! compressed; compression is detected from the bytes).
//!
//! There is no published specification to follow, so okb reads this format:
//!
//! ```json
//! {"white": "Carlsen", "black": "Anand", "white_elo": 2870, "black_elo": 2780,
//!  "result": "1-0", "time_control": "180+2", "date": "2014.11.21",
//!  "moves": ["Pe2e4", "Pc7c5", "Ng1f3", "Ke1g1", "Pe7e8Q"]}
//! ```
//!
//! * `moves`: piece letter (`P N B R Q K`, either case), from square, to square, and an
//!   optional promotion letter (`Q R B N`, either case). Castling is the king's move
//!   (`Ke1g1`; the king-takes-rook form `Ke1h1` is accepted too). A move may also be
//!   an object as `okb convert` writes it (see [`crate::export::bgn`]): `p`, `f`, `t`
//!   and `promote` are read, the other fields ignored.
//! * `datetime` (`2013-01-05T18:02:17Z` or `2013-01-05`) stands in for `date` when that
//!   is missing.
//! * `result`: `1-0`, `0-1`, `1/2-1/2` or `*`; ratings are numbers; every field except
//!   `moves` is optional, and unknown fields (`event`, `site`, ...) are ignored.
//! * Also read when present: `white_title`/`black_title` (`BOT` is filtered),
//!   `variant` and `fen` (non-standard games are filtered like PGN ones).
//!
//! A line that is not such an object is counted as [`BadKind::BadJson`]; a move whose
//! piece letter does not match the piece on its from-square is
//! [`BadKind::PieceMismatch`]; a malformed or illegal move is [`BadKind::IllegalMove`].
//! Moves after the ply limit are not checked, nor decoded: the rest of the `moves` array
//! need only be JSON (a number there is no longer a bad game). Blank lines are ignored.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Move, Position, Role, Square};

use super::filter::{DateRange, GameResult, GameTags, Speed};
use super::input::count_newlines;
use super::pgn::{ChunkOrigin, IdentityKeys, KeyScheme};
use super::report::{BadGames, BadKind, Location};

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(default)]
    white_elo: Option<u32>,
    #[serde(default)]
    black_elo: Option<u32>,
    #[serde(default, borrow)]
    result: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    time_control: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    date: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    white_title: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    black_title: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    variant: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    fen: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    datetime: Option<Cow<'a, str>>,
    /// Read as text first: only the moves up to the ply limit are decoded
    /// ([`FirstMoves`]); the rest of the array is only checked to be JSON.
    #[serde(borrow)]
    moves: &'a serde_json::value::RawValue,
}

/// The first `limit` entries of a game's `moves` array; the others are skipped as any
/// JSON value (no allocation, no move decoding: a Lichess game has about 70 moves, the
/// tree reads 15).
struct FirstMoves(usize);

impl<'de> DeserializeSeed<'de> for FirstMoves {
    type Value = Vec<MoveField<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FirstMoves {
    type Value = Vec<MoveField<'de>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of moves")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut moves = Vec::with_capacity(self.0.min(64));
        while moves.len() < self.0 {
            match seq.next_element()? {
                Some(m) => moves.push(m),
                None => return Ok(moves),
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(moves)
    }
}

/// The moves of `raw` up to `limit` ([`FirstMoves`]).
fn first_moves(
    raw: &serde_json::value::RawValue,
    limit: usize,
) -> serde_json::Result<Vec<MoveField<'_>>> {
    FirstMoves(limit).deserialize(&mut serde_json::Deserializer::from_str(raw.get()))
}

/// A move as text (`Pe2e4`) or as an object (`{"p":"P","f":"e2","t":"e4"}`).
#[derive(Deserialize)]
#[serde(untagged)]
enum MoveField<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Object {
        #[serde(borrow)]
        p: Cow<'a, str>,
        #[serde(borrow)]
        f: Cow<'a, str>,
        #[serde(borrow)]
        t: Cow<'a, str>,
        #[serde(default, borrow)]
        promote: Option<Cow<'a, str>>,
    },
}

impl MoveField<'_> {
    /// The move in `pos`.
    fn to_move(&self, pos: &Chess) -> Result<Move, BadKind> {
        match self {
            MoveField::Text(text) => parse_move(pos, text),
            MoveField::Object { p, f, t, promote } => {
                let text = format!("{p}{f}{t}{}", promote.as_deref().unwrap_or(""));
                parse_move(pos, &text)
            }
        }
    }
}

/// One readable BGN game, played up to the ply limit.
#[derive(Debug, Default)]
pub struct BgnGame {
    /// The fields that filters use, in PGN-tag form.
    pub tags: GameTags,
    /// Identity keys of the positions after 0, 1, ... plies.
    pub keys: Vec<u128>,
    /// Moves played; `moves[i]` leads from `keys[i]` to `keys[i + 1]`.
    pub moves: Vec<Move>,
    /// The result field.
    pub result: Option<GameResult>,
}

/// Parses one BGN move text in `pos`.
pub fn parse_move(pos: &Chess, text: &str) -> Result<Move, BadKind> {
    let b = text.as_bytes();
    if !(5..=6).contains(&b.len()) {
        return Err(BadKind::IllegalMove);
    }
    let role =
        Role::from_char(char::from(b[0].to_ascii_lowercase())).ok_or(BadKind::IllegalMove)?;
    let square = |s: &[u8]| Square::from_ascii(s).map_err(|_| BadKind::IllegalMove);
    let from = square(&b[1..3])?;
    let to = square(&b[3..5])?;
    let promotion = match b.get(5) {
        None => None,
        Some(&p) => match Role::from_char(char::from(p.to_ascii_lowercase())) {
            Some(r @ (Role::Queen | Role::Rook | Role::Bishop | Role::Knight)) => Some(r),
            _ => return Err(BadKind::IllegalMove),
        },
    };
    match pos.board().piece_at(from) {
        Some(p) if p.color == pos.turn() && p.role == role => {}
        Some(p) if p.color == pos.turn() => return Err(BadKind::PieceMismatch),
        _ => return Err(BadKind::IllegalMove),
    }
    UciMove::Normal { from, to, promotion }.to_move(pos).map_err(|_| BadKind::IllegalMove)
}

/// Reads every line of `data` and calls `on_game` for each readable game.
/// Returns the number of games seen (blank lines are not games).
pub fn read_chunk(
    data: &[u8],
    origin: ChunkOrigin<'_>,
    max_ply: usize,
    bad: &mut BadGames,
    mut on_game: impl FnMut(&BgnGame),
) -> u64 {
    let mut game = BgnGame::default();
    let mut games = 0;
    let mut line_no = origin.first_line;
    let start_key = IdentityKeys::key(&Chess::default());
    for line in data.split(|&b| b == b'\n') {
        let this_line = line_no;
        line_no += 1;
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        games += 1;
        let mut record_bad = |kind: BadKind| {
            if bad.wants_example(kind) {
                bad.record(kind, Location { file: origin.file.to_string(), line: this_line });
            } else {
                bad.count_only(kind);
            }
        };
        let parsed = serde_json::from_slice(line)
            .and_then(|rec: Record<'_>| Ok((first_moves(rec.moves, max_ply)?, rec)));
        let (moves, rec) = match parsed {
            Ok(r) => r,
            Err(_) => {
                record_bad(BadKind::BadJson);
                continue;
            }
        };
        game.tags = GameTags { count: 1, ..Default::default() };
        let t = &mut game.tags;
        t.white_elo = rec.white_elo.filter(|r| (1..=4000).contains(r));
        t.black_elo = rec.black_elo.filter(|r| (1..=4000).contains(r));
        t.speed = rec.time_control.as_deref().and_then(|s| Speed::from_time_control(s.as_bytes()));
        t.date = match (rec.date.as_deref(), rec.datetime.as_deref()) {
            (Some(date), _) => DateRange::parse(date.as_bytes()),
            // 2013-01-05[T…] → 2013.01.05, the PGN form the date filter reads.
            (None, Some(dt)) => {
                dt.get(..10).and_then(|d| DateRange::parse(d.replace('-', ".").as_bytes()))
            }
            (None, None) => None,
        };
        t.bot = [&rec.white_title, &rec.black_title]
            .iter()
            .any(|x| x.as_deref().is_some_and(|s| s.eq_ignore_ascii_case("BOT")));
        if let Some(v) = rec.variant.as_deref() {
            t.add(b"Variant", v.as_bytes());
        }
        if let Some(f) = rec.fen.as_deref() {
            t.add(b"FEN", f.as_bytes());
        }
        t.result = rec.result.as_deref().and_then(|r| GameResult::from_tag(r.as_bytes()));
        game.result = t.result;
        game.keys.clear();
        game.moves.clear();
        game.keys.push(start_key);
        let mut pos = Chess::default();
        let mut failed = None;
        for field in &moves {
            match field.to_move(&pos) {
                Ok(m) => {
                    let key = *game.keys.last().unwrap_or(&start_key);
                    let updated = IdentityKeys::update(&pos, key, m);
                    pos.play_unchecked(m);
                    game.keys.push(updated.unwrap_or_else(|| IdentityKeys::key(&pos)));
                    game.moves.push(m);
                }
                Err(kind) => {
                    failed = Some(kind);
                    break;
                }
            }
        }
        match failed {
            Some(kind) => record_bad(kind),
            None => on_game(&game),
        }
    }
    debug_assert_eq!(line_no - origin.first_line, count_newlines(data) + 1);
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_parse_with_piece_check_castling_and_promotion() {
        let mut pos = Chess::default();
        for t in ["Pe2e4", "Pe7e5", "Ng1f3", "Nb8c6", "Bf1c4", "Bf8c5", "Ke1g1"] {
            let m = parse_move(&pos, t).unwrap_or_else(|e| panic!("{t}: {e:?}"));
            pos.play_unchecked(m);
        }
        assert!(pos.board().king_of(shakmaty::Color::White) == Some(Square::G1));
        assert_eq!(parse_move(&pos, "Ng8f6").map(|_| ()), Ok(()));
        assert_eq!(parse_move(&pos, "Bg8f6"), Err(BadKind::PieceMismatch));
        assert_eq!(parse_move(&pos, "Ng8g6"), Err(BadKind::IllegalMove));
        assert_eq!(parse_move(&pos, "Ng8"), Err(BadKind::IllegalMove));
        let promo = crate::position::parse_fen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1").unwrap();
        let m = parse_move(&promo, "Pe7e8Q").unwrap();
        assert_eq!(m.promotion(), Some(Role::Queen));
    }

    #[test]
    fn lines_become_games_or_located_bad_games() {
        let text = br#"{"result":"1-0","white_elo":2000,"moves":["Pe2e4","Pe7e5"]}

not json
{"result":"0-1","moves":["Pe2e4","Ne7e5"]}
{"result":"1/2-1/2","moves":["Pd2d4"],"event":"ignored"}
"#;
        let origin = ChunkOrigin { file: "g.bgn", first_line: 1, last: true, repaired_tags: &[] };
        let mut bad = BadGames::default();
        let mut seen = Vec::new();
        let n = read_chunk(text, origin, 15, &mut bad, |g| {
            seen.push((g.moves.len(), g.result, g.tags.white_elo))
        });
        assert_eq!(n, 4);
        assert_eq!(
            seen,
            vec![(2, Some(GameResult::WhiteWins), Some(2000)), (1, Some(GameResult::Draw), None)]
        );
        assert_eq!(bad.kinds[&BadKind::BadJson].examples[0].line, 3);
        assert_eq!(bad.kinds[&BadKind::PieceMismatch].examples[0].line, 4);
    }

    #[test]
    fn move_objects_from_okb_convert_read_like_move_strings() {
        let text = br#"{"result":"1-0","datetime":"2013-01-05T18:02:17Z","moves":[{"p":"P","f":"e2","t":"e4"},{"p":"P","f":"e7","t":"e5","a":{"clk":"0:05:00"}},"Ng1f3"]}
{"result":"0-1","moves":[{"p":"B","f":"e2","t":"e4"}]}
"#;
        let origin = ChunkOrigin { file: "g.bgn", first_line: 1, last: true, repaired_tags: &[] };
        let mut bad = BadGames::default();
        let mut seen = Vec::new();
        read_chunk(text, origin, 15, &mut bad, |g| {
            seen.push((g.moves.len(), g.tags.date.is_some()))
        });
        assert_eq!(seen, vec![(3, true)]);
        assert_eq!(bad.kinds[&BadKind::PieceMismatch].examples[0].line, 2);
    }
}
