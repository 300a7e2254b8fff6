//! The validation report: JSON, a readable table and optional stub lines.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position};

use super::{Counts, TreeNames, ValidateParams, Validation};
use crate::games::report::BadGames;
use crate::games::stats::Outcomes;
use crate::tree::Tree;

/// A named variation that games reach and the tree lacks.
#[derive(Debug, Serialize, Deserialize)]
pub struct MissingVariation {
    /// The name from the games' Opening tags.
    pub name: String,
    /// The most common ECO tag of those games.
    pub eco: String,
    /// Games counted.
    pub games: u64,
    /// Their results (games with a decided result only).
    pub outcomes: Outcomes,
    /// The first position of those games that the tree lacks (FEN).
    pub fen: String,
    /// The moves reaching it, from the first such game.
    pub moves: String,
    /// The name of the tree position just before it (own or inherited).
    pub tree_parent: Option<String>,
    /// Marked when written as a stub line.
    pub stub: bool,
}

/// The whole report.
#[derive(Debug, Serialize, Deserialize)]
pub struct ValidationReport {
    /// The threshold used.
    pub min_games: u64,
    /// Game counts.
    pub counts: Counts,
    /// Distinct (position, name) pairs below the threshold (not listed).
    pub pairs_below_threshold: usize,
    /// Corrupt games by reason (counted, not fatal).
    pub corrupt_games: u64,
    /// The corrupt games' reasons and first locations.
    pub corrupt: BadGames,
    /// Reported variations, most games first.
    pub missing: Vec<MissingVariation>,
}

/// A position games reach under a name the tree lacks, added to the store as a leaf
/// below the tree position the games left from (`name_src = "stub"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StubNode {
    /// Position identity.
    pub epd: String,
    /// Full FEN after `moves`.
    pub fen: String,
    /// Identity of the tree position before the last move.
    pub parent_epd: String,
    /// The last move in SAN.
    pub san: String,
    /// The last move in UCI.
    pub uci: String,
    /// Plies of `moves`.
    pub ply: usize,
    /// The line of the first game that reached it, numbered SAN.
    pub moves: String,
    /// The games' most common ECO tag.
    pub eco: String,
    /// The games' Opening tag.
    pub name: String,
    /// Results of the games that reached it under that name.
    pub outcomes: Outcomes,
    /// Its pawn structure (a stub is a leaf, so it gets one like every terminal node).
    pub structure: String,
    /// How the structure was found (none for Unknown).
    pub structure_confidence: Option<crate::structure::Confidence>,
}

/// Builds the report of `validation` over `tree`.
pub fn build(
    validation: &Validation,
    tree: &Tree,
    names: &TreeNames,
    params: &ValidateParams,
) -> ValidationReport {
    let mut missing = Vec::new();
    let mut below = 0;
    for key in &validation.order {
        let pair = &validation.pairs[key];
        if pair.games < params.min_games {
            below += 1;
            continue;
        }
        let mut pos = Chess::default();
        let mut sans = Vec::with_capacity(pair.line.len());
        let mut parent = None;
        for m in &pair.line {
            sans.push(crate::position::san(&pos, m));
            pos.play_unchecked(*m);
        }
        // The position before the last move is the tree's (the game left the tree there).
        if !pair.line.is_empty() {
            let mut before = Chess::default();
            for m in &pair.line[..pair.line.len() - 1] {
                before.play_unchecked(*m);
            }
            parent = names
                .nodes
                .get(&crate::position::key(&before).0)
                .and_then(|&i| tree.nodes[i as usize].opening.as_ref())
                .map(|o| o.name.clone());
        }
        let eco = pair
            .eco
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map_or("?".into(), |(e, _)| e.clone());
        missing.push(MissingVariation {
            name: key.1.clone(),
            eco,
            games: pair.games,
            outcomes: pair.outcomes,
            fen: crate::position::fen(&pos),
            moves: numbered(&sans),
            tree_parent: parent,
            stub: params.stubs,
        });
    }
    missing.sort_by(|a, b| b.games.cmp(&a.games).then(a.name.cmp(&b.name)).then(a.fen.cmp(&b.fen)));
    ValidationReport {
        min_games: params.min_games,
        counts: validation.counts.clone(),
        pairs_below_threshold: below,
        corrupt_games: validation.bad.skipped(),
        corrupt: validation.bad.clone(),
        missing,
    }
}

