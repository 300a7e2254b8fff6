//! Reading a repertoire PGN: chapters (games) of a main line with nested variations,
//! comments, NAGs and move numbers. Every move is played on a board; positions are
//! merged by identity, so two move orders reaching one position make one node.
//!
//! The reader is okb's own small tokenizer rather than pgn-reader because an illegal
//! move must be reported with its line and column, and variations must be followed
//! (the game readers skip them).

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{CastlingMode, Chess, Position};

use super::{Chapter, RepMove, RepNode, Repertoire, Side};
use crate::position::{self, KeyMap, MoveKey, PositionKey};

/// Why a repertoire file cannot be read: the file, the 1-based line and column, the
/// token and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, miette::Diagnostic)]
#[error("{file}:{line}:{column}: {token:?} {reason}{}", after.as_ref().map(|a| format!(" after {a}")).unwrap_or_default())]
#[diagnostic(code(okb::repertoire))]
pub struct ParseError {
    /// The file as shown.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The offending token.
    pub token: String,
    /// What is wrong.
    pub reason: String,
    /// The moves played before it (numbered SAN), when it is a move.
    pub after: Option<String>,
}

/// Where the reader is in one line of play: the node, the board, the line's last move
/// (in [`Builder::played`]) and length. A variation copies the cursor, not the moves
/// before it: a file nested a thousand deep reads in linear time.
#[derive(Clone)]
struct Cursor {
    node: u32,
    pos: Chess,
    line: Option<u32>,
    depth: u16,
    start_ply: u16,
}

/// The repertoire being built, with its index.
struct Builder {
    nodes: Vec<RepNode>,
    index: KeyMap<PositionKey, u32>,
    /// Every move played: see [`Repertoire::played`].
    played: Vec<(Option<u32>, String)>,
}

impl Builder {
    /// The node of `pos`, created (with the cursor's line as its first line) if new.
    fn node(&mut self, key: PositionKey, at: &Cursor) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.nodes.len() as u32;
        let white_to_move = at.pos.turn() == shakmaty::Color::White;
        self.nodes.push(RepNode {
            key,
            epd: position::epd(&at.pos),
            white_to_move,
            line: at.line,
            start_ply: at.start_ply,
            depth: at.depth,
            moves: Vec::new(),
        });
        self.index.insert(key, i);
        i
    }
}

/// Reads the repertoire `name` for `color` from `text` (the file shown as `file`).
pub fn parse(name: &str, color: Side, file: &str, text: &str) -> Result<Repertoire, ParseError> {
    let start = Chess::default();
    let mut b = Builder { nodes: Vec::new(), index: KeyMap::default(), played: Vec::new() };
    b.node(
        position::key(&start),
        &Cursor { node: 0, pos: start, line: None, depth: 0, start_ply: 0 },
    );
    let mut reader = Reader { file, text, b, chapters: 0, facts: Vec::new() };
    reader.read_all()?;
    Ok(Repertoire {
        name: name.to_string(),
        color,
        nodes: reader.b.nodes,
        chapters: reader.chapters,
        chapter_facts: reader.facts,
        played: reader.b.played,
    })
}

struct Reader<'t> {
    file: &'t str,
    text: &'t str,
    b: Builder,
    chapters: u32,
    facts: Vec<Chapter>,
}

/// One token and where it starts.
struct Token<'t> {
    text: &'t str,
    line: u32,
    column: u32,
}

impl<'t> Reader<'t> {
    fn error(
        &self,
        token: &Token<'_>,
        reason: impl Into<String>,
        after: Option<String>,
    ) -> ParseError {
        ParseError {
            file: self.file.into(),
            line: token.line,
            column: token.column,
            token: token.text.into(),
            reason: reason.into(),
            after,
        }
    }

    /// Reads every chapter: tag pairs, then movetext up to a result or the next tags.
    fn read_all(&mut self) -> Result<(), ParseError> {
        let tokens = tokenize(self.text);
        let mut i = 0;
        while i < tokens.len() {
            let event = event_of(&tokens[i..]);
            let (fen, next) = self.tags(&tokens, i)?;
            i = next;
            if i >= tokens.len() && fen.is_none() {
                break;
            }
            self.facts.push(Chapter {
                line: tokens.get(i).map_or(0, |t| t.line),
                event,
                ..Chapter::default()
            });
            i = self.movetext(&tokens, i, fen)?;
            self.chapters += 1;
        }
        Ok(())
    }

