//! The build engine's promises, each checked on a real project with the real binary.

use crate::common;
use common::{Project, tree_bytes};

const ALL_STEPS: usize = 19;

#[test]
fn second_make_does_nothing_and_says_so() {
    let p = Project::full();
    let first = p.make(&[]);
    assert_eq!(first.steps("Building").len(), ALL_STEPS, "{}", first.stderr);
    let second = p.make(&[]);
    assert!(second.steps("Building").is_empty(), "{}", second.stderr);
    assert_eq!(second.steps("Fresh").len(), ALL_STEPS);
    assert!(second.stderr.contains("nothing to do"), "{}", second.stderr);
}

#[test]
fn touching_a_source_without_changing_bytes_does_no_work() {
    let p = Project::full();
    p.make(&[]);
    let file = p.path("src/c.tsv");
    let bytes = std::fs::read(&file).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&file, &bytes).unwrap();
    let run = p.make(&[]);
    assert!(run.steps("Building").is_empty(), "{}", run.stderr);
}

#[test]
fn changing_one_source_rebuilds_only_what_depends_on_it() {
    let p = Project::full();
    p.make(&[]);
    let file = p.path("src/a.tsv");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("A00\tTest Opening: Made Up\t1. a3 a6 2. b3 b6\n");
    std::fs::write(&file, text).unwrap();
    let run = p.make(&["--explain"]);
    let mut built = run.steps("Building");
    built.sort();
    assert_eq!(
        built,
        vec![
            "eco",
            "export:eco-json",
            "export:nodes-csv",
            "manifest",
            "node-records",
            "parse:lichess-a",
            "store",
            "store:edges",
            "store:entries",
            "structure-review",
            "structures",
            "tree"
        ],
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("because lichess-a changed"), "{}", run.stderr);
    let fresh = run.steps("Fresh");
    assert_eq!(fresh.len(), 7, "{}", run.stderr);
    // The new name is in the store.
    let q = p.okb(&["query", "moves", "1. a3 a6 2. b3 b6", "--json"]);
    assert_eq!(q.status, 0, "{}", q.stderr);
    assert!(q.stdout.contains("\"variation_name\": \"Made Up\""), "{}", q.stdout);
}

#[test]
fn an_unchanged_parse_output_stops_the_rebuild() {
    let p = Project::full();
    p.make(&[]);
    let file = p.path("src/scid.eco");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(b"# a comment changes the bytes, not the entries\n");
    std::fs::write(&file, bytes).unwrap();
    let run = p.make(&[]);
    // The manifest records every source's BLAKE3, so it is written again; nothing else.
    assert_eq!(run.steps("Building"), vec!["parse:scid", "manifest"], "{}", run.stderr);
}

#[test]
fn changing_one_export_parameter_reruns_only_that_export() {
    let p = Project::full();
    p.make(&[]);
    let pipeline = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let edited = pipeline
        .replace("output = \"out/nodes.csv\"", "output = \"out/nodes.csv\"\ndelimiter = \";\"");
    std::fs::write(p.path("pipeline.toml"), edited).unwrap();
    let run = p.make(&["--explain"]);
    assert_eq!(run.steps("Building"), vec!["export:nodes-csv", "manifest"], "{}", run.stderr);
    assert!(run.stderr.contains("because parameter exports.nodes-csv changed"), "{}", run.stderr);
    let csv = String::from_utf8(p.read("out/nodes.csv")).unwrap();
    assert!(csv.starts_with("node_id;position_key;fen;"), "{}", &csv[..80]);
}

#[test]
fn a_deleted_output_is_restored_from_the_cache_without_recomputation() {
    let p = Project::full();
    p.make(&[]);
    let before = p.read("out/eco/ecoB.json");
    std::fs::remove_file(p.path("out/eco/ecoB.json")).unwrap();
    std::fs::write(p.path("out/nodes.csv"), b"edited by hand").unwrap();
    let run = p.make(&[]);
    assert!(run.steps("Building").is_empty(), "{}", run.stderr);
    let mut restored = run.steps("Restored");
    restored.sort();
    assert_eq!(restored, vec!["export:eco-json", "export:nodes-csv"], "{}", run.stderr);
    assert_eq!(p.read("out/eco/ecoB.json"), before);
    // The store is rebuilt from the cached tree: no phase recomputes.
    std::fs::remove_file(p.path("build/okb.sqlite")).unwrap();
    let run = p.make(&[]);
    assert_eq!(run.steps("Building"), vec!["store"], "{}", run.stderr);
}

