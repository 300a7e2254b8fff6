//! [`NamedTally`]: what `okb serve`'s answers by name (search, structures, named openings'
//! files, the OpenAPI document's examples; `serve::named`) need from every node of a
//! build, taken one node at a time, in any order: the named positions' outlines and
//! tallies whose size follows the taxonomies, not the number of nodes.
//!
//! Here, below both the store and the server, because both take it: the server from the
//! graph it holds or from one pass over a store file, and the store step, which keeps it
//! in a large store as its named summary ([`NamedTally::summary`]), so that a server of
//! that store reads one row instead of every node. Every tie is broken by position
//! identity, so the tally does not depend on the order the nodes come in, and the summary
//! is the same bytes whoever read the nodes (`tests/it/serve_named.rs`).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{Entry, Node};
use crate::games::stats::Outcomes;

/// How many examples of each kind the OpenAPI document shows.
pub const SHOWN: usize = 3;

/// The format of [`NamedTally::summary`]; a summary of another format is not read (the
/// server reads every node instead), so a change of its shape bumps it.
const FORMAT: u32 = 1;

/// The nodes of a build taken one at a time, in any order.
#[derive(Default)]
pub struct NamedTally {
    /// The outlines of the positions with an entry of their own or a validation stub's
    /// name: without FEN, evaluation or edges, which no answer by name reads.
    pub named: Vec<Node>,
    /// The structures' openings ([`StructureTally`]).
    pub structures: StructureTally,
    /// The ply of the deepest position with games.
    pub deepest: u32,
    /// The start position's node id, if the build has it.
    pub start: Option<String>,
    /// The [`SHOWN`] most played evaluated positions, best first.
    pub evaluated: Vec<Evaluated>,
}

/// A position whose evaluation has a line with moves, as the OpenAPI document's examples
/// rank it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluated {
    /// Games that reached it.
    pub games: u64,
    /// Plies of its line.
    pub ply: u32,
    /// Its identity, the last tie-break.
    pub epd: String,
    /// Its line.
    pub moves: String,
    /// Its FEN.
    pub fen: String,
}

impl NamedTally {
    /// Takes `node` into account.
    pub fn add(&mut self, node: &Node) {
        let evaluated_fen = || {
            let lines = node.engine.as_ref().map_or(&[][..], |e| &e.lines[..]);
            lines.iter().any(|l| !l.pv_uci.is_empty()).then(|| node.fen.clone())
        };
        self.add_outline(node, evaluated_fen);
    }

    /// Takes into account `node`, whose evaluation and FEN may be left out (a store's
    /// outline of it, which reads neither): `evaluated_fen` gives its FEN when
    /// its evaluation has a line with moves, and is called only for a position played
    /// more than the evaluated ones kept so far.
    pub fn add_outline(&mut self, node: &Node, evaluated_fen: impl FnOnce() -> Option<String>) {
        self.structures.add(node);
        if node.games.games() > 0 {
            self.deepest = self.deepest.max(node.ply);
        }
        if node.ply == 0 && node.epd == crate::position::epd(&shakmaty::Chess::default()) {
            self.start = Some(node.node_id.clone());
        }
        self.consider_evaluated(node, evaluated_fen);
        if node.entry.is_some() || node.is_stub {
            // Without its edges too: their children are indices of the whole graph.
            self.named.push(Node {
                fen: String::new(),
                engine: None,
                children: Vec::new(),
                ..node.clone()
            });
        }
    }

    /// Keeps `node` among the [`SHOWN`] most played positions whose evaluation `GET
    /// /api/cloud-eval` answers with a move (then the shortest lines, then by identity).
    fn consider_evaluated(&mut self, node: &Node, evaluated_fen: impl FnOnce() -> Option<String>) {
        let before = |e: &Evaluated| {
            (std::cmp::Reverse(e.games), e.ply, e.epd.as_str())
                < (std::cmp::Reverse(node.games.games()), node.ply, node.epd.as_str())
        };
        if self.evaluated.len() == SHOWN && self.evaluated.last().is_some_and(before) {
            return;
        }
        let Some(fen) = evaluated_fen() else { return };
        let at = self.evaluated.partition_point(before);
        let kept = Evaluated {
            games: node.games.games(),
            ply: node.ply,
            epd: node.epd.clone(),
            moves: node.moves.clone(),
            fen,
        };
        self.evaluated.insert(at, kept);
        self.evaluated.truncate(SHOWN);
    }

    /// The tally as the bytes a store keeps (JSON): the named outlines by identity, the
    /// maps by key, so the bytes do not depend on the order the nodes came in.
    pub fn summary(&self) -> Vec<u8> {
        let mut named: Vec<Outline> = self.named.iter().map(Outline::of).collect();
        named.sort_by(|a, b| a.epd.cmp(&b.epd));
        let summary = Summary {
            format: FORMAT,
            named,
            namer: sorted(self.structures.namer.iter().map(|(k, v)| (k.clone(), v.clone()))),
            by_structure: sorted(self.structures.by_structure.iter().map(|(name, openings)| {
                let openings = openings.iter().map(|(k, (n, p))| (k.clone(), *n, p.clone()));
                (name.clone(), openings.collect())
            })),
            deepest: self.deepest,
            start: self.start.clone(),
            evaluated: self.evaluated.clone(),
        };
        serde_json::to_vec(&summary).expect("the named summary serializes")
    }

