//! Downloading pinned sources from a real HTTP server on 127.0.0.1, started here.

use crate::common;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::Project;

const BODY: &[u8] =
    b"eco\tname\tpgn\nB00\tKing's Pawn Game\t1. e4\nC20\tKing's Pawn Game: Open\t1. e4 e5\n";

const NEWER: &[u8] = b"eco\tname\tpgn\nB00\tKing's Pawn Game\t1. e4\nC20\tKing's Pawn Game: Open\t1. e4 e5\nC40\tKing's Knight Opening\t1. e4 e5 2. Nf3\n";

/// What a test server has seen and serves.
struct Server {
    base: String,
    /// Requests of /flaky.tsv so far.
    flaky_hits: Arc<AtomicUsize>,
    /// The body of /changing.tsv.
    changing: Arc<Mutex<Vec<u8>>>,
}

fn serve() -> String {
    serve_with_state().base
}

/// Serves: /ok.tsv (BODY), /missing.tsv (404), /drop.tsv (headers promise the whole body,
/// half is sent, then the connection is closed), /flaky.tsv (503 twice, then BODY),
/// /busy.tsv (429 with Retry-After: 1, then BODY), /changing.tsv (whatever the test sets),
/// /stall.tsv (half the body, then nothing for 20 s with the connection open; then BODY).
fn serve_with_state() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let flaky_hits = Arc::new(AtomicUsize::new(0));
    let changing = Arc::new(Mutex::new(BODY.to_vec()));
    let (hits, body) = (flaky_hits.clone(), changing.clone());
    let busy_hits = AtomicUsize::new(0);
    let stall_hits = AtomicUsize::new(0);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let _ = match path.as_str() {
                "/flaky.tsv" if hits.fetch_add(1, Ordering::SeqCst) < 2 => {
                    stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                }
                "/busy.tsv" if busy_hits.fetch_add(1, Ordering::SeqCst) == 0 => stream.write_all(
                    b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                ),
                "/stall.tsv" if stall_hits.fetch_add(1, Ordering::SeqCst) == 0 => {
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", BODY.len());
                    let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&BODY[..BODY.len() / 2]));
                    // Held open by its own thread: the server goes on answering others.
                    std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_secs(20));
                        drop(stream);
                    });
                    continue;
                }
                "/ok.tsv" | "/flaky.tsv" | "/busy.tsv" | "/stall.tsv" => {
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", BODY.len());
                    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(BODY))
                }
                "/changing.tsv" => {
                    let body = body.lock().unwrap().clone();
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&body))
                }
                "/drop.tsv" => {
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", BODY.len());
                    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&BODY[..BODY.len() / 2]))
                }
                _ => stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            };
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    Server { base: format!("http://{addr}"), flaky_hits, changing }
}

fn project(url: &str, pin: &str) -> Project {
    Project::with_pipeline(&format!(
        "[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"{url}\"\nblake3 = \"{pin}\"\n\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n"
    ))
}

/// Stderr as one line: miette wraps long messages (64-digit hashes) behind a `│` margin.
fn flat(stderr: &str) -> String {
    stderr.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ")
}

fn okb(p: &Project, args: &[&str]) -> common::Run {
    // Retries wait 20 ms, 40 ms, … here instead of 0.5 s, 1 s, …
    p.command(args)
        .env_remove("OKB_MIRROR")
        .env("OKB_RETRY_DELAY_MS", "20")
        .output()
        .unwrap()
        .into()
}

