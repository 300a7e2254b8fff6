//! `okb convert`: PGN → BGN → PGN loses nothing python-chess can see (main line, tags,
//! comments, NAGs) on the hand-written fixture and on real Lichess games; bz2 and
//! split output; bad games skipped with their location; Phase 2 reads the BGN it writes.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Project, Run, mini_sources};

fn okb(dir: &Path, args: &[&str]) -> Run {
    Command::new(env!("CARGO_BIN_EXE_okb")).args(args).current_dir(dir).output().unwrap().into()
}

fn fixture_games() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/openings.pgn")
}

fn lichess() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn")
}

/// python-chess's view of each game of each file: headers, main line, per-move comment
/// (annotation commands and text, whitespace-normalised), NAGs, the game comment.
const READ_GAMES: &str = r#"
import json, re, sys, chess.pgn
def norm(c):
    cmds = re.findall(r"\[%(\w+)\s+([^\]]*)\]", c)
    text = " ".join(re.sub(r"\[%[^\]]*\]", " ", c).split())
    return [[k, v.strip()] for k, v in cmds], text
out = []
for path in sys.argv[1:]:
    games = []
    with open(path, encoding="utf-8") as f:
        while (g := chess.pgn.read_game(f)) is not None:
            assert not g.errors, (path, g.errors)
            board, moves = g.board(), []
            for n in g.mainline():
                # board.san on a running board: node.san() replays the game every time.
                moves.append([board.san(n.move), norm(n.comment), sorted(n.nags)])
                board.push(n.move)
            games.append({"headers": list(g.headers.items()), "moves": moves, "comment": norm(g.comment)})
    out.append(games)
print(json.dumps(out))
"#;

/// Reads each file in its own python-chess process, side by side.
fn read_games(paths: &[&Path]) -> Vec<serde_json::Value> {
    let children: Vec<_> = paths
        .iter()
        .map(|p| {
            Command::new("python3")
                .arg("-c")
                .arg(READ_GAMES)
                .arg(p)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let run = child.wait_with_output().unwrap();
            assert!(run.status.success(), "python-chess failed");
            let mut files: Vec<serde_json::Value> = serde_json::from_slice(&run.stdout).unwrap();
            files.remove(0)
        })
        .collect()
}

/// PGN → BGN → PGN → BGN: python-chess reads the same games from both PGN files, and the
/// two BGN files are byte-identical.
fn assert_round_trip(dir: &Path, pgn: &Path) -> usize {
    let first = okb(dir, &["convert", "-o", "a.bgn", &pgn.display().to_string()]);
    assert_eq!(first.status, 0, "{}", first.stderr);
    let back = okb(dir, &["convert", "-o", "back.pgn", "a.bgn"]);
    assert_eq!(back.status, 0, "{}", back.stderr);
    let again = okb(dir, &["convert", "-o", "b.bgn", "back.pgn"]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(
        std::fs::read(dir.join("a.bgn")).unwrap(),
        std::fs::read(dir.join("b.bgn")).unwrap(),
        "BGN → PGN → BGN is stable"
    );
    let read = read_games(&[pgn, &dir.join("back.pgn")]);
    let (original, round) = (read[0].as_array().unwrap(), read[1].as_array().unwrap());
    assert_eq!(original.len(), round.len());
    for (i, (a, b)) in original.iter().zip(round).enumerate() {
        assert_eq!(a, b, "game {} differs after PGN → BGN → PGN", i + 1);
    }
    original.len()
}

#[test]
fn fixture_games_survive_pgn_bgn_pgn_and_the_bgn_matches_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(assert_round_trip(dir.path(), &fixture_games()), 10);
    let bgn = std::fs::read_to_string(dir.path().join("a.bgn")).unwrap();
    snapshot!("fixture_openings.bgn", bgn);
    // The issue's fields, checked on the game with a capture, check, castling and NAGs.
    let games: Vec<serde_json::Value> =
        bgn.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let g = &games[2];
    assert_eq!((g["white"].as_str(), g["result"].as_str()), (Some("epsilon"), Some("1/2-1/2")));
    assert_eq!(g["datetime"], "2013-01-06T08:00:00Z");
    assert_eq!(g["opening"]["eco"], "B50");
    let bb5 = &g["moves"][4];
    assert_eq!(
        (bb5["p"].as_str(), bb5["f"].as_str(), bb5["t"].as_str(), bb5["c"].as_u64()),
        (Some("B"), Some("f1"), Some("b5"), Some(1))
    );
    assert_eq!(bb5["nag"], serde_json::json!([5]));
    let bxd7 = &g["moves"][6];
    assert_eq!(bxd7["x"], "B");
    assert_eq!(g["moves"][8]["castle"], "O-O");
    assert_eq!(games[0]["moves"][0]["a"], serde_json::json!({"eval": "0.2", "clk": "0:05:00"}));
    assert_eq!(games[1]["comment"], "A transposition to the QGD.");
}

