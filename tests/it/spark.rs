//! okb on Apache Spark for real, in local mode (`local[2]`; pyspark from PyPI and Java 17,
//! installed by .ci/run): counts made by spark/okb_counts.py build the same tree as
//! `okb make` over the games, and Spark SQL over okb's split BGN output answers "games per
//! first move and result" with the numbers of okb's own knowledge base; engine annotations
//! made by spark/okb_engine.py (real Stockfish on the executors) land in the engine cache,
//! and the next make exports the bytes of a make that ran the engine itself; a counts
//! state grown a month at a time by spark/okb_state.py (one task per shard) holds the
//! shards of a local make's state and builds its tree.

use crate::common;
use std::process::Command;

use common::{Project, mini_sources};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn python(args: &[&str], cwd: &std::path::Path) -> String {
    let out = Command::new("python3")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("python3 runs (see .ci/run: pyspark)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python3 {args:?} failed:\n{stderr}");
    String::from_utf8(out.stdout).unwrap()
}

const EXPORTS: &str = "[tree]\nmax_ply = 12\nmin_games = 1\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n[exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n";

#[test]
fn counts_made_on_spark_build_the_same_tree_as_okb_make() {
    let games = ["openings.pgn", "classify.pgn", "api.pgn", "filters.pgn", "sample.bgn"]
        .map(|g| format!("{ROOT}/fixtures/games/{g}"));
    let pgn: Vec<String> =
        games.iter().filter(|g| g.ends_with(".pgn")).map(|g| format!("\"{g}\"")).collect();
    let reference = Project::with_pipeline(&format!(
        "{}[sources.pgn]\nkind = \"pgn\"\npaths = [{}]\n[sources.bgn]\nkind = \"bgn\"\npaths = [\"{}\"]\n{EXPORTS}",
        mini_sources(),
        pgn.join(", "),
        games[4]
    ));
    reference.make(&[]);

    let p = Project::with_pipeline(&format!(
        "{}[sources.spark]\nkind = \"counts\"\npath = \"spark.okbc\"\n{EXPORTS}",
        mini_sources()
    ));
    let okb = env!("CARGO_BIN_EXE_okb");
    let mut args = vec![
        format!("{ROOT}/spark/okb_counts.py"),
        "--master".into(),
        "local[2]".into(),
        "--okb".into(),
        okb.into(),
    ];
    args.extend(["-o", "spark.okbc", "--max-ply", "12", "--partitions", "3"].map(String::from));
    args.extend(games.iter().cloned());
    python(&args.iter().map(String::as_str).collect::<Vec<_>>(), p.dir.path());
    p.make(&[]);
    for file in ["out/nodes.csv", "out/book.bin"] {
        assert!(reference.read(file) == p.read(file), "{file}: Spark's counts build another tree");
    }
}

