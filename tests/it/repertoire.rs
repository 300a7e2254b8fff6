//! Repertoires against a knowledge base of real master games: gaps and coverage checked
//! against an independent python-chess computation, the player's games judged (checked
//! by hand once, snapshotted), errors naming file, line and move, an edit of the
//! repertoire rebuilding only the repertoire's steps; and `okb serve`'s `GET /player`
//! (Kasparov's file as the player collection, checked against python-chess and the
//! Lichess explorer's schema) and `GET /repertoire/{name}` (the build's reports).

use crate::common;
use common::{MASTERS, Project, Server, python_check};
use serde_json::{Value, json};
use std::path::PathBuf;

fn masters(name: &str) -> PathBuf {
    common::masters_file(name)
}

fn repertoire_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/repertoire/black.pgn")
}

fn project() -> Project {
    common::repertoire_project()
}

#[test]
fn gaps_and_coverage_agree_with_python_chess() {
    let p = project();
    p.make(&[]);
    let dir = p.path("build/repertoire-black");
    let gaps: Value = serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
    assert!(gaps["gaps"].as_array().unwrap().len() >= 5, "{gaps}");
    let arg = |name: &str| dir.join(name).display().to_string();
    let store = p.path("build/okb.sqlite").display().to_string();
    let rep = repertoire_fixture().display().to_string();
    let out = python_check(
        "check_repertoire.py",
        &[&store, &rep, "black", "0.005", "infer", &arg("gaps.json"), &arg("coverage.json")],
    );
    assert!(out.contains("gaps"), "{out}");
    // The text forms name the same figures.
    let text = String::from_utf8(p.read("build/repertoire-black/coverage.txt")).unwrap();
    assert!(text.lines().any(|l| l.trim_start().starts_with("12 ")), "{text}");
    let text = String::from_utf8(p.read("build/repertoire-black/gaps.txt")).unwrap();
    let first = gaps["gaps"][0]["line"].as_str().unwrap();
    assert!(text.lines().nth(4).unwrap().contains(first), "{text}");
}

/// The chapters of fixtures/repertoire/black.pgn whose moves start with `first`.
fn chapters_from(first: &str) -> String {
    let text = std::fs::read_to_string(repertoire_fixture()).unwrap();
    let chapters: Vec<String> = text
        .split("\n[Event ")
        .map(|c| if c.starts_with('[') { c.to_string() } else { format!("[Event {c}") })
        .collect();
    chapters
        .into_iter()
        .filter(|c| c.lines().any(|l| l.starts_with(first)))
        .map(|c| c.trim_end().to_string() + "\n\n")
        .collect()
}

/// The Najdorf alone (no answer to the Alapin, 2. c3): every reply met with at least the
/// cut's probability is listed, however small its share at its position, as python-chess
/// computes it; the report says which cut it used.
#[test]
fn gaps_are_ranked_and_cut_by_the_chance_of_meeting_them_and_the_cut_is_said() {
    let p = project();
    std::fs::write(p.path("rep/black.pgn"), chapters_from("1. e4 c5 2. Nf3 d6 3. d4")).unwrap();
    p.make(&[]);
    let dir = p.path("build/repertoire-black");
    let gaps: Value = serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
    let listed = gaps["gaps"].as_array().unwrap();
    let alapin =
        listed.iter().find(|g| g["line"] == "1. e4 c5 2. c3").unwrap_or_else(|| panic!("{gaps}"));
    assert!(
        alapin["share"].as_f64().unwrap() < 0.05
            && alapin["probability"].as_f64().unwrap() >= 0.005,
        "{alapin}"
    );
    assert!(listed.iter().all(|g| g["probability"].as_f64().unwrap() >= 0.005), "{gaps}");
    assert_eq!(
        (gaps["min_probability"].as_f64(), gaps["min_share"].as_f64()),
        (Some(0.005), Some(0.0))
    );
    let arg = |name: &str| dir.join(name).display().to_string();
    let rep = p.path("rep/black.pgn").display().to_string();
    let store = p.path("build/okb.sqlite").display().to_string();
    python_check(
        "check_repertoire.py",
        &[&store, &rep, "black", "0.005", "infer", &arg("gaps.json"), &arg("coverage.json")],
    );
    let text = String::from_utf8(p.read("build/repertoire-black/gaps.txt")).unwrap();
    let said = format!(
        "Repertoire black (black): {} unanswered replies met with a probability of at least 0.50% along the repertoire (min_probability)",
        listed.len()
    );
    assert!(text.starts_with(&said), "{text}");
}

