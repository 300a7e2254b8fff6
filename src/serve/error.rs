//! The server's error answer, [`ApiError`]: every error is JSON
//! (`{"error": "...", "status": N}`), and axum's rejections of a path, query or body
//! become 400s (413 for a body over [`super::BODY_LIMIT`]), so user input never yields a
//! 500. And [`log`], the server's lines on stderr.

use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::BODY_LIMIT;
use crate::store::StoreError;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub(super) status: StatusCode,
    pub(super) message: String,
}

impl ApiError {
    pub(super) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, message: message.into() }
    }

    pub(super) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::NOT_FOUND, message: message.into() }
    }

    /// The store failed to answer (it went unreadable under the server): a 500.
    pub(super) fn store(e: StoreError) -> ApiError {
        ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, message: e.to_string() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message, "status": self.status.as_u16() });
        (self.status, [(header::CONTENT_TYPE, "application/json")], body.to_string())
            .into_response()
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> ApiError {
        ApiError::bad_request(r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> ApiError {
        ApiError::bad_request(r.body_text())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(r: BytesRejection) -> ApiError {
        let message = if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            format!("request body over {BODY_LIMIT} bytes")
        } else {
            r.body_text()
        };
        ApiError { status: r.status(), message }
    }
}

/// What a handler returns: its answer, or the error answer.
pub(super) type Answer = Result<Response, ApiError>;

/// A line on stderr; a closed stderr (a supervisor that stopped reading) does not stop
/// the server, unlike `eprintln!`, which panics.
pub(super) fn log(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
