//! The knowledge base as a read-only, in-memory graph: every node with its names, game
//! statistics, engine lines and outgoing moves.
//!
//! Answers shaped like trees (OpeningIQ files, ECO trees, the `/masters` explorer view,
//! name search) are written once against this type. An export builds it from the phase
//! outputs ([`Graph::from_tree`]); the server builds it from the store
//! ([`crate::store::graph::load`]). Both give the same graph for the same build.

use std::collections::{BTreeMap, HashMap};

use crate::eco::EcoSkeleton;
use crate::engine::{Annotations, analysis::Line};
use crate::games::stats::{MoveStats, Outcomes};
use crate::record::split_name;
use crate::tree::Tree;

pub mod tally;

/// A node's own taxonomy entry.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// Where the name comes from: `eco_tsv`, `scid`, `pgn_extract` or `interpolated`.
    pub src: String,
    /// ECO code of the entry.
    pub eco: String,
    /// SCID's extended code, if any.
    pub scid: Option<String>,
    /// The entry's full name.
    pub name: String,
    /// Names other sources give the position, keyed by source.
    pub aliases: BTreeMap<String, String>,
    /// The authoritative entry with the shortest line of its ECO code.
    pub is_eco_root: bool,
}

/// Stockfish's verdict on a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Engine {
    /// Centipawns from White's side (mates as ±1000).
    pub eval: i32,
    /// Mate distance from White's side, if the best line mates.
    pub mate: Option<i32>,
    /// Depth of the best line.
    pub depth: u32,
    /// Best move in SAN.
    pub best_san: Option<String>,
    /// Best move in UCI.
    pub best_uci: Option<String>,
    /// The move into the node is dubious for its mover.
    pub is_dubious: bool,
    /// The move into the node loses for its mover.
    pub is_busted: bool,
    /// The top lines, best first.
    pub lines: Vec<Line>,
    /// Where the evaluation came from: the engine's name, or an evaluation source's
    /// `<name>@<pin>`.
    pub source: Option<String>,
    /// Nodes the search took.
    pub nodes: u64,
}

/// A move from one node to another, with the games that played it.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Index of the child node.
    pub child: u32,
    /// The move in SAN.
    pub san: String,
    /// The move in UCI.
    pub uci: String,
    /// Results of the games that played the move here.
    pub games: Outcomes,
    /// The mover's average rating over those games, one decimal.
    pub avg_rating: Option<f64>,
}

/// One position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Stable id (UUIDv5 of the position identity).
    pub node_id: String,
    /// Position identity (see [`crate::position::epd`]).
    pub epd: String,
    /// Full FEN of the canonical line.
    pub fen: String,
    /// Plies of the canonical line.
    pub ply: u32,
    /// Canonical line as numbered SAN.
    pub moves: String,
    /// ECO code, own or inherited.
    pub eco: Option<String>,
    /// Opening name (before the `:`), own or inherited.
    pub opening_name: Option<String>,
    /// Variation name (after the `:`).
    pub variation_name: Option<String>,
    /// The node's own entry, if a taxonomy names this position.
    pub entry: Option<Entry>,
    /// Results of the games that reached the position.
    pub games: Outcomes,
    /// Engine annotation, if any.
    pub engine: Option<Engine>,
    /// Outgoing moves, most played first (the tree's order).
    pub children: Vec<Edge>,
    /// Pawn-structure tag (`opening_nodes.resulting_structure`), where one was assigned.
    pub resulting_structure: Option<String>,
    /// A validation stub (Phase 3): named by games' Opening tags, not by a taxonomy.
    pub is_stub: bool,
}

impl Node {
    /// The full name (`Opening: Variation`), own or inherited.
    pub fn full_name(&self) -> Option<String> {
        full_name(self.opening_name.as_deref(), self.variation_name.as_deref())
    }
}

/// `Opening: Variation`, or the opening alone; `None` without an opening name.
pub fn full_name(opening: Option<&str>, variation: Option<&str>) -> Option<String> {
    let opening = opening?;
    Some(match variation {
        Some(v) => format!("{opening}: {v}"),
        None => opening.to_string(),
    })
}

/// One occurrence of a node in a tree drawn by [`Graph::fold_tree`].
#[derive(Clone, Copy, Debug)]
pub struct Visit<'a> {
    /// The node.
    pub index: u32,
    /// The move into this occurrence (at the root: the last move of its canonical line).
    pub via: Option<&'a Edge>,
    /// Plies below the root.
    pub depth: u32,
    /// The node is expanded at another, shallower occurrence.
    pub transposition: bool,
    /// This occurrence lists its children (false at the depth limit and at transpositions).
    pub expanded: bool,
}

