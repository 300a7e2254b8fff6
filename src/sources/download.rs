//! Downloading a source into the project's store: streamed, hashed on the way, verified
//! against the pin, and retried with exponential backoff when the failure is one that
//! waiting can cure (a refused or dropped connection, a timeout, HTTP 429 or 5xx). A
//! server that stops sending is a broken connection after [`read_timeout`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::files::Hash;

use super::SourceError;

/// How many times a download is tried in all (the first try and three retries, as cargo).
const ATTEMPTS: u32 = 4;
/// The longest wait between tries of our own backoff.
const MAX_DELAY: Duration = Duration::from_secs(30);
/// The longest `Retry-After` honoured: a server asking for more is waited on this long (a
/// make waiting hours for one file is worse than one more refusal).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);
/// How long a response may send nothing before the connection counts as broken.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One failed try: what to say, and whether trying again can help.
struct Failure {
    reason: String,
    transient: bool,
    /// The server's `Retry-After`, when it sent one.
    retry_after: Option<Duration>,
}

impl Failure {
    fn permanent(reason: impl Into<String>) -> Failure {
        Failure { reason: reason.into(), transient: false, retry_after: None }
    }
    fn transient(reason: impl Into<String>) -> Failure {
        Failure { reason: reason.into(), transient: true, retry_after: None }
    }
}

/// Downloads `url` into `store` and returns the stored file and its BLAKE3. With a `pin`,
/// bytes that hash differently never enter the store. Transient failures are retried
/// after 0.5 s, 1 s, 2 s (`OKB_RETRY_DELAY_MS` sets the first delay), or after the
/// server's `Retry-After`.
pub(super) fn download(
    store: &Path,
    name: &str,
    url: &str,
    pin: Option<&str>,
) -> Result<(PathBuf, Hash), SourceError> {
    let fail =
        |reason: String| SourceError::Download { name: name.into(), url: url.into(), reason };
    let client = client().map_err(|e| fail(e.to_string()))?;
    std::fs::create_dir_all(store).map_err(|e| fail(e.to_string()))?;
    let mut backoff = Backoff::new();
    for attempt in 1..=ATTEMPTS {
        let failure = match try_once(&client, store, url) {
            Ok((tmp, hash, upstream)) => {
                let kept = keep(store, name, url, pin, tmp, hash)?;
                super::fetched::write(
                    store,
                    &kept.1,
                    &super::fetched::FetchRecord::now(url, upstream.0, upstream.1),
                );
                return Ok(kept);
            }
            Err(failure) => failure,
        };
        if !failure.transient || attempt == ATTEMPTS {
            let tries =
                if attempt > 1 { format!(" (after {attempt} tries)") } else { String::new() };
            return Err(fail(format!("{}{tries}", failure.reason)));
        }
        let wait = backoff.next(failure.retry_after);
        crate::progress::println(&format!(
            "warning: spurious network error ({} tries remaining, next in {:.1} s): {url}: {}",
            ATTEMPTS - attempt,
            wait.as_secs_f64(),
            failure.reason
        ));
        std::thread::sleep(wait);
    }
    unreachable!("the last attempt returns")
}