/// `1. e4 c5 2. Nf3` from SAN moves.
fn numbered(sans: &[String]) -> String {
    let mut out = String::new();
    for (i, san) in sans.iter().enumerate() {
        if !out.is_empty() {
            out.push(' ');
        }
        if i % 2 == 0 {
            out.push_str(&format!("{}. ", i / 2 + 1));
        }
        out.push_str(san);
    }
    out
}

impl ValidationReport {
    /// Pretty JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("the report serializes");
        bytes.push(b'\n');
        bytes
    }

    /// A readable table.
    pub fn to_table(&self) -> Vec<u8> {
        let c = &self.counts;
        let mut out = format!(
            "Validation against Opening tags: {} games read, {} tagged, {} known, {} renamed, {} missing, {} corrupt\n",
            c.games_read,
            c.games_tagged,
            c.games_known,
            c.games_renamed,
            c.games_missing,
            self.corrupt_games
        );
        out.push_str(&format!(
            "Named variations the tree lacks, reached by at least {} games",
            self.min_games
        ));
        // The pairs under the threshold are counted, never listed: say so, and how to see them.
        match self.pairs_below_threshold {
            0 => out.push_str(":\n\n"),
            n => out.push_str(&format!(
                " ({n} (position, name) {} reached by fewer games {} counted, not listed: lower [validate] min_games to list {}):\n\n",
                if n == 1 { "pair" } else { "pairs" },
                if n == 1 { "is" } else { "are" },
                if n == 1 { "it" } else { "them" }
            )),
        }
        out.push_str(&format!("{:>6}  {:<4} {:<50} {}\n", "games", "eco", "name", "moves"));
        for m in &self.missing {
            out.push_str(&format!("{:>6}  {:<4} {:<50} {}\n", m.games, m.eco, m.name, m.moves));
        }
        if self.corrupt_games > 0 {
            out.push('\n');
            out.push_str(&self.corrupt.render_table());
        }
        out.into_bytes()
    }

    /// The stub nodes of the reported variations (when stubs are on): one per position,
    /// the variation with the most games naming it, hung below the tree position the
    /// games left the tree from.
    pub fn stub_nodes(&self) -> Vec<StubNode> {
        let mut seen = std::collections::HashSet::new();
        let mut stubs = Vec::new();
        for m in self.missing.iter().filter(|m| m.stub) {
            // The moves were written from legal moves above; a line that does not replay
            // (a report edited by hand and read back) is no stub.
            let Ok(moves) = crate::eco::line::play_san(&crate::eco::line::move_tokens(&m.moves))
            else {
                continue;
            };
            let Some((last, before)) = moves.split_last() else { continue };
            let mut parent = Chess::default();
            for mv in before {
                parent.play_unchecked(*mv);
            }
            let mut pos = parent.clone();
            pos.play_unchecked(*last);
            let epd = crate::position::epd(&pos);
            if !seen.insert(epd.clone()) {
                continue;
            }
            stubs.push(StubNode {
                structure: crate::structure::classify(&pos).structure.name.to_string(),
                structure_confidence: crate::structure::classify(&pos).confidence,
                epd,
                fen: crate::position::fen(&pos),
                parent_epd: crate::position::epd(&parent),
                san: crate::position::san(&parent, last),
                uci: crate::position::uci(last),
                ply: moves.len(),
                moves: m.moves.clone(),
                eco: m.eco.clone(),
                name: m.name.clone(),
                outcomes: m.outcomes,
            });
        }
        stubs
    }

    /// The reported variations as Lichess-format TSV rows, names marked `(stub)`.
    pub fn to_stub_tsv(&self) -> Vec<u8> {
        let mut out = String::from("eco\tname\tpgn\n");
        for m in &self.missing {
            out.push_str(&format!(
                "{}\t{} (stub)\t{}\n",
                m.eco,
                m.name.replace('\t', " "),
                m.moves
            ));
        }
        out.into_bytes()
    }
}