/// A Black repertoire against 1. e4 covers 1. e4 (inferred from its first moves, and
/// said); a declared scope narrows it, `scope = []` opens it to every opponent move.
#[test]
fn a_repertoire_is_scoped_to_the_opponent_moves_it_covers_inferred_or_declared() {
    let p = project();
    std::fs::write(p.path("rep/black.pgn"), chapters_from("1. e4")).unwrap();
    let dir = p.path("build/repertoire-black");
    let arg = |name: &str| dir.join(name).display().to_string();
    let (rep, store) = (
        p.path("rep/black.pgn").display().to_string(),
        p.path("build/okb.sqlite").display().to_string(),
    );
    let lines = |p: &Project| -> Vec<String> {
        let gaps: Value =
            serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
        gaps["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["line"].as_str().unwrap().to_string())
            .collect()
    };
    p.make(&[]);
    let inferred = lines(&p);
    assert!(
        !inferred.is_empty() && inferred.iter().all(|l| l.starts_with("1. e4 ")),
        "{inferred:?}"
    );
    let text = String::from_utf8(p.read("build/repertoire-black/gaps.txt")).unwrap();
    assert!(
        text.lines().nth(1).unwrap().starts_with("Scope: 1. e4 (inferred from its first moves"),
        "{text}"
    );
    python_check(
        "check_repertoire.py",
        &[&store, &rep, "black", "0.005", "infer", &arg("gaps.json"), &arg("coverage.json")],
    );

    let toml = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let with_scope = |scope: &str| {
        toml.replace("color = \"black\"\n", &format!("color = \"black\"\nscope = {scope}\n"))
    };
    std::fs::write(p.path("pipeline.toml"), with_scope("[\"1. e4 c5 2. Nf3\"]")).unwrap();
    p.make(&[]);
    let declared = lines(&p);
    assert!(
        !declared.is_empty() && declared.iter().all(|l| l.starts_with("1. e4 c5 2. Nf3 ")),
        "{declared:?}"
    );
    let report: Value =
        serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
    assert_eq!(report["scope"], json!({"lines": ["1. e4 c5 2. Nf3"], "inferred": false}));
    python_check(
        "check_repertoire.py",
        &[
            &store,
            &rep,
            "black",
            "0.005",
            "1. e4 c5 2. Nf3",
            &arg("gaps.json"),
            &arg("coverage.json"),
        ],
    );

    std::fs::write(p.path("pipeline.toml"), with_scope("[]")).unwrap();
    p.make(&[]);
    assert!(lines(&p).iter().any(|l| l.starts_with("1. d4")), "{:?}", lines(&p));
    python_check(
        "check_repertoire.py",
        &[&store, &rep, "black", "0.005", "all", &arg("gaps.json"), &arg("coverage.json")],
    );
}

#[test]
fn transpositions_into_prepared_lines_are_covered() {
    let p = project();
    p.make(&[]);
    let gaps: Value = serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
    let lines: Vec<&str> =
        gaps["gaps"].as_array().unwrap().iter().map(|g| g["line"].as_str().unwrap()).collect();
    // 1. c4 Nf6 2. Nc3 g6 3. e4 d6 4. d4 is the King's Indian of 1. d4 Nf6 2. c4 g6 3.
    // Nc3 Bg7 4. e4 d6 with Black to move: the repertoire answers it in another chapter.
    assert!(
        !lines.iter().any(|l| l.starts_with("1. c4 Nf6 2. Nc3 g6 3. e4 d6 4. d4")),
        "{lines:?}"
    );
    let coverage: Value =
        serde_json::from_slice(&p.read("build/repertoire-black/coverage.json")).unwrap();
    let points = coverage["coverage"].as_array().unwrap();
    let at =
        |ply: u64| points.iter().find(|c| c["ply"] == ply).unwrap()["inside"].as_f64().unwrap();
    assert!(at(4) > at(8) && at(8) > at(12) && at(12) > 0.0, "{coverage}");
    for c in points {
        let sum = c["inside"].as_f64().unwrap()
            + c["left"].as_f64().unwrap()
            + c["ended"].as_f64().unwrap();
        assert!((sum - 1.0).abs() < 1e-9, "mass is kept: {c}");
    }
}

#[test]
fn editing_the_repertoire_rebuilds_only_the_repertoire_steps() {
    let p = project();
    p.make(&[]);
    let file = p.path("rep/black.pgn");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("(6. h3 e5 7. Nde2 h5 8. g3 Be6)", "(6. h3 e6 7. g4 d5)");
    std::fs::write(&file, text).unwrap();
    let run = p.make(&[]);
    let mut built = run.steps("Building");
    built.sort();
    assert_eq!(
        built,
        [
            "manifest",
            "repertoire-export:black",
            "repertoire-games:black",
            "repertoire-report:black",
            "repertoire:black"
        ],
        "{}",
        run.stderr
    );
    let again = p.make(&[]);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);
}