    /// The tally a [`NamedTally::summary`] holds; `None` for a summary of another format.
    pub fn from_summary(bytes: &[u8]) -> Result<Option<NamedTally>, serde_json::Error> {
        #[derive(Deserialize)]
        struct Format {
            format: u32,
        }
        if serde_json::from_slice::<Format>(bytes)?.format != FORMAT {
            return Ok(None);
        }
        let summary: Summary = serde_json::from_slice(bytes)?;
        let by_structure = summary.by_structure.into_iter().map(|(name, openings)| {
            (name, openings.into_iter().map(|(k, n, p)| (k, (n, p))).collect())
        });
        Ok(Some(NamedTally {
            named: summary.named.into_iter().map(Outline::node).collect(),
            structures: StructureTally {
                namer: summary.namer.into_iter().collect(),
                by_structure: by_structure.collect(),
            },
            deepest: summary.deepest,
            start: summary.start,
            evaluated: summary.evaluated,
        }))
    }
}

/// `items` sorted (by key first: keys are distinct).
fn sorted<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.collect();
    items.sort();
    items
}

/// [`NamedTally::summary`]'s shape: the maps as lists, since JSON keys are text.
#[derive(Serialize, Deserialize)]
struct Summary {
    format: u32,
    named: Vec<Outline>,
    namer: Vec<(OpeningKey, Placed)>,
    by_structure: Vec<(String, Vec<Counted>)>,
    deepest: u32,
    start: Option<String>,
    evaluated: Vec<Evaluated>,
}

/// A named position's outline as the summary keeps it: the [`Node`] fields it has.
#[derive(Serialize, Deserialize)]
struct Outline {
    node_id: String,
    epd: String,
    ply: u32,
    moves: String,
    eco: Option<String>,
    opening_name: Option<String>,
    variation_name: Option<String>,
    entry: Option<Entry>,
    games: Outcomes,
    resulting_structure: Option<String>,
    is_stub: bool,
}

impl Outline {
    fn of(node: &Node) -> Outline {
        Outline {
            node_id: node.node_id.clone(),
            epd: node.epd.clone(),
            ply: node.ply,
            moves: node.moves.clone(),
            eco: node.eco.clone(),
            opening_name: node.opening_name.clone(),
            variation_name: node.variation_name.clone(),
            entry: node.entry.clone(),
            games: node.games,
            resulting_structure: node.resulting_structure.clone(),
            is_stub: node.is_stub,
        }
    }

    fn node(self) -> Node {
        Node {
            node_id: self.node_id,
            epd: self.epd,
            fen: String::new(),
            ply: self.ply,
            moves: self.moves,
            eco: self.eco,
            opening_name: self.opening_name,
            variation_name: self.variation_name,
            entry: self.entry,
            games: self.games,
            engine: None,
            children: Vec::new(),
            resulting_structure: self.resulting_structure,
            is_stub: self.is_stub,
        }
    }
}

/// The opening a node belongs to: its (own or inherited) ECO code, opening name and
/// variation name.
pub type OpeningKey = (Option<String>, Option<String>, Option<String>);

/// The opening a node belongs to ([`OpeningKey`]).
fn opening_key(node: &Node) -> OpeningKey {
    (node.eco.clone(), node.opening_name.clone(), node.variation_name.clone())
}

/// A node as the tally keeps it: its ply and identity, which order nodes as the graph
/// does (by identity), and its id, which the answer gives.
type Placed = (u32, String, String);

/// An opening of a structure as the summary keeps it: its terminal nodes and the first.
type Counted = (OpeningKey, u32, Placed);

/// The nodes of a build tallied one at a time, in any order, for the answers of `GET
/// /structure/{name}/openings`: what it holds grows with the structures and the
/// openings, not with the nodes, so a store too large for memory is tallied in one pass.
#[derive(Default)]
pub struct StructureTally {
    /// The node naming each opening: the shallowest with an entry of its own (the first
    /// by identity among those).
    namer: HashMap<OpeningKey, Placed>,
    /// Per structure and opening, its terminal nodes and the first of them by identity.
    by_structure: HashMap<String, BTreeMap<OpeningKey, (u32, Placed)>>,
}

/// One opening of a structure, as [`StructureTally::take`] gives it.
pub struct StructureOpening {
    /// The opening.
    pub key: OpeningKey,
    /// How many of its terminal nodes have the structure.
    pub terminal_nodes: u32,
    /// The node that names it (the shallowest with that name), else its first terminal
    /// node by identity.
    pub node_id: String,
}

impl StructureTally {
    /// Counts `node`.
    pub fn add(&mut self, node: &Node) {
        let placed = || (node.ply, node.epd.clone(), node.node_id.clone());
        if node.entry.is_some() {
            let best = self.namer.entry(opening_key(node)).or_insert_with(placed);
            if (node.ply, node.epd.as_str()) < (best.0, best.1.as_str()) {
                *best = placed();
            }
        }
        let Some(structure) = node.resulting_structure.as_deref() else { return };
        // Looked up before inserting: most nodes find their structure, and the name is
        // copied only for a new one.
        let openings = match self.by_structure.get_mut(structure) {
            Some(openings) => openings,
            None => self.by_structure.entry(structure.to_string()).or_default(),
        };
        let count = openings.entry(opening_key(node)).or_insert_with(|| (0, placed()));
        count.0 += 1;
        if node.epd < count.1.1 {
            count.1 = placed();
        }
    }

    /// The openings of `structure`, by (code, name), taken out of the tally (each
    /// structure's answer is made once).
    pub fn take(&mut self, structure: &str) -> Vec<StructureOpening> {
        let openings = self.by_structure.remove(structure).unwrap_or_default();
        openings
            .into_iter()
            .map(|(key, (terminal_nodes, first))| {
                let node_id = self.namer.get(&key).map_or(first.2, |named| named.2.clone());
                StructureOpening { key, terminal_nodes, node_id }
            })
            .collect()
    }
}
