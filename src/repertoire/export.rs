//! A repertoire as files to study and play with: a PGN whose main lines are the moves
//! most played in the knowledge base (`[%eval]` and opening names in comments), an
//! Anki-importable CSV of cards (position → my move), and a Polyglot book of my moves.

use std::collections::BTreeSet;

use super::{RepMove, Repertoire};
use crate::engine::Annotations;
use crate::export::polyglot::{self, BookEntry, WeightMode};
use crate::position::polyglot_key;
use crate::tree::Tree;

/// What the exports read besides the repertoire.
pub struct Context<'a> {
    /// The knowledge base (popularity and names).
    pub tree: &'a Tree,
    /// Engine annotations, if the pipeline has them.
    pub annotations: Option<&'a Annotations>,
}

impl Context<'_> {
    /// Games of the knowledge base that reached the position of repertoire node `i`.
    fn games(&self, rep: &Repertoire, i: u32) -> u64 {
        self.tree
            .find(&rep.nodes[i as usize].epd)
            .map_or(0, |k| self.tree.nodes[k as usize].game_count())
    }

    /// The moves of node `i`, most played in the knowledge base first (file order on ties).
    fn ordered<'r>(&self, rep: &'r Repertoire, i: u32) -> Vec<&'r RepMove> {
        let mut moves: Vec<&RepMove> = rep.nodes[i as usize].moves.iter().collect();
        moves.sort_by_key(|m| std::cmp::Reverse(self.games(rep, m.child)));
        moves
    }

    /// The comment after a move into node `i`: its eval, and its opening's own name.
    fn comment(&self, rep: &Repertoire, i: u32) -> Option<String> {
        let epd = &rep.nodes[i as usize].epd;
        let eval =
            self.annotations.and_then(|a| a.results.get(epd)).map(crate::export::pgn::eval_command);
        let name = self
            .tree
            .find(epd)
            .and_then(|k| self.tree.nodes[k as usize].opening.as_ref())
            .filter(|o| o.own && o.src != "interpolated")
            .map(|o| o.name.replace(['{', '}'], ""));
        match (eval, name) {
            (None, None) => None,
            (e, n) => Some([e, n].into_iter().flatten().collect::<Vec<_>>().join(" ")),
        }
    }
}

/// The repertoire as one PGN game: at every position the most played move is the main
/// line and the others variations; a position reached again is not written out twice.
pub fn pgn(rep: &Repertoire, cx: &Context<'_>) -> Vec<u8> {
    let mut out = format!(
        "[Event \"{} repertoire\"]\n[Site \"okb\"]\n[Result \"*\"]\n[Annotator \"okb ({})\"]\n\n",
        rep.name,
        rep.color.word()
    );
    let mut text = String::new();
    write_moves(rep, cx, 0, &mut text, &mut BTreeSet::new());
    text.push('*');
    out.push_str(&wrap(&text, 79));
    out.push('\n');
    out.into_bytes()
}

/// Writes the moves from node `at` into `out` (numbered from the node's first line).
fn write_moves(
    rep: &Repertoire,
    cx: &Context<'_>,
    at: u32,
    out: &mut String,
    written: &mut BTreeSet<u32>,
) {
    if !written.insert(at) {
        return;
    }
    let moves = cx.ordered(rep, at);
    let Some((main, others)) = moves.split_first() else { return };
    let ply = usize::from(rep.nodes[at as usize].ply());
    let number = |force: bool| {
        if ply % 2 == 0 {
            format!("{}. ", ply / 2 + 1)
        } else if force {
            format!("{}... ", ply / 2 + 1)
        } else {
            String::new()
        }
    };
    let with_comment = |m: &RepMove| match cx.comment(rep, m.child) {
        Some(c) => format!("{} {{{c}}} ", m.san),
        None => format!("{} ", m.san),
    };
    out.push_str(&number(false));
    out.push_str(&with_comment(main));
    for m in others {
        out.push_str(&format!("({}{}", number(true), with_comment(m)));
        write_moves(rep, cx, m.child, out, written);
        let end = out.trim_end().len();
        out.truncate(end);
        out.push_str(") ");
    }
    // Black's move after a comment or variations is numbered again (`7... Be6`); the
    // number goes when nothing follows it (the line ends, or transposes).
    let mark = out.len();
    if ply % 2 == 0 && (!others.is_empty() || cx.comment(rep, main.child).is_some()) {
        out.push_str(&format!("{}... ", ply / 2 + 1));
    }
    let numbered = out.len();
    write_moves(rep, cx, main.child, out, written);
    if out.len() == numbered {
        out.truncate(mark);
    }
}

/// Breaks movetext into lines of at most `width` characters (PGN's export format).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}

/// Anki cards: one per position where the repertoire moves, the line and FEN as the
/// question, the prepared move(s) as the answer. Anki reads the `#` header lines.
pub fn anki_csv(rep: &Repertoire, cx: &Context<'_>) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    let tag = format!("okb repertoire::{}", rep.name);
    let mut rows: Vec<(u16, String, String, String)> = Vec::new();
    for (i, node) in
        rep.nodes.iter().enumerate().filter(|(_, n)| rep.mine(n) && !n.moves.is_empty())
    {
        let line = super::numbered(node.start_ply, &rep.line(i as u32));
        let who = if node.white_to_move { "White" } else { "Black" };
        let front = if line.is_empty() {
            format!("{who} to move: the first move")
        } else {
            format!("{who} to move after {line}")
        };
        let answer: Vec<&str> = cx.ordered(rep, i as u32).iter().map(|m| m.san.as_str()).collect();
        rows.push((node.ply(), front, answer.join(" / "), node.epd.clone()));
    }
    rows.sort();
    for (_, front, back, epd) in rows {
        w.write_record([front.as_str(), back.as_str(), epd.as_str(), tag.as_str()])
            .expect("writing to memory");
    }
    let body = w.into_inner().expect("writing to memory");
    let mut out =
        b"#separator:Comma\n#html:false\n#columns:Front,Back,FEN,Tags\n#tags column:4\n".to_vec();
    out.extend_from_slice(&body);
    out
}

/// A Polyglot book of the repertoire's own moves, weighted by the knowledge base's games
/// (each prepared move at least 1, so every one is in the book).
pub fn book(rep: &Repertoire, cx: &Context<'_>) -> Vec<u8> {
    let mut entries = Vec::new();
    for node in rep.nodes.iter().filter(|n| rep.mine(n) && !n.moves.is_empty()) {
        let Ok(pos) = crate::position::parse_fen(&node.epd) else { continue };
        let key = polyglot_key(&pos);
        let moves: Vec<(u16, u64)> = node
            .moves
            .iter()
            .filter_map(|m| {
                m.key
                    .to_move(&pos)
                    .map(|mv| (polyglot::encode_move(&mv), cx.games(rep, m.child).max(1)))
            })
            .collect();
        for (mv, weight) in polyglot::scale_weights(&moves, WeightMode::Games) {
            entries.push(BookEntry { key, mv, weight, learn: 0 });
        }
    }
    polyglot::sort_entries(&mut entries);
    polyglot::to_bytes(&entries)
}
