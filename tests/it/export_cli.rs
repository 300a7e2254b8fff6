//! `okb export`: CSV, Polyglot and OpeningIQ files streamed from a built store equal the
//! pipeline's export steps' files for the same build, byte for byte (the CSV's edge
//! counts and move losses found again from the store's edges and evaluations; the
//! OpeningIQ files both from the whole graph and one opening's subtree at a time).

use crate::common;
use common::Project;

/// serve_api's project (the mini taxonomy, twelve fixture games, Stockfish at depth 6,
/// so rows have move losses; an OpeningIQ export to depth 5) with one export of each
/// other format `okb export` writes.
fn project() -> Project {
    crate::serve_api::project_with(
        5,
        r#"[exports.csv]
format = "csv"
output = "out/nodes.csv"
[exports.tsv]
format = "csv"
output = "out/nodes.tsv"
delimiter = ";"
[exports.book]
format = "polyglot"
output = "out/book.bin"
[exports.book-games]
format = "polyglot"
output = "out/book-games.bin"
weights = "games"
"#,
    )
}

/// Runs `okb export ARGS`, asserting success, nothing on stdout and a `Finished` line.
fn export(p: &Project, args: &[&str]) {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    let run = p.okb(&all);
    assert_eq!(run.status, 0, "okb {all:?}:\n{}", run.stderr);
    assert!(run.stdout.is_empty(), "stdout is for answers only: {}", run.stdout);
    assert!(run.stderr.contains("Finished"), "{}", run.stderr);
}

