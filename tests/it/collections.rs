//! Game collections pinned as one unit (`manifest` + `blake3`): the shipped pipeline's
//! master games from the compressed mirror `../shared/corpus`, and a small collection of
//! real master files downloaded from a server on 127.0.0.1 started here.

use crate::common;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use common::{Project, flat, shared_sources};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The two smallest files of the masters corpus, decompressed: (name, bytes).
fn two_masters() -> Vec<(String, Vec<u8>)> {
    ["Philidor", "Berliner"]
        .iter()
        .map(|player| {
            let packed = shared_sources().join(format!("../corpus/masters/{player}.pgn.zst"));
            let mut bytes = Vec::new();
            zstd::stream::read::Decoder::new(std::fs::File::open(packed).unwrap())
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            (format!("{player}.pgn"), bytes)
        })
        .collect()
}

/// Serves `files` at `/data/<name>` (anything else: 404) and returns the base URL.
fn serve(files: Vec<(String, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            while reader.read_line(&mut String::new()).is_ok_and(|n| n > 2) {}
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let _ = match files.iter().find(|(name, _)| path == format!("/data/{name}")) {
                Some((_, body)) => {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body))
                }
                None => stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                ),
            };
        }
    });
    base
}

/// A manifest of `files` at `base`, and its BLAKE3.
fn manifest(base: &str, files: &[(String, Vec<u8>)]) -> (String, String) {
    let mut text = String::from("# two players\nurl\tbytes\tblake3\n");
    for (name, bytes) in files {
        text.push_str(&format!(
            "{base}/data/{name}\t{}\t{}\n",
            bytes.len(),
            blake3::hash(bytes).to_hex()
        ));
    }
    let pin = blake3::hash(text.as_bytes()).to_hex().to_string();
    (text, pin)
}

/// A project with the hand-written taxonomies and the collection `text` pinned by `pin`.
fn project(text: &str, pin: &str) -> Project {
    let csv =
        "[exports.csv]\nformat = \"csv\"\noutput = \"build/nodes.csv\"\n[tree]\nmin_games = 2\n";
    let p = Project::with_pipeline(&format!(
        "{}[sources.masters]\nkind = \"pgn\"\nmanifest = \"collections/two.tsv\"\nblake3 = \"{pin}\"\n{csv}",
        common::mini_sources()
    ));
    std::fs::create_dir_all(p.path("collections")).unwrap();
    std::fs::write(p.path("collections/two.tsv"), text).unwrap();
    p
}

fn okb(p: &Project, mirror: Option<&Path>, args: &[&str]) -> common::Run {
    let mut command = p.command(args);
    command.env("OKB_RETRY_DELAY_MS", "20");
    match mirror {
        Some(dir) => command.env("OKB_MIRROR", dir),
        None => command.env_remove("OKB_MIRROR"),
    };
    command.output().unwrap().into()
}