    /// Skips a chapter's tag pairs, returning its `FEN` tag (if any) and the next token.
    fn tags(
        &self,
        tokens: &[Token<'t>],
        mut i: usize,
    ) -> Result<(Option<(Chess, u16)>, usize), ParseError> {
        let mut fen = None;
        while let Some(t) = tokens.get(i).filter(|t| t.text.starts_with('[')) {
            let inner = t.text.trim_start_matches('[').trim_end_matches(']').trim();
            let (tag, value) = inner.split_once(char::is_whitespace).unwrap_or((inner, ""));
            let value = value.trim().trim_matches('"');
            if tag == "FEN" {
                let parsed: Fen = value
                    .parse()
                    .map_err(|e| self.error(t, format!("is not a FEN ({e})"), None))?;
                let pos: Chess = parsed
                    .into_position(CastlingMode::Standard)
                    .map_err(|e| self.error(t, format!("is not a legal position ({e})"), None))?;
                let ply = (pos.fullmoves().get().saturating_sub(1) * 2) as u16
                    + u16::from(pos.turn() == shakmaty::Color::Black);
                fen = Some((pos, ply));
            }
            if tag == "Variant" && !value.eq_ignore_ascii_case("standard") && !value.is_empty() {
                return Err(self.error(t, "names a variant: a repertoire is standard chess", None));
            }
            i += 1;
        }
        Ok((fen, i))
    }

    /// Plays one chapter's movetext from token `i`; returns the token after it.
    fn movetext(
        &mut self,
        tokens: &[Token<'t>],
        mut i: usize,
        fen: Option<(Chess, u16)>,
    ) -> Result<usize, ParseError> {
        let (pos, start_ply) = fen.unwrap_or((Chess::default(), 0));
        let key = position::key(&pos);
        let mut current = Cursor { node: 0, pos, line: None, depth: 0, start_ply };
        current.node = self.b.node(key, &current);
        // The position before the last move: where a variation starts.
        let mut before = current.clone();
        let mut stack: Vec<(Cursor, Cursor, usize)> = Vec::new();
        while let Some(t) = tokens.get(i) {
            match t.text {
                "(" => {
                    stack.push((current.clone(), before.clone(), i));
                    current = before.clone();
                    let facts = self.facts.last_mut().expect("pushed before the movetext");
                    match current.pos.turn() {
                        shakmaty::Color::White => facts.white_alternatives += 1,
                        shakmaty::Color::Black => facts.black_alternatives += 1,
                    }
                }
                ")" => {
                    let (c, b, _) = stack.pop().ok_or_else(|| {
                        self.error(t, "closes a variation that was not opened", None)
                    })?;
                    (current, before) = (c, b);
                }
                "1-0" | "0-1" | "1/2-1/2" | "*" => break,
                text if text.starts_with('[') => {
                    i -= 1;
                    break;
                }
                _ => {
                    before = current.clone();
                    self.play(&mut current, t)?;
                }
            }
            i += 1;
        }
        if let Some((_, _, open)) = stack.last() {
            return Err(self.error(&tokens[*open], "opens a variation that is never closed", None));
        }
        Ok(i + 1)
    }

    /// Plays the SAN token `t` from `at`, recording the move and its node.
    fn play(&mut self, at: &mut Cursor, t: &Token<'_>) -> Result<(), ParseError> {
        let after = || {
            Some(if at.line.is_none() {
                "the chapter's start".to_string()
            } else {
                super::numbered(at.start_ply, &super::spell(&self.b.played, at.line))
            })
        };
        let san: San = t
            .text
            .trim_end_matches(['+', '#', '!', '?'])
            .parse()
            .map_err(|_| self.error(t, "is not a move", after()))?;
        let m = crate::eco::line::to_move_lenient(san, &at.pos)
            .map_err(|e| self.error(t, format!("is not legal here ({e})"), after()))?;
        let san_text = position::san(&at.pos, &m);
        let key = position::child_key(&at.pos, self.b.nodes[at.node as usize].key, &m);
        at.pos.play_unchecked(m);
        self.b.played.push((at.line, san_text.clone()));
        at.line = Some(self.b.played.len() as u32 - 1);
        at.depth = at.depth.saturating_add(1);
        let child = self.b.node(key, at);
        let from = &mut self.b.nodes[at.node as usize];
        if !from.moves.iter().any(|r| r.child == child) {
            let uci = position::uci(&m);
            from.moves.push(RepMove {
                san: san_text,
                uci,
                key: MoveKey::new(&m),
                child,
                source_line: t.line,
            });
        }
        at.node = child;
        Ok(())
    }
}

/// The `Event` tag among the tag pairs at the start of `tokens`.
fn event_of(tokens: &[Token<'_>]) -> Option<String> {
    let tags = tokens.iter().take_while(|t| t.text.starts_with('['));
    let pair = |t: &Token<'_>| {
        t.text
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim()
            .split_once(char::is_whitespace)
            .map(|(tag, v)| (tag.to_string(), v.trim().trim_matches('"').to_string()))
    };
    tags.filter_map(pair).find(|(tag, _)| tag == "Event").map(|(_, value)| value)
}

/// Splits PGN text into tag pairs (`[Tag "value"]` as one token), `(`, `)`, results and
/// move tokens; comments, NAGs, move numbers and annotation glyphs are dropped.
fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let bytes = text.as_bytes();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    // Columns counted on from the last token's, not from the line's start: a file of one
    // long line reads in linear time.
    let mut counted = (0usize, 0u32);
    let mut column = |i: usize, line_start: usize| {
        if counted.0 < line_start {
            counted = (line_start, 0);
        }
        counted = (i, counted.1 + text[counted.0..i].chars().count() as u32);
        counted.1 + 1
    };
    while i < bytes.len() {
        let c = bytes[i];
        let mut here = |i: usize, line: u32, line_start: usize| (line, column(i, line_start));
        match c {
            b'\n' => {
                line += 1;
                line_start = i + 1;
                i += 1;
            }
            b'{' | b';' | b'%' if c != b'%' || i == line_start => {
                // A comment runs to `}` (or, for `;` and a line-start `%`, to the end of the line).
                let close = if c == b'{' { b'}' } else { b'\n' };
                let end = bytes[i + 1..]
                    .iter()
                    .position(|&b| b == close)
                    .map_or(bytes.len(), |p| i + 1 + p);
                for (k, &b) in bytes[i..end].iter().enumerate() {
                    if b == b'\n' {
                        line += 1;
                        line_start = i + k + 1;
                    }
                }
                i = if close == b'}' { end + 1 } else { end };
            }
            b'[' => {
                let (l, col) = here(i, line, line_start);
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b']' || b == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1);
                tokens.push(Token { text: text[i..end].trim_end(), line: l, column: col });
                i = end;
            }
            b'(' | b')' => {
                let (l, col) = here(i, line, line_start);
                tokens.push(Token { text: &text[i..i + 1], line: l, column: col });
                i += 1;
            }
            _ if c.is_ascii_whitespace() => i += 1,
            _ => {
                let end = bytes[i..]
                    .iter()
                    .position(|&b| {
                        b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'{' | b';' | b'[')
                    })
                    .map_or(bytes.len(), |p| i + p);
                let word = &text[i..end];
                let (l, col) = here(i, line, line_start);
                // `12.` and `12...` are numbers; `12.e4` is a number glued to a move.
                let digits = word.trim_start_matches(|c: char| c.is_ascii_digit());
                let is_result = matches!(word, "1-0" | "0-1" | "1/2-1/2" | "*");
                let stripped =
                    if is_result || digits.len() == word.len() || !digits.starts_with('.') {
                        word
                    } else {
                        digits.trim_start_matches('.')
                    };
                let offset = word.len() - stripped.len();
                let skip = stripped.is_empty()
                    || stripped.starts_with('$')
                    || stripped.chars().all(|c| matches!(c, '!' | '?'));
                if !skip {
                    tokens.push(Token { text: stripped, line: l, column: col + offset as u32 });
                }
                i = end;
            }
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, color: Side) -> Result<Repertoire, ParseError> {
        parse("test", color, "rep.pgn", text)
    }