/// All nodes, sorted by position identity, with lookups by identity and by id.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Nodes sorted by [`Node::epd`].
    pub nodes: Vec<Node>,
    /// Index of the start position (of the piece's root in a [`Graph::piece`]).
    pub root: u32,
    by_id: HashMap<String, u32>,
    parents: Vec<Vec<u32>>,
}

/// The `child` of an edge of a [`Graph::piece`] that leads to a node outside the piece.
pub const OUTSIDE: u32 = u32::MAX;

/// The mover's average rating over `stats`, rounded to one decimal as the store keeps it.
pub fn avg_rating(stats: &MoveStats) -> Option<f64> {
    (stats.rated_games > 0)
        .then(|| (stats.rating_sum as f64 / stats.rated_games as f64 * 10.0).round() / 10.0)
}

impl Graph {
    /// A graph over `nodes` (sorted by identity); `None` when the start position is missing.
    pub fn new(nodes: Vec<Node>) -> Option<Graph> {
        let start = crate::position::epd(&shakmaty::Chess::default());
        let by_id = nodes.iter().enumerate().map(|(i, n)| (n.node_id.clone(), i as u32)).collect();
        let mut parents = vec![Vec::new(); nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            for edge in &node.children {
                parents[edge.child as usize].push(i as u32);
            }
        }
        let mut graph = Graph { nodes, root: 0, by_id, parents };
        graph.root = graph.find_epd(&start)?;
        Some(graph)
    }

    /// A piece of a graph, read from the store below one node ([`crate::store::graph::piece`]):
    /// `nodes` sorted by identity, some edges of which lead out of the piece (their
    /// `child` is [`OUTSIDE`]); `root` is the piece's root, not the start position. The
    /// tree-shaped answers ([`Graph::fold_tree`]) follow only edges of nodes expanded
    /// above their depth, whose children the piece holds, so they are the same as over
    /// the whole graph.
    pub fn piece(nodes: Vec<Node>, root: u32) -> Graph {
        let by_id = nodes.iter().enumerate().map(|(i, n)| (n.node_id.clone(), i as u32)).collect();
        let mut parents = vec![Vec::new(); nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            for edge in node.children.iter().filter(|e| e.child != OUTSIDE) {
                parents[edge.child as usize].push(i as u32);
            }
        }
        Graph { nodes, root, by_id, parents }
    }

    /// The graph of a build's phase outputs.
    pub fn from_tree(
        tree: &Tree,
        skeleton: &EcoSkeleton,
        annotations: Option<&Annotations>,
    ) -> Graph {
        let nodes = tree
            .nodes
            .iter()
            .map(|n| {
                let (opening_name, variation_name) = match &n.opening {
                    Some(o) => {
                        let (a, b) = split_name(&o.name);
                        (Some(a), b)
                    }
                    None => (None, None),
                };
                Node {
                    node_id: crate::position::node_id(&n.epd),
                    epd: n.epd.clone(),
                    fen: n.fen.clone(),
                    ply: n.line.len() as u32,
                    moves: n.movetext.clone(),
                    eco: n.opening.as_ref().map(|o| o.eco.clone()),
                    opening_name,
                    variation_name,
                    entry: n.entry.map(|i| {
                        let e = &skeleton.entries[i as usize];
                        Entry {
                            src: e.src.clone(),
                            eco: e.eco.clone(),
                            scid: e.scid.clone(),
                            name: e.name.clone(),
                            aliases: e.aliases.clone(),
                            is_eco_root: e.is_eco_root,
                        }
                    }),
                    games: n.stats.unwrap_or_default(),
                    engine: annotations.and_then(|a| a.results.get(&n.epd)).map(|a| Engine {
                        eval: a.stockfish_eval,
                        mate: a.stockfish_mate,
                        depth: a.stockfish_depth,
                        best_san: a.best_move_san.clone(),
                        best_uci: a.best_move_uci.clone(),
                        is_dubious: a.is_dubious,
                        is_busted: a.is_busted,
                        lines: a.lines.clone(),
                        source: annotations.and_then(|x| x.origin(&n.epd)).map(str::to_string),
                        nodes: a.nodes,
                    }),
                    children: n
                        .children
                        .iter()
                        .map(|e| {
                            let stats = e.stats.unwrap_or_default();
                            Edge {
                                child: e.child,
                                san: e.san.clone(),
                                uci: e.uci.clone(),
                                games: stats.outcomes,
                                avg_rating: avg_rating(&stats),
                            }
                        })
                        .collect(),
                    // The tree carries no structures; the store's column is read by store::graph.
                    resulting_structure: None,
                    is_stub: false,
                }
            })
            .collect();
        Graph::new(nodes).expect("a tree always holds the start position")
    }

