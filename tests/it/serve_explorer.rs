//! `okb serve` as a faithful Lichess opening explorer: `/masters` and `/lichess` over a
//! store built with `[explorer]`, talked to over real HTTP on 127.0.0.1. Filtered counts
//! are compared with counts computed independently by python-chess over the same PGN
//! (tests/check_explorer.py); answers are validated against the real explorer's schemas
//! (vendored in schemas/lichess-explorer.schema.json) and okb's OpenAPI document; top
//! games and single-game moves round-trip through `GET /masters/pgn/{id}`.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Project, Server, mini_sources};
use reqwest::blocking::Client;
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn shared(rel: &str) -> String {
    root().join("../shared").join(rel).display().to_string()
}

/// Three masters files with no bad games (1,254 games, 1830–2010s).
fn masters_files() -> Vec<String> {
    ["Alburt", "Ashley", "Berliner"]
        .iter()
        .map(|n| shared(&format!("corpus/masters/{n}.pgn.zst")))
        .collect()
}

fn lichess_file() -> String {
    shared("corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn")
}

const MAX_PLY: u32 = 8;

/// The mini taxonomies and `files` as one game source, with the explorer index.
fn project(files: &[String], explorer: bool) -> Project {
    let paths: Vec<String> = files.iter().map(|f| format!("{f:?}")).collect();
    Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [{}]\n[tree]\nmax_ply = {MAX_PLY}\nmin_games = 3\n{}",
        mini_sources(),
        paths.join(", "),
        if explorer { "[explorer]\n" } else { "" }
    ))
}

fn checker(args: &[&str]) -> String {
    common::python_check("check_explorer.py", args)
}

fn get(client: &Client, server: &Server, path: &str, status: u16) -> Value {
    let response = client.get(server.url(path)).send().unwrap();
    assert_eq!(response.status().as_u16(), status, "GET {path}");
    assert_eq!(response.headers()["content-type"], "application/json", "GET {path}");
    serde_json::from_str(&response.text().unwrap()).unwrap()
}

fn total(v: &Value) -> u64 {
    ["white", "draws", "black"].iter().map(|k| v[k].as_u64().unwrap()).sum()
}

