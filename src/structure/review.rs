//! The structure review report (the technical design's E7): terminal positions no rule
//! recognises, most-played first, as JSON and as a readable table. It informs the rule
//! set's next revision and never blocks a build.

use serde::Serialize;

use super::{StructureTags, UNKNOWN};
use crate::tree::Tree;

/// One Unknown terminal position.
#[derive(Debug, Serialize)]
pub struct ReviewEntry<'a> {
    /// Stable node id.
    pub node_id: String,
    /// The node's FEN.
    pub fen: &'a str,
    /// Its canonical line.
    pub moves: &'a str,
    /// ECO code, own or inherited.
    pub eco: Option<&'a str>,
    /// Opening name, own or inherited.
    pub name: Option<&'a str>,
    /// Games that reached it.
    pub game_count: u64,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Review<'a> {
    /// Terminal nodes tagged.
    pub terminal_nodes: usize,
    /// Terminal nodes per structure, most first.
    pub by_structure: Vec<(&'a str, usize)>,
    /// The Unknown ones.
    pub unknown: Vec<ReviewEntry<'a>>,
}

/// Builds the report of `tags` over `tree`.
pub fn review<'a>(tree: &'a Tree, tags: &'a StructureTags) -> Review<'a> {
    let mut unknown: Vec<ReviewEntry<'a>> = tags
        .terminal
        .iter()
        .filter(|(_, name)| name == UNKNOWN.name)
        .map(|(i, _)| {
            let n = &tree.nodes[*i as usize];
            ReviewEntry {
                node_id: crate::position::node_id(&n.epd),
                fen: &n.fen,
                moves: &n.movetext,
                eco: n.opening.as_ref().map(|o| o.eco.as_str()),
                name: n.opening.as_ref().map(|o| o.name.as_str()),
                game_count: n.game_count(),
            }
        })
        .collect();
    unknown.sort_by(|a, b| b.game_count.cmp(&a.game_count).then(a.moves.cmp(b.moves)));
    Review { terminal_nodes: tags.terminal.len(), by_structure: tags.counts(), unknown }
}

impl Review<'_> {
    /// Pretty JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("the review serializes");
        bytes.push(b'\n');
        bytes
    }

    /// A readable table: the structure counts, then the Unknown positions.
    pub fn to_table(&self) -> Vec<u8> {
        let mut out = format!("Pawn structures of {} terminal nodes\n\n", self.terminal_nodes);
        out.push_str(&format!("{:<32} {:>7}\n", "structure", "nodes"));
        for (name, count) in &self.by_structure {
            out.push_str(&format!("{name:<32} {count:>7}\n"));
        }
        out.push_str(&format!("\nUnknown terminal positions to review ({}), most played first\n\n", self.unknown.len()));
        out.push_str(&format!("{:>7}  {:<5} {:<48} {}\n", "games", "eco", "opening", "moves"));
        for e in &self.unknown {
            let name: String = e.name.unwrap_or("-").chars().take(48).collect();
            out.push_str(&format!("{:>7}  {:<5} {:<48} {}\n", e.game_count, e.eco.unwrap_or("-"), name, e.moves));
        }
        out.into_bytes()
    }
}
