//! Downloads of large files (Lichess's monthly dumps, tens of GB) that resume where they
//! broke: the bytes go to `<file name>.part` (a name no reader takes for the file), their
//! ETag to `<file name>.part.etag`, a broken or stalled connection keeps them, and the
//! next try asks for the rest with an HTTP Range request, `If-Range` that ETag (a file
//! changed upstream comes whole at once). A 416 (the range no longer fits: the part is
//! stale), a 206 of another range or another ETag, or a server that ignores ranges starts
//! again from zero. Failures are retried after the server's `Retry-After` or a doubling
//! backoff. The whole file is verified (the published SHA-256) before it is renamed into
//! the store under its BLAKE3.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::Digest;

/// How many times a resumable download is tried in all: each broken connection is one
/// try, and each keeps what it got, so a long flaky transfer still ends.
const ATTEMPTS: u32 = 12;

/// A finished download: the stored file and what its transfer cost.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// The file in the store, named by its BLAKE3.
    pub path: PathBuf,
    /// Its BLAKE3.
    pub blake3: String,
    /// Its size.
    pub size: u64,
    /// Bytes received in this run (resumed bytes not counted twice).
    pub received: u64,
    /// Bytes that a `.part` of an earlier run already had.
    pub resumed_from: u64,
    /// Upstream's `Last-Modified`, when sent.
    pub last_modified: Option<String>,
    /// Upstream's `ETag`, when sent.
    pub etag: Option<String>,
}

/// What one response brought.
enum Outcome {
    /// The body ended where the server said it would.
    Complete,
    /// The connection broke, the body was short or the server failed for now (with its
    /// `Retry-After`): resume.
    Broken(String, Option<Duration>),
    /// The part cannot be continued (the range was refused, the server answered another
    /// range, upstream's file changed): start again from zero, saying why.
    Restart(String),
}

/// The part of a download and, beside it, the ETag of the file its bytes came from
/// (`<file name>.part.etag`), so a resumption asks for the rest of that file only.
struct Part {
    path: PathBuf,
    etag: PathBuf,
}

impl Part {
    fn new(store: &Path, file_name: &str) -> Part {
        Part {
            path: store.join(format!("{file_name}.part")),
            etag: store.join(format!("{file_name}.part.etag")),
        }
    }

    fn len(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// The ETag the part's bytes came with, when upstream sent a strong one.
    fn etag(&self) -> Option<String> {
        std::fs::read_to_string(&self.etag)
            .ok()
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
    }

    /// Records the ETag of the bytes about to be written. A weak ETag (`W/…`) is not kept:
    /// `If-Range` takes strong validators only.
    fn set_etag(&self, etag: Option<&str>) -> Result<(), String> {
        match etag.filter(|e| !e.starts_with("W/")) {
            Some(e) if self.etag().as_deref() != Some(e) => {
                crate::files::write_atomic(&self.etag, e.as_bytes())
                    .map_err(|err| format!("{}: {err}", self.etag.display()))
            }
            Some(_) => Ok(()),
            None => self.remove_etag(),
        }
    }

    fn remove_etag(&self) -> Result<(), String> {
        match std::fs::remove_file(&self.etag) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("{}: {e}", self.etag.display()))
            }
            _ => Ok(()),
        }
    }

    /// Removes the part and its ETag.
    fn remove(&self) -> Result<(), String> {
        std::fs::remove_file(&self.path).map_err(|e| format!("{}: {e}", self.path.display()))?;
        self.remove_etag()
    }
}

