//! [`Named`]: what the endpoints that find openings by name or list them need (search,
//! structures, named openings' file stems, the player collections, the OpenAPI document's
//! examples), read from the store in one pass over its nodes and held in memory at a size
//! that follows the taxonomies, not the number of nodes.
//!
//! Why apart from [`super::Walked`]: the whole graph is held only for stores of at most
//! `--in-memory-nodes` nodes, while these answers need only the named positions (a few
//! thousand, whatever the store's size) and tallies over every node. A small store builds
//! them from the graph it holds; a larger one from [`Store::each_outline`], in the table's
//! order. Every tie is broken by position identity (the graph's order), so both give the
//! same bytes (`tests/it/serve_named.rs`).

use std::collections::HashMap;
use std::path::Path;

use axum::body::Bytes;

use super::masters::{self, ExplorerOpening};
use super::{openapi, player, repertoire, structures};
use crate::graph::{Graph, Node};
use crate::position::{KeyMap, PositionKey};
use crate::store::StoreError;
use crate::store::read::Store;

/// How many examples of each kind the OpenAPI document shows.
const SHOWN: usize = 3;

/// The named positions of a build and the answers derived from every node.
pub struct Named {
    /// The positions with an entry of their own or a validation stub's name, sorted by
    /// identity, without edges.
    pub graph: Graph,
    /// Index of [`Named::graph`] by position key.
    by_key: KeyMap<PositionKey, u32>,
    /// The search index over the named positions.
    pub(super) search: crate::search::SearchIndex,
    /// Named openings' node ids by file stem (the OpeningIQ export's file names).
    pub(super) stems: HashMap<String, String>,
    /// `GET /structure/{name}/openings` answers.
    pub(super) structures: structures::StructureIndex,
    /// The player collections (`GET /player`; none in a store built without them).
    pub(super) players: player::Players,
    /// The ply of the deepest position the knowledge base counted games for (the tree's
    /// `max_ply` in practice; [`masters::BeyondDepth`]).
    pub(super) deepest: u32,
    /// The OpenAPI document, with the build's examples.
    pub(super) openapi: Bytes,
}

/// What the explorer index gives the OpenAPI document: that there is one, and a game id.
pub struct ExplorerExamples {
    /// Whether the store's explorer index is served.
    pub served: bool,
    /// Ids of referenced games.
    pub game_ids: Vec<String>,
}

/// The nodes of a store taken one at a time, in any order.
#[derive(Default)]
pub struct NamedBuilder {
    named: Vec<Node>,
    structures: structures::StructureTally,
    deepest: u32,
    start: Option<String>,
    /// The most played evaluated positions so far, best first.
    evaluated: Vec<Evaluated>,
}

/// A position whose evaluation has a line with moves, as the OpenAPI document's examples
/// rank it.
struct Evaluated {
    games: u64,
    ply: u32,
    epd: String,
    moves: String,
    fen: String,
}

impl NamedBuilder {
    /// Takes `node` into account.
    pub fn add(&mut self, node: &Node) {
        let evaluated_fen = || {
            let lines = node.engine.as_ref().map_or(&[][..], |e| &e.lines[..]);
            lines.iter().any(|l| !l.pv_uci.is_empty()).then(|| node.fen.clone())
        };
        self.add_outline(node, evaluated_fen);
    }

    /// Takes into account `node`, whose evaluation and FEN may be left out
    /// ([`crate::store::read::Store::each_outline`]): `evaluated_fen` gives its FEN when
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
            // Its outline: without its FEN and evaluation, which no answer from here
            // reads, and without its edges, whose children are indices of the whole graph.
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