#[test]
fn clean_and_incremental_builds_are_byte_identical() {
    let incremental = Project::full();
    incremental.make(&[]);
    let edit = |p: &Project| {
        let file = p.path("src/e.tsv");
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("\tNimzo-Indian Defense\t", "\tNimzo Indian\t");
        std::fs::write(&file, text).unwrap();
    };
    edit(&incremental);
    incremental.make(&[]);
    let clean = Project::full();
    edit(&clean);
    clean.make(&["-j", "1"]);
    assert_eq!(tree_bytes(&incremental.path("out")), tree_bytes(&clean.path("out")));
}

#[test]
fn a_killed_build_resumes_and_matches_a_clean_build() {
    let reference = Project::full();
    reference.make(&[]);
    for delay_ms in [30u64, 120, 300] {
        let p = Project::full();
        p.kill_make_after(delay_ms);
        let run = p.make(&[]);
        assert!(run.stderr.contains("Finished"), "{}", run.stderr);
        assert_eq!(
            tree_bytes(&p.path("out")),
            tree_bytes(&reference.path("out")),
            "after a kill at {delay_ms} ms"
        );
        let again = p.make(&[]);
        assert!(again.steps("Building").is_empty(), "{}", again.stderr);
        let left = leftovers(&p);
        assert!(left.is_empty(), "after a kill at {delay_ms} ms: {left:?}");
    }
}

/// [`Project::full`] with real games (a small memory budget, so counting spills sorted
/// runs), and exports of every kind that writes its file through a temporary one.
fn with_games_and_exports() -> Project {
    let p = Project::full();
    let twic = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/twic/twic0920.pgn");
    let mut text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    text.push_str(&format!(
        "[sources.twic]\nkind = \"pgn\"\npaths = [\"{}\"]\n[games]\nmemory_budget_mb = 1\n\
         [exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n\
         [exports.classified]\nformat = \"classified-pgn\"\noutput = \"out/classified.pgn\"\nsources = [\"twic\"]\n\
         [exports.moves]\nformat = \"packed\"\noutput = \"out/moves.okbm\"\n",
        twic.display()
    ));
    std::fs::write(p.path("pipeline.toml"), text).unwrap();
    p
}

#[test]
fn a_make_killed_at_many_points_leaves_no_temporary_file_after_the_next() {
    let reference = with_games_and_exports();
    let started = std::time::Instant::now();
    reference.make(&[]);
    let took = started.elapsed().as_millis() as u64;
    // Kills spread over the whole make, wherever its steps happen to be.
    for tenth in 1..=9 {
        let delay_ms = took * tenth / 10;
        let p = with_games_and_exports();
        p.kill_make_after(delay_ms);
        p.make(&[]);
        let left = leftovers(&p);
        assert!(left.is_empty(), "after a kill at {delay_ms} ms of {took}: {left:?}");
        assert_eq!(
            tree_bytes(&p.path("out")),
            tree_bytes(&reference.path("out")),
            "after a kill at {delay_ms} ms"
        );
    }
}

/// Temporary files anywhere in a project (by any naming: okb's own, or a `.tmp` or
/// `-side` name written by hand), and a set make-under-way mark.
fn leftovers(p: &Project) -> Vec<String> {
    let all = tree_bytes(&p.path(""));
    all.into_iter()
        .filter(|(name, bytes)| {
            let file = name.rsplit('/').next().unwrap_or(name);
            file.contains("okb-tmp")
                || file.ends_with(".tmp")
                || file.contains("okb-side")
                || (name.ends_with("make-state") && !bytes.is_empty())
        })
        .map(|(name, _)| name)
        .collect()
}
#[test]
fn a_make_after_an_interrupted_one_removes_what_it_left() {
    let p = Project::full();
    p.make(&[]);
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        child.id()
    };
    let abandoned = [
        format!("cache/objects/.ab01.{dead}.7.okb-tmp"),
        format!("cache/.value.{dead}.2.okb-tmp"),
        format!("sources/.download.{dead}.0.okb-tmp"),
        format!("out/eco/.ecoA.json.{dead}.9.okb-tmp"),
        format!("out/.nodes.csv.{dead}.4.okb-tmp"),
    ];
    // A file of a process still running (this test) stays, as does any other file.
    let kept =
        [format!("out/.nodes.csv.{}.1.okb-tmp", std::process::id()), "out/notes.txt".to_string()];
    for file in abandoned.iter().chain(&kept) {
        std::fs::create_dir_all(p.path(file).parent().unwrap()).unwrap();
        std::fs::write(p.path(file), b"partial").unwrap();
    }
    // Without the mark, the previous make finished: no sweep (and no listing of the cache).
    let run = p.make(&[]);
    assert!(!run.stderr.contains("Removed"), "{}", run.stderr);
    assert!(abandoned.iter().all(|f| p.path(f).exists()));
    // What a killed make leaves: the mark it set.
    std::fs::write(p.path("cache/make-state"), b"unfinished\n").unwrap();
    let run = p.make(&[]);
    assert!(
        run.stderr.contains("Removed temporary files of an interrupted make"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("and 4 more"), "{}", run.stderr);
    assert!(run.steps("Building").is_empty(), "{}", run.stderr);
    for file in &abandoned {
        assert!(!p.path(file).exists(), "{file} is still there");
    }
    assert!(kept.iter().all(|f| p.path(f).exists()));
    assert!(p.read("cache/make-state").is_empty());
}

