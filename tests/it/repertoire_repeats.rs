//! A game a player collection's files hold more than once (Kasparov's and Karpov's files
//! both hold the games they played each other) is judged once against a repertoire and
//! counts once in `okb prep`, as python-chess counts the distinct games; `[games]
//! deduplicate = false` counts every copy again.

use crate::common;
use common::{Project, masters_file, mini_sources, python_check};
use serde_json::Value;
use std::path::PathBuf;

/// Kasparov's and Karpov's files as the collection of "Kasparov, Gary" (Karpov's first:
/// `players/*` in name order), judged against the black repertoire; `extra` appended.
fn project(extra: &str) -> Project {
    let p = Project::with_pipeline(&pipeline(extra));
    std::fs::create_dir_all(p.path("players")).unwrap();
    std::fs::create_dir_all(p.path("rep")).unwrap();
    for f in ["Kasparov.pgn.zst", "Karpov.pgn.zst"] {
        std::fs::copy(masters_file(f), p.path(&format!("players/{f}"))).unwrap();
    }
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/repertoire/black.pgn");
    std::fs::copy(fixture, p.path("rep/black.pgn")).unwrap();
    p
}

fn pipeline(extra: &str) -> String {
    format!(
        "{}[sources.players]\nkind = \"pgn\"\npaths = [\"players/*.pgn.zst\"]\nplayers = [\"Kasparov, Gary\"]\n\n\
         [tree]\nmax_ply = 8\nmin_games = 5\n\n\
         [repertoires.black]\npath = \"rep/black.pgn\"\ncolor = \"black\"\ngames = [\"players\"]\n{extra}",
        mini_sources()
    )
}

/// games.json, and python-chess's `(rows, distinct games)` of games.txt's rows.
fn judged(p: &Project) -> (Value, (u64, u64)) {
    let path = p.path("build/repertoire-black/games.txt");
    let json: Value = serde_json::from_slice(&p.read("build/repertoire-black/games.json")).unwrap();
    let root = p.path("").display().to_string();
    let out = python_check("check_judged_games.py", &[&root, &path.display().to_string()]);
    let (rows, distinct) = out.trim().split_once(' ').expect("two numbers");
    (json, (rows.parse().unwrap(), distinct.parse().unwrap()))
}

/// `okb prep --json` for Kasparov with Black.
fn prep(p: &Project) -> Value {
    let run = p.okb(&["prep", "--player", "Kasparov, Gary", "--side", "black", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn a_game_two_collection_files_hold_is_judged_once_and_prepared_once() {
    let p = project("");
    let run = p.make(&[]);
    let (json, (rows, distinct)) = judged(&p);
    assert_eq!(rows, distinct, "each judged game once");
    assert_eq!(json["games"].as_u64(), Some(distinct));
    let repeats = json["repeats"].as_u64().unwrap();
    let line = format!("({distinct} games judged, {repeats} repeats skipped, ");
    assert!(run.stderr.contains(&line), "{line}: {}", run.stderr);
    let text = String::from_utf8(p.read("build/repertoire-black/games.txt")).unwrap();
    let head = format!(
        "Repertoire black (black): {distinct} games of the player judged, {repeats} repeats skipped\n"
    );
    assert!(text.starts_with(&head), "{head}: {text}");
    // okb prep reads the same games of Kasparov with Black (as deep as it needs).
    let v = prep(&p);
    assert_eq!((v["games"].as_u64(), v["repeats"].as_u64()), (Some(distinct), Some(repeats)));
    let text = p.okb(&["prep", "--player", "Kasparov, Gary", "--side", "black"]).stdout;
    let head = format!("Kasparov, Gary with black: {distinct} games, {repeats} repeats skipped\n");
    assert!(text.starts_with(&head), "{head}: {text}");

    // Every copy again: the step reruns, python-chess finds the same distinct games.
    std::fs::write(p.path("pipeline.toml"), pipeline("\n[games]\ndeduplicate = false\n")).unwrap();
    let run = p.make(&[]);
    assert!(run.steps("Building").contains(&"repertoire-games:black".into()), "{}", run.stderr);
    let (all, (all_rows, all_distinct)) = judged(&p);
    assert_eq!(all_distinct, distinct, "the same games");
    assert!(all_rows > distinct + 50, "Karpov's games with White against him: {all_rows}");
    assert_eq!((all["games"].as_u64(), all["repeats"].as_u64()), (Some(all_rows), Some(0)));
    assert_eq!(all_rows, distinct + repeats);
    let v = prep(&p);
    assert_eq!((v["games"].as_u64(), v["repeats"].as_u64()), (Some(all_rows), Some(0)));
}