#[test]
fn a_bad_move_names_the_file_line_and_move() {
    let p = project();
    let file = p.path("rep/black.pgn");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("(6. f3 e5 7. Nb3 Be6 8. Be3 Be7)", "(6. f3 e5 7. Nb3 Be6 8. Be3 Bc5)");
    std::fs::write(&file, text).unwrap();
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let flat = common::flat(&run.stderr);
    assert!(flat.contains("rep/black.pgn:11:29: \"Bc5\" is not legal here"), "{flat}");
    assert!(
        flat.contains(
            "after 1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. f3 e5 7. Nb3 Be6 8. Be3"
        ),
        "{flat}"
    );
}

#[test]
fn a_players_games_are_judged_against_the_repertoire() {
    let p = project();
    p.make(&[]);
    let json: Value = serde_json::from_slice(&p.read("build/repertoire-black/games.json")).unwrap();
    let judged = json["judged"].as_array().unwrap();
    assert!(judged.len() > 500, "Kasparov's games with Black: {}", judged.len());
    assert!(
        judged.iter().all(|g| g["black"].as_str().unwrap().starts_with("Kasparov")),
        "only his games with Black"
    );
    // Each row cites its game's file and line, beside the moves it was judged on.
    assert!(
        judged.iter().all(|g| g["file"].is_string()
            && g["line"].as_u64().is_some_and(|l| l >= 1)
            && g["moves"].as_str().is_some_and(|m| m.starts_with("1. "))),
        "{}",
        judged[0]
    );
    let totals = &json["totals"];
    let sum: u64 = ["my-deviation", "opponent-deviation", "book-ended", "completed", "unmatched"]
        .iter()
        .map(|v| totals[v]["games"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, judged.len() as u64);
    // The first 40 games, checked by hand against the repertoire once.
    let text = String::from_utf8(p.read("build/repertoire-black/games.txt")).unwrap();
    let head: String = text.lines().take(48).map(|l| format!("{l}\n")).collect();
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("repertoire_kasparov_black_games", head);
    });
}

