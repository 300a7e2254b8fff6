//! `kind = "lichess-db"` against servers on 127.0.0.1 started here, in Lichess's layout
//! (`/standard/list.txt`, `/standard/sha256sums.txt`, a `.pgn.zst` month made from the
//! real first games of January 2013 in ../shared), some of them misbehaving: connections
//! cut at 60 % and 95 %, a wrong Content-Length, a 416 on a stale range, sums that
//! disagree. Resumed downloads must not fetch again what they had.

use crate::common;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use common::{Project, flat, shared_sources};

const MONTH: &str = "lichess_db_standard_rated_2013-01.pgn.zst";

/// The month: ../shared's first 5,297 games of January 2013, zstd-compressed.
fn month_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let pgn = std::fs::read(
            shared_sources()
                .join("../corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn"),
        )
        .unwrap();
        zstd::encode_all(&pgn[..], 3).unwrap()
    })
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// How a server misbehaves.
#[derive(Clone, Default)]
struct Misbehave {
    /// Cut the month's body at these fractions of the file, one per request, in order.
    cuts: Vec<f64>,
    /// The first response announces twice the Content-Length it sends.
    wrong_length: bool,
    /// The sums file's line for the month says this instead.
    sums: Option<String>,
    /// Send the month in 20 pieces, this many milliseconds apart.
    trickle_ms: u64,
    /// The first request of the month gets this fraction of it, then nothing (the
    /// connection held open for 20 s).
    stall_at: Option<f64>,
    /// The first requests of the month get these statuses, with these `Retry-After`s.
    failures: Vec<(&'static str, Option<u64>)>,
    /// The month's ETag now (default `"month-2013-01"`); an `If-Range` naming another gets
    /// the whole month (200), as nginx does.
    etag: Option<&'static str>,
    /// `If-Range` is ignored (a server that answers the range of whatever it has).
    ignore_if_range: bool,
    /// A 206 starts this many bytes before the byte asked (a server answering another range).
    range_shift: usize,
}

/// A server in Lichess's layout and what it has sent of the month.
struct Server {
    base: String,
    /// Body bytes of the month sent, over all requests.
    sent: Arc<AtomicU64>,
    /// Requests of the month.
    requests: Arc<AtomicUsize>,
    /// The Range headers asked.
    ranges: Arc<Mutex<Vec<String>>>,
    /// The If-Range headers sent.
    if_ranges: Arc<Mutex<Vec<String>>>,
}

fn serve(misbehave: Misbehave) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (sent, requests, ranges) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(Mutex::new(Vec::new())),
    );
    let if_ranges = Arc::new(Mutex::new(Vec::new()));
    let server = Server {
        base: base.clone(),
        sent: sent.clone(),
        requests: requests.clone(),
        ranges: ranges.clone(),
        if_ranges: if_ranges.clone(),
    };
    std::thread::spawn(move || {
        let body = month_bytes();
        let list = format!(
            "{base}/standard/{MONTH}\n{base}/standard/lichess_db_standard_rated_2012-12.pgn.zst\n"
        );
        let sums = format!(
            "{}  {MONTH}\n{}  lichess_db_standard_rated_2012-12.pgn.zst\n",
            misbehave.sums.clone().unwrap_or_else(|| sha256(body)),
            "0".repeat(64)
        );
        let cuts = Mutex::new(misbehave.cuts.clone());
        let etag = misbehave.etag.unwrap_or("\"month-2013-01\"");
        for mut stream in listener.incoming().flatten() {
            let request = read_request(&stream);
            let _ = match request.path.as_str() {
                "/standard/list.txt" => {
                    respond(&mut stream, "200 OK", &[], list.as_bytes(), None, 0)
                }
                "/standard/sha256sums.txt" => {
                    respond(&mut stream, "200 OK", &[], sums.as_bytes(), None, 0)
                }
                p if p == format!("/standard/{MONTH}") => {
                    let n = requests.fetch_add(1, Ordering::SeqCst);
                    if let Some(r) = &request.range {
                        ranges.lock().unwrap().push(r.clone());
                    }
                    if let Some(r) = &request.if_range {
                        if_ranges.lock().unwrap().push(r.clone());
                    }
                    if let Some((status, retry_after)) = misbehave.failures.get(n) {
                        let headers: Vec<String> =
                            retry_after.iter().map(|s| format!("Retry-After: {s}")).collect();
                        let _ = respond(&mut stream, status, &headers, b"", None, 0);
                        continue;
                    }
                    // If-Range naming another ETag: the range is ignored, the whole month comes.
                    let range = request.range.filter(|_| {
                        misbehave.ignore_if_range
                            || request.if_range.as_deref().is_none_or(|v| v == etag)
                    });
                    let start: usize = range
                        .as_deref()
                        .and_then(|r| r.strip_prefix("bytes=")?.strip_suffix('-')?.parse().ok())
                        .unwrap_or(0);
                    let start = start.saturating_sub(misbehave.range_shift);
                    if start >= body.len() {
                        respond(
                            &mut stream,
                            "416 Range Not Satisfiable",
                            &[format!("Content-Range: bytes */{}", body.len())],
                            b"",
                            None,
                            0,
                        )
                    } else {
                        let cut = cuts
                            .lock()
                            .unwrap()
                            .first()
                            .copied()
                            .map(|f| (f * body.len() as f64) as usize)
                            .filter(|c| *c > start);
                        if cut.is_some() {
                            cuts.lock().unwrap().remove(0);
                        }
                        let end = cut.unwrap_or(body.len());
                        let length = if misbehave.wrong_length && n == 0 {
                            Some(2 * (body.len() - start))
                        } else {
                            Some(body.len() - start)
                        };
                        let (status, headers) = if range.is_some() {
                            (
                                "206 Partial Content",
                                vec![format!(
                                    "Content-Range: bytes {start}-{}/{}",
                                    body.len() - 1,
                                    body.len()
                                )],
                            )
                        } else {
                            ("200 OK", vec![])
                        };
                        let mut headers = headers;
                        headers.push("Last-Modified: Tue, 01 Jan 2013 00:00:00 GMT".into());
                        headers.push(format!("ETag: {etag}"));
                        if let Some(stall) = misbehave.stall_at.filter(|_| n == 0) {
                            let end = (stall * body.len() as f64) as usize;
                            sent.fetch_add(end as u64, Ordering::SeqCst);
                            std::thread::spawn(move || {
                                stall_after(stream, status, &headers, &body[..end], body.len())
                            });
                            continue;
                        }
                        sent.fetch_add((end - start) as u64, Ordering::SeqCst);
                        respond(
                            &mut stream,
                            status,
                            &headers,
                            &body[start..end],
                            length,
                            misbehave.trickle_ms,
                        )
                    }
                }
                _ => respond(&mut stream, "404 Not Found", &[], b"", None, 0),
            };
        }
    });
    server
}

