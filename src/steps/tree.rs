//! `tree`: the move tree, one node per position, with counts and transpositions
//! (Phases 2 and 6).

use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::eco::EcoSkeleton;
use crate::games::aggregate::GamesMerged;
use crate::tree::{self, Tree, TreeParams};

/// The rule.
pub static RULE: Rule = Rule { name: "tree", about: "the move tree: one node per position, counts, transpositions", file: file!() };

/// The tree of the skeleton and, when there are game files, the `games` counts.
pub fn declare(with_games: bool, params: TreeParams) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let skeleton: Arc<EcoSkeleton> = cx.load("eco")?;
        let games: Option<Arc<GamesMerged>> = if with_games { Some(cx.load("games")?) } else { None };
        let tree = tree::build(&skeleton, games.as_ref().map(|g| &g.stats), &params);
        let text = format!("{} nodes, {} edges", tree.nodes.len(), tree.edge_count());
        Ok(Produced::encoded(tree, text, encode_tree))
    };
    let decl = Decl::new("tree", &RULE, Action::Value(Box::new(run))).reads("eco").param("tree").priority(700);
    if with_games { decl.reads("games") } else { decl }
}

/// The tree's postcard bytes, its nodes encoded on all cores (as the skeleton's).
pub fn encode_tree(tree: &Tree) -> Vec<u8> {
    let Tree { nodes, root } = tree;
    let mut out = Vec::new();
    crate::dataflow::cache::encode_seq_in_parallel(nodes, &mut out);
    postcard::to_extend(root, out).expect("serializing to memory does not fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eco::{EcoFormat, merge::MergeInput};

    #[test]
    fn the_tree_encoding_is_postcards() {
        let tsv = "eco\tname\tpgn\nA00\tA\t1. e4\nA01\tB: x\t1. e4 e5 2. Nf3 Nc6\n";
        let parsed = crate::eco::parse(EcoFormat::LichessTsv, "t.tsv", tsv.as_bytes());
        let skeleton = crate::eco::merge(&[MergeInput { format: EcoFormat::LichessTsv, file: "t.tsv", parsed: &parsed }], true);
        let tree = tree::build(&skeleton, None, &Default::default());
        assert_eq!(encode_tree(&tree), postcard::to_allocvec(&tree).unwrap());
    }
}
