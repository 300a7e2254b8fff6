//! The counts state (`state = true` game sources): files added one make at a time give the
//! same knowledge base as one make over them all, in any order and with any shard count,
//! as the per-file runs do; a make killed during a merge resumes and ends identical.

use crate::common;
use common::{Project, tree_bytes};

const LICHESS: &str = "../shared/corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn";

/// The Lichess sample cut into `n` "months" of whole games, written into `p`'s `games/`.
fn months(p: &Project, n: usize) -> Vec<String> {
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(LICHESS))
            .unwrap();
    let games: Vec<&str> = text.split("\n\n[Event ").collect();
    std::fs::create_dir_all(p.path("games")).unwrap();
    let per = games.len().div_ceil(n);
    (0..n)
        .map(|i| {
            let part: Vec<&str> = games.iter().skip(i * per).take(per).copied().collect();
            let mut body = part.join("\n\n[Event ");
            if i > 0 {
                body = format!("[Event {body}");
            }
            let name = format!("games/2013-{:02}.pgn", i + 1);
            std::fs::write(p.path(&name), body + "\n\n").unwrap();
            name
        })
        .collect()
}

/// A project whose `lichess` source lists `files` (with `state`), beside a masters file
/// kept as runs, pruned low so that many keys sit near the threshold.
fn project(files: &[String], state: bool, shards: usize) -> Project {
    let masters = common::masters_file("Adams.pgn.zst");
    let masters = format!("[sources.masters]\nkind = \"pgn\"\npaths = [{masters:?}]\n");
    project_with(files, state, shards, &masters)
}

/// [`project`] with `others` (more sources) beside the `lichess` one.
fn project_with(files: &[String], state: bool, shards: usize, others: &str) -> Project {
    let p = Project::full();
    months(&p, 4);
    let list: Vec<String> = files.iter().map(|f| format!("{f:?}")).collect();
    let mut text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    text.push_str(&format!(
        "[sources.lichess]\nkind = \"pgn\"\npaths = [{}]\nstate = {state}\n{others}\
         [tree]\nmin_games = 4\n[games]\nmemory_budget_mb = 1\nstate_shards = {shards}\n\
         [exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n",
        list.join(", "),
    ));
    std::fs::write(p.path("pipeline.toml"), text).unwrap();
    p
}

fn set_min_games(p: &Project, min_games: u64) {
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let text = text.replace("min_games = 4", &format!("min_games = {min_games}"));
    std::fs::write(p.path("pipeline.toml"), text).unwrap();
}

/// The hot cuts in `p`'s cache: (shard, threshold), sorted.
fn hot_cuts(p: &Project) -> Vec<(String, String)> {
    let mut cuts: Vec<(String, String)> = std::fs::read_dir(p.path("cache/sides/hot"))
        .map(|dir| {
            dir.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter_map(|n| n.rsplit_once('-').map(|(s, t)| (s.to_string(), t.to_string())))
                .collect()
        })
        .unwrap_or_default();
    cuts.sort();
    cuts
}

fn set_files(p: &Project, files: &[String]) {
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let start = text.find("[sources.lichess]\nkind = \"pgn\"\npaths = [").unwrap();
    let end = start + text[start..].find("]\nstate").unwrap();
    let list: Vec<String> = files.iter().map(|f| format!("{f:?}")).collect();
    let text = format!(
        "{}[sources.lichess]\nkind = \"pgn\"\npaths = [{}{}",
        &text[..start],
        list.join(", "),
        &text[end..]
    );
    std::fs::write(p.path("pipeline.toml"), text).unwrap();
}

fn names() -> Vec<String> {
    (1..=4).map(|i| format!("games/2013-{i:02}.pgn")).collect()
}