#[test]
fn spark_sql_over_split_bgn_matches_the_knowledge_base() {
    let lichess = common::shared_sources()
        .join("../corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn");
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"bgn\"\npaths = [\"split/*.bgn.bz2\"]\n[tree]\nmax_ply = 4\nmin_games = 1\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("split")).unwrap();
    let run = p.okb(&[
        "convert",
        "--bz2",
        "--split-size",
        "1M",
        "-o",
        "split/games.bgn.bz2",
        lichess.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let parts: Vec<String> = std::fs::read_dir(p.path("split"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    assert!(parts.len() >= 3, "split into {parts:?}");
    p.make(&[]);

    let mut args = vec![format!("{ROOT}/spark/bgn_sql.py"), "--master".into(), "local[2]".into()];
    args.extend(parts);
    let answer: Vec<serde_json::Value> = serde_json::from_str(
        python(&args.iter().map(String::as_str).collect::<Vec<_>>(), p.dir.path()).trim(),
    )
    .unwrap();
    let db = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT c.move_uci, c.game_count, c.white_wins, c.draws, c.black_wins FROM node_children c
             JOIN opening_nodes n ON n.node_id = c.parent_id WHERE n.ply = 0 AND c.game_count > 0 ORDER BY c.game_count DESC, c.move_uci",
        )
        .unwrap();
    let okb: Vec<(String, i64, i64, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let spark: Vec<(String, i64, i64, i64, i64)> = answer
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_i64().unwrap();
            (
                r["first_move"].as_str().unwrap().to_string(),
                n("games"),
                n("white_wins"),
                n("draws"),
                n("black_wins"),
            )
        })
        .collect();
    assert!(okb.len() >= 10, "{okb:?}");
    assert_eq!(spark, okb, "Spark SQL over the BGN split and okb's tree disagree");
}

/// The mini taxonomies and the TWIC issue's games to 6 plies, Stockfish at depth 8 on
/// the first 5, and the exports that carry evaluations.
fn engine_pipeline() -> String {
    let twic = common::shared_sources().join("../corpus/twic/twic0920.pgn");
    format!(
        "{}[sources.twic]\nkind = \"pgn\"\npaths = [\"{}\"]\n[tree]\nmax_ply = 6\nmin_games = 20\n\
         [engine]\nengines = 2\nmax_ply = 5\ndepth_branching = 8\ndepth_leaf = 8\ndepth_popular = 8\n\
         [exports.pgn]\nformat = \"pgn\"\noutput = \"out/pgn\"\n[exports.iq]\nformat = \"openingiq\"\noutput = \"out/iq\"\n\
         [exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n",
        mini_sources(),
        twic.display()
    )
}

#[test]
fn engine_annotations_made_on_spark_give_the_exports_of_a_local_make() {
    let local = Project::with_pipeline(&engine_pipeline());
    local.make(&[]);

    let p = Project::with_pipeline(&engine_pipeline());
    let queued = p.okb(&["engine", "queue", "-o", "queue.okbq"]);
    assert_eq!(queued.status, 0, "{}", queued.stderr);
    let okb = env!("CARGO_BIN_EXE_okb");
    let script = format!("{ROOT}/spark/okb_engine.py");
    let args = [
        &script,
        "--master",
        "local[2]",
        "--okb",
        okb,
        "--queue",
        "queue.okbq",
        "-o",
        "results",
        "--partitions",
        "3",
    ];
    python(&[&args[..], &["--engine", "/usr/games/stockfish", "--import"]].concat(), p.dir.path());
    assert_eq!(std::fs::read_dir(p.path("results")).unwrap().count(), 3);
    let made = p.make(&[]);
    let engine = made.stderr.lines().find(|l| l.contains(" engine (")).unwrap_or_default();
    assert!(
        engine.contains(" 0 analysed") && engine.contains("0 engines started"),
        "{}",
        made.stderr
    );
    let cached: usize =
        engine.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(cached >= 30, "{engine}");
    common::assert_same_outputs(&local, &p, &["out/nodes.csv", "out/pgn", "out/iq"]);
    let pgn = common::tree_bytes(&p.path("out/pgn"));
    assert!(
        pgn.iter().any(|(_, bytes)| String::from_utf8_lossy(bytes).contains("[%eval ")),
        "no [%eval] in the PGN export"
    );
}

const STATE_TREE: &str = "[tree]\nmax_ply = 8\nmin_games = 3\n[games]\nstate_shards = 6\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n[exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n";

/// The first `games` games of the Lichess sample cut into three "months" in `dir`.
fn lichess_months(dir: &std::path::Path, games: usize) -> Vec<String> {
    let lichess = common::shared_sources()
        .join("../corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn");
    let text = std::fs::read_to_string(lichess).unwrap();
    let all: Vec<&str> =
        text.trim_start_matches("[Event ").split("\n\n[Event ").take(games).collect();
    all.chunks(games.div_ceil(3))
        .enumerate()
        .map(|(i, part)| {
            let path = dir.join(format!("2013-0{}.pgn", i + 1));
            let body: String =
                part.iter().map(|g| format!("[Event {}\n\n", g.trim_end())).collect();
            std::fs::write(&path, body).unwrap();
            path.display().to_string()
        })
        .collect()
}

#[test]
fn a_counts_state_grown_on_spark_equals_the_local_state_and_builds_its_tree() {
    let months = tempfile::tempdir().unwrap();
    let files = lichess_months(months.path(), 1500);
    let quoted: Vec<String> = files.iter().map(|f| format!("{f:?}")).collect();
    let local = Project::with_pipeline(&format!(
        "{}[sources.months]\nkind = \"pgn\"\npaths = [{}]\nstate = true\n{STATE_TREE}",
        mini_sources(),
        quoted.join(", ")
    ));
    local.make(&[]);

    let p = Project::with_pipeline(&format!(
        "{}[sources.months]\nkind = \"counts-state\"\npath = \"state\"\n{STATE_TREE}",
        mini_sources()
    ));
    let okb = env!("CARGO_BIN_EXE_okb");
    let script = format!("{ROOT}/spark/okb_state.py");
    let base = [&script, "--master", "local[2]", "--okb", okb, "--state", "state"];
    let settings = ["--shards", "6", "--max-ply", "8", "--min-games", "3"];
    // A month of two files (two counting partitions), then a month of one.
    for (month, files) in [("2013-01a", &files[..2]), ("2013-01b", &files[2..])] {
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        python(&[&base[..], &settings, &["--month", month], &files].concat(), p.dir.path());
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&p.read("state/manifest.json")).unwrap();
    let shards: Vec<&str> = manifest["state"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(shards.len(), 6, "every shard holds keys: {manifest}");
    for name in shards {
        let spark = p.read(&format!("state/shards/{name}.shard"));
        let cached = local.path(&format!("cache/objects/{name}"));
        assert!(cached.exists(), "shard {name} of the Spark state is no shard of the local state");
        assert!(std::fs::read(cached).unwrap() == spark, "shard {name}: other bytes");
    }
    assert!(
        !p.path("state/staging").exists()
            || std::fs::read_dir(p.path("state/staging")).unwrap().count() == 0
    );
    let made = p.make(&[]);
    assert!(made.stderr.contains("counts-state:months"), "{}", made.stderr);
    common::assert_same_outputs(&local, &p, &["out/nodes.csv", "out/book.bin"]);
}
