//! Content negotiation: how an answer is sent. [`Negotiated`] reads the request's
//! `Accept-Encoding` and answers a matching `If-None-Match` with `304` before any answer
//! is built; [`Catalog::answer`] sends JSON with the store's `ETag`, compressed as
//! negotiated.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::catalog::Catalog;
use super::compress;
use super::swap::{Served, snapshot};

impl Catalog {
    /// A JSON answer, compressed as the request asked ([`Negotiated`]). Answers change only
    /// when the store does, so each carries the store's hash as its `ETag` with
    /// `Cache-Control: no-cache`: clients revalidate and get `304` (see [`Negotiated`]).
    pub(super) fn answer(&self, how: &Negotiated, bytes: Bytes) -> Response {
        let mut response = (
            [
                (header::CONTENT_TYPE, header::HeaderValue::from_static("application/json")),
                (header::ETAG, self.etag.clone()),
                (header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache")),
                (header::VARY, header::HeaderValue::from_static("accept-encoding")),
            ],
            bytes.clone(),
        )
            .into_response();
        if let Some((name, compressed)) = compress::encode(how.encoding, &bytes) {
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, header::HeaderValue::from_static(name));
            *response.body_mut() = axum::body::Body::from(compressed);
        }
        response
    }

    /// [`Catalog::answer`] with another content type.
    pub(super) fn answer_as(
        &self,
        how: &Negotiated,
        bytes: Bytes,
        content_type: &'static str,
    ) -> Response {
        let mut response = self.answer(how, bytes);
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
        response
    }

    pub(super) fn answer_json(&self, how: &Negotiated, value: &impl Serialize) -> Response {
        self.answer(how, Bytes::from(serde_json::to_vec(value).expect("answers serialize")))
    }
}

/// What a request negotiates: the answer's encoding (`Accept-Encoding`), and, for `GET`
/// and `HEAD`, revalidation: an `If-None-Match` naming the store's `ETag` (or `*`) is
/// answered `304 Not Modified` before any answer is built.
pub(super) struct Negotiated {
    encoding: compress::Encoding,
}

impl axum::extract::FromRequestParts<Arc<Served>> for Negotiated {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        served: &Arc<Served>,
    ) -> Result<Self, Response> {
        let c = snapshot(parts, served);
        let encoding = compress::Encoding::accepted(&parts.headers);
        let revalidating =
            matches!(parts.method, axum::http::Method::GET | axum::http::Method::HEAD);
        let etag = c.etag.as_bytes();
        let named = |tag: &str| {
            let tag = tag.trim();
            tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).as_bytes() == etag
        };
        let values =
            || parts.headers.get_all(header::IF_NONE_MATCH).iter().filter_map(|v| v.to_str().ok());
        if !revalidating || !values().any(|v| v.split(',').any(named)) {
            return Ok(Negotiated { encoding });
        }
        let headers = [
            (header::ETAG, c.etag.clone()),
            (header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache")),
        ];
        Err((StatusCode::NOT_MODIFIED, headers).into_response())
    }
}
