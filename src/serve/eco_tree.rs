//! `GET /opening/eco/{code}`: the move tree below an ECO code's root position.

use serde::Serialize;

use crate::graph::{Edge, Graph};
use crate::record::pct;

/// Deepest tree the endpoint builds, in plies below the root.
pub const MAX_DEPTH: u32 = 15;
/// Depth when `depth` is not given.
pub const DEFAULT_DEPTH: u32 = 6;
/// The largest `min_games` accepted (the OpenAPI document's maximum).
pub const MAX_MIN_GAMES: u64 = 1_000_000_000_000;

/// The answer: the request's parameters and the tree.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EcoTreeAnswer<'a> {
    /// The code asked for.
    pub code: String,
    /// Plies below the root.
    pub depth: u32,
    /// Moves played in fewer games were left out.
    pub min_games: u64,
    /// The tree.
    pub tree: TreeNode<'a>,
}

/// One node of the tree, borrowing its text from the graph (answers run to megabytes).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TreeNode<'a> {
    /// Stable id.
    pub node_id: &'a str,
    /// The move into the node in SAN (at the root: the last move of its line; `null` at
    /// the start position).
    pub san: Option<&'a str>,
    /// The same move in UCI.
    pub uci: Option<&'a str>,
    /// Full FEN.
    pub fen: &'a str,
    /// Canonical line.
    pub moves: &'a str,
    /// ECO code (own or inherited).
    pub eco_code: Option<&'a str>,
    /// Opening name.
    pub opening_name: Option<&'a str>,
    /// Variation name.
    pub variation_name: Option<&'a str>,
    /// Games that reached the position.
    pub game_count: u64,
    /// Percentage of White wins.
    pub white_win_pct: Option<f64>,
    /// Percentage of draws.
    pub draw_pct: Option<f64>,
    /// Games that played the move into the node from its parent here.
    pub move_game_count: Option<u64>,
    /// The mover's average rating in those games.
    pub avg_rating: Option<f64>,
    /// Stockfish eval (cp, White's side), if annotated.
    pub stockfish_eval: Option<i32>,
    /// Expanded at a shallower place of this tree; no children here.
    pub transposition: bool,
    /// Moves played from the position, most played first.
    pub children: Vec<TreeNode<'a>>,
}

/// The root of ECO code `code` (or SCID code such as `B03a`): its ECO-root entry, else
/// the named node of that code with the shortest line.
pub fn root_of(graph: &Graph, code: &str) -> Option<u32> {
    best_root(
        code,
        graph.nodes.iter().enumerate().filter_map(|(i, n)| {
            let e = n.entry.as_ref()?;
            let coded = e.eco == code || e.scid.as_deref() == Some(code);
            coded.then_some(((e.eco.as_str(), e.is_eco_root, n.ply, n.moves.as_str()), i as u32))
        }),
    )
}

/// Of `candidates`, nodes whose own entry has code `code`, each as (its entry's ECO
/// code, whether that entry is an ECO root, its line's plies, its line) with what names
/// it, in identity order: the code's ECO-root entry, else the shortest line (then the
/// first line, then the first candidate).
pub fn best_root<'a, T>(
    code: &str,
    candidates: impl IntoIterator<Item = ((&'a str, bool, u32, &'a str), T)>,
) -> Option<T> {
    candidates
        .into_iter()
        .min_by_key(|&((eco, is_root, ply, moves), _)| (!(is_root && eco == code), ply, moves))
        .map(|(_, named)| named)
}

/// The tree below `root`, `depth` plies deep, following moves played in at least
/// `min_games` games (all moves when 0).
pub fn tree(graph: &Graph, root: u32, depth: u32, min_games: u64) -> TreeNode<'_> {
    let keep = |e: &Edge| e.games.games() >= min_games;
    graph.fold_tree(root, depth, &keep, &mut |visit, children| {
        let node = graph.node(visit.index);
        let games = node.games.games();
        TreeNode {
            node_id: &node.node_id,
            san: visit.via.map(|e| e.san.as_str()),
            uci: visit.via.map(|e| e.uci.as_str()),
            fen: &node.fen,
            moves: &node.moves,
            eco_code: node.eco.as_deref(),
            opening_name: node.opening_name.as_deref(),
            variation_name: node.variation_name.as_deref(),
            game_count: games,
            white_win_pct: pct(node.games.white, games),
            draw_pct: pct(node.games.draws, games),
            move_game_count: visit.via.map(|e| e.games.games()),
            avg_rating: visit.via.and_then(|e| e.avg_rating),
            stockfish_eval: node.engine.as_ref().map(|e| e.eval),
            transposition: visit.transposition,
            children,
        }
    })
}