/// Announces `length` bytes, sends `body`, then sends nothing for 20 s with the
/// connection open: a server that stalled.
fn stall_after(
    mut stream: std::net::TcpStream,
    status: &str,
    headers: &[String],
    body: &[u8],
    length: usize,
) {
    let mut head =
        format!("HTTP/1.1 {status}\r\nContent-Length: {length}\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(&format!("{h}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|_| stream.write_all(body))
        .and_then(|_| stream.flush());
    std::thread::sleep(std::time::Duration::from_secs(20));
}

/// What a test server reads of a request.
struct Request {
    path: String,
    range: Option<String>,
    if_range: Option<String>,
}

/// The path, Range and If-Range headers of a request.
fn read_request(stream: &std::net::TcpStream) -> Request {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap_or(0);
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let (mut range, mut if_range) = (None, None);
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("range") {
                range = Some(value.trim().to_string());
            } else if name.eq_ignore_ascii_case("if-range") {
                if_range = Some(value.trim().to_string());
            }
        }
    }
    Request { path, range, if_range }
}

/// Writes a response announcing `length` bytes (default: the body's) in 20 pieces
/// `trickle_ms` apart, then closes.
fn respond(
    stream: &mut std::net::TcpStream,
    status: &str,
    headers: &[String],
    body: &[u8],
    length: Option<usize>,
    trickle_ms: u64,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        length.unwrap_or(body.len())
    );
    for h in headers {
        head.push_str(&format!("{h}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    for piece in body.chunks(body.len().div_ceil(20).max(1)) {
        stream.write_all(piece)?;
        std::thread::sleep(std::time::Duration::from_millis(trickle_ms));
    }
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Both)
}

