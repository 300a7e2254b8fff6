//! A repertoire's own positions are evaluated at any ply (issue 44, item 11): evaluation
//! sources first, then Stockfish through the engine cache the tree's searches use, so a
//! blunder prepared beyond `[engine] max_ply` is flagged, and with no engine the report
//! says which positions went unchecked instead of the make failing.

use crate::common;
use common::{Project, mini_sources};
use std::path::PathBuf;

/// White's prepared line: 3. Qxe5+?? (ply 5) gives the queen away for a pawn.
const BLUNDER: &str = "[Event \"Scandal\"]\n\n1. e4 e5 2. Qh5 Nc6 3. Qxe5+ Nxe5 *\n";

/// Stockfish at a low depth, stopping at ply 2.
const SHALLOW: &str =
    "engines = 1\nmax_ply = 2\ndepth_branching = 7\ndepth_leaf = 6\ndepth_popular = 7";

/// No engine installed, and fixtures/evals/stockfish-d12.jsonl (the mini tree at depth 12)
/// as the evaluation source `evals`: the tree needs no search.
const NO_ENGINE: &str = "path = \"/nonexistent/stockfish\"\nmultipv = 3\nmax_ply = 2\ndepth_branching = 10\ndepth_leaf = 10\ndepth_popular = 10\nsources = [\"evals\"]";

/// A project of the mini taxonomies (and `sources`) with `engine` as `[engine]` and
/// `BLUNDER` as the white repertoire `white`.
fn project(engine: &str, sources: &str) -> Project {
    let p = Project::with_pipeline(&format!(
        "{}{sources}\n[engine]\n{engine}\n\n[repertoires.white]\npath = \"rep/white.pgn\"\ncolor = \"white\"\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("rep")).unwrap();
    std::fs::write(p.path("rep/white.pgn"), BLUNDER).unwrap();
    p
}

/// The step line of `repertoire-evals:white`.
fn evals_line(run: &common::Run) -> String {
    run.stderr
        .lines()
        .find(|l| l.contains("repertoire-evals:white ("))
        .unwrap_or_default()
        .to_string()
}

fn flags(p: &Project) -> serde_json::Value {
    serde_json::from_slice(&p.read("build/repertoire-white/flags.json")).unwrap()
}

#[test]
fn a_blunder_beyond_the_engines_max_ply_is_flagged_and_a_second_make_starts_no_engine() {
    let p = project(SHALLOW, "");
    let run = p.make(&[]);
    let line = evals_line(&run);
    // Plies 0 to 2 are the tree's searches, served by the cache the engine step filled.
    assert!(
        line.contains("7 positions: 0 from evaluation sources, 3 cached, 4 analysed"),
        "{}",
        run.stderr
    );
    let flags = flags(&p);
    let blunder = flags["flags"].as_array().unwrap().iter().find(|f| f["san"] == "Qxe5+");
    let blunder = blunder.unwrap_or_else(|| panic!("3. Qxe5+ is not flagged: {flags}"));
    assert!(blunder["eval"].as_i64().unwrap() < -500, "{blunder}");
    assert_eq!(blunder["reasons"][0], "below-floor", "{blunder}");
    let text = String::from_utf8(p.read("build/repertoire-white/flags.txt")).unwrap();
    assert!(text.contains("1. e4 e5 2. Qh5 Nc6 3. Qxe5+"), "{text}");
    let again = p.make(&[]);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);
    // Every step record gone but the engine cache: the searches are served from it.
    for entry in std::fs::read_dir(p.path("cache")).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n != "engine.sqlite" && n != "lock") {
            if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            }
            .unwrap();
        }
    }
    let cold = p.make(&[]);
    let line = evals_line(&cold);
    assert!(line.contains("7 cached, 0 analysed, 0 failed, 0 engines started"), "{}", cold.stderr);
    assert_eq!(self::flags(&p), flags, "the same flags from the cache");
}

#[test]
fn without_an_engine_the_report_names_the_positions_left_unchecked() {
    let dump = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/evals/stockfish-d12.jsonl");
    let evals =
        format!("[sources.evals]\nkind = \"lichess-evals\"\npath = \"{}\"\n", dump.display());
    let p = project(NO_ENGINE, &evals);
    // The dump serves the tree's positions (the line's first three); the four from
    // 2. Qh5 on are in no tree, and there is no engine to search them.
    let run = p.make(&[]);
    assert!(
        evals_line(&run).contains("7 positions: 3 evaluated, 4 not evaluated (no engine found)"),
        "{}",
        run.stderr
    );
    let flags = flags(&p);
    assert_eq!(flags["flags"].as_array().unwrap().len(), 0, "{flags}");
    assert_eq!(flags["unevaluated"].as_array().unwrap().len(), 4, "{flags}");
    let text = String::from_utf8(p.read("build/repertoire-white/flags.txt")).unwrap();
    assert!(
        text.contains("4 positions have no evaluation, so the moves into and out of them are not checked: no UCI engine found (looked for /nonexistent/stockfish"),
        "{text}"
    );
}