#[test]
fn lichess_games_survive_pgn_bgn_pgn() {
    let dir = tempfile::tempdir().unwrap();
    // okb's own round trip (BGN → PGN → BGN byte-identical) on all 5,297 games …
    let all = okb(dir.path(), &["convert", "-o", "all.bgn", &lichess().display().to_string()]);
    assert!(all.stderr.contains("5297 of 5297 games"), "{}", all.stderr);
    assert_eq!(okb(dir.path(), &["convert", "-o", "all.pgn", "all.bgn"]).status, 0);
    assert_eq!(okb(dir.path(), &["convert", "-o", "again.bgn", "all.pgn"]).status, 0);
    assert_eq!(
        std::fs::read(dir.path().join("all.bgn")).unwrap(),
        std::fs::read(dir.path().join("again.bgn")).unwrap()
    );
    // … and python-chess's comparison on the first 1,500 (it reads ~100 games/s here).
    let text = std::fs::read_to_string(lichess()).unwrap();
    let cut = text.match_indices("[Event ").nth(1500).unwrap().0;
    std::fs::write(dir.path().join("first.pgn"), &text[..cut]).unwrap();
    assert_eq!(assert_round_trip(dir.path(), &dir.path().join("first.pgn")), 1500);
}

#[test]
fn bz2_split_output_is_identical_across_thread_counts_and_decompresses_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let input = lichess().display().to_string();
    let whole = okb(dir.path(), &["convert", "-o", "all.bgn", &input]);
    assert_eq!(whole.status, 0, "{}", whole.stderr);
    for jobs in ["1", "2"] {
        let out = format!("j{jobs}/games.bgn.bz2");
        let run =
            okb(dir.path(), &["convert", "-j", jobs, "--split-size", "1M", "-o", &out, &input]);
        assert_eq!(run.status, 0, "{}", run.stderr);
    }
    let one = common::tree_bytes(&dir.path().join("j1"));
    assert_eq!(
        one,
        common::tree_bytes(&dir.path().join("j2")),
        "same files, same bytes with 1 and 2 threads"
    );
    let names: Vec<&str> = one.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.len() >= 3 && names[0] == "games-0001.bgn.bz2", "{names:?}");
    // bzip2 (the reference tool) decompresses each part; parts hold at most 1 MiB of
    // text, whole games only, and together they are the unsplit output.
    let mut joined = Vec::new();
    for (name, _) in &one {
        let text = Command::new("bzip2")
            .args(["-dc", &format!("j1/{name}")])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(text.status.success());
        assert!(text.stdout.len() <= 1 << 20 && text.stdout.ends_with(b"\n"), "{name}");
        joined.extend(text.stdout);
    }
    assert_eq!(joined, std::fs::read(dir.path().join("all.bgn")).unwrap());
    // And okb reads the compressed parts back to PGN.
    let back = okb(dir.path(), &["convert", "-o", "back.pgn", "j1/games-0001.bgn.bz2"]);
    assert_eq!(back.status, 0, "{}", back.stderr);
}