    /// The node on position identity `epd`.
    pub fn find_epd(&self, epd: &str) -> Option<u32> {
        self.nodes.binary_search_by(|n| n.epd.as_str().cmp(epd)).ok().map(|i| i as u32)
    }

    /// The node with stable id `node_id`.
    pub fn find_id(&self, node_id: &str) -> Option<u32> {
        self.by_id.get(node_id).copied()
    }

    /// The move that ends the canonical line of node `index`, with the parent it is played
    /// from (`None` at the start position).
    pub fn last_move(&self, index: u32) -> Option<(u32, &Edge)> {
        let node = self.node(index);
        let san = node.moves.split_whitespace().last()?;
        self.parents[index as usize].iter().find_map(|&p| {
            let parent = self.node(p);
            (parent.ply + 1 == node.ply)
                .then(|| parent.children.iter().find(|e| e.child == index && e.san == san))
                .flatten()
                .map(|e| (p, e))
        })
    }

    /// Where each node below `root` is expanded when the graph is drawn as a tree cut
    /// `max_depth` plies down, following only edges that `keep`: node → (parent, index of
    /// the edge in the parent's children) at its shallowest occurrence, breadth-first in
    /// the children's order (most played first). Other occurrences are transpositions.
    pub fn spanning_tree(
        &self,
        root: u32,
        max_depth: u32,
        keep: impl Fn(&Edge) -> bool,
    ) -> HashMap<u32, (u32, usize)> {
        let mut owners = HashMap::new();
        let mut queue = std::collections::VecDeque::from([(root, 0u32)]);
        let mut seen = std::collections::HashSet::from([root]);
        while let Some((index, depth)) = queue.pop_front() {
            if depth >= max_depth {
                continue;
            }
            for (i, edge) in self.node(index).children.iter().enumerate() {
                if keep(edge) && seen.insert(edge.child) {
                    owners.insert(edge.child, (index, i));
                    queue.push_back((edge.child, depth + 1));
                }
            }
        }
        owners
    }

    /// Draws the graph below `root` as a tree cut `max_depth` plies down, following
    /// only edges that `keep`, and folds it bottom-up: `make` gets each occurrence and
    /// the values of its drawn children. A position is expanded once, at its shallowest
    /// occurrence (see [`Graph::spanning_tree`]); its other occurrences come with
    /// `transposition` set and no children.
    pub fn fold_tree<'g, T>(
        &'g self,
        root: u32,
        max_depth: u32,
        keep: &dyn Fn(&Edge) -> bool,
        make: &mut dyn FnMut(Visit<'g>, Vec<T>) -> T,
    ) -> T {
        let owners = self.spanning_tree(root, max_depth, keep);
        let via = self.last_move(root).map(|(_, e)| e);
        self.fold_from(
            &owners,
            Visit { index: root, via, depth: 0, transposition: false, expanded: false },
            max_depth,
            keep,
            make,
        )
    }

    fn fold_from<'g, T>(
        &'g self,
        owners: &HashMap<u32, (u32, usize)>,
        mut visit: Visit<'g>,
        max_depth: u32,
        keep: &dyn Fn(&Edge) -> bool,
        make: &mut dyn FnMut(Visit<'g>, Vec<T>) -> T,
    ) -> T {
        visit.expanded = !visit.transposition && visit.depth < max_depth;
        let mut children = Vec::new();
        if visit.expanded {
            for (i, edge) in
                self.node(visit.index).children.iter().enumerate().filter(|(_, e)| keep(e))
            {
                let owned = owners.get(&edge.child) == Some(&(visit.index, i));
                let child = Visit {
                    index: edge.child,
                    via: Some(edge),
                    depth: visit.depth + 1,
                    transposition: !owned,
                    expanded: false,
                };
                children.push(self.fold_from(owners, child, max_depth, keep, make));
            }
        }
        make(visit, children)
    }

    /// The node at `index`.
    pub fn node(&self, index: u32) -> &Node {
        &self.nodes[index as usize]
    }
}
