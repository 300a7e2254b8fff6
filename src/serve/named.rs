//! [`Named`]: what the endpoints that find openings by name or list them need (search,
//! structures, named openings' file stems, the player collections, the OpenAPI document's
//! examples), built from a [`NamedTally`] of every node and held in memory at a size that
//! follows the taxonomies, not the number of nodes.
//!
//! Why apart from [`super::Walked`]: the whole graph is held only for stores of at most
//! `--in-memory-nodes` nodes, while these answers need only the named positions (a few
//! thousand, whatever the store's size) and tallies over every node. A small store builds
//! them from the graph it holds; a larger one from the named summary the store step kept
//! beside its node answers ([`crate::store::named_summary`], one row), else from one pass
//! over the store file ([`Store::named_tally`], in the table's order). Every tie is broken
//! by position identity (the graph's order), so all three give the same bytes
//! (`tests/it/serve_named.rs`).

use std::collections::HashMap;
use std::path::Path;

use axum::body::Bytes;

use super::masters::{self, ExplorerOpening};
use super::{openapi, player, repertoire, structures};
use crate::graph::Graph;
use crate::graph::tally::{NamedTally, SHOWN};
use crate::position::{KeyMap, PositionKey};
use crate::store::StoreError;
use crate::store::read::Store;

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

impl Named {
    /// The answers over the nodes `tally` took, with the store's structures and player
    /// collections, the repertoires built beside it and what its explorer index offers.
    pub fn from_tally(
        mut tally: NamedTally,
        store: &Store,
        path: &Path,
        repertoires: &repertoire::Repertoires,
        explorer: ExplorerExamples,
    ) -> Result<Named, StoreError> {
        tally.named.sort_by(|a, b| a.epd.cmp(&b.epd));
        let graph = Graph::piece(tally.named, 0);
        let by_key = key_index(&graph, path)?;
        let stems: HashMap<String, String> = crate::export::named::of_graph(&graph)
            .into_iter()
            .map(|n| (n.stem, graph.node(n.node).node_id.clone()))
            .collect();
        let structures = structures::StructureIndex::new(tally.structures, store.structures()?);
        let players = player::Players::new(store.players()?.unwrap_or_default());
        let examples = openapi::Examples {
            node_ids: tally.start.into_iter().collect(),
            stems: first_sorted(stems.keys().cloned()),
            eco_codes: first_sorted(
                graph.nodes.iter().filter_map(|n| Some(n.entry.as_ref()?.eco.clone())),
            ),
            structures: structures.names().to_vec(),
            evaluated: tally.evaluated.into_iter().map(|e| (e.moves, e.fen)).collect(),
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
            deepest: tally.deepest,
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

/// Whether `store` has an explorer index (answered from disk, a node at a time), with a
/// game's id.
fn explorer_examples(store: &Store) -> Result<ExplorerExamples, StoreError> {
    let served = store.has_explorer()?;
    let game_ids = match served {
        true => store.explorer_first_game_id()?.into_iter().collect(),
        false => Vec::new(),
    };
    Ok(ExplorerExamples { served, game_ids })
}

/// The first [`SHOWN`] of the distinct `texts`, sorted.
fn first_sorted(texts: impl Iterator<Item = String>) -> Vec<String> {
    let mut texts: Vec<String> = texts.collect();
    texts.sort();
    texts.dedup();
    texts.truncate(SHOWN);
    texts
}

/// Where [`Named::load`] found the tally of a store's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TallyFrom {
    /// The store's named summary ([`crate::store::named_summary`]): one row.
    Summary,
    /// Every node of the store, read once ([`Store::named_tally`]).
    EveryNode,
}

impl std::fmt::Display for TallyFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TallyFrom::Summary => "from the store's named summary",
            TallyFrom::EveryNode => "from every node of the store",
        })
    }
}

impl Named {
    /// The answers of `store` (the store at `path`), from its named summary when it has
    /// one, else from one pass over its nodes ([`Named::scan`]); and which it was.
    pub fn load(
        store: &Store,
        path: &Path,
        repertoires: &repertoire::Repertoires,
    ) -> Result<(Named, TallyFrom), StoreError> {
        let (tally, from) = match store.named_summary()? {
            Some(tally) => (tally, TallyFrom::Summary),
            None => (store.named_tally()?, TallyFrom::EveryNode),
        };
        let explorer = explorer_examples(store)?;
        Ok((Named::from_tally(tally, store, path, repertoires, explorer)?, from))
    }

    /// The answers of `store` (the store at `path`) from one pass over its nodes, in the
    /// table's order, whether it has a named summary or not.
    pub fn scan(
        store: &Store,
        path: &Path,
        repertoires: &repertoire::Repertoires,
    ) -> Result<Named, StoreError> {
        let explorer = explorer_examples(store)?;
        Named::from_tally(store.named_tally()?, store, path, repertoires, explorer)
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
