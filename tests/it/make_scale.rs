//! Phase 2 out of core: a corpus several times the size of a masters subset (the same
//! files read N times under other names, through symlinks) counted within a memory
//! budget builds the same exports as an unbounded run, and the budgeted make's peak
//! memory (VmHWM, read from /proc while it runs) stays bounded.

use crate::common;
use std::path::PathBuf;
use std::time::Duration;

use common::{Project, mini_sources};

/// A dozen masters files of different sizes (about 40,000 games).
const FILES: [&str; 12] = [
    "Kramnik.pgn.zst",
    "Anand.pgn.zst",
    "Tal.pgn.zst",
    "Aronian.pgn.zst",
    "Fischer.pgn.zst",
    "Capablanca.pgn.zst",
    "Botvinnik.pgn.zst",
    "Petrosian.pgn.zst",
    "Spassky.pgn.zst",
    "Morphy.pgn.zst",
    "Lasker.pgn.zst",
    "Alekhine.pgn.zst",
];
const COPIES: usize = 4;

fn masters(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters").join(name)
}

/// The subset linked `COPIES` times into `games/`, counted with `memory_budget_mb`.
fn project(memory_budget_mb: usize) -> Project {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*\"]\n[games]\nmemory_budget_mb = {memory_budget_mb}\n\
         [tree]\nmin_games = 5\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n\
         [exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    for copy in 0..COPIES {
        for f in FILES {
            std::os::unix::fs::symlink(masters(f), p.path(&format!("games/copy{copy}-{f}")))
                .unwrap();
        }
    }
    p
}

/// Runs `okb make`, asserting success; returns its stderr and its peak resident memory
/// in MiB (the last VmHWM read before it ended: VmHWM only grows).
fn make_measured(p: &Project) -> (String, u64) {
    let mut child = p
        .command(&["make"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut peak_kb = 0;
    while child.try_wait().unwrap().is_none() {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
        });
        peak_kb = peak_kb.max(hwm.unwrap_or(0));
        std::thread::sleep(Duration::from_millis(20));
    }
    let ok = child.wait().unwrap().success();
    let stderr = reader.join().unwrap();
    assert!(ok, "okb make failed:\n{stderr}");
    (stderr, peak_kb / 1024)
}

fn exports(p: &Project) -> (Vec<u8>, Vec<u8>) {
    (p.read("out/nodes.csv"), p.read("out/book.bin"))
}

#[test]
fn budgets_do_not_change_exports_and_bound_memory() {
    let unbounded = project(1_000_000);
    let (log, _) = make_measured(&unbounded);
    let games = log
        .lines()
        .find(|l| l.contains("Building games ("))
        .unwrap_or_else(|| panic!("no games step:\n{log}"));
    assert!(games.contains("games counted of"), "{games}");
    let reference = exports(&unbounded);
    assert!(reference.0.len() > 100_000, "the tree has game moves");

    // 256 MiB, the benchmark's budget, and 2 MiB, which spills sorted runs while counting
    // and merges the collection through intermediate runs (a fan-in of 16 for 48 files).
    for budget in [256, 2] {
        let bounded = project(budget);
        let (_, peak_mb) = make_measured(&bounded);
        assert!(
            exports(&bounded) == reference,
            "exports with a {budget} MiB budget differ from the unbounded run's"
        );
        assert!(peak_mb < 256 + 512, "peak RSS {peak_mb} MiB with a {budget} MiB budget");
        let spill = bounded.path("cache/spill");
        assert!(budget > 2 || spill.is_dir(), "a 2 MiB budget spills");
        let left = std::fs::read_dir(&spill).map(|d| d.count()).unwrap_or(0);
        assert_eq!(left, 0, "spill runs are removed");
    }

    // Nothing changed: a no-op, every step fresh.
    let again = unbounded.make(&[]);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);
}
