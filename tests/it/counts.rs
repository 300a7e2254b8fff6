//! Counts files: `okb count` over random splits of some game files, merged in any order
//! with `okb count --merge` and declared as a `kind = "counts"` source, build the same
//! tree and exports as `okb make` over the games; damaged files and mismatched ply limits
//! are clear errors.

use crate::common;
use common::{Project, flat, mini_sources};

const GAMES: &[&str] =
    &["openings.pgn", "classify.pgn", "api.pgn", "filters.pgn", "bad.pgn", "sample.bgn"];

fn game(name: &str) -> String {
    format!("{}/fixtures/games/{name}", env!("CARGO_MANIFEST_DIR"))
}

const EXPORTS: &str = "[tree]\nmax_ply = 12\nmin_games = 1\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n[exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n";

fn from_games() -> Project {
    let pgn: Vec<String> =
        GAMES.iter().filter(|g| g.ends_with(".pgn")).map(|g| format!("\"{}\"", game(g))).collect();
    let bgn = game("sample.bgn");
    Project::with_pipeline(&format!(
        "{}[sources.pgn]\nkind = \"pgn\"\npaths = [{}]\n[sources.bgn]\nkind = \"bgn\"\npaths = [\"{bgn}\"]\n{EXPORTS}",
        mini_sources(),
        pgn.join(", ")
    ))
}

fn from_counts(file: &str) -> Project {
    Project::with_pipeline(&format!(
        "{}[sources.counted]\nkind = \"counts\"\npath = \"{file}\"\n{EXPORTS}",
        mini_sources()
    ))
}

#[test]
fn any_split_counted_apart_and_merged_builds_the_same_tree() {
    let reference = from_games();
    reference.make(&[]);
    // A fixed xorshift: three different splits of the six files into three parts.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for split in 0..3 {
        let p = from_counts("all.okbc");
        let mut parts: Vec<Vec<String>> = vec![Vec::new(); 3];
        for g in GAMES {
            parts[(next() % 3) as usize].push(game(g));
        }
        let mut names = Vec::new();
        for (i, files) in parts.iter().enumerate().filter(|(_, f)| !f.is_empty()) {
            let name = format!("part{i}.okbc");
            let args: Vec<&str> = ["count", "--max-ply", "12", "-o", &name]
                .into_iter()
                .chain(files.iter().map(String::as_str))
                .collect();
            let run = p.okb(&args);
            assert_eq!(run.status, 0, "{}", run.stderr);
            names.push(name);
        }
        names.reverse();
        let args: Vec<&str> = ["count", "--merge", "-o", "all.okbc"]
            .into_iter()
            .chain(names.iter().map(String::as_str))
            .collect();
        let run = p.okb(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let run = p.make(&[]);
        assert!(run.steps("Building").contains(&"counts:counted".to_string()), "{}", run.stderr);
        for file in ["out/nodes.csv", "out/book.bin"] {
            assert!(
                reference.read(file) == p.read(file),
                "split {split} ({parts:?}): {file} differs"
            );
        }
    }
}

#[test]
fn damaged_counts_and_mismatched_ply_limits_are_named() {
    let p = from_counts("all.okbc");
    std::fs::write(p.path("all.okbc"), b"OKBCOUNT\x01\x00\x00\x00not zstd").unwrap();
    let run = p.okb(&["make"]);
    assert_ne!(run.status, 0);
    let stderr = flat(&run.stderr);
    assert!(
        stderr.contains("counts source counted") && stderr.contains("all.okbc: damaged"),
        "{stderr}"
    );
    std::fs::write(p.path("all.okbc"), b"[Event \"a PGN\"]").unwrap();
    assert!(flat(&p.okb(&["make"]).stderr).contains("not an okb counts file"));

    // Counted to ply 15 for a tree of ply 12.
    assert_eq!(p.okb(&["count", "-o", "all.okbc", &game("openings.pgn")]).status, 0);
    let run = p.okb(&["make"]);
    let stderr = flat(&run.stderr);
    assert!(
        stderr.contains("counted to ply 15, the tree is built to ply 12")
            && stderr.contains("--max-ply 12"),
        "{stderr}"
    );
    // Parts of different ply limits do not merge.
    assert_eq!(
        p.okb(&["count", "--max-ply", "12", "-o", "twelve.okbc", &game("api.pgn")]).status,
        0
    );
    let run = p.okb(&["count", "--merge", "-o", "x.okbc", "all.okbc", "twelve.okbc"]);
    assert_ne!(run.status, 0);
    assert!(
        flat(&run.stderr).contains("counted to ply 12, the others to ply 15"),
        "{}",
        run.stderr
    );
    assert!(!p.path("x.okbc").exists());
}

