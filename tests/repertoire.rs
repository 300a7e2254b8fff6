//! Repertoires against a knowledge base of real master games: gaps and coverage checked
//! against an independent python-chess computation, the player's games judged (checked
//! by hand once, snapshotted), errors naming file, line and move, and an edit of the
//! repertoire rebuilding only the repertoire's steps.

mod common;

use common::{Project, SELF_CONTAINED_SOURCES, fixture, python_check};
use std::path::PathBuf;

/// Master files of the knowledge base: Kasparov's (the player collection) and players
/// of his era who met the Najdorf and the King's Indian from both sides.
const MASTERS: [&str; 8] = ["Kasparov.pgn.zst", "Karpov.pgn.zst", "Anand.pgn.zst", "Shirov.pgn.zst", "Topalov.pgn.zst", "Ivanchuk.pgn.zst", "Gelfand.pgn.zst", "Kramnik.pgn.zst"];

fn masters(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters").join(name)
}

fn repertoire_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/repertoire/black.pgn")
}

/// The mini taxonomies, the masters files as `games`, Kasparov's as player collection
/// `kasparov` (not counted twice: the KB reads `games/`, the collection `players/`), and
/// the black and white repertoires.
fn project() -> Project {
    let pipeline = format!(
        "{}\n[sources.kasparov]\nkind = \"pgn\"\npaths = [\"players/Kasparov.pgn.zst\"]\nplayers = [\"Kasparov, Gary\"]\n\n\
         [tree]\nmax_ply = 14\nmin_games = 5\n\n\
         [repertoires.black]\npath = \"rep/black.pgn\"\ncolor = \"black\"\ngames = [\"kasparov\"]\n\n\
         [repertoires.white]\npath = \"rep/white.pgn\"\ncolor = \"white\"\n",
        SELF_CONTAINED_SOURCES.replace("games/*.pgn", "games/*.pgn.zst")
    );
    let p = Project::with_pipeline(&pipeline);
    for dir in ["src", "games", "players", "rep"] {
        std::fs::create_dir_all(p.path(dir)).unwrap();
    }
    std::fs::copy(fixture("mini.tsv"), p.path("src/mini.tsv")).unwrap();
    std::fs::copy(fixture("mini.eco"), p.path("src/mini.eco")).unwrap();
    for f in &MASTERS[1..] {
        std::fs::copy(masters(f), p.path(&format!("games/{f}"))).unwrap();
    }
    std::fs::copy(masters(MASTERS[0]), p.path("players/Kasparov.pgn.zst")).unwrap();
    std::fs::copy(repertoire_fixture(), p.path("rep/black.pgn")).unwrap();
    std::fs::copy(repertoire_fixture().with_file_name("white.pgn"), p.path("rep/white.pgn")).unwrap();
    p
}

#[test]
fn gaps_and_coverage_agree_with_python_chess() {
    let p = project();
    p.make(&[]);
    let dir = p.path("build/repertoire-black");
    let gaps: serde_json::Value = serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
    assert!(gaps["gaps"].as_array().unwrap().len() >= 5, "{gaps}");
    let arg = |name: &str| dir.join(name).display().to_string();
    let store = p.path("build/okb.sqlite").display().to_string();
    let rep = repertoire_fixture().display().to_string();
    let out = python_check("check_repertoire.py", &[&store, &rep, "black", "0.05", &arg("gaps.json"), &arg("coverage.json")]);
    assert!(out.contains("gaps"), "{out}");
    // The text forms name the same figures.
    let text = String::from_utf8(p.read("build/repertoire-black/coverage.txt")).unwrap();
    assert!(text.lines().any(|l| l.trim_start().starts_with("12 ")), "{text}");
    let text = String::from_utf8(p.read("build/repertoire-black/gaps.txt")).unwrap();
    let first = gaps["gaps"][0]["line"].as_str().unwrap();
    assert!(text.lines().nth(3).unwrap().contains(first), "{text}");
}