#[test]
fn prep_shows_the_opponents_moves_and_where_they_leave_my_repertoire() {
    let p = project();
    let run = p.okb(&[
        "prep",
        "--player",
        "Kasparov, Gary",
        "--side",
        "black",
        "--since",
        "1985",
        "--limit",
        "5",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.starts_with("Kasparov, Gary with black: "), "{out}");
    // His most reached position as Black is after 1. d4, where he played 1... Nf6 most.
    assert!(out.lines().nth(3).unwrap().contains("1. d4: Nf6"), "{out}");
    // Against the white repertoire's English Attack he played 6... Ng4 (Kasparov's line).
    let against = &out[out.find("Against repertoire white:").expect("the white repertoire")..];
    assert!(against.contains("6. Be3 Ng4"), "{against}");
    // The black repertoire is for his colour: not compared.
    assert!(!out.contains("Against repertoire black"), "{out}");
    let json = p.okb(&["prep", "--player", "Kasparov,G", "--side", "black", "--json"]);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(v["games"].as_u64().unwrap() > 800, "{v}");
}

/// `okb prep` reads a player collection pinned by a manifest, as `okb make` does (its file
/// from the mirror of the corpus), and keeps the games that never entered a repertoire
/// (Kasparov's 1. d4 against a repertoire of 1. e4) apart from departures from it.
#[test]
fn prep_reads_a_manifest_collection_and_keeps_games_that_never_entered_apart() {
    let p = project();
    std::fs::write(p.path("rep/black.pgn"), chapters_from("1. e4")).unwrap();
    let masters = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("collections/masters.tsv"),
    )
    .unwrap();
    let kasparov = masters.lines().find(|l| l.contains("/Kasparov.pgn\t")).unwrap();
    let text = format!("url\tbytes\tblake3\n{kasparov}\n");
    std::fs::create_dir_all(p.path("collections")).unwrap();
    std::fs::write(p.path("collections/kasparov.tsv"), &text).unwrap();
    let pinned = format!(
        "manifest = \"collections/kasparov.tsv\"\nblake3 = \"{}\"",
        blake3::hash(text.as_bytes()).to_hex()
    );
    let toml = std::fs::read_to_string(p.path("pipeline.toml"))
        .unwrap()
        .replace("paths = [\"players/Kasparov.pgn.zst\"]", &pinned);
    std::fs::write(p.path("pipeline.toml"), toml).unwrap();
    let mirror = format!(
        "{}:{}",
        common::shared_sources().display(),
        common::shared_sources().join("../corpus").display()
    );
    let run: common::Run = p
        .command(&["prep", "--player", "Kasparov, Gary", "--side", "white", "--limit", "50"])
        .env("OKB_MIRROR", &mirror)
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let against = &run.stdout[run
        .stdout
        .find("Against repertoire black:")
        .unwrap_or_else(|| panic!("{}", run.stdout))..];
    let (left, never) = against.split_once("Never in it").unwrap_or_else(|| panic!("{against}"));
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("% ") || l.contains("  - "))
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert!(!rows(left).is_empty() && rows(left).iter().all(|l| l.contains("1. e4 ")), "{left}");
    assert!(
        rows(never).iter().any(|l| l.ends_with(" 1. d4"))
            && !rows(never).iter().any(|l| l.contains("1. e4")),
        "{never}"
    );
    let json: common::Run = p
        .command(&["prep", "--player", "Kasparov, Gary", "--side", "white", "--json"])
        .env("OKB_MIRROR", &mirror)
        .output()
        .unwrap()
        .into();
    let v: Value =
        serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("{e}: {}", json.stderr));
    let black =
        v["against"].as_array().unwrap().iter().find(|a| a["repertoire"] == "black").unwrap();
    assert!(
        black["never_entered"].as_array().unwrap().iter().any(|l| l["line"] == "1. d4"),
        "{black}"
    );
}