#[test]
fn large_bz2_output_is_compressed_as_several_streams_on_all_cores_and_reads_back_whole() {
    // 5,297 Lichess games make 13.8 MB of BGN text: two 8 MiB streams.
    let dir = tempfile::tempdir().unwrap();
    let input = lichess().display().to_string();
    assert_eq!(okb(dir.path(), &["convert", "-o", "all.bgn", &input]).status, 0);
    for jobs in ["1", "2"] {
        let run =
            okb(dir.path(), &["convert", "-j", jobs, "-o", &format!("j{jobs}.bgn.bz2"), &input]);
        assert_eq!(run.status, 0, "{}", run.stderr);
    }
    let compressed = std::fs::read(dir.path().join("j2.bgn.bz2")).unwrap();
    assert_eq!(
        compressed,
        std::fs::read(dir.path().join("j1.bgn.bz2")).unwrap(),
        "same bytes with 1 and 2 threads"
    );
    // A bzip2 stream starts with "BZh9" and its first block's magic number.
    let header = [b'B', b'Z', b'h', b'9', 0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
    let streams = compressed.windows(header.len()).filter(|w| *w == header).count();
    assert!(streams >= 2, "{streams} streams");
    let whole = std::fs::read(dir.path().join("all.bgn")).unwrap();
    let text =
        Command::new("bzip2").args(["-dc", "j2.bgn.bz2"]).current_dir(dir.path()).output().unwrap();
    assert!(text.status.success());
    assert!(text.stdout == whole, "bzip2 -d reads every stream");
    let python = Command::new("python3")
        .args([
            "-c",
            "import bz2, sys; sys.stdout.buffer.write(bz2.open(sys.argv[1]).read())",
            "j2.bgn.bz2",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(python.status.success() && python.stdout == whole, "Python's bz2 reads every stream");
    // okb reads it back: as many games as went in.
    let back = okb(dir.path(), &["convert", "-o", "back.pgn", "j2.bgn.bz2"]);
    assert!(back.stderr.contains("5297 of 5297 games"), "{}", back.stderr);
}

#[test]
fn bad_games_are_skipped_with_their_location_and_strict_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mixed.pgn"),
        "[Event \"ok\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 1-0\n\n[Event \"bad\"]\n[Result \"0-1\"]\n\n1. e4 Ke6 0-1\n\n[Event \"ok too\"]\n[Result \"*\"]\n\n1. d4 (1. c4) 1... d5 *\n",
    )
    .unwrap();
    let run = okb(dir.path(), &["convert", "-o", "m.bgn", "mixed.pgn"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("mixed.pgn:6"), "the bad game's first line: {}", run.stderr);
    assert!(
        run.stderr.contains("2 of 3 games") && run.stderr.contains("1 variations dropped"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("m.bgn")).unwrap().lines().count(), 2);
    let strict = okb(dir.path(), &["convert", "--strict", "-o", "m.bgn", "mixed.pgn"]);
    assert_eq!(strict.status, 3);
    // BGN → PGN: a line that is not a game and an illegal move are located too.
    std::fs::write(
        dir.path().join("bad.bgn"),
        "{\"result\":\"*\",\"moves\":[{\"p\":\"P\",\"f\":\"e2\",\"t\":\"e5\"}]}\nnot json\n",
    )
    .unwrap();
    let run = okb(dir.path(), &["convert", "-o", "b.pgn", "bad.bgn"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("bad.bgn:1") && run.stderr.contains("bad.bgn:2"), "{}", run.stderr);
    let usage = okb(dir.path(), &["convert", "--split-size", "12Q", "-o", "x.bgn", "mixed.pgn"]);
    assert_eq!(usage.status, 2, "a bad size is a command-line error: {}", usage.stderr);
}

#[test]
fn a_conversion_that_fails_midway_keeps_the_previous_output_and_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("good.pgn"),
        "[Event \"ok\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 1-0\n",
    )
    .unwrap();
    // A zstd frame header followed by garbage: recognised as zstd, unreadable once decoded.
    let mut broken = vec![0x28, 0xb5, 0x2f, 0xfd];
    broken.extend_from_slice(&[0x5a; 64]);
    std::fs::write(dir.path().join("broken.pgn.zst"), broken).unwrap();
    std::fs::write(dir.path().join("out.bgn"), "previous\n").unwrap();
    let run = okb(dir.path(), &["convert", "-o", "out.bgn", "good.pgn", "broken.pgn.zst"]);
    assert_ne!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("broken.pgn.zst"), "the error names the file: {}", run.stderr);
    assert_eq!(std::fs::read_to_string(dir.path().join("out.bgn")).unwrap(), "previous\n");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!left.iter().any(|n| n.contains("okb-tmp")), "{left:?}");
    // The same conversion without the broken file replaces the output.
    assert_eq!(okb(dir.path(), &["convert", "-o", "out.bgn", "good.pgn"]).status, 0);
    let out = std::fs::read_to_string(dir.path().join("out.bgn")).unwrap();
    let games: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0]["tags"]["Event"], "ok");
}

#[test]
fn phase_2_counts_the_bgn_okb_writes_like_the_pgn_it_came_from() {
    let tree_of = |kind: &str, path: &str| {
        let p = Project::with_pipeline(&format!(
            "{}\n[sources.games]\nkind = \"{kind}\"\npath = \"{path}\"\n[tree]\nmin_games = 1\n[exports.csv]\nformat = \"csv\"\noutput = \"nodes.csv\"\n",
            mini_sources()
        ));
        p.make(&[]);
        p.read("nodes.csv")
    };
    let dir = tempfile::tempdir().unwrap();
    let bgn = dir.path().join("games.bgn");
    let run =
        okb(dir.path(), &["convert", "-o", "games.bgn", &fixture_games().display().to_string()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let from_pgn = tree_of("pgn", &fixture_games().display().to_string());
    assert_eq!(from_pgn, tree_of("bgn", &bgn.display().to_string()));
    assert!(String::from_utf8(from_pgn).unwrap().lines().count() > 40);
}
