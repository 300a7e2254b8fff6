//! BGN, the JSON game format `okb convert` writes: one game object per line (UTF-8,
//! `\n`-terminated), optionally bzip2-compressed.
//!
//! There is no published specification, so this is it:
//!
//! ```json
//! {"white":"alpha","black":"beta","white_elo":2210,"black_elo":2105,"result":"1-0",
//!  "datetime":"2013-01-05T18:02:17Z","time_control":"300+0",
//!  "opening":{"eco":"D35","name":"Queen's Gambit Declined: Normal Defense","src":"tags"},
//!  "tags":{"Event":"Rated Blitz game","Site":"…","Date":"2013.01.05", …},
//!  "comment":"before the first move",
//!  "moves":[{"p":"P","f":"d2","t":"d4","a":{"eval":"0.2","clk":"0:05:00"}},
//!           {"p":"K","f":"e1","t":"g1","castle":"O-O"},
//!           {"p":"N","f":"f3","t":"e5","x":"P","c":1,"nag":[1],"comment":"Good."},
//!           {"p":"P","f":"e7","t":"e8","promote":"Q","c":1}]}
//! ```
//!
//! Game fields (all but `result` and `moves` left out when unknown):
//! * `white`, `black`, `white_elo`, `black_elo` (numbers), `white_title`, `black_title`;
//! * `result`: `1-0`, `0-1`, `1/2-1/2` or `*`;
//! * `datetime`: ISO 8601 in UTC: `YYYY-MM-DDTHH:MM:SSZ` from `UTCDate`/`UTCTime` (else
//!   `Date`/`Time`); just `YYYY-MM-DD` when the date is known and the time is not; left
//!   out when the date is partial (`1990.??.??`, still in `tags`);
//! * `time_control`, `variant`, `fen` (the start position of a game set up from a FEN);
//! * `opening`: `eco`, `name` and `src` (where it came from: `tags` for the game's own
//!   ECO/Opening/Variation tags; a classifier can fill it from the knowledge base);
//! * `tags`: every PGN tag in file order, so PGN → BGN → PGN keeps them all;
//! * `comment`: the comment before the first move.
//!
//! Move fields:
//! * `p` piece (`P N B R Q K`), `f` from square, `t` to square (castling: the king's
//!   move, `e1g1`, plus `castle`: `O-O` or `O-O-O`);
//! * `x`: the captured piece (`P` for en passant too); `promote`: `N B R Q`;
//! * `c`: the check counter, the number of pieces giving check after the move (1, or 2
//!   for a double check); left out when 0; mate is not a field, it follows from the
//!   position;
//! * `nag`: the move's NAGs (`$1` … as numbers, in order);
//! * `a`: the annotation commands of the move's comment (`[%eval 0.25]`, `[%clk
//!   0:05:00]`, any `[%cmd …]`), command name → text, in order;
//! * `comment`: the rest of the comment text, trimmed.
//!
//! Only the main line is kept: variations are dropped (and counted by `okb convert`).
//! Written back to PGN, a move's comment is `{ [%eval …] [%clk …] text }`: commands
//! first, then the text, the order Lichess uses.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use shakmaty::{Chess, Color, Move, Position, Role, Square};

use crate::position;

/// The opening of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BgnOpening {
    /// ECO code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eco: Option<String>,
    /// Full name (`Sicilian Defense: Najdorf Variation`).
    pub name: String,
    /// Where it came from: `tags`, or the classifier's name.
    pub src: String,
}

/// One move of a BGN game, as read back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BgnMove {
    /// Piece letter.
    pub p: String,
    /// From square.
    pub f: String,
    /// To square.
    pub t: String,
    /// `O-O` or `O-O-O`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub castle: Option<String>,
    /// Captured piece letter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// Number of checking pieces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<u8>,
    /// Promotion piece letter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promote: Option<String>,
    /// NAGs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nag: Vec<u8>,
    /// Annotation commands.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub a: Map<String, Value>,
    /// Comment text without the commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// One BGN game, as read back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BgnGame {
    /// White's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white: Option<String>,
    /// Black's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black: Option<String>,
    /// White's rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_elo: Option<u32>,
    /// Black's rating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_elo: Option<u32>,
    /// White's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_title: Option<String>,
    /// Black's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_title: Option<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
    /// ISO 8601 UTC date and time (or date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datetime: Option<String>,
    /// PGN TimeControl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<String>,
    /// PGN Variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Start position, when not the standard one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fen: Option<String>,
    /// The game's opening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<BgnOpening>,
    /// Every PGN tag, in order.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub tags: Map<String, Value>,
    /// Comment before the first move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The main line.
    pub moves: Vec<BgnMove>,
}

