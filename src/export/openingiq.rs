//! OpeningIQ JSON: one file per named opening, holding the opening's subtree as nested
//! nodes a trainer can walk (`san`, `fen`, `engineResponses`, `responseWeights`,
//! `children`, plus okb's extended fields). `schemas/openingiq.schema.json` is the
//! contract; `GET /opening/{id}/tree` answers with the same builder.
//!
//! Rules that the schema alone cannot say:
//! - `responseWeights` maps the SAN of each reply to its share, on the node's full set of
//!   tree moves even where `children` is cut by the depth limit: by game counts when
//!   games reached the position, otherwise evenly over the tree's moves, otherwise evenly
//!   over the engine's replies. Shares are rounded to 1/10000 by largest remainder, so
//!   they sum to exactly 1. Only a node with no known reply at all (a leaf of the
//!   knowledge base that the engine has not annotated) has an empty map.
//! - The tree is a graph (transpositions): a position is expanded once, at its shallowest
//!   occurrence (breadth-first, most played move first); its other occurrences carry
//!   `"transposition": true` and no children.

use serde::Serialize;
use serde_json::{Map, Value};

use super::ExportFile;
use super::named::NamedOpening;
use crate::graph::{Edge, Graph, Visit};

/// Value of the `format` field.
pub const FORMAT: &str = "okb-openingiq";
/// Value of the `version` field; bumped when the schema changes incompatibly.
pub const VERSION: u32 = 1;
/// Plies below the named node when `--max-depth` / `max_depth` is not given.
pub const DEFAULT_MAX_DEPTH: u32 = 12;
/// The deepest subtree the API hands out (answers grow exponentially with depth).
pub const MAX_API_DEPTH: u32 = 20;
/// The JSON Schema of a file.
pub const SCHEMA: &str = include_str!("../../schemas/openingiq.schema.json");

/// One OpeningIQ file: the named node and its subtree.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OpeningFile {
    /// Always [`FORMAT`].
    pub format: &'static str,
    /// Always [`VERSION`].
    pub version: u32,
    /// Stable id of the subtree's root.
    pub node_id: String,
    /// ECO code of the root (own or inherited).
    pub eco: Option<String>,
    /// Full name of the root (own or inherited).
    pub name: Option<String>,
    /// The root's canonical line as numbered SAN.
    pub moves: String,
    /// Depth limit the subtree was cut at, in plies below the root.
    pub max_depth: u32,
    /// The subtree.
    pub tree: OpeningNode,
}

/// A reply the engine considers, from the node's analysis.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EngineResponse {
    /// The reply in SAN.
    pub san: String,
    /// The reply in UCI.
    pub uci: String,
    /// Centipawns from White's side after the line (mates as ±1000).
    pub eval: i32,
    /// Mate distance from White's side, if the line mates.
    pub mate: Option<i32>,
    /// Search depth of the line.
    pub depth: u32,
    /// The whole principal variation in SAN.
    pub pv: Vec<String>,
}