    #[test]
    fn variations_branch_from_the_position_before_their_first_move() {
        let r =
            read("[Event \"x\"]\n\n1. e4 c5 (1... e5 2. Nf3) 2. Nf3 d6 *\n", Side::White).unwrap();
        let root = &r.nodes[0];
        assert_eq!(root.moves.len(), 1);
        let after_e4 = &r.nodes[root.moves[0].child as usize];
        let replies: Vec<&str> = after_e4.moves.iter().map(|m| m.san.as_str()).collect();
        assert_eq!(replies, ["c5", "e5"]);
        assert_eq!(r.chapters, 1);
        assert_eq!(r.depth(), 4);
    }

    #[test]
    fn transpositions_are_one_node() {
        let text = "1. d4 Nf6 2. c4 e6 3. Nc3 d5 *\n\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 *\n";
        let r = read(text, Side::White).unwrap();
        // Start, then 6 + 6 positions, sharing the root, 1. d4 and the final position.
        assert_eq!(r.nodes.len(), 1 + 6 + 6 - 2);
        assert_eq!(r.chapters, 2);
        let finals: Vec<&RepNode> = r.nodes.iter().filter(|n| n.ply() == 6).collect();
        assert_eq!(finals.len(), 1);
    }

    #[test]
    fn comments_nags_and_glued_numbers_are_read() {
        let text = "1.e4 {the best; by test} e5!? $1 2.Nf3 ; rest of line (ignored\n2...Nc6 3. Bb5 a6 1/2-1/2";
        let r = read(text, Side::White).unwrap();
        assert_eq!(r.depth(), 6);
        let deepest = (0..r.nodes.len() as u32).max_by_key(|&i| r.nodes[i as usize].ply()).unwrap();
        assert_eq!(super::super::numbered(0, &r.line(deepest)), "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6");
    }

