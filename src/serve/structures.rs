//! `GET /structure/{name}/openings`: a pawn structure (Phase 5) and the openings whose
//! terminal nodes resolve into it.
//!
//! Answers are computed once, when the catalog loads: the structure entities come from
//! the store's `pawn_structures` table ([`crate::store::read::Store::structures`]), and each terminal node counts for the opening it
//! belongs to (its own or inherited ECO code and name), as [`StructureTally`] (below the
//! store, which keeps a large store's tally) counted them.

use std::collections::HashMap;

use axum::body::Bytes;
use serde::Serialize;

use crate::graph::tally::StructureTally;
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

impl StructureIndex {
    /// The answers for `structures` (the store's) over the nodes `tally` counted.
    pub fn new(mut tally: StructureTally, structures: Vec<StructureJson>) -> StructureIndex {
        let mut answers = HashMap::new();
        let mut names = Vec::new();
        for structure in structures {
            let mut openings: Vec<OpeningJson> = tally
                .take(&structure.name)
                .into_iter()
                .map(|opening| OpeningJson {
                    node_id: opening.node_id,
                    eco_code: opening.key.0,
                    opening_name: opening.key.1,
                    variation_name: opening.key.2,
                    terminal_nodes: opening.terminal_nodes,
                })
                .collect();
            // Most terminal nodes first; the tally's order (code, name) breaks ties.
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
