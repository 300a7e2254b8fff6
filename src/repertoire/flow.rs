//! Opponents' play through a repertoire, from the knowledge base's move shares.
//!
//! Probability mass starts at the start position and moves one ply at a time. Where the
//! repertoire's side moves, it follows the prepared moves (split evenly when there are
//! alternatives: one prepared move is certain). Where the opponent moves, it follows the
//! knowledge base: each reply takes its share of the games that reached the position;
//! replies (and games) leading to no repertoire position leave it. The lines' ends end
//! it. A position the knowledge base has no games for passes its mass on evenly to the
//! replies the repertoire lists (nothing says which is likelier).
//!
//! Positions are looked up by identity, so a reply that transposes into a prepared line
//! stays inside, and a gap is only a reply whose position the repertoire does not answer.
//!
//! Where the repertoire's [`Scope`] leaves some opponent moves out, the mass follows the
//! moves in scope only, in their shares of each other: the figures are those of an
//! opponent who plays into the repertoire's scope. Gaps are ranked and cut by the
//! probability of meeting them, so a likely reply at a rare position and a rare reply at
//! a certain one are weighed alike.

use serde::Serialize;

use super::scope::Scope;
use super::{Repertoire, Side};
use crate::engine::Annotations;
use crate::tree::{Node, Tree};

/// Settings of the figures.
#[derive(Clone, Debug)]
pub struct FlowParams {
    /// Least probability of meeting an unanswered reply for it to be a gap.
    pub min_probability: f64,
    /// Least share of a position's games for an unanswered reply to be a gap (0: none).
    pub min_share: f64,
    /// The opponent moves the repertoire covers.
    pub scope: Scope,
    /// Plies at which coverage is reported.
    pub plies: Vec<u16>,
}

/// The share of opponents' probability mass at one ply.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoveragePoint {
    /// The ply.
    pub ply: u16,
    /// Mass still inside the repertoire at this ply.
    pub inside: f64,
    /// Mass that left by an opponent move the repertoire does not have (or a game that ended).
    pub left: f64,
    /// Mass whose line ended (the repertoire has no move at a position reached) before this ply.
    pub ended: f64,
}

/// An unanswered reply.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gap {
    /// The line to the reply (numbered SAN, the reply last).
    pub line: String,
    /// The position before the reply (EPD).
    pub epd: String,
    /// The reply in SAN.
    pub reply: String,
    /// The reply in UCI.
    pub uci: String,
    /// Games in the knowledge base that played it.
    pub games: u64,
    /// Its share of the games that reached the position (of those that played a move in
    /// the repertoire's scope, where the scope leaves moves out).
    pub share: f64,
    /// Probability of reaching the position before it.
    pub reach: f64,
    /// Probability of meeting the reply: `reach × share` (the ranking).
    pub probability: f64,
    /// The repertoire side's score in those games (wins + draws / 2, per game).
    pub score: f64,
    /// Engine evaluation after the reply, centipawns from the repertoire side, if annotated.
    pub eval: Option<i32>,
    /// The opening the knowledge base names there.
    pub opening: Option<String>,
}

/// Coverage, reach and gaps of one repertoire.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flow {
    /// Coverage at the requested plies.
    pub coverage: Vec<CoveragePoint>,
    /// Probability of reaching each repertoire node (by index).
    pub reach: Vec<f64>,
    /// Gaps, most likely first.
    pub gaps: Vec<Gap>,
    /// Repertoire positions the knowledge base has games for.
    pub known: usize,
}

/// The knowledge base's node of each repertoire node, if any.
pub fn kb_nodes(rep: &Repertoire, tree: &Tree) -> Vec<Option<u32>> {
    rep.nodes.iter().map(|n| tree.find(&n.epd)).collect()
}

/// The default coverage plies: 4, 8, 12, … up to the repertoire's depth.
pub fn default_plies(rep: &Repertoire) -> Vec<u16> {
    let last = rep.depth().div_ceil(4).max(1) * 4;
    (1..=last / 4).map(|i| i * 4).collect()
}

/// Computes coverage, reach and gaps.
pub fn compute(
    rep: &Repertoire,
    tree: &Tree,
    annotations: Option<&Annotations>,
    params: &FlowParams,
) -> Flow {
    let kb = kb_nodes(rep, tree);
    let by_epd: std::collections::HashMap<&str, u32> =
        rep.nodes.iter().enumerate().map(|(i, n)| (n.epd.as_str(), i as u32)).collect();
    let (coverage, reach) = spread(rep, tree, &kb, &by_epd, params);
    let gaps = gaps(rep, tree, annotations, &kb, &by_epd, &reach, params);
    Flow {
        coverage,
        reach,
        gaps,
        known: kb.iter().filter(|&&k| with_games(tree, k).is_some()).count(),
    }
}

/// The knowledge base's node if it has games and moves from it: a node at the tree's
/// depth limit has games but no moves, which says nothing about what opponents play.
fn with_games(tree: &Tree, kb: Option<u32>) -> Option<&Node> {
    kb.map(|k| &tree.nodes[k as usize]).filter(|n| n.game_count() > 0 && !n.children.is_empty())
}

