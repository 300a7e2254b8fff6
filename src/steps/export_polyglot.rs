//! `export:<name>` of format `polyglot`: a Polyglot book from the tree's move statistics.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::export::polyglot::{self, BookEntry, WeightMode};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:polyglot", about: "a Polyglot .bin book", file: file!() };

/// Writes the book to `target`.
pub fn declare(name: &str, target: PathBuf, weights: WeightMode) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let entries = entries(&tree, weights);
        let text = match entries.len() {
            // An empty book is a valid file; say why it is empty.
            0 => "0 entries: the tree has no game counts; add games (a [sources] table of kind pgn, bgn or counts)".to_string(),
            n => format!("{n} entries"),
        };
        let bytes = polyglot::to_bytes(&entries);
        Ok((vec![ExportFile { name: String::new(), bytes }], text))
    };
    Decl::new(format!("export:{name}"), &RULE, Action::Files(target, Box::new(run)))
        .reads("tree")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200)
}

/// Book entries for every tree edge that games played.
fn entries(tree: &Tree, weights: WeightMode) -> Vec<BookEntry> {
    let positions: Vec<shakmaty::Chess> =
        tree.nodes.iter().map(|n| crate::position::parse_fen(&n.fen).expect("node FENs are written by okb")).collect();
    let items = tree.nodes.iter().zip(&positions).flat_map(|(node, pos)| node.children.iter().filter_map(move |e| e.stats.map(|s| (pos, e.key, s))));
    polyglot::entries_from_stats(items, weights)
}