#[test]
fn two_makes_at_once_serialize_on_the_project_lock() {
    let p = Project::full();
    let a = p.command(&["make"]).output_async();
    let b = p.command(&["make"]).output_async();
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert!(a.status.success() && b.status.success());
    let both =
        format!("{}{}", String::from_utf8_lossy(&a.stderr), String::from_utf8_lossy(&b.stderr));
    // One built, the other found everything fresh (after waiting, if it had to).
    assert_eq!(both.matches("Building eco").count(), 1, "{both}");
    let again = p.make(&[]);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);
    let q = p.okb(&["query", "eco", "C60", "--json"]);
    assert_eq!(q.status, 0, "{}", q.stderr);
}

trait OutputAsync {
    fn output_async(self) -> std::thread::JoinHandle<std::process::Output>;
}

impl OutputAsync for std::process::Command {
    fn output_async(mut self) -> std::thread::JoinHandle<std::process::Output> {
        std::thread::spawn(move || self.output().unwrap())
    }
}

#[test]
fn thread_count_does_not_change_outputs() {
    let one = Project::full();
    one.make(&["-j", "1"]);
    let two = Project::full();
    two.make(&["-j", "2"]);
    assert_eq!(tree_bytes(&one.path("out")), tree_bytes(&two.path("out")));
}

