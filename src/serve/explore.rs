//! The explorer's endpoints (`/masters`, `/lichess`, `/masters/pgn/{id}`, `/player`), in
//! the shape of Lichess's opening explorer: the position asked for, named as Lichess
//! names it, and where its answer comes from ([`Explore`]: the graph in memory, or the
//! node read from a large store's file).

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path as UrlPath, Query};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Deserialize;

use super::catalog::{Catalog, Walked};
use super::error::{Answer, ApiError};
use super::negotiate::Negotiated;
use super::query::{
    at_most, flag, has_uci_line_form, modes, month, parse_url_fen, range, speeds, year,
};
use super::swap::{Current, Shared};
use super::{masters, openapi, player};
use crate::graph::Graph;

/// The query of `GET /masters`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MastersParams {
    fen: Option<String>,
    play: Option<String>,
    moves: Option<usize>,
    since: Option<String>,
    until: Option<String>,
    top_games: Option<usize>,
}

/// The query of `GET /lichess`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LichessParams {
    variant: Option<String>,
    fen: Option<String>,
    play: Option<String>,
    moves: Option<usize>,
    speeds: Option<String>,
    ratings: Option<String>,
    since: Option<String>,
    until: Option<String>,
    top_games: Option<usize>,
    recent_games: Option<usize>,
    /// A yes answers the games per month (`history`); see [`flag`] for the spellings.
    history: Option<String>,
}

/// A position an explorer request asks for, with its name.
struct Asked {
    /// The position.
    pos: shakmaty::Chess,
    /// Its opening by Lichess's rule ([`masters::ExplorerAnswer::opening`]).
    opening: Option<masters::ExplorerOpening>,
}

/// The position after `play` (comma-separated UCI moves) from `fen` (default: the start),
/// named as Lichess's explorer names it: by the last position on the way, `fen`'s
/// included, that the Lichess taxonomy names.
fn explorer_position(
    lichess_name: impl Fn(&shakmaty::Chess) -> Result<Option<masters::ExplorerOpening>, ApiError>,
    fen: Option<&str>,
    play: Option<&str>,
) -> Result<Asked, ApiError> {
    let mut pos = match fen {
        Some(fen) => parse_url_fen(fen)?,
        None => shakmaty::Chess::default(),
    };
    let mut opening = lichess_name(&pos)?;
    if let Some(play) = play
        && !has_uci_line_form(play)
        && !openapi::PATTERNS.uci_line.is_match(play)
    {
        let shown = crate::diagnostics::shorten(play, 100);
        return Err(ApiError::bad_request(format!(
            "play {shown:?} is not comma-separated UCI moves (e2e4,c7c5)"
        )));
    }
    for (i, text) in play.iter().flat_map(|p| p.split(',')).filter(|t| !t.is_empty()).enumerate() {
        // Well-formed but illegal: the line leads to no position (404, as for a FEN).
        let m = text
            .parse::<shakmaty::uci::UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "no such position: play: move {} ({text}) is not a legal UCI move here",
                    i + 1
                ))
            })?;
        shakmaty::Position::play_unchecked(&mut pos, m);
        opening = lichess_name(&pos)?.or(opening);
    }
    Ok(Asked { pos, opening })
}

/// Where an explorer request's answer comes from: the graph in memory, or, on a store
/// too large for it, the node, its moves and its part of the explorer index read from
/// the store file (`indexed`: the store has an explorer index).
enum Explore<'a> {
    Memory(&'a Walked),
    Disk { catalog: &'a Catalog, indexed: bool },
}

impl Catalog {
    /// Where this store's explorer answers come from.
    fn explore(&self) -> Result<Explore<'_>, ApiError> {
        if let Some(w) = self.in_memory()? {
            return Ok(Explore::Memory(w));
        }
        let indexed =
            tokio::task::block_in_place(|| self.disk.has_explorer()).map_err(ApiError::store)?;
        Ok(Explore::Disk { catalog: self, indexed })
    }
}

impl Explore<'_> {
    /// The Lichess taxonomy's own name of `pos` ([`Walked::lichess_name`]).
    fn lichess_name(
        &self,
        pos: &shakmaty::Chess,
    ) -> Result<Option<masters::ExplorerOpening>, ApiError> {
        match self {
            Explore::Memory(w) => Ok(w.lichess_name(pos)),
            Explore::Disk { catalog: c, .. } => {
                let node = tokio::task::block_in_place(|| c.disk.node(pos));
                Ok(node.map_err(ApiError::store)?.as_ref().and_then(masters::move_opening))
            }
        }
    }
}

