//! Phase 4 inside `okb make`: real Stockfish at a low depth, the per-position cache, the
//! depth policy, budgets that resume, and a broken engine that does not stop the build.

use crate::common;
use common::{Project, mini_sources};

fn project(engine: &str) -> Project {
    Project::with_pipeline(&format!(
        "{}\n[engine]\nengines = 2\n{engine}\n\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n",
        mini_sources()
    ))
}

const SHALLOW: &str = "depth_branching = 7\ndepth_leaf = 6\ndepth_popular = 7";

fn summary(run: &common::Run) -> String {
    run.stderr.lines().find(|l| l.contains(" engine (")).unwrap_or_default().to_string()
}

fn require_stockfish() {
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|d| d.join("stockfish").is_file())
        || std::path::Path::new("/usr/games/stockfish").is_file();
    assert!(found, "these tests need Stockfish: apt-get install stockfish");
}

#[test]
fn annotations_reach_the_store_and_csv_and_a_rebuild_starts_no_engine() {
    require_stockfish();
    let p = project(SHALLOW);
    let run = p.make(&[]);
    assert!(summary(&run).contains("0 cached"), "{}", run.stderr);
    let q = p.okb(&["query", "moves", "1. e4 c5", "--json"]);
    let node: serde_json::Value = serde_json::from_str(&q.stdout).unwrap();
    assert_eq!(node["stockfish_depth"], 6, "a leaf gets depth_leaf: {node}");
    let eval = node["stockfish_eval"].as_i64().unwrap();
    assert!((-150..150).contains(&eval), "the Sicilian is balanced: {eval}");
    assert!(node["best_move"].is_string() && node["best_move_uci"].is_string());
    assert_eq!(node["is_busted"], false);
    assert!(!node["stockfish_lines"].as_array().unwrap().is_empty());
    let csv = String::from_utf8(p.read("out/nodes.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("stockfish_eval,stockfish_depth,best_move"));
    // Nothing changed: the engine step is fresh and no engine process starts.
    let again = p.make(&[]);
    assert!(again.stderr.contains("Fresh engine"), "{}", again.stderr);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);
}

#[test]
fn raising_one_depth_reanalyses_only_the_nodes_it_applies_to() {
    require_stockfish();
    let p = project(SHALLOW);
    p.make(&[]);
    let pipeline = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    std::fs::write(p.path("pipeline.toml"), pipeline.replace("depth_leaf = 6", "depth_leaf = 8"))
        .unwrap();
    let run = p.make(&["--explain"]);
    let line = summary(&run);
    assert!(run.stderr.contains("because parameter engine changed"), "{}", run.stderr);
    // Branching nodes keep their depth-7 results from the cache; leaves are searched again.
    let cached: usize =
        line.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(cached > 0, "{line}");
    assert!(!line.contains(" 0 analysed"), "{line}");
    let node: serde_json::Value =
        serde_json::from_str(&p.okb(&["query", "moves", "1. e4 c5", "--json"]).stdout).unwrap();
    assert_eq!(node["stockfish_depth"], 8);
}

#[test]
fn a_budget_stops_early_and_the_next_make_continues() {
    require_stockfish();
    let p = project(&format!("{SHALLOW}\nmax_positions = 5"));
    let first = p.make(&[]);
    assert!(summary(&first).contains("5 analysed"), "{}", first.stderr);
    assert!(
        summary(&first).contains("12 positions left (≈")
            && summary(&first).contains("run `okb make` again to continue"),
        "{}",
        first.stderr
    );
    let second = p.make(&[]);
    assert!(summary(&second).contains("5 cached, 5 analysed"), "{}", second.stderr);
    let mut runs = 2;
    loop {
        let run = p.make(&[]);
        runs += 1;
        if run.stderr.contains("Fresh engine") {
            break;
        }
        assert!(runs < 10, "annotation never completes:\n{}", run.stderr);
    }
}

#[test]
fn a_missing_engine_says_how_to_install_or_configure_one() {
    let p = project("path = \"/nonexistent/stockfish\"");
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("/nonexistent/stockfish"), "{}", run.stderr);
    assert!(run.stderr.contains("apt-get install stockfish"), "{}", run.stderr);
}

#[test]
fn a_crashing_engine_is_reported_and_the_build_completes() {
    let crash =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/engines/crash.py");
    let p = project(&format!(
        "path = \"{}\"\nmax_attempts = 2\nmax_consecutive_failures = 100",
        crash.display()
    ));
    let run = p.make(&[]);
    assert!(summary(&run).contains(" failed"), "{}", run.stderr);
    assert!(run.stderr.contains("[engine-failure]"), "{}", run.stderr);
    assert!(p.path("out/nodes.csv").exists());
    assert_eq!(p.okb(&["make", "--strict"]).status, 3);
}

#[test]
fn a_make_killed_during_annotation_keeps_finished_results_and_resumes() {
    require_stockfish();
    let engine = "depth_branching = 16\ndepth_leaf = 16\ndepth_popular = 16";
    let p = project(engine);
    let db = p.path("cache/engine.sqlite");
    let mut child = p.command(&["make"]).stderr(std::process::Stdio::null()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        assert!(std::time::Instant::now() < deadline, "no result was stored");
        assert!(child.try_wait().unwrap().is_none(), "okb make ended before it was killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let stored = db
            .exists()
            .then(|| okb::engine::EngineCache::open(&db).and_then(|c| c.len()).unwrap_or(0));
        if stored.unwrap_or(0) >= 2 {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let kept = okb::engine::EngineCache::open(&db).unwrap().len().unwrap();
    let run = p.make(&[]);
    let line = summary(&run);
    let cached: u64 = line.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(cached >= kept && kept >= 2, "kept {kept}, then {line}");
    // The resumed build equals a build that was never interrupted.
    let clean = project(engine);
    clean.make(&[]);
    assert_eq!(p.read("out/nodes.csv"), clean.read("out/nodes.csv"));
}