#[test]
fn months_added_one_make_at_a_time_equal_one_make_over_all_and_the_runs_path() {
    let all = names();
    let runs = project(&all, false, 1);
    runs.make(&[]);
    let reference = tree_bytes(&runs.path("out"));
    assert!(reference.iter().any(|(name, _)| name.ends_with("book.bin")));

    let at_once = project(&all, true, 1);
    let made = at_once.make(&[]);
    assert!(
        made.steps("Building").iter().any(|s| s.starts_with("state:lichess:")),
        "{}",
        made.stderr
    );
    assert_eq!(tree_bytes(&at_once.path("out")), reference, "state, one make");

    let reversed: Vec<String> = all.iter().rev().cloned().collect();
    let other_order = project(&reversed, true, 7);
    other_order.make(&["-j", "1"]);
    assert_eq!(tree_bytes(&other_order.path("out")), reference, "state, other order, 7 shards");

    let monthly = project(&all[..1], true, 16);
    monthly.make(&[]);
    for n in 2..=4 {
        set_files(&monthly, &all[..n]);
        let made = monthly.make(&[]);
        // Only the new month is counted and merged; the states before are fresh.
        let counted: Vec<String> = made
            .steps("Building")
            .into_iter()
            .filter(|s| s.starts_with("games:") || s.starts_with("state:"))
            .collect();
        assert_eq!(
            counted,
            vec![format!("games:lichess:{}", all[n - 1]), format!("state:lichess:{}", all[n - 1])],
            "{}",
            made.stderr
        );
    }
    assert_eq!(tree_bytes(&monthly.path("out")), reference, "state, a month a make");
    let again = monthly.make(&[]);
    assert!(again.steps("Building").is_empty(), "{}", again.stderr);

    // A threshold change re-cuts from the state: nothing is counted or merged again.
    let text = std::fs::read_to_string(monthly.path("pipeline.toml"))
        .unwrap()
        .replace("min_games = 4", "min_games = 6");
    std::fs::write(monthly.path("pipeline.toml"), text).unwrap();
    let recut = monthly.make(&[]);
    assert!(
        !recut.steps("Building").iter().any(|s| s.starts_with("games:") || s.starts_with("state:")),
        "{}",
        recut.stderr
    );

    // Removing a month in the middle rebuilds the state from the first month: the states
    // and runs it was made of are gone, so every month is counted again.
    let without: Vec<String> = [&all[..1], &all[2..]].concat();
    set_files(&monthly, &without);
    // `okb status` says so before the make, with the time the counting will take, and the
    // make says it once, instead of a warning for each state and count it finds gone.
    let rebuild = |text: &str| {
        text.lines()
            .filter(|l| {
                l.contains("Note")
                    && l.contains("counts every file again (3 files, about")
                    && l.contains(&format!("({} removed)", all[1]))
            })
            .count()
    };
    let status = monthly.okb(&["status"]);
    assert_eq!(rebuild(&status.stderr), 1, "{}", status.stderr);
    let json = monthly.okb(&["status", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["notes"].as_array().map(Vec::len), Some(1), "{}", json.stdout);
    let removed = monthly.make(&[]);
    assert!(removed.stderr.contains("Finished"), "{}", removed.stderr);
    assert_eq!(rebuild(&removed.stderr), 1, "{}", removed.stderr);
    assert!(!removed.stderr.contains("missing or corrupt"), "{}", removed.stderr);
    let status = monthly.okb(&["status"]);
    assert_eq!(
        rebuild(&status.stderr),
        0,
        "the state holds the listed files now: {}",
        status.stderr
    );
    let recounted = removed
        .steps("Building")
        .into_iter()
        .filter(|s| s.starts_with("games:"))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_eq!(recounted, 3, "{}", removed.stderr);
    let fresh = project(&without, true, 16);
    let text = std::fs::read_to_string(fresh.path("pipeline.toml"))
        .unwrap()
        .replace("min_games = 4", "min_games = 6");
    std::fs::write(fresh.path("pipeline.toml"), text).unwrap();
    fresh.make(&[]);
    assert_eq!(
        tree_bytes(&monthly.path("out")),
        tree_bytes(&fresh.path("out")),
        "after removing a month"
    );
}

/// Alone, a state is read through the hot cuts its merges wrote (no shard read whole
/// again by the tree); a threshold change cuts each shard once more, nothing recounted.
#[test]
fn a_state_alone_is_read_through_the_hot_cuts_its_merges_wrote() {
    let all = names();
    let runs = project_with(&all, false, 1, "");
    runs.make(&[]);
    let monthly = project_with(&all[..1], true, 8, "");
    monthly.make(&[]);
    for n in 2..=4 {
        set_files(&monthly, &all[..n]);
        monthly.make(&[]);
    }
    assert_eq!(tree_bytes(&monthly.path("out")), tree_bytes(&runs.path("out")));
    // One cut per live shard, at the make's threshold; replaced shards' cuts are gone.
    let cuts = hot_cuts(&monthly);
    assert!((1..=8).contains(&cuts.len()), "{cuts:?}");
    for (shard, at) in &cuts {
        assert_eq!(at, "4");
        assert!(monthly.path(&format!("cache/objects/{shard}")).exists(), "{shard}");
    }

    set_min_games(&monthly, 6);
    let recut = monthly.make(&[]);
    let counted = recut.steps("Building");
    assert!(
        !counted.iter().any(|s| s.starts_with("games:") || s.starts_with("state:")),
        "{counted:?}"
    );
    set_min_games(&runs, 6);
    runs.make(&[]);
    assert_eq!(tree_bytes(&monthly.path("out")), tree_bytes(&runs.path("out")), "at 6");
    let shards: Vec<&String> = cuts.iter().map(|(s, _)| s).collect();
    let now = hot_cuts(&monthly);
    let at_six: Vec<&String> = now.iter().filter(|(_, at)| at == "6").map(|(s, _)| s).collect();
    assert_eq!(at_six, shards);
}

#[test]
fn a_make_killed_during_the_merges_resumes_and_ends_identical() {
    let all = names();
    let reference = project(&all, true, 32);
    reference.make(&[]);
    let want = tree_bytes(&reference.path("out"));
    for delay_ms in [400u64, 900, 1500] {
        let p = project(&all, true, 32);
        p.kill_make_after(delay_ms);
        let run = p.make(&[]);
        assert!(run.stderr.contains("Finished"), "{}", run.stderr);
        assert_eq!(tree_bytes(&p.path("out")), want, "after a kill at {delay_ms} ms");
        let left: Vec<String> = tree_bytes(&p.path(""))
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| n.contains("okb-tmp") || n.ends_with(".progress"))
            .collect();
        assert!(left.is_empty(), "after a kill at {delay_ms} ms: {left:?}");
    }
}

