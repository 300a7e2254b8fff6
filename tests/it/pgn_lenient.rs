//! Real-world PGN read as python-chess reads it, in make, book, convert and classify:
//! tag values with unescaped inner quotes (chess.com exports: `[White ""Learning with
//! fun""]`) are one game with the value up to the last quote (`repaired-tag`, file:line);
//! captures written without `x` (`Bc4`, `dc6`) are the capture when it is unambiguous
//! (`lenient-san`); an ambiguous or impossible move still rejects its game.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Project, SELF_CONTAINED_SOURCES};
use okb::export::book::{BookOptions, build_book};
use okb::export::polyglot::{WeightMode, to_bytes};
use okb::games::aggregate::aggregate_file;
use okb::games::filter::GameFilter;
use okb::games::report::BadKind;

fn lenient() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/lenient.pgn")
}

/// python-chess's view of a file: per game its headers (in order), its main line in SAN
/// and the errors it met.
fn python_chess(path: &Path) -> serde_json::Value {
    const READ: &str = r#"
import json, sys, chess.pgn
out = []
with open(sys.argv[1], encoding="utf-8") as f:
    while (g := chess.pgn.read_game(f)) is not None:
        out.append({"headers": list(g.headers.items()), "moves": g.board().variation_san(list(g.mainline_moves())), "errors": len(g.errors)})
print(json.dumps(out))
"#;
    let run = Command::new("python3").args(["-c", READ]).arg(path).output().unwrap();
    assert!(
        run.status.success(),
        "python-chess (pip install chess): {}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).unwrap()
}

fn lines(bad: &okb::games::report::BadGames, kind: BadKind) -> Vec<u64> {
    bad.kinds.get(&kind).map(|r| r.examples.iter().map(|l| l.line).collect()).unwrap_or_default()
}

#[test]
fn make_reads_one_game_per_game_as_python_chess_does_and_warns() {
    let theirs = python_chess(&lenient());
    assert_eq!(theirs.as_array().unwrap().len(), 4);
    assert_eq!(theirs[0]["headers"][0], serde_json::json!(["Event", "Vote Chess \"Team A\" vs B"]));
    let agg = aggregate_file(&lenient(), &GameFilter::default(), 20).unwrap();
    let c = &agg.counters;
    assert_eq!(
        (c.games_read, c.games_counted, c.games_bad),
        (4, 4, 0),
        "{}",
        agg.bad.render_table()
    );
    assert_eq!(lines(&agg.bad, BadKind::RepairedTag), vec![1, 4, 5]);
    assert_eq!(
        agg.bad.kinds[&BadKind::LenientSan].count,
        3,
        "games 1 to 3 write captures without x"
    );
    // okb make shows both as warnings with their file:line.
    let p = Project::self_contained(SELF_CONTAINED_SOURCES, &["lenient.pgn"]);
    let run = p.make(&[]);
    assert!(
        run.stderr.contains("games/lenient.pgn:4: tag value with unescaped inner quotes"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("games/lenient.pgn:10: game kept: a capture written without x"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("4 games"), "{}", run.stderr);
}

#[test]
fn ambiguous_or_impossible_moves_still_reject_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.pgn");
    let text = "[Event \"ambiguous: e4 or c4 takes d5\"]\n[Result \"1-0\"]\n\n1. e4 d5 2. c4 e6 3. d5 1-0\n\n\
                [Event \"impossible: the c6 knight blocks\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bd7 1-0\n\n\
                [Event \"good\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bc6 1-0\n";
    std::fs::write(&path, text).unwrap();
    let theirs = python_chess(&path);
    let errors: Vec<_> =
        theirs.as_array().unwrap().iter().map(|g| g["errors"].as_u64().unwrap()).collect();
    assert_eq!(errors, vec![1, 1, 0], "python-chess rejects the same two");
    let agg = aggregate_file(&path, &GameFilter::default(), 20).unwrap();
    assert_eq!(lines(&agg.bad, BadKind::AmbiguousSan), vec![1]);
    assert_eq!(lines(&agg.bad, BadKind::IllegalSan), vec![6]);
    assert_eq!(lines(&agg.bad, BadKind::LenientSan), vec![11]);
    assert_eq!((agg.counters.games_bad, agg.counters.games_counted), (2, 1));
}

#[test]
fn book_counts_captures_without_x_as_polyglot_make_book_does() {
    let dir = tempfile::tempdir().unwrap();
    // polyglot refuses the first game's tags ("malformed tag"): compare on the others.
    let text = std::fs::read_to_string(lenient()).unwrap();
    let second = text.find("[Event \"Captures").unwrap();
    let path = dir.path().join("captures.pgn");
    std::fs::write(&path, &text[second..]).unwrap();
    let bin = dir.path().join("pg.bin");
    let status = Command::new("/usr/games/polyglot")
        .args(["make-book", "-pgn"])
        .arg(&path)
        .arg("-bin")
        .arg(&bin)
        .args(["-max-ply", "40", "-min-game", "1"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("polyglot (apt-get install polyglot)");
    assert!(status.success());
    let opts = BookOptions {
        max_ply: 40,
        min_game: 1,
        weights: WeightMode::Polyglot,
        ..Default::default()
    };
    let ours = build_book(std::slice::from_ref(&path), &opts).unwrap();
    assert_eq!(to_bytes(&ours.entries), std::fs::read(&bin).unwrap(), "byte-identical book");
    // The whole file: four games, none bad, both repairs reported.
    let all = build_book(&[lenient()], &opts).unwrap();
    assert_eq!((all.counters.games_read, all.counters.games_bad), (4, 0));
    assert_eq!(lines(&all.bad, BadKind::RepairedTag), vec![1, 4, 5]);
}

#[test]
fn convert_and_classify_keep_the_tags_python_chess_reads() {
    let p = Project::self_contained(SELF_CONTAINED_SOURCES, &["lenient.pgn"]);
    let input = lenient().display().to_string();
    for args in [["convert", "-o", "a.bgn", &input], ["convert", "-o", "back.pgn", "a.bgn"]] {
        let run = p.okb(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        if args[3] == input {
            assert!(run.stderr.contains("4 of 4 games"), "{}", run.stderr);
            assert!(
                run.stderr.contains("repaired_tag") && run.stderr.contains("lenient.pgn:5"),
                "{}",
                run.stderr
            );
        }
    }
    // The BGN's tags are python-chess's headers of the original; the PGN written back
    // escapes inner quotes as the PGN standard says (python-chess reads `\"` literally:
    // it neither escapes nor unescapes), so compare with that undone.
    let theirs = python_chess(&lenient());
    let bgn = String::from_utf8(p.read("a.bgn")).unwrap();
    for (game, line) in theirs.as_array().unwrap().iter().zip(bgn.lines()) {
        let ours: serde_json::Value = serde_json::from_str(line).unwrap();
        for pair in game["headers"].as_array().unwrap().iter().filter(|h| h[1] != "?") {
            assert_eq!(ours["tags"][pair[0].as_str().unwrap()], pair[1], "{line}");
        }
    }
    let unescaped = |v: &serde_json::Value| {
        serde_json::from_str::<serde_json::Value>(&v.to_string().replace(r#"\\\""#, r#"\""#))
            .unwrap()
    };
    assert_eq!(theirs, unescaped(&python_chess(&p.path("back.pgn"))), "PGN → BGN → PGN");
    p.make(&[]);
    let run = p.okb(&["classify", &input]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("4 games:"), "{}", run.stderr);
    std::fs::write(p.path("classified.pgn"), &run.stdout).unwrap();
    let classified = unescaped(&python_chess(&p.path("classified.pgn")));
    let first = |v: &serde_json::Value, i: usize| -> Vec<serde_json::Value> {
        v.as_array().unwrap().iter().map(|g| g["headers"][i].clone()).collect()
    };
    assert_eq!(first(&classified, 0), first(&theirs, 0), "the Event of each of the four games");
    assert_eq!(classified[0]["headers"][4], serde_json::json!(["White", "\"Learning with fun\""]));
}