/// A player list that keeps nobody, or a fraction of a player's games, says so: `players
/// = []`, a name no game has (with the closest names), a near spelling ("Kasparov,
/// Garry" keeps the 554 games of "Kasparov,G" and misses "Kasparov, Gary"'s 1,563).
#[test]
fn players_naming_nobody_or_a_near_spelling_are_warned_about() {
    let p = project();
    let toml = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let players = |list: &str| {
        std::fs::write(
            p.path("pipeline.toml"),
            toml.replace("players = [\"Kasparov, Gary\"]", &format!("players = {list}")),
        )
        .unwrap()
    };
    players("[\"Kasparov, Garry\"]");
    let said = common::flat(&p.make(&[]).stderr);
    assert!(
        said.contains("[players]")
            && said.contains("[sources.kasparov] players: \"Kasparov, Garry\" matches"),
        "{said}"
    );
    assert!(
        said.contains(
            "near spellings it does not match name more: \"Kasparov, Gary\" (1563 games)"
        ),
        "{said}"
    );
    players("[\"Kasparow, Gari\"]");
    let said = common::flat(&p.make(&[]).stderr);
    assert!(said.contains("\"Kasparow, Gari\" names no game of the collection; the closest names: \"Kasparov, Gary\" (1563 games)"), "{said}");
    players("[]");
    let said = common::flat(&p.make(&[]).stderr);
    assert!(said.contains("[sources.kasparov] players = [] lists nobody"), "{said}");
    // The right name is not doubted.
    players("[\"Kasparov, Gary\"]");
    assert!(!p.make(&[]).stderr.contains("[players]"));
}

/// An empty repertoire file, a White repertoire declared `color = "black"`, and chapters
/// of both colours in one file are reported (as warnings naming the file; `--strict`
/// fails on them).
#[test]
fn an_empty_file_a_repertoire_of_the_other_colour_and_mixed_colours_are_reported() {
    let p = project();
    let fixture = |side: &str| {
        std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join(format!("fixtures/repertoire/{side}.pgn")),
        )
        .unwrap()
    };
    std::fs::write(p.path("rep/black.pgn"), "").unwrap();
    let said = common::flat(&p.make(&[]).stderr);
    assert!(
        said.contains("[empty-repertoire] rep/black.pgn: repertoire black has no moves"),
        "{said}"
    );
    std::fs::write(p.path("rep/black.pgn"), fixture("white")).unwrap();
    let said = common::flat(&p.make(&[]).stderr);
    assert!(
        said.contains(
            "[repertoire-color] rep/black.pgn: repertoire black is declared color = \"black\""
        ) && said.contains("a white repertoire?"),
        "{said}"
    );
    let mixed = format!("{}\n{}", fixture("black"), fixture("white"));
    let line = mixed.lines().position(|l| l.starts_with("1. e4 c5 (1... e5")).map(|i| i + 1);
    std::fs::write(p.path("rep/black.pgn"), &mixed).unwrap();
    let run = p.make(&[]);
    let said = common::flat(&run.stderr);
    let at = format!(
        "rep/black.pgn:{}: chapter \"White repertoire: 1. e4 and the Open Sicilian\" looks like a white repertoire",
        line.unwrap()
    );
    assert!(said.contains(&at), "{at}: {said}");
    assert_eq!(said.matches("[repertoire-color]").count(), 1, "{said}");
    assert_ne!(p.okb(&["make", "--strict"]).status, 0);
}

#[test]
fn exports_hold_the_repertoire_for_python_chess() {
    let p = project();
    p.make(&[]);
    let dir = p.path("build/repertoire-black");
    let arg = |name: &str| dir.join(name).display().to_string();
    let rep = repertoire_fixture().display().to_string();
    let out = python_check(
        "check_repertoire_exports.py",
        &[&rep, &arg("repertoire.pgn"), &arg("cards.csv"), &arg("book.bin")],
    );
    assert!(out.contains("book agrees"), "{out}");
    // The main line is the knowledge base's most played first move.
    let pgn = String::from_utf8(p.read("build/repertoire-black/repertoire.pgn")).unwrap();
    assert!(pgn.contains("\n\n1. e4 "), "{pgn}");
    assert!(pgn.contains("1. e4 {King's Pawn Game}"), "opening names as comments: {pgn}");
}