#[test]
fn exports_from_the_store_are_the_export_steps_files() {
    let p = project();
    p.make(&[]);
    let csv = String::from_utf8(p.read("out/nodes.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let loss = header.iter().position(|c| *c == "cp_loss").unwrap();
    let children = header.iter().position(|c| *c == "children").unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().any(|r| !r[loss].is_empty()), "some rows have a move loss to find");
    assert!(rows.iter().any(|r| r[children].parse::<u32>().unwrap() >= 2));

    export(&p, &["csv", "-o", "cli/nodes.csv"]);
    assert!(p.read("cli/nodes.csv") == p.read("out/nodes.csv"), "CSV");
    export(&p, &["csv", "-o", "cli/nodes.tsv", "--delimiter", ";"]);
    assert!(p.read("cli/nodes.tsv") == p.read("out/nodes.tsv"), "CSV with ;");
    export(&p, &["polyglot", "-o", "cli/book.bin", "--memory-mb", "1"]);
    assert!(p.read("cli/book.bin") == p.read("out/book.bin"), "book");
    assert!(!p.read("out/book.bin").is_empty());
    export(&p, &["polyglot", "-o", "cli/book-games.bin", "--weights", "games"]);
    assert!(p.read("cli/book-games.bin") == p.read("out/book-games.bin"), "book by games");
    let files = common::tree_bytes(&p.path("out/iq"));
    assert!(files.len() >= 5, "{}", files.len());
    export(&p, &["openingiq", "-o", "cli/iq", "--max-depth", "5"]);
    assert_eq!(common::tree_bytes(&p.path("cli/iq")), files, "OpeningIQ from the whole graph");
    export(&p, &["openingiq", "-o", "cli/iq-pieces", "--max-depth", "5", "--in-memory-nodes", "0"]);
    assert_eq!(common::tree_bytes(&p.path("cli/iq-pieces")), files, "one subtree at a time");
    let left: Vec<_> =
        std::fs::read_dir(p.path("cli")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 6, "no temporary file left beside the outputs: {left:?}");
}

#[test]
fn a_missing_store_or_a_bad_delimiter_is_refused_by_name() {
    let p = project();
    let run = p.okb(&["export", "csv", "-o", "nodes.csv", "--store", "nowhere.sqlite"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("nowhere.sqlite"), "{}", run.stderr);
    assert!(!p.path("nodes.csv").exists());
    let run = p.okb(&["export", "csv", "-o", "nodes.csv", "--delimiter", "ab"]);
    assert_eq!(run.status, 2, "a usage error");
    assert!(run.stderr.contains("one ASCII character"), "{}", run.stderr);
    // A store that is not one: the file is named, nothing is written.
    std::fs::write(p.path("junk.sqlite"), b"not a database at all, not even close........")
        .unwrap();
    let run = p.okb(&["export", "polyglot", "-o", "book.bin", "--store", "junk.sqlite"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("junk.sqlite"), "{}", run.stderr);
    assert!(!p.path("book.bin").exists());
    // A store whose edges leave a node it lacks: named as unusable, nothing written.
    p.make(&[]);
    std::fs::copy(p.path("build/okb.sqlite"), p.path("broken.sqlite")).unwrap();
    let db = rusqlite::Connection::open(p.path("broken.sqlite")).unwrap();
    let parent: String = db
        .query_row("SELECT parent_id FROM node_children ORDER BY parent_id DESC LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    db.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    db.execute("DELETE FROM opening_nodes WHERE node_id = ?1", [&parent]).unwrap();
    drop(db);
    let run = p.okb(&["export", "polyglot", "-o", "book.bin", "--store", "broken.sqlite"]);
    assert_eq!(run.status, 1);
    let stderr = common::flat(&run.stderr);
    assert!(
        stderr.contains("broken.sqlite")
            && stderr.contains(&parent[..8])
            && stderr.contains("unusable"),
        "{stderr}"
    );
    assert!(!p.path("book.bin").exists());
}

/// An opening whose subtree is larger than `--max-file-nodes` is not written and is
/// named; every other file is written (the same bytes), and the exit status says it.
#[test]
fn openings_too_large_for_the_bound_are_named_and_the_others_written() {
    let p = project();
    p.make(&[]);
    let files = common::tree_bytes(&p.path("out/iq"));
    let args =
        ["export", "openingiq", "-o", "cli/iq", "--max-depth", "5", "--in-memory-nodes", "0"];
    let run = p.okb(&[&args[..], &["--max-file-nodes", "12"]].concat());
    assert_eq!(run.status, 1, "{}", run.stderr);
    let written = common::tree_bytes(&p.path("cli/iq"));
    assert!(
        !written.is_empty() && written.len() < files.len(),
        "{} of {}",
        written.len(),
        files.len()
    );
    for (name, bytes) in &written {
        assert!(
            files.contains(&(name.clone(), bytes.clone())),
            "{name} as the export step wrote it"
        );
    }
    let missing: Vec<&str> = files
        .iter()
        .filter(|f| !written.iter().any(|w| w.0 == f.0))
        .map(|f| f.0.trim_end_matches(".json"))
        .collect();
    let stderr = common::flat(&run.stderr);
    assert!(
        stderr.contains(&format!(
            "{} of {} OpeningIQ files not written",
            missing.len(),
            files.len()
        )),
        "{stderr}"
    );
    for stem in missing {
        assert!(
            run.stderr.contains(&format!("{stem}.json not written")),
            "{stem} named: {}",
            run.stderr
        );
    }
}

/// What a killed `okb export` left beside its output (its temporary file, named with its
/// process id) is removed by the next one; a file of a process still running is kept.
#[test]
fn a_killed_exports_temporary_file_is_swept_by_the_next() {
    let p = project();
    p.make(&[]);
    std::fs::create_dir_all(p.path("cli")).unwrap();
    // Process ids above the kernel's pid_max (4,194,304 at most) never run.
    let dead = p.path("cli/.nodes.csv.4999999.0.okb-tmp");
    let alive = p.path(&format!("cli/.nodes.csv.{}.0.okb-tmp", std::process::id()));
    std::fs::write(&dead, vec![b'x'; 1 << 20]).unwrap();
    std::fs::write(&alive, b"being written").unwrap();
    export(&p, &["csv", "-o", "cli/nodes.csv"]);
    assert!(!dead.exists(), "the dead process's file is removed");
    assert!(alive.exists(), "a running process's file is kept");
}