#[test]
fn status_reports_stale_steps_without_building() {
    let p = Project::full();
    let run = p.okb(&["status"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("never built"), "{}", run.stderr);
    assert!(!p.path("out").exists());
    p.make(&[]);
    let file = p.path("src/b.tsv");
    let text = std::fs::read_to_string(&file).unwrap() + "B00\tExtra\t1. e4 a6 2. h4\n";
    std::fs::write(&file, text).unwrap();
    let run = p.okb(&["status"]);
    assert!(run.stderr.contains("because lichess-b changed"), "{}", run.stderr);
    assert!(run.stderr.contains("because input parse:lichess-b will be rebuilt"), "{}", run.stderr);
    assert_eq!(p.make(&[]).steps("Building").len(), 12);
}

#[test]
fn a_corrupt_cache_object_is_rebuilt() {
    let p = Project::full();
    p.make(&[]);
    // Corrupt every cached object; the next build notices, discards and rebuilds.
    let objects: Vec<_> =
        std::fs::read_dir(p.path("cache/objects")).unwrap().flatten().map(|f| f.path()).collect();
    assert!(objects.len() > 10, "{objects:?}");
    for o in &objects {
        std::fs::write(o, b"garbage").unwrap();
    }
    std::fs::remove_file(p.path("out/nodes.csv")).unwrap();
    let run = p.make(&[]);
    assert!(run.stderr.contains("corrupt"), "{}", run.stderr);
    assert!(p.read("out/nodes.csv").starts_with(b"node_id,"));
}

/// The number of step records and objects in a project's cache.
fn cache_entries(p: &Project) -> (usize, usize) {
    let count = |dir: &str| {
        std::fs::read_dir(p.path(dir))
            .map_or(0, |d| d.flatten().filter(|e| e.path().is_file()).count())
    };
    (count("cache/steps"), count("cache/objects"))
}

fn swept(run: &common::Run) -> serde_json::Value {
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap()["swept"].clone()
}

#[test]
fn clean_unused_keeps_exactly_what_the_build_needs() {
    let pipeline = |min_games: u32| {
        format!(
            "{}[tree]\nmin_games = {min_games}\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n",
            common::SELF_CONTAINED_SOURCES
        )
    };
    let p = Project::self_contained(&pipeline(1), &["openings.pgn", "classify.pgn"]);
    p.make(&[]);
    std::fs::write(p.path("pipeline.toml"), pipeline(2)).unwrap();
    p.make(&[]);
    let before = cache_entries(&p);

    let dry = swept(&p.okb(&["clean", "--unused", "--dry-run", "--json"]));
    assert!(
        dry["records_removed"].as_u64().unwrap() > 0
            && dry["objects_removed"].as_u64().unwrap() > 0,
        "{dry}"
    );
    assert_eq!(cache_entries(&p), before, "a dry run removes nothing");
    assert_eq!(
        swept(&p.okb(&["clean", "--unused", "--json"])),
        dry,
        "the sweep removes what the dry run listed"
    );
    let after = cache_entries(&p);
    assert_eq!(after.0 as u64, dry["records_kept"].as_u64().unwrap());
    assert!(after.1 < before.1);
    assert_eq!(
        swept(&p.okb(&["clean", "--unused", "--json"]))["records_removed"],
        0,
        "a second sweep finds nothing"
    );
    assert!(p.make(&[]).stderr.contains("nothing to do"));

    // What the fresh steps' values name is still there: the tree reads the merged runs,
    // and a new file makes the merge read every other file's runs.
    std::fs::write(p.path("pipeline.toml"), pipeline(1)).unwrap();
    let rerun = p.make(&[]);
    assert!(
        rerun.steps("Building").contains(&"tree".to_string())
            && !rerun.steps("Building").contains(&"games".to_string()),
        "{}",
        rerun.stderr
    );
    std::fs::copy(p.path("games/openings.pgn"), p.path("games/again.pgn")).unwrap();
    let merged = p.make(&[]);
    assert!(merged.steps("Building").contains(&"games".to_string()), "{}", merged.stderr);
    let clean = Project::self_contained(&pipeline(1), &["openings.pgn", "classify.pgn"]);
    std::fs::copy(clean.path("games/openings.pgn"), clean.path("games/again.pgn")).unwrap();
    clean.make(&[]);
    common::assert_same_outputs(&p, &clean, &["out/nodes.csv"]);

    // A stale step: what it will need is unknown, so nothing goes.
    std::fs::write(p.path("pipeline.toml"), pipeline(3)).unwrap();
    let entries = cache_entries(&p);
    let refused = p.okb(&["clean", "--unused"]);
    assert_eq!(refused.status, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("stale") && refused.stderr.contains("okb make"),
        "{}",
        refused.stderr
    );
    assert_eq!(cache_entries(&p), entries);
}

/// kill -9 at five points of a rebuild (a tenth to nine tenths of the time an
/// uninterrupted one took, measured here), then a make: the store and the manifest are
/// byte for byte those of the uninterrupted rebuild.
#[test]
fn an_interrupted_rebuild_writes_the_same_store_as_an_uninterrupted_one() {
    let add_line = |p: &Project| {
        let file = p.path("src/a.tsv");
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str("A00\tTest Opening: Made Up\t1. a3 a6 2. b3 b6\n");
        std::fs::write(&file, text).unwrap();
    };
    let made = || {
        let p = Project::full();
        p.make(&[]);
        add_line(&p);
        p
    };
    let straight = made();
    let started = std::time::Instant::now();
    straight.make(&[]);
    let took = started.elapsed();
    let changes = rusqlite::Connection::open(straight.path("build/okb.sqlite"))
        .unwrap()
        .query_row("SELECT count(*) FROM node_changelog WHERE build = 2", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    assert!(changes > 0, "the rebuild logged its changes");
    // The other rebuilds happen seconds later: no clock may reach the store.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for tenths in [1, 3, 5, 7, 9] {
        let interrupted = made();
        let mut child =
            interrupted.command(&["make"]).stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(took * tenths / 10);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        interrupted.make(&[]);
        assert!(
            straight.read("build/okb.sqlite") == interrupted.read("build/okb.sqlite"),
            "the stores differ after a kill at {tenths}/10 of {took:?}"
        );
        assert_eq!(straight.read("build/manifest.json"), interrupted.read("build/manifest.json"));
    }
}

/// The one window the timed kill above rarely hits, made to happen every time: a make
/// that put its new store in place and was killed before it recorded a step. Its step
/// records and its notes on key parts and file stamps are taken back, so the next make
/// finds a store that no finished build wrote; the store before it (which that run kept)
/// is still what the rebuild's changelog follows.
#[test]
fn a_store_put_in_place_by_a_run_killed_before_it_recorded_is_no_finished_build() {
    let (straight, cut) = (Project::full(), Project::full());
    for p in [&straight, &cut] {
        p.make(&[]);
        let file = p.path("src/a.tsv");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text + "A00\tTest Opening: Made Up\t1. a3 a6 2. b3 b6\n").unwrap();
    }
    straight.make(&[]);
    let steps = |p: &Project| -> std::collections::BTreeSet<std::ffi::OsString> {
        std::fs::read_dir(p.path("cache/steps")).unwrap().map(|e| e.unwrap().file_name()).collect()
    };
    let (recorded, notes) = (steps(&cut), ["cache/last-parts.json", "cache/file-states.json"]);
    let kept: Vec<Vec<u8>> = notes.iter().map(|n| cut.read(n)).collect();
    cut.make(&[]);
    for name in steps(&cut).difference(&recorded) {
        std::fs::remove_file(cut.path("cache/steps").join(name)).unwrap();
    }
    for (note, bytes) in notes.iter().zip(kept) {
        std::fs::write(cut.path(note), bytes).unwrap();
    }
    let rerun = cut.make(&[]);
    assert!(rerun.steps("Building").contains(&"store".to_string()), "{}", rerun.stderr);
    assert!(
        straight.read("build/okb.sqlite") == cut.read("build/okb.sqlite"),
        "the rebuild logged its changes against the unrecorded store: {}",
        rerun.stderr
    );
    assert_eq!(straight.read("build/manifest.json"), cut.read("build/manifest.json"));
}