/// A game as `okb convert` reads it from PGN: tags, main line, comments and NAGs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnGame {
    /// Tags in file order.
    pub tags: Vec<(String, String)>,
    /// Start position (the FEN tag's, else the standard one).
    pub start: Chess,
    /// Main-line moves, each with its NAGs and comment text (raw, commands included).
    pub moves: Vec<(Move, Vec<u8>, Option<String>)>,
    /// Comment before the first move.
    pub comment: Option<String>,
    /// The result (Result tag, else the termination marker, else `*`).
    pub result: String,
}

impl PgnGame {
    /// The value of tag `name` (its first occurrence).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The value of the last occurrence of tag `name`.
    fn tag_last(&self, name: &str) -> Option<&str> {
        self.tags.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Appends `game` with `opening` as one BGN line (JSON object and `\n`) to `out`.
///
/// Written field by field rather than through a serde value: converting is dominated
/// by this, and the bytes are the same as serializing [`BgnGame`] (a test reads every
/// line back into one).
pub fn write_line(game: &PgnGame, opening: Option<&BgnOpening>, out: &mut Vec<u8>) {
    let tag = |name: &str| game.tag(name).filter(|v| !v.is_empty() && *v != "?" && *v != "-");
    let mut obj = JsonObject::open(out);
    for (key, name) in [("white", "White"), ("black", "Black")] {
        if let Some(v) = tag(name) {
            obj.string(key, v);
        }
    }
    for (key, name) in [("white_elo", "WhiteElo"), ("black_elo", "BlackElo")] {
        if let Some(v) = tag(name).and_then(|v| v.parse::<u32>().ok()) {
            obj.key(key);
            obj.out.extend_from_slice(v.to_string().as_bytes());
        }
    }
    for (key, name) in [("white_title", "WhiteTitle"), ("black_title", "BlackTitle")] {
        if let Some(v) = tag(name) {
            obj.string(key, v);
        }
    }
    obj.string("result", &game.result);
    if let Some(dt) = datetime(game) {
        obj.string("datetime", &dt);
    }
    for (key, name) in [("time_control", "TimeControl"), ("variant", "Variant")] {
        if let Some(v) = tag(name) {
            obj.string(key, v);
        }
    }
    if game.start != Chess::default() {
        obj.string("fen", &position::fen(&game.start));
    }
    if let Some(o) = opening {
        obj.key("opening");
        let mut inner = JsonObject::open(obj.out);
        if let Some(eco) = &o.eco {
            inner.string("eco", eco);
        }
        inner.string("name", &o.name);
        inner.string("src", &o.src);
        inner.close();
    }
    if !game.tags.is_empty() {
        obj.key("tags");
        let mut inner = JsonObject::open(obj.out);
        // A repeated tag is one key: at its first place, with its last value.
        for (i, (name, _)) in game.tags.iter().enumerate() {
            if game.tags[..i].iter().all(|(n, _)| n != name) {
                inner.string(name, game.tag_last(name).unwrap_or_default());
            }
        }
        inner.close();
    }
    if let Some(c) = &game.comment {
        obj.string("comment", c);
    }
    obj.key("moves");
    obj.out.push(b'[');
    let mut pos = game.start.clone();
    for (i, (m, nags, comment)) in game.moves.iter().enumerate() {
        if i > 0 {
            obj.out.push(b',');
        }
        write_move(obj.out, &pos, m, nags, comment.as_deref());
        pos.play_unchecked(*m);
    }
    obj.out.push(b']');
    obj.close();
    out.push(b'\n');
}

/// One move object (see the module docs for the fields).
fn write_move(out: &mut Vec<u8>, pos: &Chess, m: &Move, nags: &[u8], comment: Option<&str>) {
    let (from, to) = match m.to_uci(shakmaty::CastlingMode::Standard) {
        shakmaty::uci::UciMove::Normal { from, to, .. } => (from, to),
        _ => unreachable!("standard chess moves are normal UCI moves"),
    };
    let mut after = pos.clone();
    after.play_unchecked(*m);
    let checkers = after.checkers().count();
    let mut obj = JsonObject::open(out);
    obj.string("p", piece_letter(m.role()));
    obj.string("f", SQUARES[from as usize]);
    obj.string("t", SQUARES[to as usize]);
    if let Some(side) = m.castling_side() {
        obj.string("castle", if side.is_king_side() { "O-O" } else { "O-O-O" });
    }
    if let Some(role) = m.capture() {
        obj.string("x", piece_letter(role));
    }
    if checkers > 0 {
        obj.key("c");
        obj.out.extend_from_slice(checkers.to_string().as_bytes());
    }
    if let Some(role) = m.promotion() {
        obj.string("promote", piece_letter(role));
    }
    if !nags.is_empty() {
        obj.key("nag");
        let list: Vec<String> = nags.iter().map(u8::to_string).collect();
        obj.out.extend_from_slice(format!("[{}]", list.join(",")).as_bytes());
    }
    if let Some(comment) = comment {
        let (commands, text) = split_commands(comment);
        if !commands.is_empty() {
            obj.key("a");
            let mut inner = JsonObject::open(obj.out);
            for (name, value) in &commands {
                inner.string(name, value.as_str().unwrap_or_default());
            }
            inner.close();
        }
        if let Some(text) = text {
            obj.string("comment", &text);
        }
    }
    obj.close();
}

const SQUARES: [&str; 64] = [
    "a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2",
    "a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3", "a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4",
    "a5", "b5", "c5", "d5", "e5", "f5", "g5", "h5", "a6", "b6", "c6", "d6", "e6", "f6", "g6", "h6",
    "a7", "b7", "c7", "d7", "e7", "f7", "g7", "h7", "a8", "b8", "c8", "d8", "e8", "f8", "g8", "h8",
];

fn piece_letter(role: Role) -> &'static str {
    match role {
        Role::Pawn => "P",
        Role::Knight => "N",
        Role::Bishop => "B",
        Role::Rook => "R",
        Role::Queen => "Q",
        Role::King => "K",
    }
}

/// A JSON object being written: keys and string values escaped as serde_json does.
struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> JsonObject<'a> {
    fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        JsonObject { out, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        json_string(self.out, key);
        self.out.push(b':');
    }

    fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        json_string(self.out, value);
    }

    fn close(self) {
        self.out.push(b'}');
    }
}

/// A JSON string; the common case (nothing to escape) is copied as is.
fn json_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        serde_json::to_writer(&mut *out, s).expect("strings serialize");
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Splits a comment into its `[%cmd value]` commands and the remaining text (trimmed,
/// `None` when empty).
pub fn split_commands(comment: &str) -> (Map<String, Value>, Option<String>) {
    let mut commands = Map::new();
    let mut text = String::new();
    let mut rest = comment;
    while let Some(start) = rest.find("[%") {
        let Some(len) = rest[start..].find(']') else { break };
        let inner = &rest[start + 2..start + len];
        let (name, value) = inner.split_once(char::is_whitespace).unwrap_or((inner, ""));
        if name.is_empty() {
            break;
        }
        commands.insert(name.to_string(), Value::String(value.trim().to_string()));
        text.push_str(&rest[..start]);
        text.push(' ');
        rest = &rest[start + len + 1..];
    }
    text.push_str(rest);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (commands, (!text.is_empty()).then_some(text))
}

/// `datetime` of a game: see the module docs.
fn datetime(game: &PgnGame) -> Option<String> {
    let date = game.tag("UTCDate").or_else(|| game.tag("Date"))?;
    let parts: Vec<&str> = date.split('.').collect();
    let [y, m, d] = parts[..] else { return None };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
        return None;
    }
    let time = game.tag("UTCTime").or_else(|| game.tag("Time")).filter(|t| {
        let b = t.as_bytes();
        b.len() == 8
            && b[2] == b':'
            && b[5] == b':'
            && t.bytes().filter(u8::is_ascii_digit).count() == 6
    });
    Some(match time {
        Some(t) => format!("{y}-{m}-{d}T{t}Z"),
        None => format!("{y}-{m}-{d}"),
    })
}

/// Why a BGN game cannot be written as PGN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BgnError {
    /// The line is not a BGN game object.
    #[error("not a BGN game: {0}")]
    Json(String),
    /// The `fen` field does not parse.
    #[error("bad fen {0:?}")]
    Fen(String),
    /// A move is malformed or illegal.
    #[error("move {ply} ({text}) is not legal here")]
    Move {
        /// 1-based ply.
        ply: usize,
        /// The move as `p f t promote`.
        text: String,
    },
}

/// The PGN text of one BGN line (tags, movetext, a blank line after).
pub fn line_to_pgn(line: &[u8]) -> Result<String, BgnError> {
    let game: BgnGame = serde_json::from_slice(line).map_err(|e| BgnError::Json(e.to_string()))?;
    to_pgn(&game)
}

