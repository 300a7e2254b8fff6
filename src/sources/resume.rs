//! Downloads of large files (Lichess's monthly dumps, tens of GB) that resume where they
//! broke: the bytes go to `<file name>.part` (a name no reader takes for the file), a
//! broken connection keeps them, and the next try asks for the rest with an HTTP Range
//! request. A 416 (the range no longer fits: the file changed or the part is stale) or a
//! server that ignores ranges starts again from zero. The whole file is verified (the
//! published SHA-256) before it is renamed into the store under its BLAKE3.

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
    /// The connection broke (or the body was short): resume.
    Broken(String),
    /// The range was refused (416): start again from zero.
    Stale,
}

/// Downloads `url` into `store`, resuming `store/<file_name>.part`; verifies the SHA-256
/// `sha256` (lowercase hex) of the whole file. Errors are plain text naming the URL.
pub fn download(store: &Path, url: &str, file_name: &str, sha256: &str) -> Result<Fetched, String> {
    let client = reqwest::blocking::Client::builder()
        .user_agent(concat!("okb/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(20))
        // No overall timeout: a month takes as long as it takes (a stall is a broken
        // connection to the OS's keepalive, and the next try resumes).
        .timeout(None)
        .build()
        .map_err(|e| format!("{url}: {e}"))?;
    std::fs::create_dir_all(store).map_err(|e| format!("{}: {e}", store.display()))?;
    let part = store.join(format!("{file_name}.part"));
    let resumed_from = std::fs::metadata(&part).map_or(0, |m| m.len());
    let label = format!("download {file_name} (bytes)");
    let (mut received, mut headers) = (0u64, (None, None));
    for attempt in 1..=ATTEMPTS {
        match try_once(&client, url, &part, &label, &mut received, &mut headers)? {
            Outcome::Complete => return finish(store, url, &part, sha256, received, resumed_from, headers),
            Outcome::Stale => {
                crate::progress::println(&format!("{:>12} {url}: the server refused the range of {} (HTTP 416): starting again", "Warning", part.display()));
                std::fs::remove_file(&part).map_err(|e| format!("{}: {e}", part.display()))?;
            }
            Outcome::Broken(why) if attempt < ATTEMPTS => {
                let have = std::fs::metadata(&part).map_or(0, |m| m.len());
                crate::progress::println(&format!("{:>12} {url}: {why}; resuming at byte {have} ({} tries left)", "Warning", ATTEMPTS - attempt));
                std::thread::sleep(super::download::first_delay());
            }
            Outcome::Broken(why) => return Err(format!("{url}: {why} (after {ATTEMPTS} tries; {} keeps what came)", part.display())),
        }
    }
    Err(format!("{url}: the range was refused {ATTEMPTS} times"))
}

/// One request for the rest of the file, appended to `part`.
fn try_once(
    client: &reqwest::blocking::Client,
    url: &str,
    part: &Path,
    label: &str,
    received: &mut u64,
    headers: &mut (Option<String>, Option<String>),
) -> Result<Outcome, String> {
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let mut response = match request.send() {
        Ok(r) => r,
        Err(e) => return Ok(Outcome::Broken(crate::diagnostics::error_chain(&e))),
    };
    let status = response.status().as_u16();
    let header = |name| response.headers().get(name).and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok()).map(str::to_string);
    *headers = (header(reqwest::header::LAST_MODIFIED).or(headers.0.take()), header(reqwest::header::ETAG).or(headers.1.take()));
    let start = match status {
        // A part as long as the file (a response that promised more than it had, then
        // closed) is complete; anything else refused is stale.
        416 if content_range_total(header(reqwest::header::CONTENT_RANGE).as_deref()) == Some(have) => return Ok(Outcome::Complete),
        416 => return Ok(Outcome::Stale),
        206 => content_range_start(header(reqwest::header::CONTENT_RANGE).as_deref()).ok_or_else(|| format!("{url}: HTTP 206 without a valid Content-Range"))?,
        200 => 0,
        429 | 500..=599 => return Ok(Outcome::Broken(format!("HTTP {status}"))),
        _ => return Err(format!("{url}: HTTP {}", response.status())),
    };
    if start != have && start != 0 {
        return Ok(Outcome::Stale);
    }
    let mut file = std::fs::OpenOptions::new().create(true).append(start > 0).write(true).truncate(start == 0).open(part).map_err(|e| format!("{}: {e}", part.display()))?;
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
                file.write_all(&buf[..n]).map_err(|e| format!("{}: {e}", part.display()))?;
                got += n as u64;
                *received += n as u64;
                bar.inc(n as u64);
            }
            Err(e) => return Ok(Outcome::Broken(format!("connection broke after {} bytes: {e}", start + got))),
        }
    }
    match length {
        Some(length) if got < length => Ok(Outcome::Broken(format!("connection closed after {} of {} bytes", start + got, start + length))),
        _ => Ok(Outcome::Complete),
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

/// Verifies the whole `part` against `sha256`, then renames it into the store.
fn finish(store: &Path, url: &str, part: &Path, sha256: &str, received: u64, resumed_from: u64, headers: (Option<String>, Option<String>)) -> Result<Fetched, String> {
    let (actual_sha, blake3, size) = hash_both(part).map_err(|e| format!("{}: {e}", part.display()))?;
    if actual_sha != sha256 {
        let _ = std::fs::remove_file(part);
        return Err(format!("{url}: published sha256 {sha256}, the downloaded {size} bytes have sha256 {actual_sha} (removed; the next try starts again)"));
    }
    let path = store.join(&blake3);
    std::fs::rename(part, &path).map_err(|e| format!("{}: {e}", path.display()))?;
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
