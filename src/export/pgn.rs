//! PGN per named opening: one file per [`named_openings`] entry, holding the opening's
//! line from the start position and, below it, the tree to `max_depth` plies as nested
//! variations.
//!
//! Each file is one game: the Seven Tag Roster (`?` where a tree has no value, result
//! `*`), `ECO` and `Opening` (the full Lichess name, as Lichess writes its own PGN), and
//! `Annotator "okb"` (with the engine evaluations' origins when there are any:
//! `okb; evaluations: okb-evals@937506613793, Stockfish 15.1`). At every node the most-played move is the main continuation and the
//! others follow as variations, in the tree's order (games, then SAN). A position the
//! engine annotated gets `{[%eval 0.25]}` after the move reaching it (pawns from White's
//! side; `[%eval #3]`/`[%eval #-3]` for mates), the convention of Lichess and
//! python-chess; a node with an authoritative name of its own also gets that name in the
//! comment.
//!
//! The tree is a graph (transpositions, even repetitions), so a file could repeat the
//! same subtree under every move order. Instead, each position's moves are written once:
//! at its first occurrence at its shortest distance from the opening's node. Other
//! occurrences end with the move that reaches them. So the file holds exactly the edges
//! out of every position within `max_depth - 1` plies of the named node, each once.

use crate::engine::{Analysis, Annotations};
use crate::tree::{Node, Tree};

use super::ExportFile;
use super::named::{NamedOpening, named_openings};

/// Default depth of the subtree below each named node, in plies.
pub const DEFAULT_MAX_DEPTH: u16 = 12;

/// Widest movetext line written (the PGN export format's limit is 80).
const LINE_WIDTH: usize = 79;

/// Renders one `<ECO>-<slug>.pgn` file per named opening of `tree`.
pub fn render_all(
    tree: &Tree,
    annotations: Option<&Annotations>,
    max_depth: u16,
) -> Vec<ExportFile> {
    use rayon::prelude::*;
    let annotator = annotator(annotations);
    named_openings(tree)
        .par_iter()
        .map(|opening| ExportFile {
            name: format!("{}.pgn", opening.stem),
            bytes: render_opening(tree, annotations, opening, max_depth, &annotator).into_bytes(),
        })
        .collect()
}

/// The `Annotator` tag: okb, and where the engine evaluations came from (evaluation
/// sources as `<name>@<pin>`, and the engine's name for its own searches), sorted.
fn annotator(annotations: Option<&Annotations>) -> String {
    let Some(a) = annotations.filter(|a| !a.results.is_empty()) else { return "okb".into() };
    let mut origins: std::collections::BTreeSet<&str> =
        a.origins.values().map(String::as_str).collect();
    if a.results.len() > a.origins.len() && !a.engine_name.is_empty() {
        origins.insert(&a.engine_name);
    }
    format!("okb; evaluations: {}", origins.into_iter().collect::<Vec<_>>().join(", "))
}

/// The PGN text of one named opening, its `Annotator` tag `annotator`.
pub fn render_opening(
    tree: &Tree,
    annotations: Option<&Annotations>,
    opening: &NamedOpening,
    max_depth: u16,
    annotator: &str,
) -> String {
    let mut out = String::new();
    let tags = [
        ("Event", "okb opening tree"),
        ("Site", "?"),
        ("Date", "????.??.??"),
        ("Round", "?"),
        ("White", "?"),
        ("Black", "?"),
        ("Result", "*"),
        ("ECO", opening.eco.as_str()),
        ("Opening", opening.name.as_str()),
        ("Annotator", annotator),
    ];
    for (name, value) in tags {
        out.push_str(&format!("[{name} \"{}\"]\n", escape_tag(value)));
    }
    out.push('\n');
    let mut writer = Writer { tree, annotations, text: Movetext::default() };
    // The opening's own line, from the start position, without side lines.
    let named = opening.node as usize;
    let mut node = tree.root as usize;
    let line = &tree.nodes[named].line;
    for (ply, key) in line.iter().enumerate() {
        let edge = tree.nodes[node]
            .children
            .iter()
            .find(|e| e.key == *key)
            .expect("a named node's line is a tree path");
        writer.write_move(ply, &edge.san, edge.child as usize, false);
        node = edge.child as usize;
    }
    debug_assert_eq!(node, named);
    let dist = distances(tree, named, max_depth);
    let mut expanded = vec![false; tree.nodes.len()];
    writer.subtree(named, line.len(), 0, max_depth, &dist, &mut expanded);
    writer.text.token("*".to_string());
    out.push_str(&writer.text.finish());
    out
}

/// Shortest distance (in plies, up to `max_depth`) from `start` to every node reachable
/// within `max_depth`; `u16::MAX` elsewhere.
fn distances(tree: &Tree, start: usize, max_depth: u16) -> Vec<u16> {
    let mut dist = vec![u16::MAX; tree.nodes.len()];
    dist[start] = 0;
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        if dist[n] >= max_depth {
            continue;
        }
        for edge in &tree.nodes[n].children {
            let child = edge.child as usize;
            if dist[child] == u16::MAX {
                dist[child] = dist[n] + 1;
                queue.push_back(child);
            }
        }
    }
    dist
}

struct Writer<'a> {
    tree: &'a Tree,
    annotations: Option<&'a Annotations>,
    text: Movetext,
}