/// The PGN text of a BGN game.
pub fn to_pgn(game: &BgnGame) -> Result<String, BgnError> {
    let mut out = String::new();
    let tags: Vec<(String, String)> = if game.tags.is_empty() {
        synthesized_tags(game)
    } else {
        game.tags
            .iter()
            .map(|(n, v)| (n.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
            .collect()
    };
    for (name, value) in &tags {
        out.push_str(&format!(
            "[{name} \"{}\"]\n",
            value.replace('\\', "\\\\").replace('"', "\\\"")
        ));
    }
    out.push('\n');
    let mut pos = match &game.fen {
        Some(fen) => position::parse_fen(fen).map_err(|_| BgnError::Fen(fen.clone()))?,
        None => Chess::default(),
    };
    let mut text = super::pgn::Movetext::default();
    if let Some(c) = &game.comment {
        text.token(format!("{{ {} }}", c.replace('}', "")));
        text.needs_black_number = true;
    }
    let first_ply = if pos.turn() == Color::White { 0 } else { 1 }
        + 2 * (u32::from(pos.fullmoves()) as usize - 1);
    for (i, mv) in game.moves.iter().enumerate() {
        let m = to_move(&pos, mv).ok_or_else(|| BgnError::Move {
            ply: i + 1,
            text: format!("{}{}{}{}", mv.p, mv.f, mv.t, mv.promote.as_deref().unwrap_or("")),
        })?;
        let ply = first_ply + i;
        text.numbered(ply, &position::san(&pos, &m), i == 0);
        pos.play_unchecked(m);
        for n in &mv.nag {
            text.token(format!("${n}"));
        }
        let mut parts: Vec<String> =
            mv.a.iter()
                .map(|(k, v)| {
                    format!("[%{k} {}]", v.as_str().map_or_else(|| v.to_string(), str::to_string))
                })
                .collect();
        parts.extend(mv.comment.clone());
        if !parts.is_empty() {
            text.token(format!("{{ {} }}", parts.join(" ").replace('}', "")));
            text.needs_black_number = true;
        }
    }
    // Anything but a PGN result would make the movetext unreadable.
    let result = if ["1-0", "0-1", "1/2-1/2"].contains(&game.result.as_str()) {
        game.result.as_str()
    } else {
        "*"
    };
    text.token(result.to_string());
    out.push_str(&text.finish());
    Ok(out)
}

/// The Seven Tag Roster (and ratings, time control, opening) of a BGN game that carries
/// no `tags` object.
fn synthesized_tags(game: &BgnGame) -> Vec<(String, String)> {
    let or_q = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    let date = game
        .datetime
        .as_deref()
        .map_or("????.??.??".to_string(), |d| d.get(..10).unwrap_or(d).replace('-', "."));
    let mut tags = vec![
        ("Event".to_string(), "?".to_string()),
        ("Site".into(), "?".into()),
        ("Date".into(), date),
        ("Round".into(), "?".into()),
        ("White".into(), or_q(&game.white)),
        ("Black".into(), or_q(&game.black)),
        ("Result".into(), game.result.clone()),
    ];
    if let Some(t) = game.datetime.as_deref().and_then(|d| d.get(11..19)) {
        tags.push(("UTCTime".into(), t.to_string()));
    }
    for (name, value) in [("WhiteElo", game.white_elo), ("BlackElo", game.black_elo)] {
        if let Some(v) = value {
            tags.push((name.into(), v.to_string()));
        }
    }
    for (name, value) in [("TimeControl", &game.time_control), ("Variant", &game.variant)] {
        if let Some(v) = value {
            tags.push((name.into(), v.clone()));
        }
    }
    if let Some(fen) = &game.fen {
        tags.push(("SetUp".into(), "1".into()));
        tags.push(("FEN".into(), fen.clone()));
    }
    if let Some(o) = &game.opening {
        if let Some(eco) = &o.eco {
            tags.push(("ECO".into(), eco.clone()));
        }
        tags.push(("Opening".into(), o.name.clone()));
    }
    tags
}

/// The legal move a BGN move object denotes in `pos`, if it is one (the piece letter
/// must match the piece on the from-square).
pub fn to_move(pos: &Chess, mv: &BgnMove) -> Option<Move> {
    let from = Square::from_ascii(mv.f.as_bytes()).ok()?;
    let to = Square::from_ascii(mv.t.as_bytes()).ok()?;
    let role = |s: &str| s.chars().next().and_then(|c| Role::from_char(c.to_ascii_lowercase()));
    let piece = pos.board().piece_at(from)?;
    if piece.color != pos.turn() || Some(piece.role) != role(&mv.p) {
        return None;
    }
    let promotion = match &mv.promote {
        Some(p) => Some(role(p)?),
        None => None,
    };
    shakmaty::uci::UciMove::Normal { from, to, promotion }.to_move(pos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_split_into_commands_and_text() {
        let (a, text) = split_commands(" [%eval 0.17] [%clk 0:03:00] A fine move. ");
        assert_eq!(a["eval"], "0.17");
        assert_eq!(a["clk"], "0:03:00");
        assert_eq!(text.as_deref(), Some("A fine move."));
        let (a, text) = split_commands("Only text");
        assert!(a.is_empty());
        assert_eq!(text.as_deref(), Some("Only text"));
        let (a, text) = split_commands("[%eval #-3]");
        assert_eq!((a["eval"].as_str(), text), (Some("#-3"), None));
    }

    #[test]
    fn move_objects_carry_piece_squares_capture_check_and_promotion() {
        let pos = position::parse_fen("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let play =
            |uci: &str| uci.parse::<shakmaty::uci::UciMove>().unwrap().to_move(&pos).unwrap();
        let written = |m: &Move, nags: &[u8], comment: Option<&str>| {
            let mut out = Vec::new();
            write_move(&mut out, &pos, m, nags, comment);
            serde_json::from_slice::<BgnMove>(&out).unwrap()
        };
        let promo = written(&play("b7a8q"), &[1], Some("[%clk 0:01:00] wins"));
        assert_eq!((promo.p.as_str(), promo.f.as_str(), promo.t.as_str()), ("P", "b7", "a8"));
        assert_eq!(
            (promo.x.as_deref(), promo.promote.as_deref(), promo.c),
            (Some("R"), Some("Q"), Some(1))
        );
        assert_eq!(
            (promo.nag.clone(), promo.comment.as_deref(), promo.a["clk"].as_str()),
            (vec![1], Some("wins"), Some("0:01:00"))
        );
        let castle = written(&play("e1c1"), &[], None);
        assert_eq!((castle.p.as_str(), castle.f.as_str(), castle.t.as_str()), ("K", "e1", "c1"));
        assert_eq!(castle.castle.as_deref(), Some("O-O-O"));
        for m in [promo, castle] {
            assert!(to_move(&pos, &m).is_some(), "{m:?} reads back");
        }
        let wrong_piece =
            BgnMove { p: "N".into(), f: "e1".into(), t: "e2".into(), ..Default::default() };
        assert_eq!(to_move(&pos, &wrong_piece), None);
    }

    #[test]
    fn lines_are_what_serde_writes_for_the_same_game() {
        let game = PgnGame {
            tags: vec![
                ("White".into(), "A \"quoted\" name".into()),
                ("WhiteElo".into(), "2100".into()),
                ("Date".into(), "2020.02.03".into()),
            ],
            moves: vec![(
                shakmaty::uci::UciMove::from_ascii(b"e2e4")
                    .unwrap()
                    .to_move(&Chess::default())
                    .unwrap(),
                vec![3],
                Some("tab\there".into()),
            )],
            comment: Some("start".into()),
            result: "*".into(),
            ..Default::default()
        };
        let opening = BgnOpening { eco: None, name: "King's Pawn".into(), src: "tags".into() };
        let mut out = Vec::new();
        write_line(&game, Some(&opening), &mut out);
        let read: BgnGame = serde_json::from_slice(&out).unwrap();
        let mut again = serde_json::to_vec(&read).unwrap();
        again.push(b'\n');
        assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(again).unwrap());
        assert_eq!(read.white_elo, Some(2100));
        assert_eq!(read.datetime.as_deref(), Some("2020-02-03"));
    }

    #[test]
    fn datetimes_are_utc_iso_8601() {
        let game = |tags: &[(&str, &str)]| PgnGame {
            tags: tags.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
            ..Default::default()
        };
        assert_eq!(
            datetime(&game(&[
                ("Date", "2013.01.05"),
                ("UTCDate", "2013.01.06"),
                ("UTCTime", "01:02:03")
            ]))
            .as_deref(),
            Some("2013-01-06T01:02:03Z")
        );
        assert_eq!(datetime(&game(&[("Date", "2013.01.05")])).as_deref(), Some("2013-01-05"));
        assert_eq!(datetime(&game(&[("Date", "1990.??.??")])), None);
    }
}