fn project(base: &str, months: &str) -> Project {
    Project::with_pipeline(&format!(
        "{}[sources.db]\nkind = \"lichess-db\"\nurl = \"{base}\"\nmonths = [{months}]\n[tree]\nmin_games = 2\n[exports.csv]\nformat = \"csv\"\noutput = \"build/nodes.csv\"\n",
        common::mini_sources()
    ))
}

fn okb(p: &Project, args: &[&str]) -> common::Run {
    p.command(args)
        .env_remove("OKB_MIRROR")
        .env("OKB_RETRY_DELAY_MS", "20")
        .output()
        .unwrap()
        .into()
}

fn stored_month(p: &Project) -> Vec<u8> {
    p.read(&format!("sources/{}", blake3::hash(month_bytes()).to_hex()))
}

#[test]
fn a_month_is_fetched_verified_pinned_and_built_offline() {
    let server = serve(Misbehave::default());
    let p = project(&server.base, "\"2013-01\"");
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("db: 1 months (1 fetched now)"), "{}", run.stderr);
    assert_eq!(stored_month(&p), month_bytes());
    let record: serde_json::Value =
        serde_json::from_slice(&p.read(&format!("sources/lichess-db/{MONTH}.json"))).unwrap();
    assert_eq!(record["sha256"], sha256(month_bytes()));
    assert_eq!(record["last_modified"], "Tue, 01 Jan 2013 00:00:00 GMT");
    assert_eq!(record["etag"], "\"month-2013-01\"");
    // Freshness: when it was fetched and what upstream said, in okb status.
    let status = okb(&p, &["status", "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    let line = status["sources"]["db"][0].as_str().unwrap().to_string();
    assert!(
        line.starts_with("2013-01: fetched 20")
            && line.contains(&format!("UTC from {}/standard/{MONTH}", server.base)),
        "{line}"
    );
    assert!(
        line.ends_with("; Last-Modified Tue, 01 Jan 2013 00:00:00 GMT; ETag \"month-2013-01\""),
        "{line}"
    );
    let run = okb(&p, &["pin"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(std::fs::read_to_string(p.path("pipeline.toml")).unwrap().contains("blake3 = "));
    let run = okb(&p, &["make", "--offline"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains(&format!("games:db:{MONTH} (5297 games")), "{}", run.stderr);
    assert_eq!(server.requests.load(Ordering::SeqCst), 1, "fetched once");
}

#[test]
fn a_month_not_in_the_list_and_offline_without_it_are_named() {
    let server = serve(Misbehave::default());
    let p = project(&server.base, "\"2013-01..2013-02\"");
    let run = okb(&p, &["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let stderr = flat(&run.stderr);
    assert!(
        stderr.contains("lichess_db_standard_rated_2013-02.pgn.zst is not in")
            && stderr.contains("/standard/list.txt"),
        "{stderr}"
    );
    let p = project(&server.base, "\"2013-01\"");
    let run = okb(&p, &["make", "--offline"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(flat(&run.stderr).contains(&format!("{MONTH} was never fetched")), "{}", run.stderr);
    // `okb fetch --offline` is not sent to run `okb fetch` again, but to drop --offline.
    let run = okb(&p, &["fetch", "--offline"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let said = flat(&run.stderr);
    assert!(
        said.contains("`okb fetch` without --offline gets it")
            && !said.contains("(`okb fetch` gets it)"),
        "{said}"
    );
}

#[test]
fn connections_cut_at_60_and_95_percent_resume_without_fetching_again_what_came() {
    let server = serve(Misbehave { cuts: vec![0.60, 0.95], ..Default::default() });
    let p = project(&server.base, "\"2013-01\"");
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(stored_month(&p), month_bytes());
    let size = month_bytes().len() as u64;
    let sent = server.sent.load(Ordering::SeqCst);
    println!(
        "month of {size} bytes: {sent} bytes sent in {} requests, {} sent again",
        server.requests.load(Ordering::SeqCst),
        sent - size
    );
    assert!(sent <= size + size / 100, "re-fetched {} of {size} bytes", sent - size);
    assert_eq!(
        server.ranges.lock().unwrap().len(),
        2,
        "two resumptions: {:?}",
        server.ranges.lock().unwrap()
    );
    assert!(run.stderr.contains("resuming at byte"), "{}", run.stderr);
    // Each resumption asks for the rest of the file the part came from.
    assert_eq!(*server.if_ranges.lock().unwrap(), vec!["\"month-2013-01\"".to_string(); 2]);
    assert!(!p.path(&format!("sources/{MONTH}.part.etag")).exists());
}

#[test]
fn a_part_left_by_an_earlier_run_is_resumed_and_a_wrong_content_length_is_a_broken_connection() {
    let server = serve(Misbehave { wrong_length: true, ..Default::default() });
    let p = project(&server.base, "\"2013-01\"");
    // What a killed run left: 70 % of the month, under the .part name.
    let had = month_bytes().len() * 7 / 10;
    std::fs::create_dir_all(p.path("sources")).unwrap();
    std::fs::write(p.path(&format!("sources/{MONTH}.part")), &month_bytes()[..had]).unwrap();
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(stored_month(&p), month_bytes());
    let sent = server.sent.load(Ordering::SeqCst);
    let refetched = (sent + had as u64).saturating_sub(month_bytes().len() as u64);
    println!("resumed a part of {had} bytes: {sent} bytes sent, {refetched} of them already had");
    assert!(refetched <= had as u64 / 100, "{refetched}");
    assert_eq!(server.ranges.lock().unwrap()[0], format!("bytes={had}-"));
    assert!(!p.path(&format!("sources/{MONTH}.part")).exists());
}

#[test]
fn a_stale_part_gets_416_and_the_download_starts_again() {
    let server = serve(Misbehave::default());
    let p = project(&server.base, "\"2013-01\"");
    std::fs::create_dir_all(p.path("sources")).unwrap();
    std::fs::write(p.path(&format!("sources/{MONTH}.part")), vec![b'x'; month_bytes().len() + 10])
        .unwrap();
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("HTTP 416"), "{}", run.stderr);
    assert_eq!(stored_month(&p), month_bytes());
}

#[test]
fn sums_that_disagree_fail_naming_both_and_leave_nothing_that_looks_complete() {
    let wrong = "ab".repeat(32);
    let server = serve(Misbehave { sums: Some(wrong.clone()), ..Default::default() });
    let p = project(&server.base, "\"2013-01\"");
    let run = okb(&p, &["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let stderr = flat(&run.stderr);
    assert!(
        stderr.contains(&format!("published sha256 {wrong}"))
            && stderr.contains(&sha256(month_bytes()))
            && stderr.contains(MONTH),
        "{stderr}"
    );
    // Folders of records only: no month, no .part, in the store.
    let left: Vec<_> = std::fs::read_dir(p.path("sources"))
        .unwrap()
        .flatten()
        .filter(|e| !e.path().is_dir())
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(!p.path(&format!("sources/lichess-db/{MONTH}.json")).exists());
}

#[test]
fn a_download_shows_its_bytes_rate_and_eta_in_logs() {
    let server = serve(Misbehave { trickle_ms: 40, ..Default::default() });
    let p = project(&server.base, "\"2013-01\"");
    let run: common::Run = p
        .command(&["fetch"])
        .env_remove("OKB_MIRROR")
        .env("OKB_PROGRESS_SECS", "0.1")
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let size = month_bytes().len();
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains(&format!("download {MONTH} (bytes): ")))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        line.contains(&format!("/{size}, ")) && line.contains("/s") && line.contains("ETA"),
        "{line}"
    );
}

/// A project whose last run left 70 % of the month as a part, from a file of ETag `etag`.
fn with_part(server: &Server, bytes: &[u8], etag: &str) -> Project {
    let p = project(&server.base, "\"2013-01\"");
    std::fs::create_dir_all(p.path("sources")).unwrap();
    std::fs::write(
        p.path(&format!("sources/{MONTH}.part")),
        &bytes[..month_bytes().len() * 7 / 10],
    )
    .unwrap();
    std::fs::write(p.path(&format!("sources/{MONTH}.part.etag")), etag).unwrap();
    p
}

#[test]
fn a_stalled_server_is_a_broken_connection_after_the_read_timeout_and_the_next_try_resumes() {
    let server = serve(Misbehave { stall_at: Some(0.5), ..Default::default() });
    let p = project(&server.base, "\"2013-01\"");
    let run: common::Run = p
        .command(&["fetch"])
        .env_remove("OKB_MIRROR")
        .env("OKB_RETRY_DELAY_MS", "20")
        .env("OKB_READ_TIMEOUT_SECS", "1")
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        flat(&run.stderr).contains("the server sent nothing for 1 s (read timeout"),
        "{}",
        run.stderr
    );
    assert_eq!(
        server.ranges.lock().unwrap().len(),
        1,
        "resumed once: {:?}",
        server.ranges.lock().unwrap()
    );
    assert_eq!(stored_month(&p), month_bytes());
}

#[test]
fn failing_answers_wait_the_servers_retry_after_or_a_doubling_backoff() {
    let failures = vec![
        ("503 Service Unavailable", None),
        ("502 Bad Gateway", None),
        ("500 Internal Server Error", None),
        ("429 Too Many Requests", Some(1)),
    ];
    let server = serve(Misbehave { failures, ..Default::default() });
    let p = project(&server.base, "\"2013-01\"");
    let run: common::Run = p
        .command(&["fetch"])
        .env_remove("OKB_MIRROR")
        .env("OKB_RETRY_DELAY_MS", "100")
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let stderr = flat(&run.stderr);
    for said in [
        "HTTP 503 Service Unavailable; resuming at byte 0 in 0.1 s",
        "HTTP 502 Bad Gateway; resuming at byte 0 in 0.2 s",
        "HTTP 500 Internal Server Error; resuming at byte 0 in 0.4 s",
        "HTTP 429 Too Many Requests; resuming at byte 0 in 1.0 s",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    assert_eq!(stored_month(&p), month_bytes());
}

#[test]
fn a_part_of_a_file_changed_upstream_is_replaced_at_once_not_after_the_rest() {
    // The server honours If-Range: the new month comes whole in the first answer.
    let server = serve(Misbehave::default());
    let p = with_part(&server, &vec![b'x'; month_bytes().len()], "\"month-2012-old\"");
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(flat(&run.stderr).contains("upstream changed (ETag \"month-2012-old\", now \"month-2013-01\"): the whole file comes again"), "{}", run.stderr);
    assert_eq!(*server.if_ranges.lock().unwrap(), vec!["\"month-2012-old\"".to_string()]);
    assert_eq!(
        (server.requests.load(Ordering::SeqCst), server.sent.load(Ordering::SeqCst)),
        (1, month_bytes().len() as u64)
    );
    assert_eq!(stored_month(&p), month_bytes());

    // A server that ignores If-Range sends the rest of the new file under its ETag: the
    // part is dropped before that rest is read.
    let server = serve(Misbehave { ignore_if_range: true, ..Default::default() });
    let p = with_part(&server, &vec![b'x'; month_bytes().len()], "\"month-2012-old\"");
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(flat(&run.stderr).contains("upstream changed (ETag \"month-2012-old\", now \"month-2013-01\") but the server sent the rest of the new file: starting again"), "{}", run.stderr);
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        2,
        "the rest of the new file, then the whole"
    );
    assert_eq!(stored_month(&p), month_bytes());
}

#[test]
fn a_206_of_another_range_is_named_as_such_and_the_download_starts_again() {
    let server = serve(Misbehave { range_shift: 1000, ..Default::default() });
    let p = with_part(&server, month_bytes(), "\"month-2013-01\"");
    let had = month_bytes().len() * 7 / 10;
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let said = format!(
        "asked for the bytes from {had}, the server answered HTTP 206 with Content-Range bytes {}-",
        had - 1000
    );
    assert!(flat(&run.stderr).contains(&said), "{}", run.stderr);
    assert!(!run.stderr.contains("416"), "{}", run.stderr);
    assert_eq!(stored_month(&p), month_bytes());
}
