//! Repertoires: a player's prepared lines (a PGN of chapters with variations), merged by
//! position identity, and what the knowledge base says about them: the gaps an opponent
//! can walk into, how much of opponents' play the lines cover, the moves the engine
//! dislikes, and how a player's own games went against them.
//!
//! `parse` reads the PGN into a [`Repertoire`]; `scope` says which opponent moves it
//! covers; `flow` follows opponents' move shares
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
pub mod scope;

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
    /// Unanswered opponent replies met with at least this probability along the
    /// repertoire (the opponents' shares along the way times the reply's) are gaps.
    #[serde(default = "default_min_probability")]
    pub min_probability: f64,
    /// A second cut, off by default: gaps must also be played in at least this share of
    /// the games at their position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_share: Option<f64>,
    /// The opponent moves the repertoire covers, as lines from the start (`["1. e4"]`, `["1.
    /// d4 Nf6 2. c4"]`); other opponent moves along them are out of scope, not gaps.
    /// Unset: a Black repertoire covers the first moves it answers, a White one
    /// everything; `[]`: everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Vec<String>>,
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

fn default_min_probability() -> f64 {
    0.005
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
    /// The last move of the first line in the file that reaches it, in
    /// [`Repertoire::played`] (`None`: a chapter's start). [`Repertoire::line`] spells the
    /// line out; a node holds one index, so deep files read in linear time and space.
    pub line: Option<u32>,
    /// Ply of the chapter's start position (0 from the standard start).
    pub start_ply: u16,
    /// Plies from the chapter's start along its first line.
    pub depth: u16,
    /// The prepared moves and the opponent replies the file lists from here.
    pub moves: Vec<RepMove>,
}

impl RepNode {
    /// Ply of the position along its first line.
    pub fn ply(&self) -> u16 {
        self.start_ply.saturating_add(self.depth)
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
    /// What each chapter's variations say about the side it is for.
    #[serde(default)]
    pub chapter_facts: Vec<Chapter>,
    /// Every move the file plays, as (the move before it in its line, its SAN): the lines
    /// of the file as one tree, each move once.
    #[serde(default)]
    pub played: Vec<(Option<u32>, String)>,
}

/// One chapter of a repertoire file, as far as its side goes. A repertoire answers each
/// opponent move with its own: its variations are mostly the opponent's alternatives.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chapter {
    /// 1-based line of the file where its movetext starts.
    pub line: u32,
    /// Its `Event` tag, if any.
    pub event: Option<String>,
    /// Variations that replace a White move.
    pub white_alternatives: u32,
    /// Variations that replace a Black move.
    pub black_alternatives: u32,
}

impl Chapter {
    /// The side its variations say it is for, when they say it clearly: the other side's
    /// alternatives at least two, and at least twice its own.
    pub fn side(&self) -> Option<Side> {
        let (w, b) = (self.white_alternatives, self.black_alternatives);
        if w >= 2 && w >= 2 * b {
            Some(Side::Black)
        } else if b >= 2 && b >= 2 * w {
            Some(Side::White)
        } else {
            None
        }
    }
}

impl Repertoire {
    /// Whether the repertoire's side moves at `node`.
    pub fn mine(&self, node: &RepNode) -> bool {
        self.color.to_move(node.white_to_move)
    }

    /// SAN moves of the first line in the file that reaches node `i`, from its chapter's
    /// start.
    pub fn line(&self, i: u32) -> Vec<String> {
        spell(&self.played, self.nodes[i as usize].line)
    }

    /// Position key → node index.
    pub fn index(&self) -> KeyMap<PositionKey, u32> {
        self.nodes.iter().enumerate().map(|(i, n)| (n.key, i as u32)).collect()
    }

    /// Number of prepared moves (the repertoire side's own).
    pub fn own_moves(&self) -> usize {
        self.nodes.iter().filter(|n| self.mine(n)).map(|n| n.moves.len()).sum()
    }

    /// What looks wrong with the file `shown` as this repertoire: no moves at all, or
    /// chapters whose variations say they are for the other colour (a White repertoire
    /// declared `color = "black"`, or chapters of both colours in one file).
    pub fn doubts(&self, shown: &str) -> Vec<crate::diagnostics::Warning> {
        let warning =
            |kind: &str, line: Option<u32>, message: String| crate::diagnostics::Warning {
                kind: kind.into(),
                file: shown.into(),
                line,
                message,
                text: None,
            };
        if self.nodes.iter().all(|n| n.moves.is_empty()) {
            return vec![warning(
                "empty-repertoire",
                None,
                format!("repertoire {} has no moves: its reports would say nothing", self.name),
            )];
        }
        let other = if self.color == Side::White { Side::Black } else { Side::White };
        let sided: Vec<&Chapter> =
            self.chapter_facts.iter().filter(|c| c.side().is_some()).collect();
        let wrong: Vec<&Chapter> =
            sided.iter().copied().filter(|c| c.side() == Some(other)).collect();
        let alternatives = |c: &Chapter| {
            format!(
                "{} variations of White's moves, {} of Black's",
                c.white_alternatives, c.black_alternatives
            )
        };
        if !wrong.is_empty() && wrong.len() == sided.len() {
            let (w, b) = wrong
                .iter()
                .fold((0, 0), |(w, b), c| (w + c.white_alternatives, b + c.black_alternatives));
            let message = format!(
                "repertoire {} is declared color = \"{}\", but its variations are mostly the {} side's alternatives ({w} variations of White's moves, {b} of Black's): a {} repertoire?",
                self.name,
                self.color.word(),
                self.color.word(),
                other.word()
            );
            return vec![warning("repertoire-color", None, message)];
        }
        let chapter = |c: &Chapter| {
            c.event
                .as_deref()
                .map(|e| format!("chapter {e:?}"))
                .unwrap_or_else(|| "a chapter".into())
        };
        wrong
            .iter()
            .map(|c| warning("repertoire-color", Some(c.line), format!("{} looks like a {} repertoire ({}) in repertoire {}, declared {}: a file holds one colour", chapter(c), other.word(), alternatives(c), self.name, self.color.word())))
            .collect()
    }

    /// Deepest ply of any position.
    pub fn depth(&self) -> u16 {
        self.nodes.iter().map(RepNode::ply).max().unwrap_or(0)
    }
}

/// The SAN moves of the line ending with move `last` of `played` (see
/// [`Repertoire::played`]), first first.
pub fn spell(played: &[(Option<u32>, String)], last: Option<u32>) -> Vec<String> {
    let mut sans = Vec::new();
    let mut at = last;
    while let Some(i) = at {
        let (before, san) = &played[i as usize];
        sans.push(san.clone());
        at = *before;
    }
    sans.reverse();
    sans
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
