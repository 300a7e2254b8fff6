//! Downloading pinned sources from a real HTTP server on 127.0.0.1, started here.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use common::Project;

const BODY: &[u8] = b"eco\tname\tpgn\nB00\tKing's Pawn Game\t1. e4\nC20\tKing's Pawn Game: Open\t1. e4 e5\n";

/// Serves: /ok.tsv (BODY), /missing.tsv (404), /drop.tsv (headers promise the whole body,
/// half is sent, then the connection is closed). Returns the base URL.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
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
                "/ok.tsv" => {
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", BODY.len());
                    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(BODY))
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
    format!("http://{addr}")
}

fn project(url: &str, pin: &str) -> Project {
    Project::with_pipeline(&format!(
        "[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"{url}\"\nblake3 = \"{pin}\"\n\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n"
    ))
}

fn okb(p: &Project, args: &[&str]) -> common::Run {
    p.command(args).env_remove("OKB_MIRROR").output().unwrap().into()
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
    assert!(run.stderr.contains(&wrong) && run.stderr.contains(&actual) && run.stderr.contains(&url), "{}", run.stderr);
    assert!(!p.path(&format!("sources/{actual}")).exists(), "unverified bytes must not enter the store");
}

#[test]
fn a_404_is_a_clear_error() {
    let base = serve();
    let url = format!("{base}/missing.tsv");
    let p = project(&url, &blake3::hash(BODY).to_hex());
    let run = okb(&p, &["fetch"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains("404") && run.stderr.contains(&url), "{}", run.stderr);
}

#[test]
fn a_connection_dropped_midway_is_an_error_and_leaves_nothing() {
    let base = serve();
    let url = format!("{base}/drop.tsv");
    let p = project(&url, &blake3::hash(BODY).to_hex());
    let run = okb(&p, &["make"]);
    assert_ne!(run.status, 0);
    assert!(run.stderr.contains(&url), "{}", run.stderr);
    let leftovers: Vec<_> = std::fs::read_dir(p.path("sources")).map(|d| d.flatten().count()).into_iter().collect();
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
fn pin_writes_the_hash_of_unpinned_sources() {
    let base = serve();
    let url = format!("{base}/ok.tsv");
    let p = Project::with_pipeline(&format!("[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"{url}\"\n"));
    let run = okb(&p, &["pin"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    assert!(text.contains(&format!("blake3 = \"{}\"", blake3::hash(BODY).to_hex())), "{text}");
    assert_eq!(okb(&p, &["make", "--offline"]).status, 0);
}
