//! Messages that say what happened: the limit a skipped game broke, the export that
//! could not be written.

use crate::common;
use common::{Project, mini_sources};

#[test]
fn a_game_skipped_for_a_huge_tag_says_the_limit() {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    let huge = "x".repeat(1 << 20);
    let text = format!(
        "[Event \"{huge}\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n[Event \"ok\"]\n[Result \"1-0\"]\n\n1. d4 d5 1-0\n"
    );
    std::fs::write(p.path("games/huge.pgn"), text).unwrap();
    let run = p.make(&[]);
    let stderr = common::flat(&run.stderr);
    assert!(
        stderr.contains("games/huge.pgn:1: game skipped: bad-tag (a tag line that is unterminated or longer than 4096 bytes)"),
        "{stderr}"
    );
}

#[test]
fn an_export_that_cannot_be_written_is_named() {
    let p = Project::with_pipeline(&format!(
        "{}[exports.nodes]\nformat = \"csv\"\noutput = \"./table\"\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("table/inside")).unwrap();
    let run = p.okb(&["make"]);
    let stderr = common::flat(&run.stderr);
    assert_eq!(run.status, 1, "{stderr}");
    assert!(
        stderr.contains("export:nodes: writing ") && stderr.contains("/table: Is a directory"),
        "{stderr}"
    );
}

#[test]
fn a_loop_of_links_is_called_a_loop() {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*\"]\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    std::os::unix::fs::symlink("b.pgn", p.path("games/a.pgn")).unwrap();
    std::os::unix::fs::symlink("a.pgn", p.path("games/b.pgn")).unwrap();
    let run = p.okb(&["make"]);
    let stderr = common::flat(&run.stderr);
    assert_eq!(run.status, 1, "{stderr}");
    assert!(stderr.contains("which leads back to itself (a loop of symbolic links)"), "{stderr}");
    assert!(!stderr.contains("does not exist"), "{stderr}");
}

/// The warning count of `make`'s `Finished` line (0 when it names none).
fn finished_warnings(stderr: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains("Finished"))
        .unwrap_or_else(|| panic!("no Finished line:\n{stderr}"));
    line.split(", ")
        .find_map(|part| match part.split_whitespace().collect::<Vec<_>>()[..] {
            [n, word, ..] if word.starts_with("warning") => Some(n.parse().unwrap()),
            _ => None,
        })
        .unwrap_or(0)
}

#[test]
fn the_finished_line_counts_the_warnings_printed_and_the_next_make_agrees() {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    // A game file's own warning (a game skipped for an illegal move): the step that
    // counts the file lists it without counting it itself.
    let text = "[Event \"bad move\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n\n[Event \"cut\n\n1. d4 d5 1-0\n\n[Event \"ok\"]\n[Result \"1-0\"]\n\n1. c4 e5 1-0\n";
    std::fs::write(p.path("games/some.pgn"), text).unwrap();
    let first = p.make(&[]);
    let stderr = common::flat(&first.stderr);
    let printed = stderr.lines().filter(|l| l.starts_with("warning [")).count();
    assert!(printed >= 1, "{stderr}");
    assert!(!stderr.contains("… and "), "every warning is on a line of its own here:\n{stderr}");
    assert_eq!(finished_warnings(&stderr), printed, "{stderr}");
    let again = p.make(&[]);
    assert_eq!(finished_warnings(&common::flat(&again.stderr)), printed, "{}", again.stderr);
}

/// [`Project::full`] with The Week in Chess 920 as games, the tree kept to `min_games`.
fn full_with_games(min_games: u32) -> Project {
    let p = Project::full();
    let twic = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/twic/twic0920.pgn");
    let mut text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    text.push_str(&format!(
        "[sources.twic]\nkind = \"pgn\"\npaths = [\"{}\"]\n[tree]\nmin_games = {min_games}\n",
        twic.display()
    ));
    std::fs::write(p.path("pipeline.toml"), text).unwrap();
    p
}

/// Flips a byte in the middle of cache object `hash`.
fn corrupt(p: &Project, hash: &str) {
    let path = p.path(&format!("cache/objects/{hash}"));
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
}

/// The objects named by the make's corrupt-cache warnings, with their steps.
fn named_corrupt(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Warning cache object "))
        .map(|l| {
            let mut words = l.split_whitespace();
            let object = words.next().unwrap().to_string();
            (object, words.nth(2).unwrap().to_string())
        })
        .collect()
}

#[test]
fn every_corrupt_cache_object_a_make_meets_is_named_and_rebuilt() {
    let p = full_with_games(2);
    p.make(&[]);
    // An export's file, restored after a deletion: its blob (the file's BLAKE3) is found
    // corrupt, and the warning names the blob, not the list of the export's files.
    let csv = blake3::hash(&p.read("out/nodes.csv")).to_hex().to_string();
    corrupt(&p, &csv);
    std::fs::remove_file(p.path("out/nodes.csv")).unwrap();
    let run = p.make(&[]);
    assert_eq!(
        named_corrupt(&run.stderr),
        vec![(csv.clone(), "export:nodes-csv".to_string())],
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("the step's output"), "{}", run.stderr);

    // Every large object (sorted runs of game counts, large values), with a tree that must
    // be rebuilt from the runs: each warning names an object that was corrupted, the
    // game counts' runs among them, never a step's small value in their place.
    let large: std::collections::BTreeSet<String> = std::fs::read_dir(p.path("cache/objects"))
        .unwrap()
        .flatten()
        .filter(|e| e.metadata().unwrap().len() > 50_000)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    large.iter().for_each(|hash| corrupt(&p, hash));
    let pipeline = std::fs::read_to_string(p.path("pipeline.toml"))
        .unwrap()
        .replace("min_games = 2", "min_games = 3");
    std::fs::write(p.path("pipeline.toml"), pipeline).unwrap();
    let run = p.make(&[]);
    let named = named_corrupt(&run.stderr);
    assert!(named.iter().all(|(object, _)| large.contains(object)), "{named:?}\n{}", run.stderr);
    assert!(
        named.iter().any(|(_, step)| step.starts_with("games")),
        "a run of the counts is named:\n{}",
        run.stderr
    );
    // And what it rebuilt is what a clean build makes.
    let clean = full_with_games(3);
    clean.make(&[]);
    assert_eq!(common::tree_bytes(&p.path("out")), common::tree_bytes(&clean.path("out")));
}