impl Writer<'_> {
    /// Writes the moves out of `node` (at `depth` below the named node, `ply` from the
    /// start position) if this occurrence is the one that expands it.
    fn subtree(
        &mut self,
        node: usize,
        ply: usize,
        depth: u16,
        max_depth: u16,
        dist: &[u16],
        expanded: &mut [bool],
    ) {
        if depth >= max_depth || dist[node] != depth || expanded[node] {
            return;
        }
        expanded[node] = true;
        let children = &self.tree.nodes[node].children;
        let Some((main, others)) = children.split_first() else { return };
        self.write_move(ply, &main.san, main.child as usize, false);
        for edge in others {
            self.text.token("(".to_string());
            self.write_move(ply, &edge.san, edge.child as usize, true);
            self.subtree(edge.child as usize, ply + 1, depth + 1, max_depth, dist, expanded);
            self.text.token(")".to_string());
        }
        self.subtree(main.child as usize, ply + 1, depth + 1, max_depth, dist, expanded);
    }

    /// Writes one move (with its number where PGN needs one) and the comment of the
    /// position it reaches.
    fn write_move(&mut self, ply: usize, san: &str, child: usize, starts_variation: bool) {
        self.text.numbered(ply, san, starts_variation);
        if let Some(comment) = comment(&self.tree.nodes[child], self.annotations) {
            self.text.token(format!("{{{comment}}}"));
            self.text.needs_black_number = true;
        }
    }
}

/// The comment after the move reaching `node`: its evaluation and own name, if any.
fn comment(node: &Node, annotations: Option<&Annotations>) -> Option<String> {
    let eval = annotations.and_then(|a| a.results.get(&node.epd)).map(eval_command);
    let name = node
        .opening
        .as_ref()
        .filter(|o| o.own && o.src == "eco_tsv")
        .map(|o| format!("{} {}", o.eco, o.name));
    match (eval, name) {
        (None, None) => None,
        (Some(e), None) => Some(e),
        (None, Some(n)) => Some(n.replace(['{', '}'], "")),
        (Some(e), Some(n)) => Some(format!("{e} {}", n.replace(['{', '}'], ""))),
    }
}

/// `[%eval …]` of an analysis: pawns with two decimals, or `#n` for a mate in n moves
/// (negative: Black mates).
pub fn eval_command(a: &Analysis) -> String {
    match a.stockfish_mate {
        Some(m) => format!("[%eval #{m}]"),
        None => {
            let cp = a.stockfish_eval;
            let sign = if cp < 0 { "-" } else { "" };
            format!("[%eval {sign}{}.{:02}]", cp.unsigned_abs() / 100, cp.unsigned_abs() % 100)
        }
    }
}

fn escape_tag(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Movetext tokens wrapped at [`LINE_WIDTH`], never inside a token.
#[derive(Default)]
pub(crate) struct Movetext {
    lines: Vec<String>,
    current: String,
    /// Whether the next Black move needs its number (`3...`): after a comment or a
    /// variation, as the PGN export format asks.
    pub(crate) needs_black_number: bool,
}

impl Movetext {
    /// Writes the move `san` made at `ply` (0: White's first), with its number where PGN
    /// needs one (White's moves; Black's at the start of a line or after a comment).
    pub(crate) fn numbered(&mut self, ply: usize, san: &str, starts_line: bool) {
        // A move number and its move stay on one line.
        let number = ply / 2 + 1;
        let token = if ply.is_multiple_of(2) {
            format!("{number}. {san}")
        } else if starts_line || self.needs_black_number {
            format!("{number}... {san}")
        } else {
            san.to_string()
        };
        self.token(token);
        self.needs_black_number = false;
    }

    /// Appends one token (a move, comment, NAG, parenthesis or result).
    pub(crate) fn token(&mut self, token: String) {
        if token == ")" {
            // The main line resumes after a variation: a Black move needs its number.
            self.needs_black_number = true;
        }
        let space = !self.current.is_empty() && !self.current.ends_with('(') && token != ")";
        if !self.current.is_empty()
            && self.current.len() + usize::from(space) + token.len() > LINE_WIDTH
        {
            self.lines.push(std::mem::take(&mut self.current));
        } else if space {
            self.current.push(' ');
        }
        self.current.push_str(&token);
    }

    /// The movetext, lines joined, ending with a blank line.
    pub(crate) fn finish(mut self) -> String {
        self.lines.push(self.current);
        let mut text = self.lines.join("\n");
        text.push_str("\n\n");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysis(eval: i32, mate: Option<i32>) -> Analysis {
        Analysis {
            stockfish_eval: eval,
            stockfish_mate: mate,
            stockfish_depth: 10,
            best_move_san: None,
            best_move_uci: None,
            lines: Vec::new(),
            is_dubious: false,
            is_busted: false,
            nodes: 0,
        }
    }

    #[test]
    fn evals_are_pawns_with_two_decimals_or_mates() {
        assert_eq!(eval_command(&analysis(25, None)), "[%eval 0.25]");
        assert_eq!(eval_command(&analysis(-5, None)), "[%eval -0.05]");
        assert_eq!(eval_command(&analysis(0, None)), "[%eval 0.00]");
        assert_eq!(eval_command(&analysis(-312, None)), "[%eval -3.12]");
        assert_eq!(eval_command(&analysis(1000, Some(3))), "[%eval #3]");
        assert_eq!(eval_command(&analysis(-1000, Some(-2))), "[%eval #-2]");
    }

    #[test]
    fn long_movetext_wraps_between_tokens() {
        let mut m = Movetext::default();
        for i in 0..40 {
            m.token(format!("{i}. Nf3"));
        }
        let text = m.finish();
        assert!(text.lines().all(|l| l.len() <= LINE_WIDTH), "{text}");
        assert_eq!(text.split_whitespace().count(), 80);
    }
}
