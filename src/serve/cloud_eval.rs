//! `GET /api/cloud-eval?fen=…&multiPv=N`: the knowledge base's evaluation of a position
//! in the shape of Lichess's cloud-eval API, so that okb's own evaluations can be asked
//! for by another pipeline's `lichess-cloud-eval` source (or any Lichess client). A
//! position without an evaluation is a 404, as on Lichess.

use serde::{Deserialize, Serialize};

use super::error::{Answer, ApiError};
use super::negotiate::Negotiated;
use super::query::parse_url_fen;
use super::swap::{Current, Shared};
use axum::extract::Query;
use axum::extract::rejection::QueryRejection;

/// Lines answered at most (Lichess's limit).
const MAX_MULTIPV: u32 = 5;

/// The query.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Params {
    fen: String,
    multi_pv: Option<u32>,
    variant: Option<String>,
}

/// One line of the answer.
#[derive(Serialize)]
struct Pv {
    moves: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cp: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mate: Option<i32>,
}

/// The answer: scores from White's point of view, moves in UCI.
#[derive(Serialize)]
struct CloudEval {
    fen: String,
    knodes: u64,
    depth: u32,
    pvs: Vec<Pv>,
}

/// The handler.
pub(super) async fn answer(
    how: Negotiated,
    Current(c): Shared,
    params: Result<Query<Params>, QueryRejection>,
) -> Answer {
    let Query(params) = params?;
    if let Some(v) = params.variant.as_deref().filter(|v| *v != "standard") {
        return Err(ApiError::bad_request(format!(
            "variant {v:?} is not available: okb's knowledge base is standard chess"
        )));
    }
    let multipv = params.multi_pv.unwrap_or(1);
    if !(1..=MAX_MULTIPV).contains(&multipv) {
        return Err(ApiError::bad_request(format!("multiPv must be 1 to {MAX_MULTIPV}")));
    }
    let pos = parse_url_fen(&params.fen)?;
    let none = || ApiError::not_found("No cloud evaluation available for that position");
    let node = c.disk.node(&pos).map_err(ApiError::store)?.ok_or_else(none)?;
    let engine = node.engine.as_ref().ok_or_else(none)?;
    let pvs = engine
        .lines
        .iter()
        .take(multipv as usize)
        .map(|l| Pv {
            moves: l.pv_uci.join(" "),
            cp: l.mate.is_none().then_some(l.eval),
            mate: l.mate,
        })
        .collect();
    Ok(c.answer_json(
        &how,
        &CloudEval { fen: node.epd.clone(), knodes: engine.nodes / 1000, depth: engine.depth, pvs },
    ))
}