#[test]
fn counting_and_merging_spill_past_the_budget_and_write_the_same_file() {
    let masters: Vec<String> = ["Alburt", "Ashley", "Berliner", "Adams"]
        .iter()
        .map(|n| format!("{}/../shared/corpus/masters/{n}.pgn.zst", env!("CARGO_MANIFEST_DIR")))
        .collect();
    let p = from_counts("all.okbc");
    let count = |out: &str, budget: &str, files: &[String]| {
        let args: Vec<&str> = ["count", "--memory-budget-mb", budget, "-o", out]
            .into_iter()
            .chain(files.iter().map(String::as_str))
            .collect();
        let run = p.okb(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
    };
    count("roomy.okbc", "2048", &masters);
    count("tight.okbc", "1", &masters);
    let read = |f: &str| okb::games::counts::read(&p.path(f)).unwrap();
    let (roomy, tight) = (read("roomy.okbc"), read("tight.okbc"));
    assert!(roomy.stats.moves.len() > 10_000, "{} moves", roomy.stats.moves.len());
    assert_eq!(
        (&roomy.stats, &roomy.counters),
        (&tight.stats, &tight.counters),
        "a 1 MiB budget counts the same"
    );
    count("a.okbc", "1", &masters[..2]);
    count("b.okbc", "1", &masters[2..]);
    let run = p.okb(&[
        "count",
        "--merge",
        "--memory-budget-mb",
        "1",
        "-o",
        "merged.okbc",
        "b.okbc",
        "a.okbc",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // The name inside is the output's; the counts are the same.
    let merged = read("merged.okbc");
    assert_eq!((roomy.stats, roomy.counters), (merged.stats, merged.counters));
    let leftovers: Vec<_> = std::fs::read_dir(p.dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".okb-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "spill files left: {leftovers:?}");
}

#[test]
fn one_counted_file_is_written_as_a_full_merge_writes_it() {
    // One game file's runs go into the counts file as they are (no second merge); beside
    // an empty file (a part with no records) the runs are merged again: same bytes (a
    // counts file holds its own name, so each is written as one.okbc in turn).
    let adams = format!("{}/../shared/corpus/masters/Adams.pgn.zst", env!("CARGO_MANIFEST_DIR"));
    let p = from_counts("all.okbc");
    std::fs::write(p.path("empty.pgn"), "").unwrap();
    let count = |budget: &str, files: &[&str]| {
        let args = [&["count", "--memory-budget-mb", budget, "-o", "one.okbc"][..], files].concat();
        let run = p.okb(&args);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let bytes = std::fs::read(p.path("one.okbc")).unwrap();
        (bytes, okb::games::counts::read(&p.path("one.okbc")).unwrap())
    };
    let (one, counted) = count("2048", &[&adams]);
    assert!(counted.stats.moves.len() > 1000, "{} moves", counted.stats.moves.len());
    let (merged, _) = count("2048", &[&adams, "empty.pgn"]);
    assert_eq!(one, merged, "merging the runs again writes the same file");
    // A single counts file given to --merge is copied through as well.
    std::fs::rename(p.path("one.okbc"), p.path("part.okbc")).unwrap();
    let run = p.okb(&["count", "--merge", "-o", "one.okbc", "part.okbc"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(one, std::fs::read(p.path("one.okbc")).unwrap(), "one part merged");
    let (_, spilled) = count("1", &[&adams]);
    assert_eq!((counted.stats, counted.counters), (spilled.stats, spilled.counters));
}

#[test]
fn counting_a_large_file_reports_how_far_it_has_read() {
    // 68 MiB of real Lichess games: past the size where counting reports its progress.
    let p = Project::with_pipeline("");
    let sample = std::fs::read(
        common::shared_sources()
            .join("../corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn"),
    )
    .unwrap();
    let big = p.path("big.pgn");
    std::fs::write(&big, sample.repeat(18)).unwrap();
    let mib = std::fs::metadata(&big).unwrap().len() >> 20;
    let run: common::Run = p
        .command(&["count", "-o", "big.okbc", "big.pgn"])
        .env("OKB_PROGRESS_SECS", "0.02")
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    // `Running MiB of big.pgn: 176/613, 343.8/s, ETA 1 s`
    let lines: Vec<&str> =
        run.stderr.lines().filter_map(|l| l.split("MiB of big.pgn: ").nth(1)).collect();
    assert!(!lines.is_empty(), "{}", run.stderr);
    let mut last = 0;
    for line in lines {
        let (done, total) = line.split(',').next().unwrap().split_once('/').unwrap();
        let (done, total): (u64, u64) = (done.parse().unwrap(), total.parse().unwrap());
        assert_eq!(total, mib, "{line}");
        assert!(
            done >= last && done <= total,
            "{line}: the bytes read only grow, up to the file's size"
        );
        last = done;
    }
}
