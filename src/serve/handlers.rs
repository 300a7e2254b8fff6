//! The handlers of the endpoints over one position or one opening: nodes by FEN or by
//! move line, search, the ECO and opening trees (from memory, or from the piece of a
//! large store read from disk), structures, repertoire reports, the OpenAPI document and
//! `GET /`. The explorer's endpoints are in [`super::explore`].

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path as UrlPath, Query};
use axum::http::header;
use serde::Deserialize;

use super::catalog::Catalog;
use super::error::{Answer, ApiError};
use super::negotiate::Negotiated;
use super::query::{is_code, parse_url_fen};
use super::swap::{Current, Shared};
use super::{MAX_LINE, SEARCH_LIMITS, eco_tree, openapi, page};
use crate::export::openingiq;
use crate::graph::Graph;

/// The OpenAPI document, with examples from the build ([`super::named::Named`]).
pub(super) async fn openapi_document(how: Negotiated, Current(c): Shared) -> Answer {
    let bytes = c.named()?.openapi().clone();
    Ok(c.answer(&how, bytes))
}

pub(super) fn node_answer(
    catalog: &Catalog,
    how: &Negotiated,
    pos: &shakmaty::Chess,
    asked: &str,
) -> Answer {
    match catalog.disk.node_json(pos).map_err(ApiError::store)? {
        Some(bytes) => Ok(catalog.answer(how, bytes)),
        None => {
            Err(ApiError::not_found(format!("position {asked:?} is not in the knowledge base")))
        }
    }
}

pub(super) async fn node_by_fen(
    how: Negotiated,
    Current(c): Shared,
    fen: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(fen) = fen?;
    let pos = parse_url_fen(&fen)?;
    node_answer(&c, &how, &pos, &fen)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PgnBody {
    moves: String,
}

pub(super) async fn node_by_pgn(
    how: Negotiated,
    Current(c): Shared,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body?;
    let request: PgnBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(format!("body must be {{\"moves\": \"1. e4 e5 …\"}}: {e}"))
    })?;
    if request.moves.chars().count() > MAX_LINE {
        return Err(ApiError::bad_request(format!("moves must be at most {MAX_LINE} characters")));
    }
    if !openapi::PATTERNS.san_line.is_match(&request.moves) {
        let shown = crate::diagnostics::shorten(&request.moves, 100);
        return Err(ApiError::bad_request(format!(
            "moves {shown:?} is not a line of SAN moves (1. e4 e5 2. Nf3) as the SanLine pattern of /openapi.json describes"
        )));
    }
    // Well-formed moves that cannot be played lead to no position: 404, like a position
    // outside the knowledge base.
    let pos = crate::eco::line::position_after(&request.moves)
        .map_err(|e| ApiError::not_found(format!("no such position: {e}")))?;
    node_answer(&c, &how, &pos, &request.moves)
}

/// The query of `GET /opening/search`.
#[derive(Deserialize)]
pub(super) struct SearchParams {
    q: Option<String>,
    limit: Option<usize>,
}

pub(super) async fn opening_search(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    let q = params.q.unwrap_or_default();
    if q.trim().is_empty() || q.chars().count() > crate::search::MAX_QUERY {
        return Err(ApiError::bad_request(format!(
            "q must be 1 to {} characters, not only spaces",
            crate::search::MAX_QUERY
        )));
    }
    let limit = params.limit.unwrap_or(SEARCH_LIMITS.0);
    if limit == 0 || limit > SEARCH_LIMITS.1 {
        return Err(ApiError::bad_request(format!("limit must be 1 to {}", SEARCH_LIMITS.1)));
    }
    let named = c.named()?;
    let results = named.search(&q, limit);
    Ok(c.answer_json(&how, &crate::search::SearchAnswer { query: q, results }))
}

/// The query of `GET /opening/eco/{code}`.
#[derive(Deserialize)]
pub(super) struct EcoParams {
    depth: Option<u32>,
    min_games: Option<u64>,
}

pub(super) async fn structure_openings(
    how: Negotiated,
    Current(c): Shared,
    name: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(name) = name?;
    let named = c.named()?;
    match named.structure(&name) {
        Some(bytes) => Ok(c.answer(&how, bytes)),
        None => Err(ApiError::not_found(format!(
            "no pawn structure is named {name:?} (known: {})",
            named.structures.names().join(", ")
        ))),
    }
}