#[test]
fn a_repertoire_is_pinned_like_a_source() {
    let p = project();
    let locked = p.okb(&["make", "--locked"]);
    assert_ne!(locked.status, 0);
    assert!(common::flat(&locked.stderr).contains("repertoires.black"), "{}", locked.stderr);
    let pin = p.okb(&["pin"]);
    assert_eq!(pin.status, 0, "{}", pin.stderr);
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let hash = blake3::hash(&std::fs::read(repertoire_fixture()).unwrap()).to_hex().to_string();
    assert!(text.contains(&format!("blake3 = \"{hash}\"")), "{text}");
    // Other bytes than the pinned ones are refused, naming both hashes.
    std::fs::write(p.path("rep/black.pgn"), "1. e4 c5 *\n").unwrap();
    let run = p.okb(&["make"]);
    assert_ne!(run.status, 0);
    assert!(common::flat(&run.stderr).contains(&hash), "{}", run.stderr);
}

/// `GET path?query` on `server`: (status, content type, body).
fn get(server: &Server, path: &str, query: &[(&str, &str)]) -> (u16, String, String) {
    let response =
        reqwest::blocking::Client::new().get(server.url(path)).query(query).send().unwrap();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (response.status().as_u16(), kind, response.text().unwrap())
}

/// Validates `answers` (file, lichess-explorer definition, okb OpenAPI schema) against
/// the vendored Lichess schema and the served OpenAPI document.
fn validate(server: &Server, dir: &std::path::Path, answers: &[(Value, Option<&str>, &str)]) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (mut lichess, mut okb) = (Vec::new(), Vec::new());
    for (i, (answer, def, okb_def)) in answers.iter().enumerate() {
        let file = dir.join(format!("{i}.json"));
        std::fs::write(&file, answer.to_string()).unwrap();
        if let Some(def) = def {
            lichess.push(json!({"file": file, "def": def}));
        }
        okb.push(json!({"file": file, "ref": format!("#/components/schemas/{okb_def}")}));
    }
    let write = |name: &str, v: &Value| {
        let path = dir.join(name);
        std::fs::write(&path, v.to_string()).unwrap();
        path.display().to_string()
    };
    let (lichess, okb) =
        (write("lichess.json", &Value::Array(lichess)), write("okb.json", &Value::Array(okb)));
    let schema = root.join("schemas/lichess-explorer.schema.json").display().to_string();
    python_check("check_explorer.py", &["schema", &schema, &lichess]);
    let doc =
        write("openapi.json", &serde_json::from_str(&get(server, "/openapi.json", &[]).2).unwrap());
    python_check("check_json.py", &["openapi", &doc, &okb]);
}

