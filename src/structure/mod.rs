//! Phase 5: pawn-structure tagging.
//!
//! [`classify`] names the structure of a position with the first rule of
//! [`catalog::RULES`] that fits (a pure function of the board), or [`catalog::UNKNOWN`].
//! [`tag_tree`] tags every terminal node of a built tree (a node with no children) and
//! collects the Unknown ones for the review report ([`review`]), which never blocks a
//! build.

pub mod catalog;
pub mod pattern;
pub mod review;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Position};

pub use catalog::{RULES, Rule, STRUCTURES, Structure, UNKNOWN};
use pattern::SidePattern;

/// A rule with both sides compiled.
struct Compiled {
    rule: &'static Rule,
    white: SidePattern,
    black: SidePattern,
}

static COMPILED: LazyLock<Vec<Compiled>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|rule| Compiled {
            rule,
            // The table is code, checked by this module's tests; a bad token is a bug.
            white: SidePattern::parse(rule.white).unwrap_or_else(|e| panic!("rule {}: {e}", rule.id)),
            black: SidePattern::parse(rule.black).unwrap_or_else(|e| panic!("rule {}: {e}", rule.id)),
        })
        .collect()
});

/// The structure of a position and the rule that named it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The structure ([`UNKNOWN`] when no rule fits).
    pub structure: &'static Structure,
    /// The rule that matched, if any.
    pub rule: Option<&'static Rule>,
}

/// Names the pawn structure of `pos`: the first rule in precedence order whose
/// conditions hold for both sides.
pub fn classify(pos: &Chess) -> Tag {
    let board = pos.board();
    for c in COMPILED.iter() {
        if c.white.matches(board, Color::White) && c.black.matches(board, Color::Black) {
            return Tag { structure: structure(c.rule.structure), rule: Some(c.rule) };
        }
    }
    Tag { structure: &UNKNOWN, rule: None }
}

/// The structure called `name` (Unknown included).
pub fn structure(name: &str) -> &'static Structure {
    STRUCTURES.iter().find(|s| s.name == name).unwrap_or(&UNKNOWN)
}

/// The structures of a tree's terminal nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructureTags {
    /// `(node index, structure name)` for every terminal node, in node order.
    pub terminal: Vec<(u32, String)>,
}

impl StructureTags {
    /// The structure name of node `index`, if it is terminal.
    pub fn get(&self, index: u32) -> Option<&str> {
        self.terminal
            .binary_search_by_key(&index, |(i, _)| *i)
            .ok()
            .map(|at| self.terminal[at].1.as_str())
    }

    /// How many terminal nodes each structure got, most first (then by name).
    pub fn counts(&self) -> Vec<(&str, usize)> {
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for (_, name) in &self.terminal {
            *counts.entry(name.as_str()).or_default() += 1;
        }
        let mut out: Vec<(&str, usize)> = counts.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }
}

/// Tags every terminal node of `tree` (nodes are independent: done on all cores).
pub fn tag_tree(tree: &crate::tree::Tree) -> StructureTags {
    use rayon::prelude::*;
    let terminal = tree
        .nodes
        .par_iter()
        .enumerate()
        .filter(|(_, n)| n.children.is_empty())
        .map(|(i, n)| {
            // Node FENs are written by okb itself; an unreadable one is still tagged.
            let name = crate::position::parse_fen(&n.fen).map_or(UNKNOWN.name, |pos| classify(&pos).structure.name);
            (i as u32, name.to_string())
        })
        .collect();
    StructureTags { terminal }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles_and_names_a_catalogued_structure() {
        for rule in RULES {
            SidePattern::parse(rule.white).unwrap();
            SidePattern::parse(rule.black).unwrap();
            assert_ne!(structure(rule.structure).name, UNKNOWN.name, "rule {} names {:?}", rule.id, rule.structure);
        }
        for s in STRUCTURES {
            assert!(RULES.iter().any(|r| r.structure == s.name), "{} has no rule", s.name);
        }
        assert!(STRUCTURES.len() >= 20);
    }

    #[test]
    fn the_start_position_is_unknown() {
        assert_eq!(classify(&Chess::default()).structure.name, "Unknown");
    }
}