/// One position in the subtree.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OpeningNode {
    /// The move into this position in SAN (`null` at the start position).
    pub san: Option<String>,
    /// The same move in UCI.
    pub uci: Option<String>,
    /// Full FEN.
    pub fen: String,
    /// The engine's top replies, best first (empty without an annotation).
    pub engine_responses: Vec<EngineResponse>,
    /// Share of each reply (SAN → weight), summing to 1 (see the module docs).
    pub response_weights: Map<String, Value>,
    /// Replies expanded in this file, most played first.
    pub children: Vec<OpeningNode>,
    /// Stable id of the position.
    pub node_id: String,
    /// Plies from the start position along the canonical line.
    pub ply: u32,
    /// ECO code (own or inherited).
    pub eco: Option<String>,
    /// Full opening name (own or inherited).
    pub name: Option<String>,
    /// Games that reached the position.
    pub games: u64,
    /// White wins among them.
    pub white: u64,
    /// Draws among them.
    pub draws: u64,
    /// Black wins among them.
    pub black: u64,
    /// Games that played the move into this node from its parent in this file.
    pub move_games: Option<u64>,
    /// Average rating of the mover in those games.
    pub average_rating: Option<f64>,
    /// Stockfish eval in centipawns from White's side.
    pub eval: Option<i32>,
    /// Mate distance from White's side.
    pub mate: Option<i32>,
    /// Depth of the evaluation.
    pub depth: Option<u32>,
    /// Where the evaluation came from: the engine's name, or an evaluation source's
    /// `<name>@<pin>`.
    pub eval_source: Option<String>,
    /// The engine's best move (SAN).
    pub best_move: Option<String>,
    /// The move into this node is dubious for its mover.
    pub is_dubious: Option<bool>,
    /// The move into this node loses for its mover.
    pub is_busted: Option<bool>,
    /// Centipawns the move into this node loses against the best move of its parent in
    /// this file, from the mover's side ([`crate::engine::loss`]); `null` at the root and
    /// unless both positions are evaluated.
    pub cp_loss: Option<i32>,
    /// Winning chances that move loses, in percentage points (Lichess's formula).
    pub win_chance_loss: Option<f64>,
    /// The position is expanded at another (shallower) place of this file.
    pub transposition: bool,
    /// The position has tree moves that this file leaves out (depth limit or transposition).
    pub truncated: bool,
}

/// The subtree of `root`, cut `max_depth` plies below it.
pub fn opening_file(graph: &Graph, root: u32, max_depth: u32) -> OpeningFile {
    let node = graph.node(root);
    OpeningFile {
        format: FORMAT,
        version: VERSION,
        node_id: node.node_id.clone(),
        eco: node.eco.clone(),
        name: node.full_name(),
        moves: node.moves.clone(),
        max_depth,
        tree: graph.fold_tree(root, max_depth, &|_| true, &mut |visit, children| {
            build_node(graph, visit, children)
        }),
    }
}

/// The bytes of `file` as written to disk: indented when `pretty`, then a newline.
pub fn file_bytes(file: &OpeningFile, pretty: bool) -> Vec<u8> {
    let mut bytes = if pretty { serde_json::to_vec_pretty(file) } else { serde_json::to_vec(file) }
        .expect("OpeningIQ files serialize");
    bytes.push(b'\n');
    bytes
}

/// The files of every named opening, `<stem>.json`, in stem order.
pub fn render_all(
    graph: &Graph,
    named: &[NamedOpening],
    max_depth: u32,
    pretty: bool,
) -> Vec<ExportFile> {
    use rayon::prelude::*;
    named
        .par_iter()
        .map(|opening| {
            let bytes = file_bytes(&opening_file(graph, opening.node, max_depth), pretty);
            ExportFile { name: format!("{}.json", opening.stem), bytes }
        })
        .collect()
}

/// The files of a build's phase outputs, as the `openingiq` export step writes them.
pub fn render_build(
    tree: &crate::tree::Tree,
    skeleton: &crate::eco::EcoSkeleton,
    annotations: Option<&crate::engine::Annotations>,
    max_depth: u32,
    pretty: bool,
) -> Vec<ExportFile> {
    let graph = Graph::from_tree(tree, skeleton, annotations);
    let named = super::named::named_openings(tree);
    render_all(&graph, &named, max_depth, pretty)
}

