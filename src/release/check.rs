//! `okb check`: snapshot files of the answers a project's users rely on (`[check]` in
//! pipeline.toml), readable in a code review, compared after every build.
//!
//! One file per checked position, `<folder>/<kind>-<slug>.snap`: the question on the
//! first line, then one `field: value` line per answer (name, ECO, counts, rates, engine,
//! structure, the most played moves). A difference prints the changed lines as `-`/`+`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::export::named::slug;
use crate::pipeline::CheckSpec;
use crate::store::read::{NodeJson, Store};

/// How many of a position's moves a snapshot lists.
const MOVES_SHOWN: usize = 5;

/// One checked question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Question {
    /// A SAN line.
    Line(String),
    /// A FEN or EPD.
    Fen(String),
    /// An opening name.
    Opening(String),
}

impl Question {
    /// Every question `[check]` asks, in file order: lines, FENs, openings.
    pub fn all(spec: &CheckSpec) -> Vec<Question> {
        let lines = spec.lines.iter().cloned().map(Question::Line);
        let fens = spec.fens.iter().cloned().map(Question::Fen);
        lines.chain(fens).chain(spec.openings.iter().cloned().map(Question::Opening)).collect()
    }

    /// The snapshot's file name.
    pub fn file_name(&self) -> String {
        let (kind, text) = match self {
            Question::Line(t) => ("line", t),
            Question::Fen(t) => ("fen", t),
            Question::Opening(t) => ("opening", t),
        };
        let mut stem = slug(text);
        if stem.len() > 80 {
            let hash = blake3::hash(text.as_bytes()).to_hex();
            stem = format!("{}-{}", &stem[..60].trim_end_matches('-'), &hash[..8]);
        }
        format!("{kind}-{stem}.snap")
    }

    fn header(&self) -> String {
        match self {
            Question::Line(t) => format!("line: {t}"),
            Question::Fen(t) => format!("fen: {t}"),
            Question::Opening(t) => format!("opening: {t}"),
        }
    }
}

/// Answers questions from a store; the name index (the whole graph) is built once, at
/// the first opening question.
pub struct Answers<'s> {
    store: &'s Store,
    names: std::cell::OnceCell<Result<(crate::graph::Graph, crate::search::SearchIndex), String>>,
}

