//! `okb diff` and `okb make --diff`: one change at a time on the fixture pipeline, each
//! diff pinned as an insta snapshot of `okb diff --json`.

use crate::common;
use common::{Project, SELF_CONTAINED_SOURCES};

const EXTRA: &str = r#"[tree]
min_games = 1

[exports.csv]
format = "csv"
output = "out/nodes.csv"

[exports.book]
format = "polyglot"
output = "out/book.bin"
"#;

fn pipeline() -> String {
    format!("{SELF_CONTAINED_SOURCES}\n{EXTRA}")
}

fn project() -> Project {
    let p = Project::self_contained(&pipeline(), &["openings.pgn"]);
    p.make(&[]);
    p
}

/// `okb diff --json` after the last make: exit 1 (different) and the report.
fn diff_json(p: &Project) -> serde_json::Value {
    let run = p.okb(&["diff", "--json"]);
    assert_eq!(run.status, 1, "the builds differ: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

fn snapshot(name: &str, value: &serde_json::Value) {
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, serde_json::to_string_pretty(value).unwrap());
    });
}

fn edit(p: &Project, file: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(p.path(file)).unwrap();
    assert!(text.contains(from), "{file} holds {from:?}");
    std::fs::write(p.path(file), text.replace(from, to)).unwrap();
}

#[test]
fn a_renamed_and_an_added_taxonomy_line() {
    let p = project();
    edit(
        &p,
        "src/mini.tsv",
        "Sicilian Defense: Modern Variations",
        "Sicilian Defense: Modern Lines",
    );
    let mut tsv = std::fs::read_to_string(p.path("src/mini.tsv")).unwrap();
    tsv.push_str("C40\tKing's Knight Opening\t1. e4 e5 2. Nf3\n");
    std::fs::write(p.path("src/mini.tsv"), tsv).unwrap();
    let run = p.okb(&["make", "--diff"]);
    assert_eq!(run.status, 1, "okb diff's status for different builds: {}", run.stderr);
    assert!(
        run.stdout.contains("Names changed (2)")
            && run.stdout.contains("Sicilian Defense: Modern Lines"),
        "{}",
        run.stdout
    );
    snapshot("diff_taxonomy_line", &diff_json(&p));
}

#[test]
fn a_higher_min_games_threshold() {
    let p = project();
    edit(&p, "pipeline.toml", "min_games = 1", "min_games = 3");
    p.make(&[]);
    let d = diff_json(&p);
    assert!(!d["diff"]["removed"].as_array().unwrap().is_empty(), "{d}");
    assert!(d["diff"]["added"].as_array().unwrap().is_empty(), "{d}");
    snapshot("diff_min_games", &d);
}

#[test]
fn an_added_game_file() {
    let p = project();
    let classify =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/classify.pgn");
    std::fs::copy(classify, p.path("games/classify.pgn")).unwrap();
    p.make(&[]);
    let d = diff_json(&p);
    assert!(!d["diff"]["stats"].as_array().unwrap().is_empty(), "{d}");
    snapshot("diff_added_game_file", &d);
    // Below the threshold, count changes are not reported.
    let run = p.okb(&["diff", "--json", "--min-delta", "1"]);
    let quiet: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(quiet["diff"]["stats"].as_array().unwrap().is_empty(), "{quiet}");
}

#[test]
fn a_deeper_engine_search_changes_evaluations_only() {
    let engine = "[engine]\nengines = 1\nmax_ply = 4\ndepth_branching = 5\ndepth_leaf = 5\ndepth_popular = 5\n";
    let p = Project::self_contained(&format!("{}{engine}", pipeline()), &["openings.pgn"]);
    p.make(&[]);
    edit(&p, "pipeline.toml", "depth_leaf = 5", "depth_leaf = 9");
    p.make(&[]);
    let d = diff_json(&p);
    let evals = d["diff"]["evals"].as_array().unwrap();
    assert!(!evals.is_empty(), "{d}");
    for section in
        ["added", "removed", "names", "aliases", "stats", "structures", "transpositions_added"]
    {
        assert!(d["diff"][section].as_array().unwrap().is_empty(), "{section}: {d}");
    }
    let text = p.okb(&["diff"]).stdout;
    assert!(text.contains("Engine evaluations changed") && text.contains(" cp"), "{text}");
}

#[test]
fn two_stores_given_and_errors_exit_2() {
    let p = project();
    let store = p.path("build/okb.sqlite").display().to_string();
    let same = p.okb(&["diff", &store, &store]);
    assert_eq!(same.status, 0, "{}", same.stderr);
    assert!(same.stderr.contains("no difference"));
    let missing = p.okb(&["diff", "nope.sqlite", &store]);
    assert_eq!(missing.status, 2);
    assert!(missing.stderr.contains("nope.sqlite: no such store"), "{}", missing.stderr);
    // A project with one build has nothing to compare with.
    let first = p.okb(&["diff"]);
    assert_eq!(first.status, 2, "{}", first.stderr);
    assert!(first.stderr.contains("no earlier build"), "{}", first.stderr);
}

#[test]
fn make_diff_exits_with_okb_diffs_status() {
    let p = project();
    // Nothing changed: 0, as `okb diff` of two equal stores.
    let same = p.okb(&["make", "--diff"]);
    assert_eq!(same.status, 0, "{}", same.stderr);
    assert!(same.stderr.contains("did not change"), "{}", same.stderr);
    // A changed threshold: the builds differ, 1 (what `okb diff` then says too).
    edit(&p, "pipeline.toml", "min_games = 1", "min_games = 3");
    let different = p.okb(&["make", "--diff"]);
    assert_eq!(different.status, 1, "{}", different.stderr);
    assert!(different.stdout.contains("Positions removed ("), "{}", different.stdout);
    assert_eq!(p.okb(&["diff"]).status, different.status);
    // Trouble (a build that cannot run): 2, as `okb diff` with a missing store.
    edit(&p, "pipeline.toml", "min_games = 3", "min_gamez = 3");
    let trouble = p.okb(&["make", "--diff"]);
    assert_eq!(trouble.status, 2, "{}", trouble.stderr);
    assert!(trouble.stderr.contains("min_gamez"), "{}", trouble.stderr);
    assert_eq!(p.okb(&["diff", "nope.sqlite"]).status, trouble.status);
}