/// The HTTP client of downloads. reqwest's blocking `timeout` bounds the wait for the
/// headers and for each read of the body, not the whole transfer: it is the read timeout
/// that turns a stalled server into a broken connection.
pub(super) fn client() -> reqwest::Result<reqwest::blocking::Client> {
    reqwest::blocking::Client::builder()
        .user_agent(concat!("okb/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(20))
        .timeout(read_timeout())
        .build()
}

/// How long a server may send nothing: 60 s, or `OKB_READ_TIMEOUT_SECS` (tests make it
/// short).
pub(super) fn read_timeout() -> Duration {
    std::env::var("OKB_READ_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(READ_TIMEOUT, Duration::from_secs_f64)
}

/// What a read error says: a timeout names the read timeout, so a stall reads as one.
pub(super) fn read_error(e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::TimedOut
        || crate::diagnostics::error_chain(e).contains("timed out")
    {
        format!(
            "the server sent nothing for {:.0} s (read timeout; OKB_READ_TIMEOUT_SECS sets it)",
            read_timeout().as_secs_f64()
        )
    } else {
        e.to_string()
    }
}

/// The waits between tries: the server's `Retry-After` when it sent one, else a delay
/// doubling from the first (0.5 s, or `OKB_RETRY_DELAY_MS`: tests make it short) up to
/// 30 s.
pub(super) struct Backoff {
    delay: Duration,
}

impl Backoff {
    /// A backoff at its first delay.
    pub(super) fn new() -> Backoff {
        let ms =
            std::env::var("OKB_RETRY_DELAY_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
        Backoff { delay: Duration::from_millis(ms) }
    }

    /// The wait before the next try; our own delay doubles either way, so a server that
    /// keeps failing is asked less and less often.
    pub(super) fn next(&mut self, retry_after: Option<Duration>) -> Duration {
        let wait = retry_after.map_or(self.delay.min(MAX_DELAY), |r| r.min(MAX_RETRY_AFTER));
        self.delay = (self.delay * 2).min(MAX_DELAY);
        wait
    }
}

/// A `Retry-After` in seconds (the HTTP-date form is not read: the backoff applies).
pub(super) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// Moves a verified download into the store under its hash; a pin mismatch removes it.
fn keep(
    store: &Path,
    name: &str,
    url: &str,
    pin: Option<&str>,
    tmp: PathBuf,
    hash: Hash,
) -> Result<(PathBuf, Hash), SourceError> {
    if let Some(pin) = pin
        && pin != hash
    {
        let _ = std::fs::remove_file(&tmp);
        return Err(SourceError::Mismatch {
            name: name.into(),
            location: url.into(),
            expected: pin.into(),
            actual: hash,
        });
    }
    let path = store.join(&hash);
    std::fs::rename(&tmp, &path).map_err(|e| SourceError::Download {
        name: name.into(),
        url: url.into(),
        reason: e.to_string(),
    })?;
    Ok((path, hash))
}

/// Upstream's `Last-Modified` and `ETag`, when sent.
type Upstream = (Option<String>, Option<String>);

/// One GET, streamed into a temporary file in `store`; removed again on any failure.
fn try_once(
    client: &reqwest::blocking::Client,
    store: &Path,
    url: &str,
) -> Result<(PathBuf, Hash, Upstream), Failure> {
    let mut response = client.get(url).send().map_err(|e| {
        let transient = e.is_connect() || e.is_timeout() || e.is_request();
        Failure { reason: crate::diagnostics::error_chain(&e), transient, retry_after: None }
    })?;
    let status = response.status();
    if !status.is_success() {
        let transient = status.as_u16() == 429 || status.is_server_error();
        let retry_after = retry_after(response.headers());
        return Err(Failure { reason: format!("HTTP {status}"), transient, retry_after });
    }
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    let upstream = (header(reqwest::header::LAST_MODIFIED), header(reqwest::header::ETAG));
    let expected_len = response.content_length();
    let tmp = crate::files::temp::path(store, "download");
    let result = stream_to(&mut response, &tmp, expected_len);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|hash| (tmp, hash, upstream))
}

/// Copies the body to `tmp`, hashing it; a short body is a transient failure.
fn stream_to(
    response: &mut impl Read,
    tmp: &Path,
    expected_len: Option<u64>,
) -> Result<Hash, Failure> {
    let mut file = std::fs::File::create(tmp).map_err(|e| Failure::permanent(e.to_string()))?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        match response.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                total += n as u64;
                file.write_all(&buf[..n]).map_err(|e| Failure::permanent(e.to_string()))?;
            }
            Err(e) => {
                return Err(Failure::transient(format!(
                    "connection broke after {total} bytes: {}",
                    read_error(&e)
                )));
            }
        }
    }
    if let Some(len) = expected_len
        && len != total
    {
        return Err(Failure::transient(format!("connection closed after {total} of {len} bytes")));
    }
    file.sync_data().map_err(|e| Failure::permanent(e.to_string()))?;
    Ok(hasher.finalize().to_hex().to_string())
}