/// A filter on a store without the explorer index is refused.
fn explorer_answer(
    c: &Catalog,
    e: &Explore<'_>,
    how: &Negotiated,
    asked: Asked,
    q: &masters::Query,
) -> Answer {
    let indexed = match e {
        Explore::Memory(w) => w.explorer.is_some(),
        Explore::Disk { indexed, .. } => *indexed,
    };
    if (!q.filter.is_all() || q.history) && !indexed {
        return Err(ApiError::bad_request(
            "this store has no explorer index, so since, until, speeds, ratings and history cannot be applied: add [explorer] to pipeline.toml and run okb make",
        ));
    }
    let mut answer = match e {
        Explore::Memory(w) => {
            let index = w.find(&asked.pos);
            let explorer = w.explorer.as_ref().zip(index).and_then(|(x, i)| x.at(i));
            masters::answer(&w.graph, explorer, index, asked.opening, q)
        }
        Explore::Disk { catalog: c, indexed } => {
            let node = tokio::task::block_in_place(|| c.disk.node(&asked.pos));
            // The node and its moves: the answer reads their counts and names.
            let piece = match node.map_err(ApiError::store)? {
                Some(node) => c.piece(&node.node_id, 1, 0)?,
                None => None,
            };
            match piece {
                Some(graph) => {
                    let root = graph.node(graph.root);
                    let read = match indexed {
                        true => tokio::task::block_in_place(|| c.disk.explorer_node(root)),
                        false => Ok(None),
                    };
                    let read = read.map_err(ApiError::store)?;
                    let explorer = read.as_ref().map(masters::ReadNode::view);
                    masters::answer(&graph, explorer, Some(graph.root), asked.opening, q)
                }
                None => masters::answer(&Graph::default(), None, None, asked.opening, q),
            }
        }
    };
    // Zero counts, either outside the tree or on a named position past the counted plies.
    // A store read from disk knows its deepest counted ply from its named positions' scan
    // (such answers wait for it; the others do not).
    if answer.white + answer.draws + answer.black == 0 {
        let deepest = match e {
            Explore::Memory(w) => w.named.deepest,
            Explore::Disk { catalog: c, .. } => c.named()?.deepest,
        };
        answer.okb_beyond_depth = masters::BeyondDepth::of(&asked.pos, deepest);
    }
    Ok(c.answer_json(how, &answer))
}

/// What `/masters` and `/lichess` ask alike, as the query writes it.
struct Common<'q> {
    fen: Option<&'q str>,
    play: Option<&'q str>,
    moves: Option<usize>,
    top_games: Option<usize>,
    /// Asked of `/lichess` only.
    recent_games: Option<usize>,
    since: Option<&'q str>,
    until: Option<&'q str>,
}

/// How an endpoint reads [`Common`]: its games limits and the unit of its period.
struct Reading<T> {
    /// The most top games, also the default.
    top_games: usize,
    /// The default and the most recent games; `None`: the endpoint answers none.
    recent_games: Option<(usize, usize)>,
    /// Reads `since` or `until` ([`year`] at `/masters`, [`month`] at `/lichess`).
    period: fn(&str, &str) -> Result<T, ApiError>,
    /// The period when one end is not given.
    widest: (T, T),
}

/// [`Common`] read: where the answer comes from, the position, and the query's bounds.
struct Read<'c, T> {
    explore: Explore<'c>,
    asked: Asked,
    moves: usize,
    top_games: usize,
    recent_games: Option<usize>,
    period: Option<(T, T)>,
}

/// Reads what `/masters` and `/lichess` ask alike, in the order both endpoints have
/// always read it (position, moves, topGames, recentGames, since, until): a query with
/// several bad parameters is still told of the first.
fn read_common<'c, T: Copy>(
    c: &'c Catalog,
    q: Common<'_>,
    how: Reading<T>,
) -> Result<Read<'c, T>, ApiError> {
    let explore = c.explore()?;
    let asked = explorer_position(|p| explore.lichess_name(p), q.fen, q.play)?;
    let moves = at_most("moves", q.moves, masters::DEFAULT_MOVES, masters::MAX_MOVES)?;
    let top_games = at_most("topGames", q.top_games, how.top_games, how.top_games)?;
    let recent_games = how
        .recent_games
        .map(|(default, max)| at_most("recentGames", q.recent_games, default, max))
        .transpose()?;
    let since = q.since.map(|t| (how.period)("since", t)).transpose()?;
    let until = q.until.map(|t| (how.period)("until", t)).transpose()?;
    let period = range(since, until, how.widest.0, how.widest.1);
    Ok(Read { explore, asked, moves, top_games, recent_games, period })
}

impl<T> Read<'_, T> {
    /// The answer under `filter`, with the games per month when `history`.
    fn answer(
        self,
        c: &Catalog,
        how: &Negotiated,
        filter: masters::Filter,
        history: bool,
    ) -> Answer {
        let Read { explore, asked, moves, top_games, recent_games, .. } = self;
        let q = masters::Query { filter, moves, top_games, recent_games, history };
        explorer_answer(c, &explore, how, asked, &q)
    }
}

pub(super) async fn masters(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<MastersParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    let common = Common {
        fen: params.fen.as_deref(),
        play: params.play.as_deref(),
        moves: params.moves,
        top_games: params.top_games,
        recent_games: None,
        since: params.since.as_deref(),
        until: params.until.as_deref(),
    };
    let reading = Reading {
        top_games: masters::MASTERS_TOP_GAMES,
        recent_games: None,
        period: year,
        widest: (0, u16::MAX),
    };
    let read = read_common(&c, common, reading)?;
    let filter = masters::Filter { years: read.period, ..Default::default() };
    read.answer(&c, &how, filter, false)
}