fn build_node(graph: &Graph, visit: Visit<'_>, mut children: Vec<OpeningNode>) -> OpeningNode {
    let node = graph.node(visit.index);
    let via = visit.via;
    let engine = node.engine.as_ref();
    let mover = crate::engine::loss::side_to_move(&node.fen);
    for child in &mut children {
        let loss =
            engine.zip(child.eval).map(|(e, c)| crate::engine::loss::move_loss(e.eval, c, mover));
        child.cp_loss = loss.map(|l| l.cp);
        child.win_chance_loss = loss.map(|l| l.win_chance);
    }
    let engine_responses: Vec<EngineResponse> = engine
        .map(|e| {
            e.lines
                .iter()
                .filter_map(|line| {
                    Some(EngineResponse {
                        san: line.pv_san.first()?.clone(),
                        uci: line.pv_uci.first()?.clone(),
                        eval: line.eval,
                        mate: line.mate,
                        depth: line.depth,
                        pv: line.pv_san.clone(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    OpeningNode {
        san: via.map(|e| e.san.clone()),
        uci: via.map(|e| e.uci.clone()),
        fen: node.fen.clone(),
        response_weights: response_weights(&node.children, &engine_responses),
        engine_responses,
        truncated: !node.children.is_empty() && !visit.expanded,
        children,
        node_id: node.node_id.clone(),
        ply: node.ply,
        eco: node.eco.clone(),
        name: node.full_name(),
        games: node.games.games(),
        white: node.games.white,
        draws: node.games.draws,
        black: node.games.black,
        move_games: via.map(|e| e.games.games()),
        average_rating: via.and_then(|e| e.avg_rating),
        eval: engine.map(|e| e.eval),
        mate: engine.and_then(|e| e.mate),
        depth: engine.map(|e| e.depth),
        eval_source: engine.and_then(|e| e.source.clone()),
        best_move: engine.and_then(|e| e.best_san.clone()),
        is_dubious: engine.map(|e| e.is_dubious),
        is_busted: engine.map(|e| e.is_busted),
        cp_loss: None,
        win_chance_loss: None,
        transposition: visit.transposition,
    }
}

/// The reply shares of a node (see the module docs for the rule).
fn response_weights(children: &[Edge], engine: &[EngineResponse]) -> Map<String, Value> {
    let played: Vec<(&str, u64)> =
        children.iter().map(|e| (e.san.as_str(), e.games.games())).collect();
    let candidates: Vec<(&str, u64)> = if played.iter().any(|p| p.1 > 0) {
        played
    } else if !children.is_empty() {
        children.iter().map(|e| (e.san.as_str(), 1)).collect()
    } else {
        let mut replies: Vec<(&str, u64)> = Vec::new();
        for r in engine {
            if !replies.iter().any(|(san, _)| *san == r.san) {
                replies.push((r.san.as_str(), 1));
            }
        }
        replies
    };
    shares(&candidates)
        .into_iter()
        .map(|(san, share)| (san.to_string(), Value::from(share)))
        .collect()
}

/// Splits 1 among `counts` in proportion, in units of 1/10000, by largest remainder
/// (ties go to the earlier item), so the shares sum to exactly 1.
fn shares<'a>(counts: &[(&'a str, u64)]) -> Vec<(&'a str, f64)> {
    const UNITS: u128 = 10_000;
    let total: u128 = counts.iter().map(|c| u128::from(c.1)).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut units: Vec<u128> = counts.iter().map(|c| u128::from(c.1) * UNITS / total).collect();
    let mut order: Vec<usize> = (0..counts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(u128::from(counts[i].1) * UNITS % total));
    let left = UNITS - units.iter().sum::<u128>();
    for &i in order.iter().take(left as usize) {
        units[i] += 1;
    }
    counts.iter().zip(units).map(|(c, u)| (c.0, u as f64 / UNITS as f64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_one_by_largest_remainder() {
        let s = shares(&[("e4", 1), ("d4", 1), ("c4", 1)]);
        assert_eq!(s, vec![("e4", 0.3334), ("d4", 0.3333), ("c4", 0.3333)]);
        let s = shares(&[("a", 2), ("b", 0), ("c", 7)]);
        assert_eq!(s, vec![("a", 0.2222), ("b", 0.0), ("c", 0.7778)]);
        assert!(shares(&[("a", 0)]).is_empty());
        let many: Vec<(&str, u64)> = (0..37).map(|i| ("m", i * 13 + 1)).collect();
        let sum: f64 = shares(&many).iter().map(|s| s.1).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
    }
}
