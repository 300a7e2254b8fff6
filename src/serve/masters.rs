//! `GET /masters`: a position in the Lichess opening explorer's masters JSON shape, so
//! tools written for `explorer.lichess.ovh/masters` can point at an okb build.
//!
//! Differences from Lichess, also stated in the OpenAPI document: `averageRating` is the
//! mover's average rating (okb keeps no opponent ratings per move), `topGames` is always
//! empty (the store keeps no game references), and a legal position outside the
//! knowledge base answers zero counts, as Lichess does for positions nobody played.

use serde::Serialize;

use crate::graph::{Graph, Node};

/// Moves listed when `moves` is not given (Lichess's default).
pub const DEFAULT_MOVES: usize = 12;
/// The most moves an answer lists (the OpenAPI document's maximum).
pub const MAX_MOVES: usize = 1000;

/// An opening as the explorer names it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExplorerOpening {
    /// ECO code.
    pub eco: String,
    /// Full name.
    pub name: String,
}

/// One move of the answer.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExplorerMove {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// The mover's average rating (0 when unknown, as Lichess writes it).
    pub average_rating: u32,
    /// White wins after the move.
    pub white: u64,
    /// Draws after the move.
    pub draws: u64,
    /// Black wins after the move.
    pub black: u64,
    /// Always `null`: no game references are kept.
    pub game: Option<()>,
    /// The opening the move leads to, if the resulting position is named (own or inherited).
    pub opening: Option<ExplorerOpening>,
}

/// The whole answer.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExplorerAnswer {
    /// White wins from the position.
    pub white: u64,
    /// Draws from the position.
    pub draws: u64,
    /// Black wins from the position.
    pub black: u64,
    /// Moves played from the position, most played first.
    pub moves: Vec<ExplorerMove>,
    /// Always empty: no game references are kept.
    pub top_games: Vec<()>,
    /// The position's opening (own or inherited).
    pub opening: Option<ExplorerOpening>,
}

fn opening(node: &Node) -> Option<ExplorerOpening> {
    Some(ExplorerOpening { eco: node.eco.clone()?, name: node.full_name()? })
}

/// The answer for node `index` (`None`: a position outside the knowledge base), listing
/// at most `moves` moves that games played.
pub fn answer(graph: &Graph, index: Option<u32>, moves: usize) -> ExplorerAnswer {
    let Some(index) = index else {
        return ExplorerAnswer { white: 0, draws: 0, black: 0, moves: Vec::new(), top_games: Vec::new(), opening: None };
    };
    let node = graph.node(index);
    ExplorerAnswer {
        white: node.games.white,
        draws: node.games.draws,
        black: node.games.black,
        moves: node
            .children
            .iter()
            .filter(|e| e.games.games() > 0)
            .take(moves)
            .map(|e| ExplorerMove {
                uci: e.uci.clone(),
                san: e.san.clone(),
                average_rating: e.avg_rating.map_or(0, |r| r.round() as u32),
                white: e.games.white,
                draws: e.games.draws,
                black: e.games.black,
                game: None,
                opening: opening(graph.node(e.child)),
            })
            .collect(),
        top_games: Vec::new(),
        opening: opening(node),
    }
}
