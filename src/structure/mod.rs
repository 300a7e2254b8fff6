//! Phase 5: pawn-structure tagging.
//!
//! A [`Classifier`] names the structure of a position, in this order: a pipeline's own
//! labels for its exact pawn skeleton ([`labels`]); then, once both sides have moved a
//! centre pawn ([`centre_is_engaged`]), okb's table of labelled skeletons, exact
//! ([`skeleton`]); then a near skeleton, unless the first rule of [`rules::RULES`] that
//! fits names something else, in which case the rule; else [`UNKNOWN`]. Each tag records how it was found ([`Confidence`]). [`tag_tree`] tags
//! every terminal node of a built tree (a node with no children); [`review`] lists the
//! Unknown and near ones, most played first, as a form to label.

pub mod catalog;
pub mod labels;
pub mod pattern;
pub mod review;
pub mod rules;
pub mod skeleton;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use shakmaty::{Bitboard, Board, Chess, Color, Position, Rank};

pub use catalog::{STRUCTURES, Structure, UNKNOWN};
use pattern::SidePattern;
pub use rules::{RULES, Rule};
use skeleton::{Skeleton, SkeletonTable};

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
            white: SidePattern::parse(rule.white)
                .unwrap_or_else(|e| panic!("rule {}: {e}", rule.id)),
            black: SidePattern::parse(rule.black)
                .unwrap_or_else(|e| panic!("rule {}: {e}", rule.id)),
        })
        .collect()
});

/// How a tag was found, most certain first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The pipeline's `structure-labels` name this exact skeleton.
    Label,
    /// okb's table of labelled skeletons has this exact skeleton.
    Exact,
    /// One wing pawn further up its file than a labelled skeleton.
    Near,
    /// A rule of [`RULES`] fits.
    Rule,
}

impl Confidence {
    /// The word stored and exported (`label`, `exact`, `near`, `rule`).
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Label => "label",
            Confidence::Exact => "exact",
            Confidence::Near => "near",
            Confidence::Rule => "rule",
        }
    }
}

/// The structure of a position and how it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The structure ([`UNKNOWN`] when nothing fits).
    pub structure: &'static Structure,
    /// How it was found (`None`: Unknown because nothing fits).
    pub confidence: Option<Confidence>,
    /// The first rule that fits, when it names the same structure.
    pub rule: Option<&'static Rule>,
}

impl Tag {
    const UNKNOWN: Tag = Tag { structure: &UNKNOWN, confidence: None, rule: None };
}

/// Whether both sides have moved a centre pawn (c-, d-, e- or f-pawn) from its start
/// square. Before that, a skeleton says nothing about the game's structure: only a
/// pipeline's own labels can name it. The c- and f-pawns count because 1. c4, 1...c5,
/// 1. f4 and 1...f5 fight for the centre as much as the d- and e-pawns do.
pub fn centre_is_engaged(board: &Board) -> bool {
    let home = |color: Color| {
        let rank =
            Bitboard::from_rank(if color == Color::White { Rank::Second } else { Rank::Seventh });
        let centre = Bitboard(0x3c3c_3c3c_3c3c_3c3c); // the c-, d-, e- and f-files
        rank & centre
    };
    [Color::White, Color::Black]
        .into_iter()
        .all(|c| !(board.pawns() & board.by_color(c)).is_superset(home(c)))
}

/// The first rule whose conditions hold for both sides of `board` (no centre check).
pub fn by_rules(board: &Board) -> Option<&'static Rule> {
    COMPILED
        .iter()
        .find(|c| c.white.matches(board, Color::White) && c.black.matches(board, Color::Black))
        .map(|c| c.rule)
}

/// Names structures: a pipeline's labels over okb's table and rules.
#[derive(Clone, Debug, Default)]
pub struct Classifier {
    /// The pipeline's own labelled skeletons (exact matches only).
    pub labels: SkeletonTable,
}

