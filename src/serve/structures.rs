//! `GET /structure/{name}/openings`: a pawn structure (Phase 5) and the openings whose
//! terminal nodes resolve into it.
//!
//! Answers are computed once, when the catalog loads: the structure entities come from
//! the store's `pawn_structures` table ([`crate::store::read::Store::structures`]), and each terminal node counts for the opening it
//! belongs to (its own or inherited ECO code and name).

use std::collections::{BTreeMap, HashMap};

use axum::body::Bytes;
use serde::Serialize;

use crate::graph::{Graph, Node};
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

impl StructureIndex {
    /// The answers for `structures` (the store's), grouping `graph`'s terminal nodes.
    pub fn new(structures: Vec<StructureJson>, graph: &Graph) -> StructureIndex {
        // The node naming each opening: the shallowest with an entry of its own.
        let mut namer: HashMap<OpeningKey, (u32, u32)> = HashMap::new();
        for (index, node) in graph.nodes.iter().enumerate() {
            if node.entry.is_some() {
                let best = namer.entry(opening_key(node)).or_insert((node.ply, index as u32));
                *best = (*best).min((node.ply, index as u32));
            }
        }
        let mut by_structure: HashMap<&str, BTreeMap<OpeningKey, (u32, u32)>> = HashMap::new();
        for (index, node) in graph.nodes.iter().enumerate() {
            let Some(structure) = node.resulting_structure.as_deref() else { continue };
            let count = by_structure
                .entry(structure)
                .or_default()
                .entry(opening_key(node))
                .or_insert((0, index as u32));
            count.0 += 1;
        }

        let mut answers = HashMap::new();
        let mut names = Vec::new();
        for structure in structures {
            let mut openings: Vec<OpeningJson> = by_structure
                .remove(structure.name.as_str())
                .unwrap_or_default()
                .into_iter()
                .map(|(key, (terminal_nodes, first))| {
                    let node = namer.get(&key).map_or(first, |&(_, index)| index);
                    OpeningJson {
                        node_id: graph.nodes[node as usize].node_id.clone(),
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
