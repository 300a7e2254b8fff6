//! Repertoires: a player's prepared lines (a PGN of chapters with variations), merged by
//! position identity, and what the knowledge base says about them: the gaps an opponent
//! can walk into, how much of opponents' play the lines cover, the moves the engine
//! dislikes, and how a player's own games went against them.
//!
//! `parse` reads the PGN into a [`Repertoire`]; `flow` follows opponents' move shares
//! through it (coverage, probability of reaching each position, gaps); `flags` compares
//! the prepared moves with the engine; `players` says which games of a collection are a player's, `games`
//! reads them and `judge` judges each against the repertoire; `report` renders JSON
//! and text.

pub mod collection;
pub mod export;
pub mod flags;
pub mod flow;
pub mod games;
pub mod judge;
pub mod parse;
pub mod players;
pub mod prep;
pub mod report;

use serde::{Deserialize, Serialize};

use crate::position::{KeyMap, MoveKey, PositionKey};

/// Which side a repertoire is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The repertoire plays White's moves.
    White,
    /// The repertoire plays Black's moves.
    Black,
}

impl Side {
    /// Whether this side moves when White is (`white_to_move`) or is not to move.
    pub fn to_move(self, white_to_move: bool) -> bool {
        (self == Side::White) == white_to_move
    }

    /// A centipawn value from White's side, seen from this side.
    pub fn cp(self, white_cp: i32) -> i32 {
        if self == Side::White { white_cp } else { -white_cp }
    }

    /// The word used in tags and reports.
    pub fn word(self) -> &'static str {
        if self == Side::White { "white" } else { "black" }
    }
}

/// `[repertoires.<name>]` in pipeline.toml.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepertoireSpec {
    /// The PGN file, relative to pipeline.toml.
    pub path: Option<String>,
    /// Where to download it from.
    pub url: Option<String>,
    /// BLAKE3 of the file's bytes (the pin, as for every source).
    pub blake3: Option<String>,
    /// The side the repertoire plays.
    pub color: Side,
    /// Opponent replies played in at least this share of the knowledge base's games at
    /// a position are gaps when the repertoire does not answer them.
    #[serde(default = "default_min_share")]
    pub min_share: f64,
    /// Prepared moves evaluated below this (centipawns, from the repertoire's side) are flagged.
    #[serde(default = "default_eval_floor")]
    pub eval_floor: i32,
    /// Prepared moves worse than the engine's best by more than this (centipawns) are flagged.
    #[serde(default = "default_max_loss")]
    pub max_loss: i32,
    /// The plies at which coverage is reported (default: 4, 8, 12, … to the repertoire's depth).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plies: Vec<u16>,
    /// Game sources whose players' games are judged against the repertoire (sources
    /// with `players`); the player's side is `color`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub games: Vec<String>,
}

fn default_min_share() -> f64 {
    0.05
}

fn default_eval_floor() -> i32 {
    -100
}

fn default_max_loss() -> i32 {
    50
}

/// A prepared move: from its node to `child`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepMove {
    /// The move in SAN.
    pub san: String,
    /// The move in UCI.
    pub uci: String,
    /// The move, packed.
    pub key: MoveKey,
    /// Index of the position it leads to.
    pub child: u32,
    /// 1-based line of the PGN where it was first written.
    pub source_line: u32,
}

/// One position of a repertoire (transpositions merged: one node per position identity).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepNode {
    /// Identity key.
    pub key: PositionKey,
    /// Identity as EPD (the knowledge base's key).
    pub epd: String,
    /// Whether White is to move.
    pub white_to_move: bool,
    /// SAN moves of the first line in the file that reaches it, from its chapter's start.
    pub line: Vec<String>,
    /// Ply of the chapter's start position (0 from the standard start).
    pub start_ply: u16,
    /// The prepared moves and the opponent replies the file lists from here.
    pub moves: Vec<RepMove>,
}

impl RepNode {
    /// Ply of the position along its first line.
    pub fn ply(&self) -> u16 {
        self.start_ply + self.line.len() as u16
    }
}

/// A parsed repertoire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repertoire {
    /// Its name in pipeline.toml.
    pub name: String,
    /// The side it plays.
    pub color: Side,
    /// Positions; 0 is the standard start position.
    pub nodes: Vec<RepNode>,
    /// Chapters (games) read.
    pub chapters: u32,
}

impl Repertoire {
    /// Whether the repertoire's side moves at `node`.
    pub fn mine(&self, node: &RepNode) -> bool {
        self.color.to_move(node.white_to_move)
    }

    /// Position key → node index.
    pub fn index(&self) -> KeyMap<PositionKey, u32> {
        self.nodes.iter().enumerate().map(|(i, n)| (n.key, i as u32)).collect()
    }

    /// Number of prepared moves (the repertoire side's own).
    pub fn own_moves(&self) -> usize {
        self.nodes.iter().filter(|n| self.mine(n)).map(|n| n.moves.len()).sum()
    }

    /// Deepest ply of any position.
    pub fn depth(&self) -> u16 {
        self.nodes.iter().map(RepNode::ply).max().unwrap_or(0)
    }
}

/// Numbered movetext of SAN moves played from ply `start_ply`: `1. e4 c5 2. Nf3`, or
/// `3... Nc6 4. d4` from a chapter starting with Black to move.
pub fn numbered(start_ply: u16, sans: &[String]) -> String {
    let mut out = String::new();
    for (i, san) in sans.iter().enumerate() {
        let ply = usize::from(start_ply) + i;
        if !out.is_empty() {
            out.push(' ');
        }
        if ply % 2 == 0 {
            out.push_str(&format!("{}. ", ply / 2 + 1));
        } else if i == 0 {
            out.push_str(&format!("{}... ", ply / 2 + 1));
        }
        out.push_str(san);
    }
    out
}
