//! Engine phase against the real Stockfish, at low depth for speed.
//!
//! These tests need Stockfish: without it they fail (never skip) and say how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

use okb::engine::{AnnotationReport, EngineCache, EngineConfig, Job, annotate, resolve_engine};
use okb::position;
use shakmaty::san::San;
use shakmaty::{Chess, Position};

fn stockfish() -> PathBuf {
    resolve_engine(None)
        .unwrap_or_else(|e| panic!("these tests need Stockfish (apt-get install stockfish): {e}"))
}

fn config(depth: u32) -> EngineConfig {
    EngineConfig {
        path: Some(stockfish()),
        engines: 2,
        depth_branching: depth,
        depth_leaf: depth,
        depth_popular: depth,
        position_timeout: 60.0,
        ..EngineConfig::default()
    }
}

fn fen_after(line: &str) -> String {
    let mut pos = Chess::default();
    for san in line.split_whitespace() {
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    position::fen(&pos)
}

fn job(line: &str, depth: u32, priority: u64) -> Job {
    Job { fen: fen_after(line), depth, priority, subtree: line.to_string() }
}

fn epd_after(line: &str) -> String {
    position::epd(&position::parse_fen(&fen_after(line)).unwrap())
}

fn run(jobs: Vec<Job>, config: &EngineConfig, cache: &EngineCache) -> AnnotationReport {
    annotate(jobs, config, cache, &[], &|_| {}).unwrap()
}

#[test]
fn start_position_eval_is_sane() {
    let cache = EngineCache::in_memory().unwrap();
    let report = run(vec![job("", 10, 1)], &config(10), &cache);
    assert!(report.engine_name.starts_with("Stockfish"), "{}", report.engine_name);
    assert_eq!((report.analysed, report.failed, report.cached), (1, 0, 0));
    let a = &report.results[&epd_after("")];
    assert!((-60..=100).contains(&a.stockfish_eval), "start position eval {}", a.stockfish_eval);
    assert_eq!(a.stockfish_mate, None);
    assert_eq!(a.stockfish_depth, 10);
    assert_eq!(a.lines.len(), 3);
    let best = a.best_move_san.as_deref().unwrap();
    assert!(["e4", "d4", "Nf3", "c4", "e3", "g3", "Nc3"].contains(&best), "best move {best}");
    assert_eq!(a.best_move_uci.as_deref(), Some(a.lines[0].pv_uci[0].as_str()));
    assert_eq!(a.lines[0].pv_san[0], best);
    for l in &a.lines {
        assert!(!l.pv_uci.is_empty() && l.pv_uci.len() == l.pv_san.len());
    }
    // Lines are best first from White's view (White to move).
    assert!(a.lines.windows(2).all(|w| w[0].eval >= w[1].eval), "{:?}", a.lines);
    assert!(a.nodes > 0 && report.nodes == a.nodes);
}

#[test]
fn mate_in_one_gives_mate_and_busted_flags() {
    let cache = EngineCache::in_memory().unwrap();
    // 1. f3 e5 2. g4: Black mates with Qh4#, so White's last move is busted.
    let blunder = job("f3 e5 g4", 8, 1);
    // 1. e4 e5: nothing wrong with Black's move.
    let fine = job("e4 e5", 8, 1);
    let report = run(vec![blunder, fine], &config(8), &cache);
    let a = &report.results[&epd_after("f3 e5 g4")];
    assert_eq!(a.stockfish_mate, Some(-1));
    assert_eq!(a.stockfish_eval, -1000);
    assert_eq!(a.best_move_san.as_deref(), Some("Qh4#"));
    assert_eq!(a.best_move_uci.as_deref(), Some("d8h4"));
    assert!(a.is_busted && a.is_dubious);
    let b = &report.results[&epd_after("e4 e5")];
    assert!(!b.is_busted && !b.is_dubious, "1. e4 e5 judged bad: {b:?}");
}

/// Writes an engine wrapper that logs each start to `log`, then runs Stockfish.
fn counting_wrapper(dir: &Path, log: &Path) -> PathBuf {
    let script = dir.join("counting-stockfish");
    let text = format!(
        "#!/bin/sh\necho started >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        stockfish().display()
    );
    std::fs::write(&script, text).unwrap();
    Command::new("chmod").arg("+x").arg(&script).status().unwrap();
    script
}

fn starts(log: &Path) -> usize {
    std::fs::read_to_string(log).map(|s| s.lines().count()).unwrap_or(0)
}

#[test]
fn second_run_is_served_from_cache_without_starting_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let db = dir.path().join("engine.sqlite");
    let config = EngineConfig { path: Some(counting_wrapper(dir.path(), &log)), ..config(8) };
    let jobs = || vec![job("", 8, 10), job("e4", 8, 5), job("d4", 8, 4), job("e4 c5", 8, 1)];

    let first = run(jobs(), &config, &EngineCache::open(&db).unwrap());
    assert_eq!((first.analysed, first.cached), (4, 0));
    assert!(first.engines_started >= 1);
    assert_eq!(starts(&log), first.engines_started, "every spawn is counted");

    let cache = EngineCache::open(&db).unwrap();
    let second = run(jobs(), &config, &cache);
    assert_eq!((second.analysed, second.cached, second.engines_started), (0, 4, 0));
    assert_eq!(starts(&log), first.engines_started, "the cached run started an engine");
    assert_eq!(second.results, first.results);

    // Only the exact search serves a request: a shallower one is searched anew (a deeper
    // row would make the result depend on what this machine searched before), and so is
    // a deeper one.
    let shallow = run(vec![job("e4", 6, 1)], &config, &cache);
    assert_eq!((shallow.cached, shallow.analysed), (0, 1));
    assert_eq!(shallow.results[&epd_after("e4")].stockfish_depth, 6);
    let deeper = run(vec![job("e4", 9, 1)], &config, &cache);
    assert_eq!((deeper.cached, deeper.analysed), (0, 1));
}