#[test]
fn a_pinned_download_is_verified_stored_and_reused() {
    let base = serve();
    let pin = blake3::hash(BODY).to_hex().to_string();
    let url = format!("{base}/ok.tsv");
    let p = project(&url, &pin);
    let run = okb(&p, &["make"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains(&format!("Fetched openings from {url}")), "{}", run.stderr);
    assert_eq!(std::fs::read(p.path(&format!("sources/{pin}"))).unwrap(), BODY);
    // Offline now works: the bytes are in the project's store.
    let run = okb(&p, &["make", "--offline"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let q = okb(&p, &["query", "moves", "1. e4 e5", "--json"]);
    assert!(q.stdout.contains("King's Pawn Game"), "{}", q.stdout);
}

#[test]
fn a_wrong_hash_names_expected_actual_and_url() {
    let base = serve();
    let wrong = "0".repeat(64);
    let url = format!("{base}/ok.tsv");
    let p = project(&url, &wrong);
    let run = okb(&p, &["make"]);
    assert_ne!(run.status, 0);
    let actual = blake3::hash(BODY).to_hex().to_string();
    assert!(
        run.stderr.contains(&wrong) && run.stderr.contains(&actual) && run.stderr.contains(&url),
        "{}",
        run.stderr
    );
    assert!(
        !p.path(&format!("sources/{actual}")).exists(),
        "unverified bytes must not enter the store"
    );
}

#[test]
fn a_404_is_a_clear_error() {
    let base = serve();
    let url = format!("{base}/missing.tsv");
    let p = project(&url, &blake3::hash(BODY).to_hex());
    let run = okb(&p, &["fetch"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("404") && run.stderr.contains(&url), "{}", run.stderr);
    assert!(!run.stderr.contains("spurious"), "a 404 is not retried: {}", run.stderr);
}

#[test]
fn a_connection_dropped_midway_is_an_error_and_leaves_nothing() {
    let base = serve();
    let url = format!("{base}/drop.tsv");
    let p = project(&url, &blake3::hash(BODY).to_hex());
    let run = okb(&p, &["make"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains(&url), "{}", run.stderr);
    let leftovers: Vec<_> =
        std::fs::read_dir(p.path("sources")).map(|d| d.flatten().count()).into_iter().collect();
    assert!(leftovers.iter().all(|&n| n == 0), "partial download left in sources/");
    assert!(!p.path("out/nodes.csv").exists());
}

#[test]
fn offline_without_the_file_says_where_it_looked() {
    let p = project("http://127.0.0.1:9/x.tsv", &blake3::hash(BODY).to_hex());
    let run = okb(&p, &["make", "--offline"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("--offline"), "{}", run.stderr);
}

#[test]
fn offline_never_downloads_an_unpinned_source() {
    let base = serve();
    let p = Project::with_pipeline(&format!(
        "[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"{base}/ok.tsv\"\n"
    ));
    let run = okb(&p, &["make", "--offline"]);
    assert_ne!(run.status, 0);
    assert!(common::flat(&run.stderr).contains("it has no pin"), "{}", run.stderr);
    assert!(!run.stderr.contains("spurious network error"), "{}", run.stderr);
}

#[test]
fn pin_writes_the_hash_of_unpinned_sources() {
    let base = serve();
    let url = format!("{base}/ok.tsv");
    let p = Project::with_pipeline(&format!(
        "[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"{url}\"\n"
    ));
    let run = okb(&p, &["pin"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    assert!(text.contains(&format!("blake3 = \"{}\"", blake3::hash(BODY).to_hex())), "{text}");
    assert_eq!(okb(&p, &["make", "--offline"]).status, 0);
}

#[test]
fn transient_failures_are_retried_with_backoff_and_a_dropped_connection_gives_up_after_four_tries()
{
    let server = serve_with_state();
    let pin = blake3::hash(BODY).to_hex().to_string();
    let p = project(&format!("{}/flaky.tsv", server.base), &pin);
    let run = okb(&p, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(server.flaky_hits.load(Ordering::SeqCst), 3, "two 503s, then the body");
    assert_eq!(run.stderr.matches("spurious network error").count(), 2, "{}", run.stderr);
    assert!(run.stderr.contains("503"), "{}", run.stderr);

    let busy = project(&format!("{}/busy.tsv", server.base), &pin);
    let started = std::time::Instant::now();
    let run = okb(&busy, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("429") && run.stderr.contains("next in 1.0 s"),
        "Retry-After is honoured: {}",
        run.stderr
    );
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));

    let dropped = project(&format!("{}/drop.tsv", server.base), &pin);
    let run = okb(&dropped, &["fetch"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("after 4 tries"), "{}", run.stderr);
}

#[test]
fn pin_edits_pipeline_toml_as_toml_keeping_comments_and_layout() {
    let base = serve();
    let text = format!(
        "# My openings project.\n\n[sources.openings]   # the authority\nkind = \"lichess-tsv\"  # TSV\nurl = \"{base}/ok.tsv\"\n\n# Exports below.\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\" # [sources.openings] in a comment\n"
    );
    let p = Project::with_pipeline(&text);
    let run = okb(&p, &["pin"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let pin = blake3::hash(BODY).to_hex().to_string();
    let expected = text.replace("/ok.tsv\"\n", &format!("/ok.tsv\"\nblake3 = \"{pin}\"\n"));
    assert_eq!(std::fs::read_to_string(p.path("pipeline.toml")).unwrap(), expected);
    // Pinned sources are left alone without --force, and say how to re-pin.
    let run = okb(&p, &["pin", "openings"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("okb pin --force openings"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(p.path("pipeline.toml")).unwrap(), expected);
    let run = okb(&p, &["pin", "nonesuch"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr.contains("no source named nonesuch") && run.stderr.contains("openings"),
        "{}",
        run.stderr
    );
}

#[test]
fn changed_upstream_bytes_fail_with_both_hashes_until_pin_force_repins() {
    let server = serve_with_state();
    let url = format!("{}/changing.tsv", server.base);
    let old = blake3::hash(BODY).to_hex().to_string();
    let new = blake3::hash(NEWER).to_hex().to_string();
    let text = format!(
        "[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"{url}\"\nblake3 = \"{old}\" # June\n\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n"
    );
    let p = Project::with_pipeline(&text);
    *server.changing.lock().unwrap() = NEWER.to_vec();
    let run = okb(&p, &["make"]);
    assert_ne!(run.status, 0);
    let said = format!("pinned blake3 {old}, {url} gave blake3 {new}");
    assert!(
        flat(&run.stderr).contains(&said) && run.stderr.contains("okb pin --force openings"),
        "{}",
        run.stderr
    );

    let run = okb(&p, &["pin", "--force", "openings"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("Repinned openings blake3 {old} → {new}")),
        "{}",
        run.stderr
    );
    let repinned = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    assert_eq!(repinned, text.replace(&old, &new), "only the hash changes; the comment stays");
    let run = okb(&p, &["make", "--offline"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let q = okb(&p, &["query", "moves", "1. e4 e5 2. Nf3", "--json"]);
    assert!(q.stdout.contains("King's Knight Opening"), "{}", q.stdout);

    let run = okb(&p, &["pin", "--force"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("openings: its bytes still match the pin"), "{}", run.stderr);
}

#[test]
fn a_wrong_pin_names_the_mirror_file_and_its_hash_and_missing_mirrors_are_named() {
    let p = project("https://example.invalid/pinned/ok.tsv", &"0".repeat(64));
    let mirror = p.path("mirror/pinned");
    std::fs::create_dir_all(&mirror).unwrap();
    std::fs::write(mirror.join("ok.tsv"), BODY).unwrap();
    std::fs::write(p.path("mirror/ok.tsv"), NEWER).unwrap();
    let run = okb(&p, &["make", "--offline", "--mirror", "mirror"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let actual = blake3::hash(BODY).to_hex().to_string();
    let said = format!(
        "pinned blake3 {}, mirror file mirror/pinned/ok.tsv gave blake3 {actual}",
        "0".repeat(64)
    );
    assert!(
        flat(&run.stderr).contains(&said),
        "the file matching more of the url wins: {}",
        run.stderr
    );

    let run = okb(&p, &["make", "--offline", "--mirror", "no-such-dir"]);
    assert_eq!(run.status, 1);
    assert!(flat(&run.stderr).contains("no-such-dir (no such folder)"), "{}", run.stderr);
}

#[test]
fn a_server_that_stops_sending_is_retried_after_the_read_timeout() {
    let base = serve();
    let p = project(&format!("{base}/stall.tsv"), &blake3::hash(BODY).to_hex());
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
        flat(&run.stderr).contains(&format!(
            "connection broke after {} bytes: the server sent nothing for 1 s (read timeout",
            BODY.len() / 2
        )),
        "{}",
        run.stderr
    );
}
