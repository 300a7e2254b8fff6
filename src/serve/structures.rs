//! `GET /structure/{name}/openings`: a pawn structure (Phase 5) and the openings whose
//! terminal nodes resolve into it.
//!
//! Answers are computed once, when the catalog loads: the structure entities come from
//! the store's `pawn_structures` table ([`crate::store::read::Store::structures`]), and each terminal node counts for the opening it
//! belongs to (its own or inherited ECO code and name).

use std::collections::{BTreeMap, HashMap};

use axum::body::Bytes;
use serde::Serialize;

use crate::graph::Node;
use crate::store::read::StructureJson;

/// One opening whose terminal nodes reach the structure.
#[derive(Clone, Debug, Serialize)]
pub struct OpeningJson {
    /// ECO code of the opening.
    pub eco_code: Option<String>,
    /// Opening name (before `:`).
    pub opening_name: Option<String>,
    /// Variation name (after `:`).
    pub variation_name: Option<String>,
    /// The node that names the opening (the shallowest one with that name), else the
    /// first terminal node found.
    pub node_id: String,
    /// How many of the opening's terminal nodes have the structure.
    pub terminal_nodes: u32,
}

/// The answer of `GET /structure/{name}/openings`.
#[derive(Clone, Debug, Serialize)]
pub struct StructureOpenings {
    /// The structure.
    pub structure: StructureJson,
    /// Its openings, most terminal nodes first.
    pub openings: Vec<OpeningJson>,
}

/// Every structure's answer, keyed by [`lookup_key`] of its name.
pub struct StructureIndex {
    answers: HashMap<String, Bytes>,
    names: Vec<String>,
}

/// The form of a name used for lookups: lowercase letters and digits only, so `Carlsbad`,
/// `carlsbad`, `isolated-queens-pawn` and `Isolated Queen's Pawn` all find their structure.
pub fn lookup_key(name: &str) -> String {
    name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

type OpeningKey = (Option<String>, Option<String>, Option<String>);

/// The opening a node belongs to: its (own or inherited) ECO code and names.
fn opening_key(node: &Node) -> OpeningKey {
    (node.eco.clone(), node.opening_name.clone(), node.variation_name.clone())
}

/// A node as the tally keeps it: its ply and identity, which order nodes as the graph
/// does (by identity), and its id, which the answer gives.
type Placed = (u32, String, String);

/// The nodes of a store tallied one at a time, in any order, for the structures'
/// answers: what it holds grows with the structures and the openings, not with the nodes,
/// so a store too large for memory is tallied in one pass.
#[derive(Default)]
pub struct StructureTally {
    /// The node naming each opening: the shallowest with an entry of its own (the first
    /// by identity among those).
    namer: HashMap<OpeningKey, Placed>,
    /// Per structure and opening, its terminal nodes and the first of them by identity.
    by_structure: HashMap<String, BTreeMap<OpeningKey, (u32, Placed)>>,
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

    /// The answers for `structures` (the store's) over the nodes counted.
    pub fn answers(mut self, structures: Vec<StructureJson>) -> StructureIndex {
        let mut answers = HashMap::new();
        let mut names = Vec::new();
        for structure in structures {
            let mut openings: Vec<OpeningJson> = self
                .by_structure
                .remove(structure.name.as_str())
                .unwrap_or_default()
                .into_iter()
                .map(|(key, (terminal_nodes, first))| {
                    let node_id = self.namer.get(&key).map_or(first.2, |named| named.2.clone());
                    OpeningJson {
                        node_id,
                        eco_code: key.0,
                        opening_name: key.1,
                        variation_name: key.2,
                        terminal_nodes,
                    }
                })
                .collect();
            // Most terminal nodes first; the BTreeMap order (code, name) breaks ties.
            openings.sort_by_key(|opening| std::cmp::Reverse(opening.terminal_nodes));
            names.push(structure.name.clone());
            let key = lookup_key(&structure.name);
            let answer = StructureOpenings { structure, openings };
            answers
                .insert(key, Bytes::from(serde_json::to_vec(&answer).expect("answers serialize")));
        }
        StructureIndex { answers, names }
    }
}

impl StructureIndex {
    /// The serialized answer for `name` (matched by [`lookup_key`]).
    pub fn answer(&self, name: &str) -> Option<Bytes> {
        self.answers.get(&lookup_key(name)).cloned()
    }

    /// The structure names the store knows, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_whatever_their_case_and_punctuation() {
        assert_eq!(lookup_key("Isolated Queen's Pawn"), lookup_key("isolated-queens-pawn"));
        assert_eq!(lookup_key("Carlsbad"), "carlsbad");
        assert_eq!(lookup_key("Grünfeld Centre"), "grünfeldcentre");
    }
}
