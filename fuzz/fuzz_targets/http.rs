//! `okb serve`'s router over a small knowledge base: any request line and body must get
//! an answer, never a panic or a 5xx. Input: a method byte, the path and query up to the
//! first newline, then the body.
#![no_main]
use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::{Method, Request};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

/// The router over the store built once from the repository's small fixtures.
fn router() -> &'static axum::Router {
    static ROUTER: OnceLock<axum::Router> = OnceLock::new();
    ROUTER.get_or_init(|| {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");
        let dir = std::env::temp_dir().join(format!("okb-fuzz-http-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "[sources.lichess]\nkind = \"lichess-tsv\"\npath = \"{fixtures}/eco/mini.tsv\"\n\
             [sources.scid]\nkind = \"scid-eco\"\npath = \"{fixtures}/eco/mini.eco\"\n\
             [sources.games]\nkind = \"pgn\"\npaths = [\"{fixtures}/games/openings.pgn\"]\n"
        );
        let loaded = okb::pipeline::parse(text, &dir.join("pipeline.toml"), None).expect("the fixture pipeline loads");
        okb::make::make(&loaded, &okb::make::MakeOptions { offline: true, ..Default::default() }, |_| {}).expect("the fixture builds");
        let catalog = okb::serve::Catalog::load(&loaded.path("build/okb.sqlite")).expect("the store loads");
        okb::serve::router(Arc::new(catalog))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&method, rest)) = data.split_first() else { return };
    let method = if method % 2 == 0 { Method::GET } else { Method::POST };
    let split = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let Ok(path) = std::str::from_utf8(&rest[..split]) else { return };
    let body = rest.get(split + 1..).unwrap_or_default().to_vec();
    let Ok(request) = Request::builder().method(method).uri(format!("/{}", path.trim_start_matches('/'))).body(Body::from(body)) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let response = runtime.block_on(router().clone().oneshot(request)).unwrap();
    assert!(!response.status().is_server_error(), "{} for {path:?}", response.status());
});