/// Downloads `url` into `store`, resuming `store/<file_name>.part`; verifies the SHA-256
/// `sha256` (lowercase hex) of the whole file. Errors are plain text naming the URL.
pub fn download(store: &Path, url: &str, file_name: &str, sha256: &str) -> Result<Fetched, String> {
    // No overall timeout: a month takes as long as it takes; a server that stops sending
    // for the read timeout is a broken connection, and the next try resumes.
    let client = super::download::client().map_err(|e| format!("{url}: {e}"))?;
    std::fs::create_dir_all(store).map_err(|e| format!("{}: {e}", store.display()))?;
    let part = Part::new(store, file_name);
    let resumed_from = part.len();
    let label = format!("download {file_name} (bytes)");
    let (mut received, mut headers) = (0u64, (None, None));
    let mut backoff = super::download::Backoff::new();
    let mut last = String::new();
    for attempt in 1..=ATTEMPTS {
        let before = received;
        match try_once(&client, url, &part, &label, &mut received, &mut headers)? {
            Outcome::Complete => {
                return finish(store, url, &part, sha256, received, resumed_from, headers);
            }
            Outcome::Restart(why) => {
                crate::progress::println(&format!(
                    "{:>12} {url}: {why}: starting again",
                    "Warning"
                ));
                part.remove()?;
                last = why;
            }
            Outcome::Broken(why, retry_after) if attempt < ATTEMPTS => {
                // A try that brought bytes was progress: the waits start short again.
                if received > before {
                    backoff = super::download::Backoff::new();
                }
                let wait = backoff.next(retry_after);
                crate::progress::println(&format!(
                    "{:>12} {url}: {why}; resuming at byte {} in {:.1} s ({} tries left)",
                    "Warning",
                    part.len(),
                    wait.as_secs_f64(),
                    ATTEMPTS - attempt
                ));
                std::thread::sleep(wait);
            }
            Outcome::Broken(why, _) => {
                return Err(format!(
                    "{url}: {why} (after {ATTEMPTS} tries; {} keeps what came)",
                    part.path.display()
                ));
            }
        }
    }
    Err(format!("{url}: started again {ATTEMPTS} times, the last because {last}"))
}

/// One request for the rest of the file, appended to the part.
fn try_once(
    client: &reqwest::blocking::Client,
    url: &str,
    part: &Part,
    label: &str,
    received: &mut u64,
    headers: &mut (Option<String>, Option<String>),
) -> Result<Outcome, String> {
    let (mut response, start) = match ask(client, url, part, headers)? {
        Ok(asked) => asked,
        Err(outcome) => return Ok(outcome),
    };
    let path = &part.path;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(start > 0)
        .write(true)
        .truncate(start == 0)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let length = response.content_length();
    // Bytes with a rate and an ETA: a bar on a terminal, periodic lines in logs.
    let bar = crate::progress::start(start + length.unwrap_or(0), label);
    bar.set(start);
    let mut got = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match response.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                // Written at once, unbuffered: what came survives a broken connection.
                file.write_all(&buf[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
                got += n as u64;
                *received += n as u64;
                bar.inc(n as u64);
            }
            Err(e) => {
                return Ok(Outcome::Broken(
                    format!(
                        "connection broke after {} bytes: {}",
                        start + got,
                        super::download::read_error(&e)
                    ),
                    None,
                ));
            }
        }
    }
    match length {
        Some(length) if got < length => Ok(Outcome::Broken(
            format!("connection closed after {} of {} bytes", start + got, start + length),
            None,
        )),
        _ => Ok(Outcome::Complete),
    }
}

