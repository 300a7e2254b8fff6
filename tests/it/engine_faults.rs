//! Engine faults, with the fake engines of fixtures/engines/: crashes, hangs, garbage,
//! a broken handshake and a missing binary. The phase must complete and report.

use std::path::{Path, PathBuf};

use okb::engine::{EngineCache, EngineConfig, EngineError, Job, annotate};
use shakmaty::Chess;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/engines").join(name)
}

fn config(engine: PathBuf) -> EngineConfig {
    EngineConfig {
        path: Some(engine),
        engines: 1,
        position_timeout: 1.0,
        handshake_timeout: 5.0,
        ..EngineConfig::default()
    }
}

fn jobs(n: usize) -> Vec<Job> {
    let fens = [
        okb::position::fen(&Chess::default()),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_string(),
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1".to_string(),
        "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1".to_string(),
        "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1".to_string(),
    ];
    fens.into_iter()
        .take(n)
        .map(|fen| Job { fen, depth: 10, priority: 1, subtree: String::new() })
        .collect()
}

#[test]
fn crashing_engine_is_restarted_then_the_position_fails() {
    let cache = EngineCache::in_memory().unwrap();
    let report = annotate(jobs(2), &config(fixture("crash.py")), &cache, &[], &|_| {}).unwrap();
    assert_eq!((report.analysed, report.failed, report.left), (0, 2, 0));
    // One start to learn the engine's name, then a fresh engine for each of 3 attempts.
    assert_eq!(report.engines_started, 1 + 2 * 3);
    for failure in report.failures.values() {
        assert!(failure.reason.starts_with("failed 3 attempts"), "{}", failure.reason);
        assert!(failure.reason.contains("crashed: it exited with status 3"), "{}", failure.reason);
    }
    assert!(cache.is_empty().unwrap(), "failures are not cached");
}

#[test]
fn hanging_engine_times_out() {
    let cache = EngineCache::in_memory().unwrap();
    let started = std::time::Instant::now();
    let report = annotate(jobs(1), &config(fixture("hang.py")), &cache, &[], &|_| {}).unwrap();
    assert_eq!(report.failed, 1);
    let reason = &report.failures.values().next().unwrap().reason;
    assert_eq!(reason.matches("did not answer within 1 s").count(), 3, "{reason}");
    assert!(started.elapsed().as_secs_f64() < 30.0);
}

#[test]
fn garbage_output_is_reported_not_panicked_on() {
    let cache = EngineCache::in_memory().unwrap();
    let report = annotate(jobs(1), &config(fixture("garbage.py")), &cache, &[], &|_| {}).unwrap();
    assert_eq!(report.failed, 1);
    let reason = &report.failures.values().next().unwrap().reason;
    assert!(reason.contains("unusable answer: illegal best move \"z9z9\""), "{reason}");
}

#[test]
fn an_engine_that_crashes_once_is_retried_successfully() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["flaky.py", "fake_uci.py"] {
        std::fs::copy(fixture(name), dir.path().join(name)).unwrap();
    }
    let cache = EngineCache::in_memory().unwrap();
    let report =
        annotate(jobs(1), &config(dir.path().join("flaky.py")), &cache, &[], &|_| {}).unwrap();
    assert_eq!((report.analysed, report.failed), (1, 0));
    assert_eq!(report.engines_started, 3, "name probe, crashed engine, restarted engine");
    let analysis = report.results.values().next().unwrap();
    assert_eq!(analysis.stockfish_eval, 17);
    assert_eq!(analysis.best_move_san.as_deref(), Some("e4"));
    assert_eq!(analysis.lines[0].pv_san, vec!["e4", "e5"]);
    assert_eq!(cache.len().unwrap(), 1);
}

#[test]
fn a_broken_engine_stops_the_phase_after_consecutive_failures() {
    let cache = EngineCache::in_memory().unwrap();
    let config = EngineConfig {
        max_consecutive_failures: 2,
        max_attempts: 1,
        ..config(fixture("crash.py"))
    };
    let report = annotate(jobs(5), &config, &cache, &[], &|_| {}).unwrap();
    assert_eq!((report.failed, report.left), (2, 3));
    assert!(report.stopped.unwrap().contains("2 positions in a row failed"));
}

#[test]
fn an_engine_without_handshake_is_an_error() {
    let cache = EngineCache::in_memory().unwrap();
    let config = EngineConfig { handshake_timeout: 0.5, ..config(fixture("no_uciok.py")) };
    let err = annotate(jobs(1), &config, &cache, &[], &|_| {}).unwrap_err();
    assert!(matches!(err, EngineError::Handshake { .. }), "{err}");
    assert!(err.to_string().contains("waiting for uciok"), "{err}");
}

#[test]
fn a_missing_engine_says_how_to_install_or_configure_one() {
    let cache = EngineCache::in_memory().unwrap();
    let err =
        annotate(jobs(1), &config(fixture("does-not-exist")), &cache, &[], &|_| {}).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EngineError::NotFound { .. }), "{text}");
    assert!(text.contains("does-not-exist"), "{text}");
    assert!(text.contains("apt-get install stockfish"), "{text}");
    assert!(text.contains("[engine] path"), "{text}");
    let bare_name =
        EngineConfig { path: Some("okb-no-such-engine".into()), ..EngineConfig::default() };
    let err = annotate(jobs(1), &bare_name, &cache, &[], &|_| {}).unwrap_err();
    assert!(err.to_string().contains("okb-no-such-engine on PATH"), "{err}");
}

#[test]
fn a_non_executable_engine_is_a_spawn_error() {
    let cache = EngineCache::in_memory().unwrap();
    let err = annotate(jobs(1), &config(fixture("fake_uci.py")), &cache, &[], &|_| {}).unwrap_err();
    assert!(matches!(err, EngineError::Spawn { .. }), "{err}");
}

#[test]
fn invalid_fens_are_failures_not_errors() {
    let cache = EngineCache::in_memory().unwrap();
    let job = Job { fen: "not a fen".into(), depth: 5, priority: 0, subtree: String::new() };
    let report = annotate(vec![job], &config(fixture("crash.py")), &cache, &[], &|_| {}).unwrap();
    assert_eq!((report.failed, report.analysed), (1, 0));
    assert!(report.failures["not a fen"].reason.contains("invalid FEN"));
}
