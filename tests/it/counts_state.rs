//! A counts state folder made by `okb state` by hand (the steps spark/okb_state.py runs):
//! declared as a `kind = "counts-state"` source it builds the tree a `state = true` source
//! over the same files builds; a merge run twice writes the same shard, a month committed
//! twice is refused, and a damaged shard, another max_ply or a second state stop the make
//! with the file or sources named.

use crate::common;
use common::{Project, flat, mini_sources};

const TREE: &str = "[tree]\nmax_ply = 10\nmin_games = 2\n[games]\nstate_shards = 3\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n";

fn game(name: &str) -> String {
    format!("{}/fixtures/games/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn okb(p: &Project, args: &[&str]) -> common::Run {
    let run = p.okb(args);
    assert_eq!(run.status, 0, "okb {args:?}:\n{}", run.stderr);
    run
}

/// A project reading the state folder `state`, which holds two months: `openings.pgn`
/// and `api.pgn` (counted apart, in two slices folders), then `classify.pgn`.
fn state_project() -> Project {
    let p = Project::with_pipeline(&format!(
        "{}[sources.st]\nkind = \"counts-state\"\npath = \"state\"\n{TREE}",
        mini_sources()
    ));
    okb(&p, &["state", "init", "--state", "state", "--shards", "3", "--max-ply", "10"]);
    let months = [("m1", vec!["openings.pgn", "api.pgn"]), ("m2", vec!["classify.pgn"])];
    for (month, files) in months {
        let mut parts = Vec::new();
        for (i, file) in files.iter().enumerate() {
            let part = format!("staging/{month}/part-{i}");
            okb(&p, &["state", "count", "--state", "state", "-o", &part, &game(file)]);
            parts.push(part);
        }
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        for shard in ["0", "1", "2"] {
            let merge =
                ["state", "merge", "--state", "state", "--shard", shard, "--min-games", "2"];
            okb(&p, &[&merge[..], &parts].concat());
        }
        okb(&p, &[&["state", "commit", "--state", "state", "--month", month][..], &parts].concat());
    }
    p
}

#[test]
fn a_state_made_by_okb_state_builds_the_tree_of_a_state_true_source() {
    let files: Vec<String> = ["openings.pgn", "api.pgn", "classify.pgn"]
        .iter()
        .map(|g| format!("{:?}", game(g)))
        .collect();
    let local = Project::with_pipeline(&format!(
        "{}[sources.st]\nkind = \"pgn\"\npaths = [{}]\nstate = true\n{TREE}",
        mini_sources(),
        files.join(", ")
    ));
    local.make(&[]);
    let p = state_project();
    let made = p.make(&[]);
    assert!(made.stderr.contains("counts-state:st (2 months"), "{}", made.stderr);
    common::assert_same_outputs(&local, &p, &["out/nodes.csv"]);
    // Another min_games: the cut is made in the cache, the folder is left as it was.
    let hot = std::fs::read_dir(p.path("state/hot")).unwrap().count();
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    std::fs::write(p.path("pipeline.toml"), text.replace("min_games = 2", "min_games = 3"))
        .unwrap();
    p.make(&[]);
    assert_eq!(std::fs::read_dir(p.path("state/hot")).unwrap().count(), hot);
    assert!(std::fs::read_dir(p.path("cache/sides/state-hot")).unwrap().count() > 0);
}

#[test]
fn a_merge_run_twice_writes_the_same_shard_and_a_month_is_committed_once() {
    let p = state_project();
    let part = "staging/m3/part-0";
    okb(&p, &["state", "count", "--state", "state", "-o", part, &game("filters.pgn")]);
    let merge = ["state", "merge", "--state", "state", "--shard", "1", "--min-games", "2", part];
    okb(&p, &merge);
    let first = p.read("state/pending/1.json");
    okb(&p, &merge);
    assert_eq!(p.read("state/pending/1.json"), first, "a rerun writes the same shard");
    // Committed before every touched shard is merged: refused, naming the shard.
    let commit = ["state", "commit", "--state", "state", "--month", "m3", part];
    let early = p.okb(&commit);
    assert_eq!(early.status, 1);
    assert!(early.stderr.contains("shard 0 was not merged"), "{}", early.stderr);
    for shard in ["0", "2"] {
        okb(
            &p,
            &["state", "merge", "--state", "state", "--shard", shard, "--min-games", "2", part],
        );
    }
    okb(&p, &commit);
    // The same games again, under another name: refused, the manifest untouched.
    let manifest = p.read("state/manifest.json");
    let again = "staging/m4/part-0";
    okb(&p, &["state", "count", "--state", "state", "-o", again, &game("filters.pgn")]);
    let twice = p.okb(&["state", "commit", "--state", "state", "--month", "m4", again]);
    assert_eq!(twice.status, 1);
    assert!(twice.stderr.contains("holds month m3"), "{}", twice.stderr);
    assert_eq!(p.read("state/manifest.json"), manifest);
}

#[test]
fn a_damaged_shard_another_ply_or_two_states_stop_the_make() {
    let p = state_project();
    let manifest: serde_json::Value =
        serde_json::from_slice(&p.read("state/manifest.json")).unwrap();
    let name = manifest["state"]["shards"][0]["name"].as_str().unwrap().to_string();
    let shard = format!("state/shards/{name}.shard");
    let mut bytes = p.read(&shard);
    bytes[5] ^= 0x40;
    std::fs::write(p.path(&shard), bytes).unwrap();
    // Cut at another threshold, the tree reads the shard whole and finds the damage.
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    std::fs::write(p.path("pipeline.toml"), text.replace("min_games = 2", "min_games = 4"))
        .unwrap();
    let damaged = p.okb(&["make"]);
    assert_eq!(damaged.status, 1);
    // The path may be wrapped anywhere: compared without spaces.
    let said: String = flat(&damaged.stderr).split_whitespace().collect();
    assert!(said.contains(&format!("shards/{name}.shard:damaged")), "{}", damaged.stderr);

    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    std::fs::write(p.path("pipeline.toml"), text.replace("max_ply = 10", "max_ply = 8")).unwrap();
    let ply = p.okb(&["make"]);
    assert_eq!(ply.status, 1);
    assert!(
        flat(&ply.stderr).contains("counted to ply 10, the tree is built to ply 8"),
        "{}",
        ply.stderr
    );

    let text = std::fs::read_to_string(p.path("pipeline.toml"))
        .unwrap()
        .replace("max_ply = 8", "max_ply = 10");
    let local =
        format!("[sources.games]\nkind = \"pgn\"\npaths = [{:?}]\nstate = true\n", game("api.pgn"));
    std::fs::write(p.path("pipeline.toml"), format!("{local}{text}")).unwrap();
    let two = p.okb(&["make"]);
    assert_eq!(two.status, 1);
    assert!(
        flat(&two.stderr).contains("a tree reads one counts state")
            && flat(&two.stderr).contains("counts-state source st"),
        "{}",
        two.stderr
    );
}
