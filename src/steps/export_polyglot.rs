//! `export:<name>` of format `polyglot`: a Polyglot book from the tree's move statistics.

use super::ids::{TREE};

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Export, Planner, Planning};
use crate::export::polyglot::{self, BookEntry, WeightMode};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "export:polyglot", about: "a Polyglot .bin book", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per `[exports.<name>]` of format `polyglot`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.exports::<Settings>("polyglot")?.into_iter().map(|e| declare(p, declared, e)).collect()
}

/// The settings of a `polyglot` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Book weights: `polyglot` (2 × wins + draws) or `games` (game counts).
    #[serde(default)]
    weights: WeightMode,
}

fn declare(p: &Planning<'_>, _: &[Decl<'static>], export: Export<Settings>) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let Export { target, settings: Settings { weights }, .. } = export;
    let run = move |cx: &Ctx<'_>| {
        let entries = entries(&*cx.get(&tree)?, weights);
        let text = match entries.len() {
            // An empty book is a valid file; say why it is empty.
            0 => "0 entries: the tree has no game counts; add games (a [sources] table of kind pgn, bgn or counts)".to_string(),
            n => format!("{n} entries"),
        };
        let bytes = polyglot::to_bytes(&entries);
        Ok((vec![ExportFile { name: String::new(), bytes }], text))
    };
    Ok(d.files(target, run).priority(200))
}

/// Book entries for every tree edge that games played.
fn entries(tree: &Tree, weights: WeightMode) -> Vec<BookEntry> {
    use rayon::prelude::*;
    let positions: Vec<shakmaty::Chess> =
        tree.nodes.par_iter().map(|n| crate::position::parse_fen(&n.fen).expect("node FENs are written by okb")).collect();
    let items = tree.nodes.iter().zip(&positions).flat_map(|(node, pos)| node.children.iter().filter_map(move |e| e.stats.map(|s| (pos, e.key, s))));
    polyglot::entries_from_stats(items, weights)
}