pub(super) async fn opening_eco(
    how: Negotiated,
    Current(c): Shared,
    code: Result<UrlPath<String>, PathRejection>,
    params: Result<Query<EcoParams>, QueryRejection>,
) -> Answer {
    let (UrlPath(code), Query(params)) = (code?, params?);
    if !is_code(&code) {
        return Err(ApiError::bad_request(format!(
            "{code:?} is not an ECO code (A00–E99) or SCID code (B03a)"
        )));
    }
    let depth = params.depth.unwrap_or(eco_tree::DEFAULT_DEPTH);
    if depth > eco_tree::MAX_DEPTH {
        return Err(ApiError::bad_request(format!(
            "depth must be at most {}",
            eco_tree::MAX_DEPTH
        )));
    }
    let min_games = params.min_games.unwrap_or(0);
    if min_games > eco_tree::MAX_MIN_GAMES {
        return Err(ApiError::bad_request(format!(
            "min_games must be at most {}",
            eco_tree::MAX_MIN_GAMES
        )));
    }
    let tree_of = |graph: &Graph, root: u32| {
        let tree = eco_tree::tree(graph, root, depth, min_games);
        c.answer_json(&how, &eco_tree::EcoTreeAnswer { code: code.clone(), depth, min_games, tree })
    };
    let no_root = || ApiError::not_found(format!("no opening has code {code}"));
    if let Some(w) = c.in_memory()? {
        let root = eco_tree::root_of(&w.graph, &code).ok_or_else(no_root)?;
        return Ok(tree_of(&w.graph, root));
    }
    let root = tokio::task::block_in_place(|| c.disk.eco_root(&code))
        .map_err(ApiError::store)?
        .ok_or_else(no_root)?;
    let graph = c.piece(&root, depth, min_games)?.ok_or_else(no_root)?;
    Ok(tree_of(&graph, graph.root))
}

/// The query of `GET /opening/{id}/tree`.
#[derive(Deserialize)]
pub(super) struct TreeParams {
    max_depth: Option<u32>,
}

pub(super) async fn opening_tree(
    how: Negotiated,
    Current(c): Shared,
    id: Result<UrlPath<String>, PathRejection>,
    params: Result<Query<TreeParams>, QueryRejection>,
) -> Answer {
    let (UrlPath(id), Query(params)) = (id?, params?);
    let max_depth = params.max_depth.unwrap_or(openingiq::DEFAULT_MAX_DEPTH);
    if max_depth > openingiq::MAX_API_DEPTH {
        return Err(ApiError::bad_request(format!(
            "max_depth must be at most {}",
            openingiq::MAX_API_DEPTH
        )));
    }
    let file_of = |graph: &Graph, root: u32| {
        c.answer_json(&how, &openingiq::opening_file(graph, root, max_depth))
    };
    let unknown = || ApiError::not_found(format!("no node id or named opening {id:?}"));
    if let Some(w) = c.in_memory()? {
        let stem = || w.named.stems.get(&id).and_then(|node_id| w.graph.find_id(node_id));
        let index = w.graph.find_id(&id).or_else(stem).ok_or_else(unknown)?;
        return Ok(file_of(&w.graph, index));
    }
    let graph = match c.piece(&id, max_depth, 0)? {
        Some(graph) => graph,
        None => {
            let root = tokio::task::block_in_place(|| c.disk.stem(&id))
                .map_err(ApiError::store)?
                .ok_or_else(unknown)?;
            c.piece(&root, max_depth, 0)?.ok_or_else(unknown)?
        }
    };
    Ok(file_of(&graph, graph.root))
}

/// `GET /`: the explorer page for a browser, the store's metadata for a client that asks
/// for JSON (`Accept: application/json` without `text/html`).
pub(super) async fn root(
    how: Negotiated,
    Current(c): Shared,
    headers: header::HeaderMap,
) -> Answer {
    let accepts = |kind: &str| {
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains(kind))
    };
    if accepts("application/json") && !accepts("text/html") {
        let mut metadata = c.metadata.clone();
        metadata["nodes"] = c.nodes()?.into();
        return Ok(c.answer_json(&how, &metadata));
    }
    Ok(page::index().await)
}

pub(super) async fn repertoire_report(
    how: Negotiated,
    Current(c): Shared,
    name: Result<UrlPath<String>, PathRejection>,
) -> Answer {
    let UrlPath(name) = name?;
    match c.repertoires.get(&name) {
        Some(bytes) => Ok(c.answer(&how, bytes)),
        None => {
            let names = c.repertoires.names();
            let known = if names.is_empty() {
                "none was built beside this store".to_string()
            } else {
                format!("known: {}", names.join(", "))
            };
            Err(ApiError::not_found(format!("no repertoire is named {name:?} ({known})")))
        }
    }
}