#[test]
fn the_same_month_under_two_names_is_refused_naming_both() {
    let all = names();
    let p = project(&all[..2], true, 4);
    std::fs::copy(p.path(&all[0]), p.path("games/copy.pgn")).unwrap();
    set_files(&p, &[all[0].clone(), all[1].clone(), "games/copy.pgn".into()]);
    let run = p.okb(&["make"]);
    assert_ne!(run.status, 0, "{}", run.stderr);
    assert!(
        common::flat(&run.stderr)
            .contains("games/copy.pgn holds the same games as games/2013-01.pgn"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_filter_change_says_before_the_make_that_every_month_is_counted_again_and_how_long() {
    let all = names();
    let p = project(&all[..3], true, 4);
    p.make(&[]);
    let text = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let filter = "state = true\n[sources.lichess.filter]\nmin_rating = 1600\n";
    let text = text.replace("state = true\n", filter);
    std::fs::write(p.path("pipeline.toml"), text).unwrap();
    set_files(&p, &all);

    let status = p.okb(&["status"]);
    assert_eq!(status.status, 0, "{}", status.stderr);
    // Every month is counted and merged again (three known, one new), and the line
    // that says so comes with the time the last make's steps took.
    for month in &all {
        for step in ["games:lichess:", "state:lichess:"] {
            let id = format!("{step}{month}");
            assert!(
                status.stderr.lines().any(|l| l.contains("Stale") && l.contains(&id)),
                "{id}: {}",
                status.stderr
            );
        }
    }
    let verdict = status.stderr.lines().next().unwrap();
    assert!(
        verdict.contains("by the last runs' times")
            && verdict.contains("new, timed by their source's other files"),
        "{verdict}"
    );

    let json = p.okb(&["status", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let estimate = &report["estimate"];
    assert!(estimate["seconds"].as_f64().unwrap() > 0.0, "{estimate}");
    // The new month's two steps are timed by their siblings; every other one ran before.
    assert_eq!(estimate["inferred"], 2, "{estimate}");
    assert_eq!(estimate["unknown"], 0, "{estimate}");
}