impl Classifier {
    /// The structure of `pos`.
    pub fn classify(&self, pos: &Chess) -> Tag {
        let board = pos.board();
        let skeleton = Skeleton::of(board);
        if let Some(entry) = self.labels.exact(&skeleton) {
            return Tag {
                structure: entry.structure,
                confidence: Some(Confidence::Label),
                rule: None,
            };
        }
        if !centre_is_engaged(board) {
            return Tag::UNKNOWN;
        }
        let table = skeleton::builtin();
        if let Some(entry) = table.exact(&skeleton) {
            let rule = by_rules(board).filter(|r| r.structure == entry.structure.name);
            return Tag { structure: entry.structure, confidence: Some(Confidence::Exact), rule };
        }
        // A near skeleton names what the rules name, or what they cannot; where a rule
        // names something else, its explicit conditions (the Catalan's g3 against the
        // Semi-Slav's g2 one square back) outrank a one-pawn resemblance.
        match (table.near(&skeleton), by_rules(board)) {
            (Some(entry), Some(rule)) if entry.structure.name == rule.structure => Tag {
                structure: entry.structure,
                confidence: Some(Confidence::Near),
                rule: Some(rule),
            },
            (_, Some(rule)) => Tag {
                structure: structure(rule.structure),
                confidence: Some(Confidence::Rule),
                rule: Some(rule),
            },
            (Some(entry), None) => {
                Tag { structure: entry.structure, confidence: Some(Confidence::Near), rule: None }
            }
            (None, None) => Tag::UNKNOWN,
        }
    }

    /// The closest labelled skeleton to `pos` (the pipeline's and okb's), with its
    /// distance in pawns out of place.
    pub fn nearest(&self, pos: &Chess) -> Option<(&skeleton::Entry, u32)> {
        let skeleton = Skeleton::of(pos.board());
        let own = self.labels.nearest(&skeleton);
        let builtin = skeleton::builtin().nearest(&skeleton);
        match (own, builtin) {
            (Some(a), Some(b)) => Some(if a.1 <= b.1 { a } else { b }),
            (a, b) => a.or(b),
        }
    }
}

/// Names the pawn structure of `pos` with okb's table and rules alone.
pub fn classify(pos: &Chess) -> Tag {
    Classifier::default().classify(pos)
}

/// The structure called `name` (Unknown included).
pub fn structure(name: &str) -> &'static Structure {
    STRUCTURES.iter().find(|s| s.name == name).unwrap_or(&UNKNOWN)
}

/// The structure of one terminal node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeTag {
    /// Node index in the tree.
    pub node: u32,
    /// Structure name.
    pub structure: String,
    /// How it was found (`None` for an Unknown that nothing named).
    pub confidence: Option<Confidence>,
}

/// The structures of a tree's terminal nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructureTags {
    /// Every terminal node's tag, in node order.
    pub terminal: Vec<NodeTag>,
}

impl StructureTags {
    /// The tag of node `index`, if it is terminal.
    pub fn get(&self, index: u32) -> Option<&NodeTag> {
        self.terminal.binary_search_by_key(&index, |t| t.node).ok().map(|at| &self.terminal[at])
    }

    /// How many terminal nodes each structure got, most first (then by name).
    pub fn counts(&self) -> Vec<(&str, usize)> {
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for tag in &self.terminal {
            *counts.entry(tag.structure.as_str()).or_default() += 1;
        }
        let mut out: Vec<(&str, usize)> = counts.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }

    /// Terminal nodes tagged Unknown.
    pub fn unknown(&self) -> usize {
        self.terminal.iter().filter(|t| t.structure == UNKNOWN.name).count()
    }
}

/// Tags every terminal node of `tree` (nodes are independent: done on all cores).
pub fn tag_tree(tree: &crate::tree::Tree, classifier: &Classifier) -> StructureTags {
    use rayon::prelude::*;
    let terminal = tree
        .nodes
        .par_iter()
        .enumerate()
        .filter(|(_, n)| n.children.is_empty())
        .map(|(i, n)| {
            // Node FENs are written by okb itself; an unreadable one is still tagged.
            let tag = crate::position::parse_fen(&n.fen)
                .map_or(Tag::UNKNOWN, |pos| classifier.classify(&pos));
            NodeTag {
                node: i as u32,
                structure: tag.structure.name.to_string(),
                confidence: tag.confidence,
            }
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
            assert_ne!(
                structure(rule.structure).name,
                UNKNOWN.name,
                "rule {} names {:?}",
                rule.id,
                rule.structure
            );
        }
        for s in STRUCTURES {
            assert!(RULES.iter().any(|r| r.structure == s.name), "{} has no rule", s.name);
        }
        assert!(STRUCTURES.len() >= 20);
    }

    #[test]
    fn the_start_position_is_unknown() {
        assert_eq!(classify(&Chess::default()), Tag::UNKNOWN);
    }
}
