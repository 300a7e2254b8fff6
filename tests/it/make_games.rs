//! Phase 2 inside `okb make`: game files as memoized steps, statistics in the tree and
//! the store, transpositions, and the Polyglot export read back by python-chess.

use crate::common;
use common::{Project, mini_sources, tree_bytes};

const FILES: [&str; 3] = ["Kramnik.pgn.zst", "Anand.pgn.zst", "Tal.pgn.zst"];

fn masters(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters").join(name)
}

fn project(files: &[&str]) -> Project {
    let p = Project::with_pipeline(&format!(
        r#"{}
[sources.games]
kind = "pgn"
paths = ["games/*.pgn.zst"]

[tree]
max_ply = 12
min_games = 20

[exports.csv]
format = "csv"
output = "out/nodes.csv"
[exports.book]
format = "polyglot"
output = "out/book.bin"
"#,
        mini_sources(),
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    for f in files {
        std::fs::copy(masters(f), p.path(&format!("games/{f}"))).unwrap();
    }
    p
}

fn node(p: &Project, moves: &str) -> serde_json::Value {
    let run = p.okb(&["query", "moves", moves, "--json"]);
    assert_eq!(run.status, 0, "{moves}: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn statistics_reach_the_store_and_follow_the_tree_rules() {
    let p = project(&FILES);
    let run = p.make(&[]);
    let counted: u64 = run
        .stderr
        .lines()
        .find_map(|l| {
            l.trim_start().strip_prefix("Building games (")?.split(' ').next()?.parse().ok()
        })
        .expect("games summary line");
    let root = node(&p, "");
    assert_eq!(
        root["game_count"].as_u64().unwrap(),
        counted,
        "every counted game reaches the start position"
    );
    let children = root["children"].as_array().unwrap();
    let counts: Vec<u64> = children.iter().map(|c| c["game_count"].as_u64().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "children sorted by games: {counts:?}");
    // Moves under min_games are pruned unless an ECO line plays them.
    for c in children {
        let games = c["game_count"].as_u64().unwrap();
        assert!(games >= 20 || ["e4", "d4"].contains(&c["pgn_move"].as_str().unwrap()), "{c}");
    }
    let sum: u64 = counts.iter().sum();
    assert!(sum <= counted);
    // Every node has a name: its own or its nearest named ancestor's.
    let csv = String::from_utf8(p.read("out/nodes.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let name_col = header.iter().position(|h| *h == "opening_name").unwrap();
    let inherited_col = header.iter().position(|h| *h == "name_inherited").unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert!(rows.len() > 100);
    assert!(rows.iter().all(|r| !r[name_col].is_empty()), "a node without a name");
    assert!(rows.iter().any(|r| r[inherited_col] == "true"));
    // Percentages add up.
    let e4 = node(&p, "1. e4");
    let (w, d) = (e4["white_win_pct"].as_f64().unwrap(), e4["draw_pct"].as_f64().unwrap());
    assert!(w > 0.0 && d > 0.0 && w + d < 100.0);
}

#[test]
fn queens_gambit_transposition_is_one_node_with_both_orders() {
    let p = project(&FILES);
    p.make(&[]);
    let a = node(&p, "1. d4 Nf6 2. c4 e6 3. Nc3 d5");
    let b = node(&p, "1. d4 d5 2. c4 e6 3. Nc3 Nf6");
    assert_eq!(a, b);
    let orders: Vec<&str> = a["transpositions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["moves"].as_str().unwrap())
        .collect();
    assert!(orders.contains(&"1. d4 Nf6 2. c4 e6 3. Nc3 d5"), "{orders:?}");
    assert!(orders.contains(&"1. d4 d5 2. c4 e6 3. Nc3 Nf6"), "{orders:?}");
    assert!(a["game_count"].as_u64().unwrap() > 100);
}

#[test]
fn adding_or_removing_a_file_reparses_only_that_file() {
    let p = project(&FILES[..2]);
    p.make(&[]);
    std::fs::copy(masters(FILES[2]), p.path(&format!("games/{}", FILES[2]))).unwrap();
    let run = p.make(&[]);
    let built: Vec<String> = run
        .steps("Building")
        .into_iter()
        .filter(|s| s == "games" || s.starts_with("games:"))
        .collect();
    assert_eq!(
        built,
        vec![format!("games:games:games/{}", FILES[2]), "games".to_string()],
        "{}",
        run.stderr
    );
    std::fs::remove_file(p.path(&format!("games/{}", FILES[0]))).unwrap();
    let run = p.make(&["--explain"]);
    let built: Vec<String> = run
        .steps("Building")
        .into_iter()
        .filter(|s| s == "games" || s.starts_with("games:"))
        .collect();
    assert_eq!(built, vec!["games".to_string()], "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("input games:games:games/{} removed", FILES[0])),
        "{}",
        run.stderr
    );
}

#[test]
fn a_game_source_matching_no_file_is_an_error_unless_it_allows_empty() {
    let p = project(&[]);
    // A typo or an unmounted disk must not rebuild the store without games, --strict or not.
    for args in [&["make"][..], &["make", "--strict"]] {
        let run = p.okb(args);
        assert_eq!(run.status, 1, "{}", run.stderr);
        assert!(
            run.stderr.contains("game source games: no file matches games/*.pgn.zst"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("allow_empty = true"), "{}", run.stderr);
    }
    assert!(!p.path("build/okb.sqlite").exists());
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    std::fs::write(
        p.path("pipeline.toml"),
        text.replace(
            "paths = [\"games/*.pgn.zst\"]",
            "paths = [\"games/*.pgn.zst\"]\nallow_empty = true",
        ),
    )
    .unwrap();
    let run = p.make(&[]);
    assert!(run.stderr.contains("0 files matched games/*.pgn.zst"), "{}", run.stderr);
    assert_eq!(
        node(&p, "1. e4 c5")["game_count"],
        0,
        "an allowed empty folder gives the skeleton only"
    );
}

#[test]
fn thread_count_does_not_change_exports_with_games() {
    let one = project(&FILES);
    one.make(&["-j", "1"]);
    let two = project(&FILES);
    two.make(&["-j", "2"]);
    assert_eq!(tree_bytes(&one.path("out")), tree_bytes(&two.path("out")));
}

#[test]
fn the_polyglot_export_reads_back_with_python_chess() {
    let p = project(&FILES);
    p.make(&[]);
    let script = r#"
import chess, chess.polyglot, json, sys
with chess.polyglot.open_reader(sys.argv[1]) as book:
    entries = list(book.find_all(chess.Board()))
    print(json.dumps({e.move.uci(): e.weight for e in entries}))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script, p.path("out/book.bin").to_str().unwrap()])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python-chess: {} (pip install chess)",
        String::from_utf8_lossy(&out.stderr)
    );
    let weights: std::collections::BTreeMap<String, u64> =
        serde_json::from_slice(&out.stdout).unwrap();
    let root = node(&p, "");
    for child in root["children"].as_array().unwrap() {
        if child["game_count"].as_u64().unwrap() == 0 {
            continue;
        }
        let uci = child["uci"].as_str().unwrap();
        assert!(weights.contains_key(uci), "{uci} missing from the book: {weights:?}");
    }
    // 1. e4 and 1. d4 dominate master play.
    let best = weights.iter().max_by_key(|(_, w)| **w).unwrap().0;
    assert!(best == "e2e4" || best == "d2d4", "{weights:?}");
}

#[test]
fn status_gives_its_verdict_first_and_counts_fresh_game_files() {
    let p = project(&["Alburt.pgn.zst", "Stein.pgn.zst", "Adams.pgn.zst"]);
    assert_eq!(p.make(&[]).status, 0);
    let run = p.okb(&["status"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(
        first.contains("Fresh") && first.contains("everything is up to date"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("games:games (3 game files, each fresh)"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("Stein.pgn.zst"),
        "fresh files are counted, not listed: {}",
        run.stderr
    );
    // A changed file is listed, by name, with why it would run; the verdict still leads.
    std::fs::copy(masters("Alekhine.pgn.zst"), p.path("games/Stein.pgn.zst")).unwrap();
    let run = p.okb(&["status"]);
    assert!(
        run.stderr.lines().next().unwrap_or_default().contains("steps would run"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("Stale games:games:") && run.stderr.contains("Stein.pgn.zst"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("(2 game files, each fresh)"), "{}", run.stderr);
}