#[test]
fn transpositions_into_prepared_lines_are_covered() {
    let p = project();
    p.make(&[]);
    let gaps: serde_json::Value = serde_json::from_slice(&p.read("build/repertoire-black/gaps.json")).unwrap();
    let lines: Vec<&str> = gaps["gaps"].as_array().unwrap().iter().map(|g| g["line"].as_str().unwrap()).collect();
    // 1. c4 Nf6 2. Nc3 g6 3. e4 d6 4. d4 is the King's Indian of 1. d4 Nf6 2. c4 g6 3.
    // Nc3 Bg7 4. e4 d6 with Black to move: the repertoire answers it in another chapter.
    assert!(!lines.iter().any(|l| l.starts_with("1. c4 Nf6 2. Nc3 g6 3. e4 d6 4. d4")), "{lines:?}");
    let coverage: serde_json::Value = serde_json::from_slice(&p.read("build/repertoire-black/coverage.json")).unwrap();
    let points = coverage["coverage"].as_array().unwrap();
    let at = |ply: u64| points.iter().find(|c| c["ply"] == ply).unwrap()["inside"].as_f64().unwrap();
    assert!(at(4) > at(8) && at(8) > at(12) && at(12) > 0.0, "{coverage}");
    for c in points {
        let sum = c["inside"].as_f64().unwrap() + c["left"].as_f64().unwrap() + c["ended"].as_f64().unwrap();
        assert!((sum - 1.0).abs() < 1e-9, "mass is kept: {c}");
    }
}

#[test]
fn editing_the_repertoire_rebuilds_only_the_repertoire_steps() {
    let p = project();
    p.make(&[]);
    let file = p.path("rep/black.pgn");
    let text = std::fs::read_to_string(&file).unwrap().replace("(6. h3 e5 7. Nde2 h5 8. g3 Be6)", "(6. h3 e6 7. g4 d5)");
    std::fs::write(&file, text).unwrap();
    let run = p.make(&[]);
    let mut built = run.steps("Building");
    built.sort();
    assert_eq!(built, ["manifest", "repertoire-export:black", "repertoire-games:black", "repertoire-report:black", "repertoire:black"], "{}", run.stderr);
    let again = p.make(&[]);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);
}

#[test]
fn a_bad_move_names_the_file_line_and_move() {
    let p = project();
    let file = p.path("rep/black.pgn");
    let text = std::fs::read_to_string(&file).unwrap().replace("(6. f3 e5 7. Nb3 Be6 8. Be3 Be7)", "(6. f3 e5 7. Nb3 Be6 8. Be3 Bc5)");
    std::fs::write(&file, text).unwrap();
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let flat = common::flat(&run.stderr);
    assert!(flat.contains("rep/black.pgn:11:29: \"Bc5\" is not legal here"), "{flat}");
    assert!(flat.contains("after 1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. f3 e5 7. Nb3 Be6 8. Be3"), "{flat}");
}

#[test]
fn a_players_games_are_judged_against_the_repertoire() {
    let p = project();
    p.make(&[]);
    let json: serde_json::Value = serde_json::from_slice(&p.read("build/repertoire-black/games.json")).unwrap();
    let judged = json["judged"].as_array().unwrap();
    assert!(judged.len() > 500, "Kasparov's games with Black: {}", judged.len());
    assert!(judged.iter().all(|g| g["black"].as_str().unwrap().starts_with("Kasparov")), "only his games with Black");
    let totals = &json["totals"];
    let sum: u64 = ["my-deviation", "opponent-deviation", "book-ended", "completed", "unmatched"].iter().map(|v| totals[v]["games"].as_u64().unwrap()).sum();
    assert_eq!(sum, judged.len() as u64);
    // The first 40 games, checked by hand against the repertoire once.
    let text = String::from_utf8(p.read("build/repertoire-black/games.txt")).unwrap();
    let head: String = text.lines().take(48).map(|l| format!("{l}\n")).collect();
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("repertoire_kasparov_black_games", head);
    });
}

#[test]
fn prep_shows_the_opponents_moves_and_where_they_leave_my_repertoire() {
    let p = project();
    let run = p.okb(&["prep", "--player", "Kasparov, Gary", "--side", "black", "--since", "1985", "--limit", "5"]);
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
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(v["games"].as_u64().unwrap() > 800, "{v}");
}

#[test]
fn exports_hold_the_repertoire_for_python_chess() {
    let p = project();
    p.make(&[]);
    let dir = p.path("build/repertoire-black");
    let arg = |name: &str| dir.join(name).display().to_string();
    let rep = repertoire_fixture().display().to_string();
    let out = python_check("check_repertoire_exports.py", &[&rep, &arg("repertoire.pgn"), &arg("cards.csv"), &arg("book.bin")]);
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