pub(super) async fn lichess(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<LichessParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    if let Some(v) = params.variant.as_deref().filter(|v| *v != "standard") {
        return Err(ApiError::bad_request(format!(
            "variant {v:?} is not available: okb's knowledge base is standard chess"
        )));
    }
    let common = Common {
        fen: params.fen.as_deref(),
        play: params.play.as_deref(),
        moves: params.moves,
        top_games: params.top_games,
        recent_games: params.recent_games,
        since: params.since.as_deref(),
        until: params.until.as_deref(),
    };
    let reading = Reading {
        top_games: masters::LICHESS_TOP_GAMES,
        recent_games: Some(masters::LICHESS_RECENT_GAMES),
        period: month,
        widest: (0, u32::MAX),
    };
    let read = read_common(&c, common, reading)?;
    let speeds = speeds(params.speeds.as_deref())?;
    let ratings = ratings(params.ratings.as_deref())?;
    let filter = masters::Filter { months: read.period, speeds, ratings, ..Default::default() };
    let history =
        params.history.as_deref().map(|t| flag("history", t)).transpose()?.unwrap_or(false);
    read.answer(&c, &how, filter, history)
}

/// `ratings` (comma-separated rating groups) as a mask of `1 << code`; `None`: not given.
fn ratings(text: Option<&str>) -> Result<Option<u16>, ApiError> {
    let mut ratings = None;
    for text in text.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let groups = crate::explorer_index::RATING_GROUPS;
        let at =
            text.parse::<u32>().ok().and_then(|r| groups.iter().position(|&g| g == r)).ok_or_else(
                || {
                    let list: Vec<String> = groups.iter().map(u32::to_string).collect();
                    ApiError::bad_request(format!(
                        "ratings: {text:?} is not a rating group (one of {})",
                        list.join(", ")
                    ))
                },
            )?;
        ratings = Some(ratings.unwrap_or(0u16) | 1 << (at + 1));
    }
    Ok(ratings)
}

pub(super) async fn masters_pgn(
    Current(c): Shared,
    id: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(id) = id?;
    let text = match c.in_memory()? {
        Some(w) => w.explorer.as_ref().map(|e| e.pgn(&id)).transpose().map(Option::flatten),
        None => tokio::task::block_in_place(|| c.disk.explorer_pgn(&id)),
    };
    let text = text.map_err(|e| ApiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: e.to_string(),
    })?;
    let text = text.ok_or_else(|| ApiError::not_found(format!("no game has id {id:?}")))?;
    Ok(([(header::CONTENT_TYPE, "application/x-chess-pgn")], format!("{text}\n")).into_response())
}

/// The query of `GET /player`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PlayerParams {
    player: Option<String>,
    color: Option<String>,
    variant: Option<String>,
    fen: Option<String>,
    play: Option<String>,
    modes: Option<String>,
    speeds: Option<String>,
    since: Option<String>,
    until: Option<String>,
    moves: Option<usize>,
    recent_games: Option<usize>,
}

pub(super) async fn player_games(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<PlayerParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    let player = params.player.filter(|p| !p.trim().is_empty()).ok_or_else(|| {
        ApiError::bad_request("player is required: a listed player of a player collection")
    })?;
    let side = match params.color.as_deref() {
        Some("white") => crate::repertoire::Side::White,
        Some("black") => crate::repertoire::Side::Black,
        other => {
            return Err(ApiError::bad_request(format!(
                "color must be white or black, not {}",
                other.map_or("missing".into(), |o| format!("{o:?}"))
            )));
        }
    };
    if let Some(v) = params.variant.as_deref().filter(|v| *v != "standard") {
        return Err(ApiError::bad_request(format!(
            "variant {v:?} is not available: okb's player collections are standard chess"
        )));
    }
    let named = c.named()?;
    let asked = explorer_position(
        |p| Ok(named.lichess_name(p)),
        params.fen.as_deref(),
        params.play.as_deref(),
    )?;
    let moves = at_most("moves", params.moves, masters::MAX_MOVES, masters::MAX_MOVES)?;
    let recent_games =
        at_most("recentGames", params.recent_games, player::RECENT_GAMES, player::RECENT_GAMES)?;
    let since = params.since.as_deref().map(|t| month("since", t)).transpose()?;
    let until = params.until.as_deref().map(|t| month("until", t)).transpose()?;
    let query = player::PlayerQuery {
        player,
        side,
        modes: modes(params.modes.as_deref())?,
        speeds: speeds(params.speeds.as_deref())?,
        months: range(since, until, 0, u32::MAX),
        moves,
        recent_games,
    };
    let answer =
        named.players.answer(&named.graph, |p| named.find(p), &asked.pos, asked.opening, &query);
    let mut line = serde_json::to_vec(&answer).expect("answers serialize");
    line.push(b'\n');
    Ok(c.answer_as(&how, Bytes::from(line), "application/x-ndjson"))
}