/// The store's changelog, checked against SQLite's own comparison of the previous store
/// (kept in the cache) with the new one: every tracked field whose value differs, every
/// field a new node has, every node that is gone, and nothing else.
#[test]
fn the_changelog_lists_exactly_what_differs_from_the_previous_store() {
    let p = Project::full();
    p.make(&[]);
    let file = p.path("src/a.tsv");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    // A line gone (its interpolated prefix positions may go with it), one renamed, one added.
    lines.remove(3);
    let renamed = {
        let mut cols: Vec<&str> = lines[5].split('\t').collect();
        let name = format!("{} (renamed)", cols[1]);
        cols[1] = &name;
        cols.join("\t")
    };
    lines[5] = &renamed;
    let mut text = lines.join("\n");
    text.push_str("\nA00\tTest Opening: Made Up\t1. a3 a6 2. b3 b6\n");
    std::fs::write(&file, text).unwrap();
    p.make(&[]);
    let conn = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    let previous = p.path("cache/previous/store.sqlite");
    conn.execute("ATTACH DATABASE ?1 AS old", [previous.to_str().unwrap()]).unwrap();
    let mut expected = std::collections::BTreeSet::new();
    for field in okb::record::tracked_columns().iter().map(|c| c.name) {
        let differ = format!(
            "SELECT n.node_id FROM opening_nodes n JOIN old.opening_nodes o USING (node_id) \
             WHERE n.{field} IS NOT o.{field} \
             UNION ALL SELECT n.node_id FROM opening_nodes n \
             WHERE n.{field} IS NOT NULL AND n.node_id NOT IN (SELECT node_id FROM old.opening_nodes)"
        );
        let mut stmt = conn.prepare(&differ).unwrap();
        for id in stmt.query_map([], |r| r.get::<_, String>(0)).unwrap() {
            expected.insert((id.unwrap(), field.to_string()));
        }
    }
    let gone = "SELECT node_id FROM old.opening_nodes \
                WHERE node_id NOT IN (SELECT node_id FROM opening_nodes)";
    let mut stmt = conn.prepare(gone).unwrap();
    for id in stmt.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        expected.insert((id.unwrap(), "node".to_string()));
    }
    let mut stmt =
        conn.prepare("SELECT node_id, field FROM node_changelog WHERE build = 2").unwrap();
    let logged: Vec<(String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    let logged_set: std::collections::BTreeSet<_> = logged.iter().cloned().collect();
    assert_eq!(logged.len(), logged_set.len(), "a change logged twice");
    let kinds = |field: &str| expected.iter().filter(|(_, f)| f == field).count();
    assert!(kinds("node") > 0 && kinds("opening_name") > 0 && kinds("fen") > 0, "{expected:?}");
    assert_eq!(logged_set, expected);
}
