//! Reproducible releases: the manifest every make writes, `okb make --locked` and
//! `okb verify`.

use crate::common;
use common::{Project, SELF_CONTAINED_SOURCES};

/// The fixture project with every file inside it (see [`Project::self_contained`]).
fn relocatable_project() -> Project {
    Project::self_contained(
        &format!(
            "{SELF_CONTAINED_SOURCES}{}",
            r#"
[exports.csv]
format = "csv"
output = "out/nodes.csv"

[exports.eco]
format = "eco-json"
output = "out/eco"

[exports.book]
format = "polyglot"
output = "out/book.bin"
"#
        ),
        &["classify.pgn"],
    )
}

fn pin(p: &Project) {
    let run = p.okb(&["pin"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
}

#[test]
fn the_manifest_is_the_same_in_any_folder_with_any_thread_count() {
    let (a, b) = (relocatable_project(), relocatable_project());
    pin(&a);
    pin(&b);
    a.make(&["-j", "1", "--locked"]);
    b.make(&["-j", "2", "--locked"]);
    let (ma, mb) = (a.read("build/manifest.json"), b.read("build/manifest.json"));
    assert_eq!(String::from_utf8_lossy(&ma), String::from_utf8_lossy(&mb));

    let manifest: serde_json::Value = serde_json::from_slice(&ma).unwrap();
    let text = String::from_utf8_lossy(&ma);
    assert!(!text.contains(&a.path("").display().to_string()), "no absolute path: {text}");
    let outputs: Vec<&str> = manifest["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    assert!(
        outputs.contains(&"out/nodes.csv")
            && outputs.contains(&"out/book.bin")
            && outputs.contains(&"out/eco/ecoA.json"),
        "{outputs:?}"
    );
    for output in manifest["outputs"].as_array().unwrap() {
        let bytes = a.read(output["path"].as_str().unwrap());
        assert_eq!(output["blake3"], blake3::hash(&bytes).to_hex().as_str());
        assert_eq!(output["bytes"], bytes.len());
    }
    assert_eq!(
        manifest["sources"]["lichess"]["blake3"],
        blake3::hash(&a.read("src/mini.tsv")).to_hex().as_str()
    );
    assert_eq!(manifest["game_files"][0]["path"], "games/classify.pgn");
    assert_eq!(manifest["okb"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["pipeline"]["parameters"]["tree"]["max_ply"], 15);
    // A no-op make leaves it alone.
    let again = a.make(&[]);
    assert!(again.stderr.contains("nothing to do"), "{}", again.stderr);
}

#[test]
fn locked_refuses_an_unpinned_source_and_downloads() {
    let p = relocatable_project();
    let run = p.okb(&["make", "--locked"]);
    assert_eq!(run.status, 1);
    assert!(
        common::flat(&run.stderr).contains("--locked: 2 sources have no blake3 pin in")
            && common::flat(&run.stderr).contains("pipeline.toml: lichess, scid")
            && run.stderr.contains("okb pin"),
        "{}",
        run.stderr
    );
    assert!(!p.path("out").exists(), "nothing is built");

    let url = Project::with_pipeline(&format!(
        "[sources.openings]\nkind = \"lichess-tsv\"\nurl = \"http://127.0.0.1:9/nonesuch.tsv\"\nblake3 = \"{}\"\n",
        "1".repeat(64)
    ));
    let run = url.okb(&["make", "--locked"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("--locked) forbids downloading"), "{}", run.stderr);
}

#[test]
fn verify_catches_a_hand_edited_export_and_a_build_that_does_not_reproduce() {
    let p = relocatable_project();
    pin(&p);
    p.make(&["--locked"]);
    let run = p.okb(&["verify"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("Verified"), "{}", run.stderr);

    // One byte of an export, edited by hand: named, with both hashes; exit 1.
    let mut csv = p.read("out/nodes.csv");
    csv[10] ^= 1;
    std::fs::write(p.path("out/nodes.csv"), &csv).unwrap();
    let run = p.okb(&["verify", "--no-build", "--json"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let modified: Vec<&serde_json::Value> =
        report["files"].as_array().unwrap().iter().filter(|f| f["state"] == "modified").collect();
    assert_eq!(modified.len(), 1, "{report}");
    assert_eq!(modified[0]["path"], "out/nodes.csv");
    assert_eq!(modified[0]["now_blake3"], blake3::hash(&csv).to_hex().as_str());

    // Verifying with a build puts the edited file back from the cache, and says so.
    let run = p.okb(&["verify"]);
    assert_eq!(run.status, 1, "the edited file is still reported: {}", run.stderr);
    assert!(
        run.stderr.contains("Restored") && run.stderr.contains("out/nodes.csv from the cache"),
        "{}",
        run.stderr
    );
    assert_matches_manifest(&p, "out/nodes.csv");
    assert_eq!(p.okb(&["verify"]).status, 0);

    // A release manifest the pins do not build (here: another max_ply) differs after
    // the build, and says where.
    let release = p.path("release.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&p.read("build/manifest.json")).unwrap();
    manifest["pipeline"]["parameters"]["tree"]["max_ply"] = 12.into();
    std::fs::write(&release, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    let run = p.okb(&["verify", release.to_str().unwrap()]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("pipeline.parameters.tree.max_ply: 12 → 15"), "{}", run.stderr);

    // --fresh rebuilds every step with an empty cache and reproduces the manifest.
    let run = p.okb(&["verify", "--fresh"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("with an empty cache"), "{}", run.stderr);
}

/// The file at `path` hashes to the BLAKE3 the manifest lists for it.
fn assert_matches_manifest(p: &Project, path: &str) {
    let manifest: serde_json::Value =
        serde_json::from_slice(&p.read("build/manifest.json")).unwrap();
    let listed =
        manifest["outputs"].as_array().unwrap().iter().find(|o| o["path"] == path).unwrap();
    assert_eq!(
        listed["blake3"],
        blake3::hash(&p.read(path)).to_hex().as_str(),
        "{path} is the manifest's again"
    );
}

/// The `id name` Stockfish gives over UCI, asked here without okb.
fn stockfish_id_name() -> String {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new("/usr/games/stockfish")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("Stockfish at /usr/games/stockfish (tests/setup.sh installs it)");
    child.stdin.take().unwrap().write_all(b"uci\nquit\n").unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let name = out
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("id name ").map(str::to_string));
    child.wait().unwrap();
    name.expect("Stockfish says its id name")
}

#[test]
fn the_manifest_names_the_engine_and_where_each_evaluation_came_from() {
    let engine = "\n[engine]\npath = \"/usr/games/stockfish\"\nengines = 1\nmax_ply = 2\ndepth_branching = 4\ndepth_leaf = 4\ndepth_popular = 4\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n";
    let (a, b) = (
        Project::self_contained(&format!("{SELF_CONTAINED_SOURCES}{engine}"), &["classify.pgn"]),
        Project::self_contained(&format!("{SELF_CONTAINED_SOURCES}{engine}"), &["classify.pgn"]),
    );
    a.make(&[]);
    b.make(&["-j", "1"]);
    let text = String::from_utf8_lossy(&a.read("build/manifest.json")).into_owned();
    assert_eq!(
        text,
        String::from_utf8_lossy(&b.read("build/manifest.json")),
        "the same in two folders"
    );
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let name = stockfish_id_name();
    assert_eq!(manifest["engine"]["name"], name.as_str(), "{text}");
    // Every annotated node's evaluation is the engine's: as many as the store holds.
    let csv = common::eval_columns(&a);
    let annotated = csv.iter().filter(|row| !row[1].is_empty()).count();
    assert!(annotated > 0, "{csv:?}");
    assert_eq!(
        manifest["engine"]["evaluations"],
        serde_json::json!({ name.clone(): annotated }),
        "{text}"
    );
}

/// The folders in `dir`.
fn folders(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    found.sort();
    found
}

#[test]
fn a_killed_verify_fresh_leaves_its_scratch_folder_to_the_next_okb() {
    let p = relocatable_project();
    pin(&p);
    p.make(&["--locked"]);
    // Its own temporary folder, watched: killed once its scratch folder exists.
    let tmp = tempfile::tempdir().unwrap();
    let mut child = p
        .command(&["verify", "--fresh"])
        .env("TMPDIR", tmp.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while folders(tmp.path()).is_empty() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = folders(tmp.path());
    assert_eq!(left.len(), 1, "the killed verify's scratch folder: {left:?}");
    // Named after the temporary-file convention: the process that wrote it, then .okb-tmp.
    let name = left[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.ends_with(".okb-tmp") && name.contains(&format!(".{}.", child.id())), "{name}");
    // The next okb making a scratch folder sweeps it, and removes its own.
    let run: common::Run =
        p.command(&["verify", "--fresh"]).env("TMPDIR", tmp.path()).output().unwrap().into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(folders(tmp.path()), Vec::<std::path::PathBuf>::new());
}

#[test]
fn locked_requires_a_pin_for_every_file_of_a_paths_source_and_pin_writes_them() {
    let p = relocatable_project();
    assert_eq!(p.okb(&["pin", "lichess", "scid"]).status, 0);
    let run = p.okb(&["make", "--locked"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let said = common::flat(&run.stderr);
    assert!(
        said.contains("--locked: game source games: file games/classify.pgn has no pin in [sources.games.pins]")
            && !said.contains("blake3 pin"),
        "{said}"
    );
    // `okb pin` pins the files one by one, in a table of their own.
    let run = p.okb(&["pin"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("Pinned games games/classify.pgn blake3 "), "{}", run.stderr);
    let pipeline = String::from_utf8(p.read("pipeline.toml")).unwrap();
    assert!(pipeline.contains("[sources.games.pins]\n\"games/classify.pgn\" = \""), "{pipeline}");
    p.make(&["--locked"]);
    // New files are named, with the source, until they are pinned.
    let games = std::fs::read(p.path("games/classify.pgn")).unwrap();
    std::fs::write(p.path("games/more.pgn"), &games).unwrap();
    std::fs::write(p.path("games/most.pgn"), &games).unwrap();
    let run = p.okb(&["make", "--locked"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        common::flat(&run.stderr).contains(
            "game source games: 2 files have no pin in [sources.games.pins]: games/more.pgn, games/most.pgn"
        ),
        "{}",
        run.stderr
    );
    // A pinned file whose bytes changed stops any make, naming it and both hashes.
    std::fs::remove_file(p.path("games/more.pgn")).unwrap();
    std::fs::remove_file(p.path("games/most.pgn")).unwrap();
    std::fs::write(p.path("games/classify.pgn"), [&games[..], b"\n"].concat()).unwrap();
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let said = common::flat(&run.stderr);
    assert!(
        said.contains("source games: pinned blake3")
            && said.contains("games/classify.pgn gave blake3"),
        "{said}"
    );
    assert!(said.contains("okb pin --force games"), "{said}");
    let run = p.okb(&["pin", "--force", "games"]);
    assert!(run.stderr.contains("Repinned games games/classify.pgn blake3 "), "{}", run.stderr);
    p.make(&["--locked"]);
}