    #[test]
    fn an_illegal_move_names_file_line_column_and_the_line_before_it() {
        let e = read(
            "[Event \"x\"]\n\n1. e4 e5\n2. Nf3 Nf6 3. Bb5 Ke7 4. Ke2 Qe8 5. Kd3 Ke6 6. Ra3 *",
            Side::White,
        )
        .unwrap_err();
        assert_eq!((e.line, e.column, e.token.as_str()), (4, 48, "Ra3"));
        assert_eq!(
            e.after.as_deref(),
            Some("1. e4 e5 2. Nf3 Nf6 3. Bb5 Ke7 4. Ke2 Qe8 5. Kd3 Ke6")
        );
        assert!(e.to_string().starts_with("rep.pgn:4:48: \"Ra3\" is not legal here"), "{e}");
        let e = read("1. e4 (1. d4 *", Side::White).unwrap_err();
        assert_eq!((e.line, e.column), (1, 7));
        let e = read("1. e4 Xz9 *", Side::White).unwrap_err();
        assert!(e.to_string().contains("is not a move"), "{e}");
    }

    #[test]
    fn a_fen_chapter_starts_from_its_position() {
        let text = "[FEN \"rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2\"]\n\n2... d6 3. d4 *";
        let r = read(text, Side::Black).unwrap();
        let deepest = (0..r.nodes.len() as u32).max_by_key(|&i| r.nodes[i as usize].ply()).unwrap();
        assert_eq!(
            super::super::numbered(r.nodes[deepest as usize].start_ply, &r.line(deepest)),
            "2... d6 3. d4"
        );
        assert_eq!(r.nodes[deepest as usize].ply(), 5);
    }

    /// A line of `n` plies to positions never seen before, each move with a sibling: quiet
    /// moves (pieces before pawns), each the one leaving the most fresh quiet replies.
    fn deep_line(n: usize) -> Vec<(String, String)> {
        let mut pos = Chess::default();
        let mut seen = std::collections::HashSet::from([position::epd(&pos)]);
        let after = |pos: &Chess, m: &shakmaty::Move| {
            let mut next = pos.clone();
            next.play_unchecked(*m);
            next
        };
        let quiet = |pos: &Chess| {
            let mut moves: Vec<shakmaty::Move> =
                pos.legal_moves().into_iter().filter(|m| !m.is_capture()).collect();
            moves.sort_by_key(|m| m.role() == shakmaty::Role::Pawn);
            moves
        };
        let mut out = Vec::new();
        while out.len() < n {
            let moves = quiet(&pos);
            let fresh: Vec<&shakmaty::Move> =
                moves.iter().filter(|m| !seen.contains(&position::epd(&after(&pos, m)))).collect();
            let room = |m: &shakmaty::Move| {
                let next = after(&pos, m);
                quiet(&next)
                    .iter()
                    .filter(|r| !seen.contains(&position::epd(&after(&next, r))))
                    .count()
            };
            // The first of the roomiest (`max_by_key` keeps the last).
            let Some(next) = fresh.iter().rev().max_by_key(|m| room(m)).copied() else { break };
            let Some(sibling) = moves.iter().find(|m| *m != next) else { break };
            out.push((position::san(&pos, next), position::san(&pos, sibling)));
            // The line never comes to a sibling's position: its first line is the line's.
            seen.insert(position::epd(&after(&pos, next)));
            seen.insert(position::epd(&after(&pos, sibling)));
            pos.play_unchecked(*next);
        }
        out
    }

    #[test]
    fn a_deeply_nested_file_holds_each_move_once() {
        // `m1 x2 (m2 x3 (m3 x4 (… )))`: the line of 1,000 plies nested 1,000 deep.
        let line = deep_line(1000);
        assert_eq!(line.len(), 1000, "enough fresh positions");
        let mut text = line[0].0.clone();
        for (main, sibling) in &line[1..] {
            text.push_str(&format!(" {sibling} ( {main}"));
        }
        text.push_str(&" )".repeat(line.len() - 1));
        text.push_str(" *");
        let r = read(&text, Side::White).unwrap();
        let deepest = (0..r.nodes.len() as u32).max_by_key(|&i| r.nodes[i as usize].ply()).unwrap();
        assert_eq!(r.line(deepest), line.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>());
        // Linear: each position holds its move, not the line to it (which would be half
        // a million moves here).
        let bytes = serde_json::to_vec(&r).unwrap().len();
        assert!(bytes < 400 * r.nodes.len(), "{bytes} bytes for {} positions", r.nodes.len());
    }
}