#[test]
fn fresh_runs_are_deterministic() {
    // Two engines race for the jobs, so which engine searched what differs between runs;
    // with `ucinewgame` before every search the results must not.
    let lines = ["", "e4", "e4 e5", "e4 e5 Nf3", "e4 e5 Nf3 Nc6", "d4", "d4 d5", "d4 Nf6 c4"];
    let jobs = || lines.iter().map(|l| job(l, 9, 1)).collect::<Vec<_>>();
    let a = run(jobs(), &config(9), &EngineCache::in_memory().unwrap());
    let b = run(jobs(), &config(9), &EngineCache::in_memory().unwrap());
    assert_eq!(a.analysed, lines.len());
    assert_eq!(
        serde_json::to_string(&a.results).unwrap(),
        serde_json::to_string(&b.results).unwrap()
    );
    // With TT locality a subtree's searches share one table, cleared per subtree: still
    // the same results run after run, and independent of the number of engines.
    let locality = EngineConfig { tt_locality: true, ..config(9) };
    let c = run(jobs(), &locality, &EngineCache::in_memory().unwrap());
    let d =
        run(jobs(), &EngineConfig { engines: 1, ..locality }, &EngineCache::in_memory().unwrap());
    assert_eq!(
        serde_json::to_string(&c.results).unwrap(),
        serde_json::to_string(&d.results).unwrap()
    );
    // The first position of a unit starts from a clear table, exactly as without locality.
    assert_eq!(c.results[&epd_after("")], a.results[&epd_after("")]);
}

#[test]
fn limits_stop_scheduling_and_the_next_run_continues() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("engine.sqlite");
    let lines = ["", "e4", "d4", "c4", "Nf3"];
    let jobs = || lines.iter().map(|l| job(l, 8, 1)).collect::<Vec<_>>();
    let cache = EngineCache::open(&db).unwrap();
    let limited = EngineConfig { max_positions: Some(2), ..config(8) };
    // Results are committed one by one: a second connection sees each as it arrives.
    let observer = EngineCache::open(&db).unwrap();
    let seen = std::cell::RefCell::new(Vec::new());
    let report = annotate(jobs(), &limited, &cache, &[], &|p| {
        seen.borrow_mut().push((p.analysed, observer.len().unwrap()));
    })
    .unwrap();
    assert_eq!((report.analysed, report.left), (2, 3));
    assert!(report.stopped.as_deref().unwrap().contains("max_positions"));
    assert_eq!(*seen.borrow(), vec![(0, 0), (1, 1), (2, 2)]);

    let rest = run(jobs(), &config(8), &cache);
    assert_eq!((rest.cached, rest.analysed, rest.left), (2, 3, 0));
    assert_eq!(rest.stopped, None);

    let budget = EngineConfig { time_budget: Some(0.0), ..config(8) };
    let none = run(vec![job("e4 e5 Nf3", 8, 1)], &budget, &cache);
    assert_eq!((none.analysed, none.left), (0, 1));
    assert!(none.stopped.as_deref().unwrap().contains("time_budget"));
}