    /// The answers, with the store's structures and player collections, the repertoires
    /// built beside it and what its explorer index offers.
    pub fn finish(
        mut self,
        store: &Store,
        path: &Path,
        repertoires: &repertoire::Repertoires,
        explorer: ExplorerExamples,
    ) -> Result<Named, StoreError> {
        self.named.sort_by(|a, b| a.epd.cmp(&b.epd));
        let graph = Graph::piece(self.named, 0);
        let by_key = key_index(&graph, path)?;
        let stems: HashMap<String, String> = crate::export::named::of_graph(&graph)
            .into_iter()
            .map(|n| (n.stem, graph.node(n.node).node_id.clone()))
            .collect();
        let structures = self.structures.answers(store.structures()?);
        let players = player::Players::new(store.players()?.unwrap_or_default());
        let examples = openapi::Examples {
            node_ids: self.start.into_iter().collect(),
            stems: first_sorted(stems.keys().cloned()),
            eco_codes: first_sorted(
                graph.nodes.iter().filter_map(|n| Some(n.entry.as_ref()?.eco.clone())),
            ),
            structures: structures.names().to_vec(),
            evaluated: self.evaluated.into_iter().map(|e| (e.moves, e.fen)).collect(),
            explorer: explorer.served,
            game_ids: explorer.game_ids,
            players: players.some_player().map(str::to_string).into_iter().collect(),
            repertoires: repertoires.names().iter().map(|n| n.to_string()).collect(),
        };
        Ok(Named {
            search: crate::search::SearchIndex::new(&graph),
            by_key,
            stems,
            structures,
            players,
            deepest: self.deepest,
            openapi: Bytes::from(
                serde_json::to_vec_pretty(&openapi::document_for(&examples))
                    .expect("the OpenAPI document serializes"),
            ),
            graph,
        })
    }
}

/// The index of `graph`'s nodes by position key (`path`, the store's, names a node whose
/// identity does not parse).
pub(super) fn key_index(
    graph: &Graph,
    path: &Path,
) -> Result<KeyMap<PositionKey, u32>, StoreError> {
    let mut by_key = KeyMap::default();
    for (index, node) in graph.nodes.iter().enumerate() {
        let pos = crate::position::parse_fen(&node.epd)
            .map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))?;
        by_key.insert(crate::position::key(&pos), index as u32);
    }
    Ok(by_key)
}

/// The first [`SHOWN`] of the distinct `texts`, sorted.
fn first_sorted(texts: impl Iterator<Item = String>) -> Vec<String> {
    let mut texts: Vec<String> = texts.collect();
    texts.sort();
    texts.dedup();
    texts.truncate(SHOWN);
    texts
}

impl Named {
    /// Reads the outline of every node of `store` once, in the table's order, for the
    /// named positions and the tallies, and asks the store for its most played evaluated
    /// positions, and whether it has an explorer index (answered from disk, a node at a
    /// time) with a game's id.
    pub fn scan(
        store: &Store,
        path: &Path,
        repertoires: &repertoire::Repertoires,
    ) -> Result<Named, StoreError> {
        let mut builder = NamedBuilder::default();
        let mut failed = None;
        store.each_outline(|node, evaluated| {
            let evaluated_fen = || {
                let fen = evaluated.then(|| store.evaluated_fen(&node.node_id));
                fen?.unwrap_or_else(|e| {
                    failed.get_or_insert(e);
                    None
                })
            };
            builder.add_outline(&node, evaluated_fen);
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        let served = store.has_explorer()?;
        let game_ids = match served {
            true => store.explorer_first_game_id()?.into_iter().collect(),
            false => Vec::new(),
        };
        builder.finish(store, path, repertoires, ExplorerExamples { served, game_ids })
    }

    /// The best `limit` matches of `query` ([`crate::search::SearchIndex::search`]).
    pub fn search(&self, query: &str, limit: usize) -> Vec<crate::search::Hit> {
        self.search.search(&self.graph, query, limit)
    }

    /// The serialized `GET /structure/{name}/openings` answer, if a structure is named so.
    pub fn structure(&self, name: &str) -> Option<Bytes> {
        self.structures.answer(name)
    }

    /// The OpenAPI document with the build's examples, serialized.
    pub fn openapi(&self) -> &Bytes {
        &self.openapi
    }

    /// The named position `pos`, if it is one.
    pub fn find(&self, pos: &shakmaty::Chess) -> Option<u32> {
        self.by_key.get(&crate::position::key(pos)).copied()
    }

    /// The Lichess taxonomy's own name of `pos`, if it names the position.
    pub(super) fn lichess_name(&self, pos: &shakmaty::Chess) -> Option<ExplorerOpening> {
        self.find(pos).and_then(|i| masters::move_opening(self.graph.node(i)))
    }
}