/// Every answer's counts and listed moves equal python-chess's counts for its query.
fn compare_counts(answers: &[(Value, Value)], files: &[String], dir: &Path) {
    let queries: Vec<Value> = answers.iter().map(|(q, _)| q.clone()).collect();
    let qfile = dir.join("queries.json");
    let out = dir.join("counts.json");
    std::fs::write(&qfile, Value::Array(queries).to_string()).unwrap();
    let mut args = vec![
        "counts".to_string(),
        MAX_PLY.to_string(),
        qfile.display().to_string(),
        out.display().to_string(),
    ];
    args.extend(files.iter().cloned());
    checker(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let expected: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    for ((query, answer), want) in answers.iter().zip(&expected) {
        for k in ["white", "draws", "black"] {
            assert_eq!(answer[k], want[k], "{k} for {query}");
        }
        for m in answer["moves"].as_array().unwrap() {
            let uci = m["uci"].as_str().unwrap();
            let w = &want["moves"][uci];
            assert_eq!(json!([m["white"], m["draws"], m["black"]]), *w, "move {uci} for {query}");
            assert!(total(m) > 0, "a listed move was played: {query}");
        }
    }
}

/// Collects answers with the schema definitions they must satisfy.
struct Schemas {
    dir: tempfile::TempDir,
    lichess: Vec<Value>,
    okb: Vec<Value>,
}

impl Schemas {
    fn keep(&mut self, answer: &Value, lichess_def: &str, okb_def: &str) {
        let file = self.dir.path().join(format!("{}.json", self.lichess.len()));
        std::fs::write(&file, answer.to_string()).unwrap();
        self.lichess.push(json!({ "file": file, "def": lichess_def }));
        self.okb.push(json!({ "file": file, "ref": format!("#/components/schemas/{okb_def}") }));
    }

    fn check(&self, openapi: &Value) {
        let manifest = self.dir.path().join("lichess.json");
        std::fs::write(&manifest, Value::Array(self.lichess.clone()).to_string()).unwrap();
        let schema = root().join("schemas/lichess-explorer.schema.json");
        checker(&["schema", schema.to_str().unwrap(), manifest.to_str().unwrap()]);
        let doc = self.dir.path().join("openapi.json");
        std::fs::write(&doc, openapi.to_string()).unwrap();
        let manifest = self.dir.path().join("okb.json");
        std::fs::write(&manifest, Value::Array(self.okb.clone()).to_string()).unwrap();
        let out = Command::new("python3")
            .arg(root().join("tests/check_json.py"))
            .args(["openapi", doc.to_str().unwrap(), manifest.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Round trips games through `GET /masters/pgn/{id}` and checks them with python-chess.
struct Pgns {
    dir: tempfile::TempDir,
    manifest: Vec<Value>,
}

impl Pgns {
    fn keep(
        &mut self,
        client: &Client,
        server: &Server,
        play: &str,
        uci: &str,
        game: &Value,
    ) -> String {
        let id = game["id"].as_str().unwrap();
        let response = client.get(server.url(&format!("/masters/pgn/{id}"))).send().unwrap();
        assert_eq!(response.status().as_u16(), 200, "pgn of {id}");
        assert_eq!(response.headers()["content-type"], "application/x-chess-pgn");
        let text = response.text().unwrap();
        let file = self.dir.path().join(format!("{}.pgn", self.manifest.len()));
        std::fs::write(&file, &text).unwrap();
        self.manifest.push(json!({
            "file": file, "play": play, "uci": uci,
            "white": game["white"]["name"], "black": game["black"]["name"], "winner": game["winner"],
        }));
        text
    }

    fn check(&self) {
        let manifest = self.dir.path().join("manifest.json");
        std::fs::write(&manifest, Value::Array(self.manifest.clone()).to_string()).unwrap();
        checker(&["pgn", manifest.to_str().unwrap()]);
    }
}

/// A built project with the explorer index, its server, and the checks' collectors.
struct Run {
    project: Project,
    server: Server,
    client: Client,
    dir: tempfile::TempDir,
    schemas: Schemas,
    pgns: Pgns,
}

impl Run {
    fn start(files: &[String]) -> Run {
        let project = project(files, true);
        project.make(&[]);
        let server = Server::start(&project, &[], &[]);
        Run {
            project,
            server,
            client: Client::new(),
            dir: tempfile::tempdir().unwrap(),
            schemas: Schemas {
                dir: tempfile::tempdir().unwrap(),
                lichess: Vec::new(),
                okb: Vec::new(),
            },
            pgns: Pgns { dir: tempfile::tempdir().unwrap(), manifest: Vec::new() },
        }
    }
}

const LINES: [&str; 6] = ["", "e2e4", "d2d4", "e2e4,c7c5", "e2e4,e7e5", "d2d4,g8f6"];

#[test]
fn masters_year_filters_equal_independent_counts_and_top_games_round_trip() {
    let files = masters_files();
    let Run { project: _project, server, client, dir, mut schemas, mut pgns } = Run::start(&files);
    let filters: [(&str, Option<[u32; 2]>); 5] = [
        ("", None),
        ("&since=1990&until=1999", Some([1990, 1999])),
        ("&since=2000", Some([2000, 9999])),
        ("&until=1979", Some([0, 1979])),
        ("&since=1985&until=1985", Some([1985, 1985])),
    ];
    let mut answers = Vec::new();
    let mut singles = 0;
    for line in LINES {
        for (params, years) in filters {
            let answer =
                get(&client, &server, &format!("/masters?play={line}&moves=1000{params}"), 200);
            schemas.keep(&answer, "OpeningExplorerMasters", "MastersAnswer");
            // Top games: within the filter, best rated first, each reaching the position.
            let top = answer["topGames"].as_array().unwrap();
            assert!(top.len() <= 15);
            if total(&answer) >= 15 && params.is_empty() {
                assert!(!top.is_empty(), "top games at {line:?}");
            }
            let score = |g: &Value| {
                g["white"]["rating"].as_u64().unwrap() + g["black"]["rating"].as_u64().unwrap()
            };
            for pair in top.windows(2) {
                assert!(score(&pair[0]) >= score(&pair[1]), "best rated first: {pair:?}");
            }
            for g in top {
                let year = g["year"].as_u64().unwrap() as u32;
                if let Some([a, b]) = years {
                    assert!((a..=b).contains(&year), "{g} outside {params}");
                }
                assert!(g.get("speed").is_none(), "masters games have no speed: {g}");
                if line.len() <= 4 {
                    pgns.keep(&client, &server, line, g["uci"].as_str().unwrap(), g);
                }
            }
            // A move's `game` is there exactly when one game played it.
            for m in answer["moves"].as_array().unwrap() {
                assert_eq!(total(m) == 1, !m["game"].is_null(), "{m}");
                if total(m) == 1 {
                    singles += 1;
                    pgns.keep(&client, &server, line, m["uci"].as_str().unwrap(), &m["game"]);
                }
            }
            answers.push((json!({ "play": line, "years": years }), answer));
        }
    }
    assert!(singles > 0, "some filtered move was played once");
    compare_counts(&answers, &files, dir.path());
    pgns.check();
    // Disjoint years add up: unknown years are in no filter, so the sum is at most the total.
    let all = get(&client, &server, "/masters", 200);
    let before = get(&client, &server, "/masters?until=1989", 200);
    let after = get(&client, &server, "/masters?since=1990", 200);
    assert!(
        total(&before) + total(&after) <= total(&all) && total(&before) > 0 && total(&after) > 0
    );
    // The default answer is the tree's: the same counts as GET /node/fen.
    let node = get(
        &client,
        &server,
        "/node/fen/rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1",
        200,
    );
    assert_eq!(total(&all), node["game_count"].as_u64().unwrap());
    assert_eq!(all["topGames"].as_array().unwrap().len(), 15);
    assert_eq!(
        get(&client, &server, "/masters?topGames=3", 200)["topGames"].as_array().unwrap().len(),
        3
    );
    // Unknown ids are 404s naming the id.
    let missing = client.get(server.url("/masters/pgn/nosuchid")).send().unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.text().unwrap().contains("nosuchid"));
    let openapi = get(&client, &server, "/openapi.json", 200);
    schemas.check(&openapi);
}

#[test]
fn lichess_speed_rating_and_month_filters_equal_independent_counts() {
    let files = vec![lichess_file()];
    let Run { project: _project, server, client, dir, mut schemas, mut pgns } = Run::start(&files);
    let filters: Vec<(&str, Value)> = vec![
        ("", json!({})),
        ("&speeds=blitz", json!({ "speeds": ["blitz"] })),
        ("&speeds=bullet,classical", json!({ "speeds": ["bullet", "classical"] })),
        ("&ratings=1600", json!({ "ratings": [1600] })),
        (
            "&ratings=1400,1800&speeds=blitz",
            json!({ "ratings": [1400, 1800], "speeds": ["blitz"] }),
        ),
        ("&ratings=2200,2500", json!({ "ratings": [2200, 2500] })),
        ("&since=2013-01&until=2013-01", json!({ "months": ["2013-01", "2013-01"] })),
        ("&since=2013-02", json!({ "months": ["2013-02", "9999-12"] })),
        ("&until=2012-12", json!({ "months": ["0000-01", "2012-12"] })),
    ];
    let mut answers = Vec::new();
    for line in LINES {
        for (params, filter) in &filters {
            let answer = get(
                &client,
                &server,
                &format!("/lichess?play={line}&moves=1000&recentGames=8{params}"),
                200,
            );
            schemas.keep(&answer, "OpeningExplorerLichess", "LichessAnswer");
            let mut query = filter.clone();
            query["play"] = json!(line);
            let top = answer["topGames"].as_array().unwrap();
            let recent = answer["recentGames"].as_array().unwrap();
            assert!(top.len() <= 4 && recent.len() <= 8);
            for g in top.iter().chain(recent) {
                // The dump of January 2013 starts with games begun on 31 December.
                assert!(["2012-12", "2013-01"].contains(&g["month"].as_str().unwrap()), "{g}");
                if let Some(months) = filter.get("months") {
                    let month = g["month"].as_str().unwrap();
                    assert!(
                        months[0].as_str().unwrap() <= month
                            && month <= months[1].as_str().unwrap(),
                        "{g} for {params}"
                    );
                }
                if let Some(speeds) = filter.get("speeds") {
                    assert!(speeds.as_array().unwrap().contains(&g["speed"]), "{g} for {params}");
                }
            }
            if line.is_empty() && params.is_empty() {
                assert_eq!(top.len(), 4);
                assert_eq!(recent.len(), 8);
                for g in top.iter().chain(recent) {
                    let text = pgns.keep(&client, &server, line, g["uci"].as_str().unwrap(), g);
                    let id = g["id"].as_str().unwrap();
                    assert!(
                        text.contains(&format!("lichess.org/{id}\"")),
                        "Lichess ids come from Site: {text}"
                    );
                }
            }
            for m in answer["moves"].as_array().unwrap() {
                assert_eq!(total(m) == 1, !m["game"].is_null(), "{m}");
                if total(m) == 1 {
                    pgns.keep(&client, &server, line, m["uci"].as_str().unwrap(), &m["game"]);
                }
            }
            answers.push((query, answer));
        }
    }
    // The months that hold every game: the same counts as no filter.
    let all = get(&client, &server, "/lichess", 200);
    let months = get(&client, &server, "/lichess?since=2012-12&until=2013-01", 200);
    assert_eq!(total(&all), total(&months));
    let january = get(&client, &server, "/lichess?since=2013-01&until=2013-01", 200);
    assert!(total(&january) < total(&all) && total(&january) > 0);
    assert_eq!(total(&get(&client, &server, "/lichess?since=2013-02", 200)), 0);
    // Every speed together: every game with a TimeControl.
    let speeds = get(
        &client,
        &server,
        "/lichess?speeds=ultraBullet,bullet,blitz,rapid,classical,correspondence",
        200,
    );
    assert_eq!(total(&speeds), total(&all));
    compare_counts(&answers, &files, dir.path());
    pgns.check();
    let openapi = get(&client, &server, "/openapi.json", 200);
    schemas.check(&openapi);
}

#[test]
fn bad_parameters_are_400s_with_clear_messages() {
    let p = project(&[root().join("fixtures/games/api.pgn").display().to_string()], true);
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    let client = Client::new();
    let cases = [
        ("/masters?fen=not-a-fen", "fen"),
        ("/masters?since=nineteen", "since must be a year"),
        ("/masters?moves=1001", "moves must be at most 1000"),
        ("/masters?topGames=16", "topGames must be at most 15"),
        ("/lichess?speeds=blitz,hyper", "speeds: unknown speed \"hyper\""),
        ("/lichess?ratings=1100", "ratings: \"1100\" is not a rating group"),
        ("/lichess?since=2013-13", "since must be a month such as 2013-01"),
        ("/lichess?recentGames=9", "recentGames must be at most 8"),
        ("/lichess?topGames=5", "topGames must be at most 4"),
        ("/lichess?variant=atomic", "variant \"atomic\""),
    ];
    for (path, message) in cases {
        let body = get(&client, &server, path, 400);
        let error = body["error"].as_str().unwrap();
        if message != "fen" {
            assert!(error.contains(message), "GET {path}: {error:?} should say {message:?}");
        }
        assert_eq!(body["status"], 400);
    }
    // Well-formed, but naming no legal position: 404 (what the document's patterns allow).
    for (path, message) in [
        ("/masters?play=e2e5", "play: move 1 (e2e5)"),
        ("/lichess?fen=8/8/8/8/8/8/8/8_w_-_-_0_1", "no such position"),
    ] {
        let body = get(&client, &server, path, 404);
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(message), "GET {path}: {error:?} should say {message:?}");
    }
    // A since after until is an empty range (as on Lichess), not a malformed request.
    for path in
        ["/masters?since=2000&until=1990", "/lichess?since=2013-05&until=2013-01&recentGames=8"]
    {
        let body = get(&client, &server, path, 200);
        assert_eq!(
            (&body["white"], &body["draws"], &body["black"]),
            (&json!(0), &json!(0), &json!(0)),
            "GET {path}: {body}"
        );
        assert_eq!(
            (&body["moves"], &body["topGames"]),
            (&json!([]), &json!([])),
            "GET {path}: {body}"
        );
    }
    // Filters need the index: a store without it says how to get one.
    let plain = project(&[root().join("fixtures/games/api.pgn").display().to_string()], false);
    plain.make(&[]);
    let server = Server::start(&plain, &[], &[]);
    let body = get(&client, &server, "/masters?since=2000", 400);
    assert!(body["error"].as_str().unwrap().contains("[explorer]"), "{body}");
    let body = get(&client, &server, "/lichess?speeds=blitz", 400);
    assert!(body["error"].as_str().unwrap().contains("[explorer]"), "{body}");
    // Without filters it answers from the tree, with no game references.
    let body = get(&client, &server, "/masters?play=e2e4", 200);
    assert_eq!(body["topGames"], json!([]));
    let body = get(&client, &server, "/lichess", 200);
    assert_eq!((body["topGames"].clone(), body["recentGames"].clone()), (json!([]), json!([])));
}

/// The explorer tables of a store, row by row.
fn explorer_rows(store: &Path) -> Vec<String> {
    let db = rusqlite::Connection::open(store).unwrap();
    let mut rows = Vec::new();
    for (table, order) in
        [("explorer_nodes", "node_id"), ("explorer_games", "game"), ("explorer_pgn", "block")]
    {
        let mut stmt = db.prepare(&format!("SELECT * FROM {table} ORDER BY {order}")).unwrap();
        let columns = stmt.column_count();
        let mut q = stmt.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            let cells: Vec<String> =
                (0..columns).map(|i| format!("{:?}", r.get_ref(i).unwrap())).collect();
            rows.push(format!("{table}: {}", cells.join(" | ")));
        }
    }
    rows
}

#[test]
fn the_index_does_not_depend_on_the_thread_count() {
    let files = masters_files();
    let stores: Vec<Vec<String>> = ["1", "2"]
        .iter()
        .map(|jobs| {
            let p = project(&files, true);
            p.make(&["-j", jobs]);
            explorer_rows(&p.path("build/okb.sqlite"))
        })
        .collect();
    assert!(stores[0].len() > 1000, "{} rows", stores[0].len());
    assert!(stores[0] == stores[1], "the explorer tables differ between -j 1 and -j 2");
}
