//! The page at `/` (the browser app, a client of okb's API): a bundle built from `web/` (chessground, chessops,
//! esbuild; see ARCHITECTURE.md), compiled into the binary, so a fresh clone's
//! `cargo build` serves it offline without node. And CORS for pages on other origins.

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// `GET /`.
pub async fn index() -> Response {
    asset("text/html; charset=utf-8", include_bytes!("../../web/dist/index.html"))
}

/// `GET /assets/app.js`.
pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", include_bytes!("../../web/dist/app.js"))
}

/// `GET /assets/app.css`.
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", include_bytes!("../../web/dist/app.css"))
}

fn asset(content_type: &'static str, bytes: &'static [u8]) -> Response {
    // The bundle changes with the binary: browsers ask again rather than keep an old one.
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ];
    (headers, bytes).into_response()
}

/// Adds `Access-Control-Allow-Origin: origin` to every answer and answers preflight
/// `OPTIONS` requests itself (204, the API's methods and the headers a client sends).
pub async fn cors(origin: HeaderValue, request: Request, next: Next) -> Response {
    let mut response = if request.method() == Method::OPTIONS {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("content-type, if-none-match, accept-encoding"),
        );
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
        r
    } else {
        next.run(request).await
    };
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("etag"));
    h.append(header::VARY, HeaderValue::from_static("origin"));
    response
}