#[test]
fn player_answers_count_as_python_chess_in_the_lichess_shape() {
    let p = project();
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    // (play, color, since, until, speeds): Kasparov's games with Black, after 1. d4 in
    // 1985–1990 classical games, and with White in the Sicilian.
    let queries = [
        ("", "black", None, None, None),
        ("d2d4", "black", Some("1985-01"), Some("1990-12"), Some("classical")),
        ("e2e4,c7c5,g1f3", "white", None, None, None),
    ];
    let spec: Vec<Value> = queries
        .iter()
        .map(|(play, color, since, until, speeds)| {
            json!({"play": play, "color": color, "months": since.map(|s| [s, until.unwrap()]), "speeds": speeds.map(|s| [s])})
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (spec_file, out_file) = (dir.path().join("queries.json"), dir.path().join("counts.json"));
    std::fs::write(&spec_file, Value::Array(spec).to_string()).unwrap();
    let pgn = masters(MASTERS[0]).display().to_string();
    python_check(
        "check_explorer.py",
        &[
            "player",
            "Kasparov",
            "Gary",
            spec_file.to_str().unwrap(),
            out_file.to_str().unwrap(),
            &pgn,
        ],
    );
    let expected: Vec<Value> = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let mut answers = Vec::new();
    for ((play, color, since, until, speeds), want) in queries.iter().zip(&expected) {
        let mut query = vec![
            ("player", "Kasparov, Gary"),
            ("color", *color),
            ("play", *play),
            ("recentGames", "3"),
        ];
        query.extend(
            since
                .map(|s| ("since", s))
                .into_iter()
                .chain(until.map(|u| ("until", u)))
                .chain(speeds.map(|s| ("speeds", s))),
        );
        let (status, kind, body) = get(&server, "/player", &query);
        assert_eq!((status, kind.as_str()), (200, "application/x-ndjson"), "{body}");
        assert!(body.ends_with('\n') && body.lines().count() == 1, "one NDJSON line: {body}");
        let answer: Value = serde_json::from_str(body.trim_end()).unwrap();
        let at = format!("{play} ({color})");
        for field in ["white", "draws", "black"] {
            assert_eq!(answer[field], want[field], "{at}: {field}");
        }
        let moves = answer["moves"].as_array().unwrap();
        assert_eq!(moves.len(), want["moves"].as_object().unwrap().len(), "{at}: every move");
        for m in moves {
            let w = &want["moves"][m["uci"].as_str().unwrap()];
            let counts = [&m["white"], &m["draws"], &m["black"]];
            assert_eq!(counts, [&w[0], &w[1], &w[2]], "{at}: {}", m["uci"]);
            let (rated, sum) = (w[3].as_u64().unwrap(), w[4].as_u64().unwrap());
            let average = if rated == 0 { 0 } else { (sum as f64 / rated as f64).round() as u64 };
            assert_eq!(m["averageOpponentRating"].as_u64().unwrap(), average, "{at}: {}", m["uci"]);
            let total = counts.iter().map(|c| c.as_u64().unwrap()).sum::<u64>();
            assert_eq!(
                m["game"].is_null(),
                total != 1,
                "{at}: a move's game only when it is one game"
            );
        }
        let recent = answer["recentGames"].as_array().unwrap();
        // Every position asked here has at least three games: a full page of three.
        assert_eq!(recent.len(), 3, "{at}");
        let months: Vec<&str> = recent.iter().map(|g| g["month"].as_str().unwrap()).collect();
        assert!(months.windows(2).all(|w| w[0] >= w[1]), "{at}: latest first: {months:?}");
        let side = if *color == "white" { "white" } else { "black" };
        assert!(
            recent.iter().all(|g| g[side]["name"].as_str().unwrap().starts_with("Kasparov")),
            "{at}"
        );
        answers.push((answer, Some("OpeningExplorerPlayer"), "PlayerAnswer"));
    }
    // Initials and spacing name him too; an unknown player has no games (as on Lichess).
    let again = get(&server, "/player", &[("player", "kasparov,g"), ("color", "black")]).2;
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap()["white"], expected[0]["white"]);
    let (status, _, nobody) =
        get(&server, "/player", &[("player", "Nobody, Known"), ("color", "white")]);
    let nobody: Value = serde_json::from_str(&nobody).unwrap();
    assert_eq!((status, &nobody["moves"], &nobody["white"]), (200, &json!([]), &json!(0)));
    answers.push((nobody, Some("OpeningExplorerPlayer"), "PlayerAnswer"));
    validate(&server, dir.path(), &answers);
    // Bad parameters are 400s that name the value.
    for (query, named) in [
        (vec![("player", "Kasparov, Gary"), ("color", "red")], "red"),
        (vec![("color", "white")], "player"),
        (vec![("player", "Kasparov, Gary"), ("color", "white"), ("modes", "fast")], "fast"),
        (vec![("player", "Kasparov, Gary"), ("color", "white"), ("speeds", "slow")], "slow"),
        (vec![("player", "Kasparov, Gary"), ("color", "white"), ("since", "1990")], "1990"),
        (
            vec![("player", "Kasparov, Gary"), ("color", "white"), ("recentGames", "9")],
            "recentGames",
        ),
    ] {
        let (status, kind, body) = get(&server, "/player", &query);
        assert_eq!((status, kind.as_str()), (400, "application/json"), "{query:?}: {body}");
        assert!(body.contains(named), "{query:?}: {body}");
    }
    // A well-formed line that names no legal position is an unknown position (404), as on
    // every explorer endpoint: no pattern in the document can tell a legal move.
    let (status, _, body) = get(
        &server,
        "/player",
        &[("player", "Kasparov, Gary"), ("color", "white"), ("play", "e2e5")],
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("e2e5"), "{body}");
}

#[test]
fn the_repertoire_endpoint_serves_the_build_reports() {
    let p = project();
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    let report = |name: &str| -> Value {
        serde_json::from_slice(&p.read(&format!("build/repertoire-black/{name}"))).unwrap()
    };
    let (status, kind, body) = get(&server, "/repertoire/black", &[]);
    assert_eq!((status, kind.as_str()), (200, "application/json"), "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let (gaps, coverage, flags) =
        (report("gaps.json"), report("coverage.json"), report("flags.json"));
    assert_eq!(answer["gaps"], gaps["gaps"], "the gaps as the build wrote them");
    assert_eq!(answer["coverage"], coverage["coverage"], "the coverage as the build wrote it");
    assert_eq!(answer["flags"], flags["flags"]);
    for field in [
        "repertoire",
        "color",
        "positions",
        "own_moves",
        "chapters",
        "known_positions",
        "min_share",
    ] {
        assert_eq!(answer[field], gaps[field], "{field}");
    }
    // The book: 1. e4 is answered by 1... c5, 1. d4 by 1... Nf6 (the fixture's lines).
    let book = answer["book"].as_array().unwrap();
    let moves_at = |epd: &str| book.iter().find(|b| b["epd"] == epd).map(|b| b["moves"].clone());
    assert_eq!(
        moves_at("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"),
        Some(json!(["c7c5"]))
    );
    assert_eq!(
        moves_at("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -"),
        Some(json!(["g8f6"]))
    );
    let answer_file = p.path("answer.json");
    std::fs::write(&answer_file, answer.to_string()).unwrap();
    let rep = repertoire_fixture().display().to_string();
    let out =
        python_check("check_repertoire_exports.py", &["book", &rep, answer_file.to_str().unwrap()]);
    assert!(out.contains("book agrees"), "{out}");
    let (status, _, body) = get(&server, "/repertoire/najdorf", &[]);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("najdorf") && body.contains("known: black, white"), "{body}");
    let dir = tempfile::tempdir().unwrap();
    validate(&server, dir.path(), &[(answer, None, "RepertoireReport")]);
    // Editing the repertoire changes the answer after the make, and its ETag.
    let etag =
        reqwest::blocking::get(server.url("/repertoire/black")).unwrap().headers()["etag"].clone();
    drop(server);
    let file = p.path("rep/black.pgn");
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("(6. h3 e5 7. Nde2 h5 8. g3 Be6)", "(6. h3 e6 7. g4 d5)");
    std::fs::write(&file, text).unwrap();
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    let edited = reqwest::blocking::get(server.url("/repertoire/black")).unwrap();
    assert_ne!(edited.headers()["etag"], etag);
    let edited: Value = serde_json::from_str(&edited.text().unwrap()).unwrap();
    assert_eq!(edited["gaps"], report("gaps.json")["gaps"]);
}
