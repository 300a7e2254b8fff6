//! The Lichess opening explorer as a source (Phase 2 without game files): a crawl asks
//! any server that speaks the explorer API (lichess.org's, or `okb serve`'s) for one
//! position at a time, breadth first from a root, and keeps every answer.
//!
//! - [`params`]: what defines a crawl (database, root, depth, threshold, filters) and the
//!   request for a position.
//! - [`client`]: one HTTP client per crawl, polite by construction: one request in
//!   flight, a token bucket, a long wait after 429, backoff on 5xx and network errors.
//! - [`explorer`]: an answer read strictly (never an empty node from a bad body).
//! - [`archive`]: answers stored content-addressed, the journal of requests answered
//!   (what makes a killed crawl resume without asking again) and the manifests.
//! - [`walk`]: the breadth-first walk, from the journal where it can, over the network
//!   where it must; its value is a [`manifest::Manifest`], whose BLAKE3 is the pin.
//! - [`stats`]: a manifest's answers as the tree's counts ([`crate::games::stats`]).
//! - [`source`]: a pipeline's crawl source made available: pinned (manifest and answers
//!   from the source store or a mirror, fetched where missing) or not (walked now).

pub mod archive;
pub mod client;
pub mod explorer;
pub mod manifest;
pub mod params;
pub mod source;
pub mod stats;
pub mod walk;

pub use params::{CrawlParams, Database, Politeness};

/// Why a crawl could not be had. Everything fetched before the error is kept.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum CrawlError {
    /// The server refused the token (or asked for one).
    #[error(
        "crawl {source_name}: {url} answered HTTP {status}: the explorer wants a valid token{token}"
    )]
    #[diagnostic(
        code(okb::crawl::unauthorized),
        help(
            "create a token at https://lichess.org/account/oauth/token and export it in the variable named by `token_env`; everything fetched so far is kept, and the next run continues from there"
        )
    )]
    Unauthorized {
        /// Source name.
        source_name: String,
        /// The request.
        url: String,
        /// 401 or 403.
        status: u16,
        /// Which variable was (or would be) read, for the message.
        token: String,
    },
    /// A request failed for good (a client error, or every attempt failed).
    #[error("crawl {source_name}: {url}: {reason}")]
    #[diagnostic(
        code(okb::crawl::request),
        help("everything fetched so far is kept: run the same command again to continue")
    )]
    Request {
        /// Source name.
        source_name: String,
        /// The request.
        url: String,
        /// What happened (status and body, or the last network error, with the attempts).
        reason: String,
    },
    /// Answers are missing and requests are not allowed.
    #[error("crawl {source_name}: {what}, and --offline (or --locked) forbids asking {server}")]
    #[diagnostic(
        code(okb::crawl::offline),
        help(
            "run `okb fetch` (or `okb make` without --offline), or put the crawl's `explorer/` folder in a mirror"
        )
    )]
    Offline {
        /// Source name.
        source_name: String,
        /// What is missing.
        what: String,
        /// The server.
        server: String,
    },
    /// The pinned manifest is nowhere to be found.
    #[error(
        "crawl {source_name}: manifest blake3 {pin} is not in sources/explorer/ nor in any mirror ({mirrors})"
    )]
    #[diagnostic(
        code(okb::crawl::missing),
        help(
            "a pin names a finished crawl: copy its sources/explorer/ folder (or a mirror's) here, or re-crawl with `okb crawl --refresh {source_name}` and `okb pin --force {source_name}`"
        )
    )]
    MissingManifest {
        /// Source name.
        source_name: String,
        /// The pin.
        pin: String,
        /// The mirrors searched.
        mirrors: String,
    },
    /// A stored answer does not match the pinned manifest any more.
    #[error(
        "crawl {source_name}: {url} now answers blake3 {actual}, the pinned crawl recorded {expected}"
    )]
    #[diagnostic(
        code(okb::crawl::changed),
        help(
            "the server's data changed since the crawl was pinned: `okb crawl --refresh {source_name}` re-crawls and shows what changed, `okb pin --force {source_name}` records it"
        )
    )]
    Changed {
        /// Source name.
        source_name: String,
        /// The request.
        url: String,
        /// The pinned answer.
        expected: String,
        /// The new one.
        actual: String,
    },
    /// The source's settings do not describe a crawl.
    #[error("crawl {source_name}: {why}")]
    #[diagnostic(code(okb::crawl::settings))]
    Settings {
        /// Source name.
        source_name: String,
        /// What is wrong.
        why: String,
    },
    /// Reading or writing the archive failed.
    #[error("crawl {source_name}: {what}: {error}")]
    #[diagnostic(code(okb::crawl::io))]
    Io {
        /// Source name.
        source_name: String,
        /// What was being done.
        what: String,
        /// The error.
        error: std::io::Error,
    },
}