/// The knowledge base's replies at opponent position `node` in scope, with the games
/// they are shares of: all the position's games, or where the scope leaves moves out,
/// the games of the moves in scope. `None` when the knowledge base says nothing there.
fn replies<'t>(
    tree: &'t Tree,
    kb: Option<u32>,
    epd: &str,
    scope: &Scope,
) -> Option<(Vec<&'t crate::tree::Edge>, f64)> {
    let node = with_games(tree, kb)?;
    let games = |e: &crate::tree::Edge| e.stats.map_or(0, |s| s.outcomes.games());
    let edges: Vec<_> = node.children.iter().filter(|e| scope.admits(epd, &e.uci)).collect();
    let total =
        if scope.restricts(epd) { edges.iter().map(|e| games(e)).sum() } else { node.game_count() };
    (total > 0).then_some((edges, total as f64))
}

/// Moves the mass ply by ply to the last of the plies asked: the coverage points and
/// each node's reach (the mass that arrives there, summed over plies).
fn spread(
    rep: &Repertoire,
    tree: &Tree,
    kb: &[Option<u32>],
    by_epd: &std::collections::HashMap<&str, u32>,
    params: &FlowParams,
) -> (Vec<CoveragePoint>, Vec<f64>) {
    let plies = &params.plies;
    let mut reach = vec![0.0; rep.nodes.len()];
    reach[0] = 1.0;
    let mut current: std::collections::BTreeMap<u32, f64> =
        std::collections::BTreeMap::from([(0, 1.0)]);
    let (mut left, mut ended) = (0.0, 0.0);
    let mut points = Vec::new();
    let last = plies.iter().copied().max().unwrap_or(0);
    for ply in 1..=last {
        let mut next = std::collections::BTreeMap::new();
        for (&i, &mass) in &current {
            let node = &rep.nodes[i as usize];
            let known = if rep.mine(node) {
                None
            } else {
                replies(tree, kb[i as usize], &node.epd, &params.scope)
            };
            if node.moves.is_empty() {
                ended += mass;
            } else if let Some((edges, total)) = known {
                let mut stayed = 0.0;
                for edge in edges {
                    let games = edge.stats.map_or(0, |s| s.outcomes.games()) as f64;
                    if let Some(&child) = by_epd.get(tree.nodes[edge.child as usize].epd.as_str()) {
                        *next.entry(child).or_insert(0.0) += mass * games / total;
                        stayed += games / total;
                    }
                }
                left += mass * (1.0 - stayed);
            } else {
                // The repertoire's own moves, or replies nothing weighs: split evenly
                // (among those in scope, when some are).
                let theirs = !rep.mine(node);
                let moves: Vec<_> = node
                    .moves
                    .iter()
                    .filter(|m| !theirs || params.scope.admits(&node.epd, &m.uci))
                    .collect();
                let moves = if moves.is_empty() { node.moves.iter().collect() } else { moves };
                let each = mass / moves.len() as f64;
                for m in moves {
                    *next.entry(m.child).or_insert(0.0) += each;
                }
            }
        }
        for (&i, &mass) in &next {
            reach[i as usize] += mass;
        }
        current = next;
        if plies.contains(&ply) {
            // `+ 0.0`: an empty sum of floats is −0.0.
            points.push(CoveragePoint {
                ply,
                inside: current.values().sum::<f64>() + 0.0,
                left,
                ended,
            });
        }
    }
    (points, reach)
}

/// The unanswered replies in scope at every opponent position the repertoire continues
/// from, met with at least the least probability (and share) asked, most likely first.
fn gaps(
    rep: &Repertoire,
    tree: &Tree,
    annotations: Option<&Annotations>,
    kb: &[Option<u32>],
    by_epd: &std::collections::HashMap<&str, u32>,
    reach: &[f64],
    params: &FlowParams,
) -> Vec<Gap> {
    let mut out = Vec::new();
    for (i, node) in rep.nodes.iter().enumerate() {
        if rep.mine(node) || node.moves.is_empty() || reach[i] == 0.0 {
            continue;
        }
        let Some((edges, total)) = replies(tree, kb[i], &node.epd, &params.scope) else { continue };
        for edge in edges {
            let Some(stats) = edge.stats else { continue };
            let share = stats.outcomes.games() as f64 / total;
            let child = &tree.nodes[edge.child as usize];
            let answered = by_epd
                .get(child.epd.as_str())
                .is_some_and(|&c| !rep.nodes[c as usize].moves.is_empty());
            if share < params.min_share
                || reach[i] * share < params.min_probability
                || answered
                || stats.outcomes.games() == 0
            {
                continue;
            }
            let mut line = rep.line(i as u32);
            line.push(edge.san.clone());
            let o = stats.outcomes;
            let mine = if rep.color == Side::White { o.white } else { o.black };
            out.push(Gap {
                line: super::numbered(node.start_ply, &line),
                epd: node.epd.clone(),
                reply: edge.san.clone(),
                uci: edge.uci.clone(),
                games: o.games(),
                share,
                reach: reach[i],
                probability: reach[i] * share,
                score: (mine as f64 + o.draws as f64 / 2.0) / o.games() as f64,
                eval: annotations
                    .and_then(|a| a.results.get(&child.epd))
                    .map(|a| rep.color.cp(a.stockfish_eval)),
                opening: child.opening.as_ref().map(|o| o.name.clone()),
            });
        }
    }
    out.sort_by(|a, b| {
        b.probability
            .total_cmp(&a.probability)
            .then(b.games.cmp(&a.games))
            .then_with(|| a.line.cmp(&b.line))
    });
    out
}