impl<'s> Answers<'s> {
    /// Answers from `store`.
    pub fn new(store: &'s Store) -> Answers<'s> {
        Answers { store, names: std::cell::OnceCell::new() }
    }

    /// The snapshot text of `question` (a question the build cannot answer says why,
    /// which is a snapshot too).
    pub fn answer(&self, question: &Question) -> String {
        let mut out = format!(
            "# okb check snapshot (`okb check --accept` rewrites it)\n{}\n",
            question.header()
        );
        match self.find(question) {
            Ok(Some(node)) => describe(&node, &mut out),
            Ok(None) => out.push_str("answer: not in the knowledge base\n"),
            Err(e) => {
                let _ = writeln!(out, "answer: {e}");
            }
        }
        out
    }

    fn find(&self, question: &Question) -> Result<Option<NodeJson>, String> {
        let by_position = |pos: shakmaty::Chess| {
            self.store.node_by_position(&crate::position::epd(&pos)).map_err(|e| e.to_string())
        };
        match question {
            Question::Line(line) => {
                by_position(crate::eco::line::position_after(line).map_err(|e| e.to_string())?)
            }
            Question::Fen(fen) => {
                by_position(crate::position::parse_fen(fen).map_err(|e| e.to_string())?)
            }
            Question::Opening(name) => {
                let names = self.names.get_or_init(|| {
                    let graph = self.store.graph().map_err(|e| e.to_string())?;
                    let index = crate::search::SearchIndex::new(&graph);
                    Ok((graph, index))
                });
                let (graph, index) = names.as_ref().map_err(String::clone)?;
                let hits = index.search(graph, name, 50);
                let exact = hits.iter().find(|h| {
                    h.name.eq_ignore_ascii_case(name) || h.matched.eq_ignore_ascii_case(name)
                });
                match exact {
                    Some(hit) => Ok(self
                        .store
                        .nodes_by_id(&[&hit.node_id])
                        .map_err(|e| e.to_string())?
                        .pop()),
                    None => Ok(None),
                }
            }
        }
    }
}

fn describe(answer: &NodeJson, out: &mut String) {
    let n = &answer.node;
    let name = answer.full_name().unwrap_or_else(|| "(unnamed)".into());
    let inherited = if n.name_inherited { " (inherited)" } else { "" };
    let pct = |p: Option<f64>| p.map_or("-".into(), |p| format!("{p:.1}%"));
    let _ = writeln!(out, "moves: {}", n.moves);
    let _ = writeln!(out, "fen: {}", n.fen);
    let _ = writeln!(out, "eco: {}", n.eco_code.as_deref().unwrap_or("-"));
    let _ = writeln!(out, "name: {name}{inherited}");
    let _ = writeln!(out, "games: {}", n.game_count);
    let _ = writeln!(out, "white wins: {}", pct(n.white_win_pct));
    let _ = writeln!(out, "draws: {}", pct(n.draw_pct));
    let eval = match (n.stockfish_eval, n.stockfish_depth) {
        (Some(cp), Some(depth)) => {
            format!("{cp:+} cp at depth {depth}, best {}", n.best_move.as_deref().unwrap_or("-"))
        }
        _ => "-".into(),
    };
    let _ = writeln!(out, "engine: {eval}");
    let _ = writeln!(out, "structure: {}", n.resulting_structure.as_deref().unwrap_or("-"));
    let moves: Vec<String> = answer
        .children
        .iter()
        .take(MOVES_SHOWN)
        .map(|c| format!("{} ({})", c.pgn_move, c.game_count))
        .collect();
    let _ = writeln!(
        out,
        "moves played: {}",
        if moves.is_empty() { "-".into() } else { moves.join(", ") }
    );
}

/// How one snapshot compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The file holds the answer.
    Same,
    /// No file yet.
    New,
    /// The file holds another answer.
    Changed {
        /// The file's text.
        old: String,
    },
    /// A file in the folder that no question asks for.
    Orphan,
}

/// Every question's answer and outcome, and orphan files, by file name.
pub fn compare(
    store: &Store,
    spec: &CheckSpec,
    folder: &Path,
) -> BTreeMap<String, (String, Outcome)> {
    let mut results = BTreeMap::new();
    let answers = Answers::new(store);
    for question in Question::all(spec) {
        let text = answers.answer(&question);
        let file = folder.join(question.file_name());
        let outcome = match std::fs::read_to_string(&file) {
            Ok(old) if old == text => Outcome::Same,
            Ok(old) => Outcome::Changed { old },
            Err(_) => Outcome::New,
        };
        results.insert(question.file_name(), (text, outcome));
    }
    for file in snapshot_files(folder) {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        results.entry(name).or_insert((String::new(), Outcome::Orphan));
    }
    results
}

fn snapshot_files(folder: &Path) -> Vec<PathBuf> {
    let mut files = crate::files::files_in(folder, false);
    files.retain(|p| p.extension().is_some_and(|e| e == "snap"));
    files.sort();
    files
}

/// The changed lines of `old` → `new`, as `-`/`+` lines (both texts are short lists of
/// `field: value` lines, compared line by line).
pub fn line_diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut out = String::new();
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                if let Some(x) = x {
                    let _ = writeln!(out, "-{x}");
                }
                if let Some(y) = y {
                    let _ = writeln!(out, "+{y}");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_stable_slugs_and_long_ones_are_cut_with_a_hash() {
        assert_eq!(Question::Line("1. e4 c5 2. Nf3".into()).file_name(), "line-1-e4-c5-2-nf3.snap");
        assert_eq!(
            Question::Opening("Sicilian Defense: Najdorf Variation".into()).file_name(),
            "opening-sicilian-defense-najdorf-variation.snap"
        );
        let long = Question::Line("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3".into());
        let name = long.file_name();
        assert!(name.len() < 90 && name.starts_with("line-1-e4-e5"), "{name}");
    }

    #[test]
    fn line_diff_shows_changed_lines_only() {
        assert_eq!(line_diff("a\nb\nc\n", "a\nB\nc\n"), "-b\n+B\n");
        assert_eq!(line_diff("a\n", "a\nb\n"), "+b\n");
    }
}
