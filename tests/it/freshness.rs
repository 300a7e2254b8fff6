//! How fresh a knowledge base is, said where users look: the release manifest and the
//! API's `GET /` metadata carry each game source's games and the dates they span (read
//! from the games, so the same inputs reproduce them), and the API adds when and from
//! where each source was fetched. Checked on real collections from ../shared against an
//! independent scan of their tags.

use crate::common;
use std::path::PathBuf;

use common::{Project, Server};
use reqwest::blocking::Client;
use serde_json::Value;

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared").join(rel)
}

/// What a plain reading of a PGN file's tags says: games (by `[Event `), games with a
/// result, and the first and last `Date` (or `UTCDate`) as `YYYY-MM-DD`, unknown parts
/// read as their first day.
fn scan(path: &PathBuf) -> (u64, u64, String, String) {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let (mut games, mut decided, mut dates) = (0, 0, Vec::new());
    let mut date: Option<String> = None;
    let finish = |date: &mut Option<String>, dates: &mut Vec<String>| dates.extend(date.take());
    for line in text.lines() {
        if line.starts_with("[Event ") {
            finish(&mut date, &mut dates);
            games += 1;
        }
        if let Some(result) = line.strip_prefix("[Result \"") {
            decided += u64::from(["1-0\"]", "0-1\"]", "1/2-1/2\"]"].contains(&result.trim_end()));
        }
        let value = line
            .strip_prefix("[Date \"")
            .or_else(|| line.strip_prefix("[UTCDate \"").filter(|_| date.is_none()));
        if let Some(value) = value.and_then(|v| v.strip_suffix("\"]")) {
            let parts: Vec<&str> = value.split('.').collect();
            let known = |p: &str| if p.contains('?') { "01".to_string() } else { p.to_string() };
            if parts.len() == 3 && !parts[0].contains('?') {
                date = Some(format!("{}-{}-{}", parts[0], known(parts[1]), known(parts[2])));
            }
        }
    }
    finish(&mut date, &mut dates);
    dates.sort();
    (games, decided, dates.first().cloned().unwrap(), dates.last().cloned().unwrap())
}

fn project() -> Project {
    // A pinned taxonomy fetched from the mirror (so it has a fetch record), and two real
    // game collections.
    Project::with_pipeline(&format!(
        r#"[sources.lichess-a]
kind = "lichess-tsv"
url = "https://raw.githubusercontent.com/lichess-org/chess-openings/51b886249b9e418498d25b6e39b926c3de99c29a/a.tsv"
blake3 = "9a89e60dd25cc04c5d7b3abc4f88088224baf84b516614918b9f17e35b2f6c37"
[sources.twic]
kind = "pgn"
paths = ["{}"]
[sources.lichess]
kind = "pgn"
paths = ["{}"]
[tree]
max_ply = 6
"#,
        shared("corpus/twic/twic0920.pgn").display(),
        shared("corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn").display()
    ))
}

#[test]
fn the_manifest_and_the_api_say_what_each_source_covers_and_the_api_when_it_was_fetched() {
    let p = project();
    let run = p.make(&[]);
    assert!(run.stderr.contains("Building coverage ("), "{}", run.stderr);
    let manifest: Value = serde_json::from_slice(&p.read("build/manifest.json")).unwrap();
    let coverage = &manifest["coverage"];
    for (name, file) in [
        ("twic", "corpus/twic/twic0920.pgn"),
        ("lichess", "corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn"),
    ] {
        let (games, decided, first, last) = scan(&shared(file));
        let c = &coverage[name];
        assert_eq!(c["files"], 1, "{name}: {c}");
        assert_eq!(c["games_read"], games, "{name}: {c}");
        assert_eq!(c["games_counted"], decided, "{name}: {c}");
        assert_eq!(
            (c["first_date"].as_str().unwrap(), c["last_date"].as_str().unwrap()),
            (first.as_str(), last.as_str()),
            "{name}"
        );
    }
    assert!(coverage.get("lichess-a").is_none(), "a taxonomy has no games: {coverage}");

    // The API's metadata says the same, with every source's pin and, for the one fetched
    // from the mirror, when and from where.
    let server = Server::start(&p, &[], &[]);
    let client = Client::new();
    let answer = client.get(server.url("/")).header("accept", "application/json").send().unwrap();
    assert_eq!(answer.headers()["content-type"], "application/json");
    let meta: Value = serde_json::from_str(&answer.text().unwrap()).unwrap();
    assert_eq!(meta["build"], 1);
    assert_eq!(meta["sources"]["twic"]["games"], coverage["twic"]);
    assert_eq!(meta["sources"]["lichess"]["games"], coverage["lichess"]);
    assert_eq!(meta["sources"]["lichess-a"]["blake3"], manifest["sources"]["lichess-a"]["blake3"]);
    let fetched = &meta["sources"]["lichess-a"]["fetched"];
    assert!(
        fetched["from"].as_str().unwrap().ends_with("lichess-chess-openings/a.tsv"),
        "{fetched}"
    );
    assert!(fetched["at"].as_str().unwrap().ends_with(" UTC"), "{fetched}");
    let openapi: Value = serde_json::from_str(
        &client.get(server.url("/openapi.json")).send().unwrap().text().unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (doc, answer_file, list) = (
        dir.path().join("openapi.json"),
        dir.path().join("meta.json"),
        dir.path().join("list.json"),
    );
    std::fs::write(&doc, openapi.to_string()).unwrap();
    std::fs::write(&answer_file, meta.to_string()).unwrap();
    std::fs::write(
        &list,
        serde_json::json!([{ "file": answer_file, "ref": "#/components/schemas/Metadata" }])
            .to_string(),
    )
    .unwrap();
    common::python_check(
        "check_json.py",
        &["openapi", doc.to_str().unwrap(), list.to_str().unwrap()],
    );

    // A browser still gets the explorer page at `/`.
    let page = client
        .get(server.url("/"))
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .send()
        .unwrap();
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));

    // The manifest is reproduced by a second build from scratch: fetch times stay out.
    let again = project();
    again.make(&[]);
    let other: Value = serde_json::from_slice(&again.read("build/manifest.json")).unwrap();
    assert_eq!(other, manifest);
}