/// Asks for the rest of the file (`Range`, and `If-Range` with the part's ETag so a
/// changed file comes whole at once instead of its tail after ours): the response and the
/// byte its body starts at, or what to do instead of reading it.
fn ask(
    client: &reqwest::blocking::Client,
    url: &str,
    part: &Part,
    headers: &mut (Option<String>, Option<String>),
) -> Result<Result<(reqwest::blocking::Response, u64), Outcome>, String> {
    let have = part.len();
    let validator = if have > 0 { part.etag() } else { None };
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        if let Some(etag) = &validator {
            request = request.header(reqwest::header::IF_RANGE, etag);
        }
    }
    let response = match request.send() {
        Ok(r) => r,
        Err(e) => return Ok(Err(Outcome::Broken(crate::diagnostics::error_chain(&e), None))),
    };
    let status = response.status().as_u16();
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
            .map(str::to_string)
    };
    let etag = header(reqwest::header::ETAG);
    *headers = (
        header(reqwest::header::LAST_MODIFIED).or(headers.0.take()),
        etag.clone().or(headers.1.take()),
    );
    let range = header(reqwest::header::CONTENT_RANGE);
    let start = match status {
        // A part as long as the file (a response that promised more than it had, then
        // closed) is complete; anything else refused is stale.
        416 if content_range_total(range.as_deref()) == Some(have) => {
            return Ok(Err(Outcome::Complete));
        }
        416 => {
            return Ok(Err(Outcome::Restart(format!(
                "the server refused the range of {} (HTTP 416)",
                part.path.display()
            ))));
        }
        206 => content_range_start(range.as_deref())
            .ok_or_else(|| format!("{url}: HTTP 206 without a valid Content-Range"))?,
        200 => 0,
        429 | 500..=599 => {
            return Ok(Err(Outcome::Broken(
                format!("HTTP {}", response.status()),
                super::download::retry_after(response.headers()),
            )));
        }
        _ => return Err(format!("{url}: HTTP {}", response.status())),
    };
    if let Some(why) =
        not_our_rest(have, start, validator.as_deref(), etag.as_deref(), range.as_deref())
    {
        return Ok(Err(Outcome::Restart(why)));
    }
    if have > 0 && start == 0 {
        let changed = match (&validator, &etag) {
            (Some(old), Some(new)) if old != new => {
                format!("upstream changed (ETag {old}, now {new})")
            }
            _ => "the server ignored the range".to_string(),
        };
        crate::progress::println(&format!(
            "{:>12} {url}: {changed}: the whole file comes again, replacing the {have} bytes of {}",
            "Warning",
            part.path.display()
        ));
    }
    part.set_etag(etag.as_deref())?;
    Ok(Ok((response, start)))
}

/// Why a partial answer does not continue the part: it starts at another byte than asked
/// (a start of 0 is the whole file, taken as such), or it is of another file than the
/// part's (another ETag: a server that ignored `If-Range`).
fn not_our_rest(
    have: u64,
    start: u64,
    old: Option<&str>,
    new: Option<&str>,
    range: Option<&str>,
) -> Option<String> {
    if start != have && start != 0 {
        return Some(format!(
            "asked for the bytes from {have}, the server answered HTTP 206 with Content-Range {}",
            range.unwrap_or("")
        ));
    }
    match (old, new) {
        (Some(old), Some(new)) if start > 0 && old != new => Some(format!(
            "upstream changed (ETag {old}, now {new}) but the server sent the rest of the new file"
        )),
        _ => None,
    }
}

/// The first byte of `bytes START-END/TOTAL`.
fn content_range_start(value: Option<&str>) -> Option<u64> {
    value?.strip_prefix("bytes ")?.split('-').next()?.parse().ok()
}

/// The total of `bytes START-END/TOTAL` or `bytes */TOTAL`.
fn content_range_total(value: Option<&str>) -> Option<u64> {
    value?.rsplit('/').next()?.trim().parse().ok()
}

/// Verifies the whole part against `sha256`, then renames it into the store.
fn finish(
    store: &Path,
    url: &str,
    part: &Part,
    sha256: &str,
    received: u64,
    resumed_from: u64,
    headers: (Option<String>, Option<String>),
) -> Result<Fetched, String> {
    let (actual_sha, blake3, size) =
        hash_both(&part.path).map_err(|e| format!("{}: {e}", part.path.display()))?;
    if actual_sha != sha256 {
        let _ = part.remove();
        return Err(format!(
            "{url}: published sha256 {sha256}, the downloaded {size} bytes have sha256 {actual_sha} (removed; the next try starts again)"
        ));
    }
    let path = store.join(&blake3);
    std::fs::rename(&part.path, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    part.remove_etag()?;
    let (last_modified, etag) = headers;
    Ok(Fetched { path, blake3, size, received, resumed_from, last_modified, etag })
}

/// The SHA-256 and BLAKE3 of a file, in one read, and its size.
pub fn hash_both(path: &Path) -> std::io::Result<(String, String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let (mut sha, mut b3) = (sha2::Sha256::new(), blake3::Hasher::new());
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha.update(&buf[..n]);
        b3.update(&buf[..n]);
        size += n as u64;
    }
    let sha: String = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((sha, b3.finalize().to_hex().to_string(), size))
}