#[test]
fn a_collection_is_downloaded_or_taken_compressed_from_a_mirror_with_the_same_steps_and_outputs() {
    let files = two_masters();
    let base = serve(files.clone());
    let (text, pin) = manifest(&base, &files);
    let downloaded = project(&text, &pin);
    let run = okb(&downloaded, None, &["make"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("Fetched masters: 2 of 2 files from {base}/data")),
        "{}",
        run.stderr
    );
    let steps = run.steps("Building");
    assert!(steps.iter().any(|s| s.starts_with("games:masters:Philidor.pgn")), "{steps:?}");
    // The same collection from the mirror of zstd copies: the same steps, the same tree.
    let mirrored = project(&text, &pin);
    let mirror = shared_sources().join("../corpus");
    let run = okb(&mirrored, Some(&mirror), &["make", "--offline"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("Fetched masters: 2 of 2 files from mirror"), "{}", run.stderr);
    assert_eq!(mirrored.read("build/nodes.csv"), downloaded.read("build/nodes.csv"));
    let status = okb(&mirrored, None, &["status"]);
    assert!(
        status.stderr.contains("masters 2 of 2 files fetched; the latest fetched 20")
            && status.stderr.contains("from mirror "),
        "{}",
        status.stderr
    );
    let status = okb(&downloaded, None, &["status"]);
    assert!(status.stderr.contains(&format!("from {base}/data/")), "{}", status.stderr);
    let packed = mirrored.path(&format!("sources/{}.zst", blake3::hash(&files[0].1).to_hex()));
    assert!(packed.exists(), "the store keeps the compressed copy");
    // A second make is fresh, offline, without the mirror.
    let again = okb(&mirrored, None, &["make", "--offline"]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert!(again.stderr.contains("nothing to do"), "{}", again.stderr);
}

#[test]
fn a_wrong_manifest_pin_or_file_pin_or_line_is_named() {
    let files = two_masters();
    let base = serve(files.clone());
    let (text, pin) = manifest(&base, &files);
    // The manifest edited after pinning.
    let p = project(&text.replace("two players", "three players"), &pin);
    let run = okb(&p, None, &["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let stderr = flat(&run.stderr);
    assert!(
        stderr.contains(&format!("pinned blake3 {pin}")) && stderr.contains("collections/two.tsv"),
        "{stderr}"
    );
    // A file whose bytes are not its line's pin names the URL and both hashes.
    let other = blake3::hash(b"other").to_hex().to_string();
    let wrong = text.replace(&blake3::hash(&files[1].1).to_hex().to_string(), &other);
    let p = project(&wrong, blake3::hash(wrong.as_bytes()).to_hex().as_ref());
    let run = okb(&p, None, &["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let stderr = flat(&run.stderr);
    assert!(
        stderr.contains("masters:Berliner.pgn")
            && stderr.contains(&other)
            && stderr.contains(&format!("{base}/data/Berliner.pgn")),
        "{stderr}"
    );
    // A malformed line is named by file and line.
    let bad = format!("{text}https://example.org/x.pgn\t12\n");
    let p = project(&bad, blake3::hash(bad.as_bytes()).to_hex().as_ref());
    let run = okb(&p, None, &["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(flat(&run.stderr).contains("two.tsv:5: 2 fields, expected 3"), "{}", run.stderr);
}

#[test]
fn pin_writes_the_manifest_pin_and_fetch_gets_every_file() {
    let files = two_masters();
    let base = serve(files.clone());
    let (text, pin) = manifest(&base, &files);
    let p = project(&text, &pin);
    let unpinned = std::fs::read_to_string(p.path("pipeline.toml"))
        .unwrap()
        .replace(&format!("blake3 = \"{pin}\"\n"), "");
    std::fs::write(p.path("pipeline.toml"), unpinned).unwrap();
    let run = okb(&p, None, &["make", "--locked"]);
    assert_eq!(run.status, 1, "a release build needs the pin: {}", run.stderr);
    assert!(
        flat(&run.stderr).contains("3 sources have no blake3 pin in")
            && flat(&run.stderr).contains("pipeline.toml: lichess, masters, scid"),
        "{}",
        run.stderr
    );
    let run = okb(&p, None, &["make"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("`okb pin masters` records blake3 {pin}")),
        "{}",
        run.stderr
    );
    let run = okb(&p, None, &["pin", "masters"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(std::fs::read_to_string(p.path("pipeline.toml")).unwrap().contains(&pin));
    let run = okb(&p, None, &["fetch"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("masters: 2 files (0 fetched now)"),
        "the make fetched them: {}",
        run.stderr
    );
    for (_, bytes) in &files {
        assert_eq!(
            &std::fs::read(p.path(&format!("sources/{}", blake3::hash(bytes).to_hex()))).unwrap(),
            bytes
        );
    }
}

/// The shipped pipeline (without its engine, which tests/it/make_engine.rs covers) in a
/// fresh folder with its committed inputs: the master games from the compressed mirror.
#[test]
fn the_shipped_pipeline_builds_the_454278_master_games_from_the_mirror() {
    let shipped = std::fs::read_to_string(format!("{ROOT}/pipeline.toml")).unwrap();
    let (start, end) = (shipped.find("[engine]").unwrap(), shipped.find("[store]").unwrap());
    let p = Project::with_pipeline(&format!("{}{}", &shipped[..start], &shipped[end..]));
    // The pipeline's committed inputs: the collection's manifest and the pinned evaluations.
    for file in ["collections/masters.tsv", "evals/okb-shipped.jsonl.zst"] {
        std::fs::create_dir_all(p.path(file).parent().unwrap()).unwrap();
        std::fs::copy(format!("{ROOT}/{file}"), p.path(file)).unwrap();
    }
    let mirror: PathBuf = shared_sources();
    let mirrors = format!("{}:{}", mirror.display(), mirror.join("../corpus").display());
    let run: common::Run = p
        .command(&["make", "--offline", "--strict", "--json"])
        .env("OKB_MIRROR", &mirrors)
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        report["warnings"].as_array().unwrap().len(),
        4,
        "the four reviewed duplicates, none from the games: {report}"
    );
    assert!(run.stderr.contains("Fetched masters: 240 of 240 files from mirror"), "{}", run.stderr);
    assert!(
        run.stderr.contains("380615 games counted of 454278, 73576 repeats skipped"),
        "{}",
        run.stderr
    );
    let root = p.okb(&["query", "moves", "", "--json"]);
    let node: serde_json::Value = serde_json::from_str(&root.stdout).unwrap();
    assert_eq!(node["game_count"], 380615, "each distinct game once: {node}");
    let again = p.okb(&["make", "--offline"]);
    assert!(again.stderr.contains("nothing to do"), "{}", again.stderr);
}
