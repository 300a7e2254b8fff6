//! Aggregation: an independent recount, determinism across threads, chunking and
//! spilling.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use okb::games::aggregate::{
    AggregateOptions, FileAggregate, aggregate_files, merge, spill_runs_written,
};
use okb::games::filter::GameFilter;
use okb::games::input::{Boundary, Chunker};
use okb::games::pgn::{ChunkOrigin, GameVisitor, IdentityKeys, Reading, read_chunk_with};
use okb::games::report::{BadGames, BadKind};
use okb::games::stats::GameStats;
use okb::position::{MoveKey, PositionKey};
use rayon::prelude::*;
use shakmaty::san::San;
use shakmaty::{Chess, Position};

fn masters(names: &[&str]) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters");
    names.iter().map(|n| dir.join(format!("{n}.pgn.zst"))).collect()
}

const SAMPLE: [&str; 4] = ["Karpov", "Adams", "Alburt", "Stein"];

fn run(
    paths: &[PathBuf],
    threads: usize,
    opts: &AggregateOptions,
) -> (Vec<FileAggregate>, GameStats) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let aggs = aggregate_files(paths, &GameFilter::default(), opts).unwrap();
        let stats = merge(&aggs.iter().collect::<Vec<_>>());
        (aggs, stats)
    })
}

/// A deliberately naive replay: text split into games at `[Event `, comments and
/// variations removed by hand, SAN resolved one move at a time, sets for de-duplication.
type Recount = (BTreeMap<u128, [u64; 3]>, BTreeMap<(u128, u16), [u64; 5]>);

fn naive_recount(paths: &[PathBuf], max_ply: usize) -> Recount {
    let mut positions = BTreeMap::new();
    let mut moves = BTreeMap::new();
    for p in paths {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut okb::games::input::open(p).unwrap(), &mut text).unwrap();
        let text = String::from_utf8_lossy(&text).replace('\0', " ");
        for game in text.split("[Event ").skip(1) {
            let tag = |name: &str| {
                game.lines()
                    .find(|l| l.starts_with(&format!("[{name} \"")))
                    .map(|l| l.split('"').nth(1).unwrap_or("").to_string())
            };
            let result = match tag("Result").as_deref() {
                Some("1-0") => 0,
                Some("1/2-1/2") => 1,
                Some("0-1") => 2,
                _ => continue,
            };
            let elo =
                |n| tag(n).and_then(|v| v.parse::<u64>().ok()).filter(|v| (1..=4000).contains(v));
            let elos = [elo("WhiteElo"), elo("BlackElo")];
            let body: String =
                game.lines().filter(|l| !l.starts_with('[')).collect::<Vec<_>>().join(" ");
            let mut clean = String::new();
            let (mut brace, mut paren) = (false, 0);
            for c in body.chars() {
                match c {
                    '{' => brace = true,
                    '}' => brace = false,
                    '(' if !brace => paren += 1,
                    ')' if !brace => paren -= 1,
                    _ if !brace && paren == 0 => clean.push(c),
                    _ => {}
                }
            }
            let mut pos = Chess::default();
            let mut seen_pos = HashSet::new();
            let mut seen_moves = HashSet::new();
            let mut played = Vec::new();
            let mut ok = true;
            for tok in clean.split(|c: char| c.is_whitespace() || c == '.') {
                if played.len() == max_ply {
                    break;
                }
                if tok.is_empty() || tok.chars().all(|c| c.is_ascii_digit()) || tok.starts_with('$')
                {
                    continue;
                }
                if ["1-0", "0-1", "1/2-1/2", "*"].contains(&tok) {
                    break;
                }
                let Ok(san) = tok.trim_end_matches(['+', '#', '!', '?']).parse::<San>() else {
                    continue;
                };
                let Ok(m) = san.to_move(&pos) else {
                    ok = false;
                    break;
                };
                played.push((okb::position::key(&pos).0, MoveKey::new(&m).0));
                pos.play_unchecked(m);
            }
            if !ok {
                continue;
            }
            let mut keys: Vec<u128> = played.iter().map(|p| p.0).collect();
            keys.push(okb::position::key(&pos).0);
            for k in keys {
                if seen_pos.insert(k) {
                    positions.entry(k).or_insert([0; 3])[result] += 1;
                }
            }
            for (i, (k, m)) in played.iter().enumerate() {
                if seen_moves.insert((*k, *m)) {
                    let e = moves.entry((*k, *m)).or_insert([0; 5]);
                    e[result] += 1;
                    if let Some(r) = elos[i % 2] {
                        e[3] += r;
                        e[4] += 1;
                    }
                }
            }
        }
    }
    (positions, moves)
}

#[test]
fn counts_match_an_independent_naive_replay() {
    let paths = masters(&SAMPLE);
    let (_, stats) = run(&paths, 2, &AggregateOptions::default());
    let (positions, moves) = naive_recount(&paths, 15);
    assert!(positions.len() > 20_000, "{}", positions.len());
    let ours_p: BTreeMap<u128, [u64; 3]> =
        stats.positions.iter().map(|(k, o)| (k.0, [o.white, o.draws, o.black])).collect();
    assert_eq!(ours_p.len(), positions.len());
    assert!(ours_p == positions, "position counts differ");
    let ours_m: BTreeMap<(u128, u16), [u64; 5]> = stats
        .moves
        .iter()
        .map(|(k, m, s)| {
            (
                (k.0, m.0),
                [s.outcomes.white, s.outcomes.draws, s.outcomes.black, s.rating_sum, s.rated_games],
            )
        })
        .collect();
    assert_eq!(ours_m.len(), moves.len());
    assert!(ours_m == moves, "move counts differ");
    // Spot check through the public lookup API.
    let start = stats.position(PositionKey(okb::position::key(&Chess::default()).0)).unwrap();
    assert_eq!(
        start.games(),
        positions[&okb::position::key(&Chess::default()).0].iter().sum::<u64>()
    );
}

#[test]
fn results_do_not_depend_on_threads_chunks_or_spilling() {
    let paths = masters(&SAMPLE);
    let base = AggregateOptions::default();
    let (a1, s1) = run(&paths, 1, &base);
    let small_chunks = AggregateOptions { chunk_bytes: 64 << 10, ..base.clone() };
    let (a4, s4) = run(&paths, 4, &small_chunks);
    let bytes =
        |a: &[FileAggregate]| a.iter().map(|f| postcard::to_stdvec(f).unwrap()).collect::<Vec<_>>();
    assert_eq!(bytes(&a1), bytes(&a4), "-j1 vs -j4 with 64 KiB chunks: FileAggregate bytes");
    assert_eq!(postcard::to_stdvec(&s1).unwrap(), postcard::to_stdvec(&s4).unwrap());

    let spill_dir = tempfile::tempdir().unwrap();
    let before = spill_runs_written();
    let tiny = AggregateOptions {
        memory_budget_mb: 1,
        spill_dir: Some(spill_dir.path().to_path_buf()),
        ..small_chunks
    };
    let (a_spill, s_spill) = run(&paths, 2, &tiny);
    assert!(spill_runs_written() > before + 4, "a 1 MiB budget must spill");
    assert_eq!(bytes(&a1), bytes(&a_spill), "spilled FileAggregate bytes");
    assert_eq!(s1, s_spill);
    assert_eq!(std::fs::read_dir(spill_dir.path()).unwrap().count(), 0, "spill files are removed");
    // The merge does not depend on input order either.
    let mut rev: Vec<&FileAggregate> = a1.iter().collect();
    rev.reverse();
    assert_eq!(merge(&rev), s1);
}

/// Everything a reader makes of a file's games, in order: per game its end, offset,
/// result, moves and position keys, then the bad-game report (kinds, counts and
/// locations). Read with the given reader, ply limit and filter.
fn reading_of(
    path: &Path,
    reading: Reading,
    max_ply: usize,
    filter: &GameFilter,
) -> (u64, Vec<String>) {
    let compiled = filter.compile().unwrap();
    let mut chunker = Chunker::open(path, 1 << 20, Boundary::Pgn).unwrap();
    let (mut games, mut seen) = (0, Vec::new());
    let mut bad = BadGames::default();
    let file = path.display().to_string();
    while let Some(chunk) = chunker.next_chunk().unwrap() {
        let mut visitor = GameVisitor::<IdentityKeys>::new(max_ply, Some(&compiled));
        games += read_chunk_with(
            reading,
            &chunk.data,
            ChunkOrigin::of(&file, &chunk),
            &mut visitor,
            &mut bad,
            |v, end, at| {
                seen.push(format!(
                    "{} {end:?} {at} {:?} {:?} {:?}",
                    chunk.index,
                    v.result(),
                    v.moves,
                    v.keys
                ));
            },
        );
    }
    seen.push(serde_json::to_string(&bad).unwrap());
    (games, seen)
}

/// Asserts that the fast reader reads `path` exactly as pgn-reader does.
fn assert_fast_reading_is_pgn_readers(path: &Path, max_ply: usize, filter: &GameFilter) {
    let (fast_games, fast) = reading_of(path, Reading::Fast, max_ply, filter);
    let (games, reference) = reading_of(path, Reading::PgnReader, max_ply, filter);
    assert_eq!(fast_games, games, "{}", path.display());
    assert_eq!(fast.len(), reference.len(), "{}", path.display());
    for (ours, theirs) in fast.iter().zip(&reference) {
        assert_eq!(ours, theirs, "{} (ply limit {max_ply})", path.display());
    }
}

fn shared(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus").join(path)
}

fn edge_cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/edge-cases.pgn")
}

/// The Lichess sample as a 2026 dump writes it: a clock comment after every move, one
/// game in sixteen with evaluations too.
fn lichess_with_clocks(dir: &Path) -> PathBuf {
    let text =
        std::fs::read_to_string(shared("lichess/lichess_db_standard_rated_2013-01.first5297.pgn"))
            .unwrap();
    let mut out = String::new();
    for (i, block) in text.split("\n\n").enumerate() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        if block.starts_with('[') {
            out.push_str(block);
            continue;
        }
        let words: Vec<String> = block
            .split_whitespace()
            .map(|w| match w.chars().next() {
                Some(c) if c.is_ascii_alphabetic() && !w.ends_with('.') => {
                    let eval = if i % 32 == 1 { "[%eval 0.17] " } else { "" };
                    format!("{w} {{ {eval}[%clk 0:04:58] }}")
                }
                _ => w.to_string(),
            })
            .collect();
        out.push_str(&words.join(" "));
    }
    let path = dir.join("lichess-clocks.pgn");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn the_fast_reader_reads_every_corpus_as_pgn_reader_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![
        edge_cases(),
        shared("lichess/lichess_db_standard_rated_2013-01.first5297.pgn"),
        shared("twic/twic0920.pgn"),
        lichess_with_clocks(dir.path()),
    ];
    files.extend(masters(&SAMPLE));
    for file in &files {
        for max_ply in [0, 1, 15, 40, 1000] {
            assert_fast_reading_is_pgn_readers(file, max_ply, &GameFilter::default());
        }
        // Filtered games are skipped from their first move.
        let filter = GameFilter { min_rating: Some(2200), ..Default::default() };
        assert_fast_reading_is_pgn_readers(file, 15, &filter);
    }
}

#[test]
fn the_fast_reader_reads_all_master_games_as_pgn_reader_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 240);
    files
        .par_iter()
        .for_each(|f| assert_fast_reading_is_pgn_readers(f, 15, &GameFilter::default()));
}

/// python-chess's games of a file: per game its Event, its first `plies` moves (UCI) and
/// its result.
fn python_chess_games(path: &Path, plies: usize) -> Vec<(String, Vec<String>, String)> {
    const READ: &str = r#"
import json, sys, chess.pgn
out = []
with open(sys.argv[1], encoding="utf-8", newline="") as f:
    while (g := chess.pgn.read_game(f)) is not None:
        moves = [m.uci() for m in g.mainline_moves()][: int(sys.argv[2])]
        out.append([g.headers.get("Event", ""), moves, g.headers.get("Result", "*")])
print(json.dumps(out))
"#;
    let run = std::process::Command::new("python3")
        .args(["-c", READ])
        .arg(path)
        .arg(plies.to_string())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "python-chess (pip install chess): {}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).unwrap()
}

#[test]
fn the_edge_cases_count_as_python_chess_reads_them() {
    let path = edge_cases();
    let filter = GameFilter::default().compile().unwrap();
    let text = std::fs::read(&path).unwrap();
    let origin =
        ChunkOrigin { file: "edge-cases.pgn", first_line: 1, last: true, repaired_tags: &[] };
    let mut visitor = GameVisitor::<IdentityKeys>::new(15, Some(&filter));
    let mut bad = BadGames::default();
    let mut ours = Vec::new();
    read_chunk_with(Reading::Fast, &text, origin, &mut visitor, &mut bad, |v, _, _| {
        let moves: Vec<String> = v
            .moves
            .iter()
            .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
            .collect();
        let result = match v.result() {
            Some(okb::games::filter::GameResult::WhiteWins) => "1-0",
            Some(okb::games::filter::GameResult::BlackWins) => "0-1",
            Some(okb::games::filter::GameResult::Draw) => "1/2-1/2",
            _ => "*",
        };
        ours.push((moves, result.to_string()));
    });
    let theirs = python_chess_games(&path, 15);
    // A tag block with no movetext is read with the next game's tags by both (the last
    // value of each tag wins): the next game's moves count once.
    assert!(!theirs.iter().any(|(event, _, _)| event == "no movetext: read with the next game"));
    // An illegal move before the ply limit makes the game bad in both; python-chess keeps
    // the moves before it.
    let broken = "broken before the ply limit: bad";
    assert_eq!(bad.kinds[&BadKind::IllegalSan].count, 1);
    let theirs: Vec<(Vec<String>, String)> = theirs
        .into_iter()
        .filter(|(event, _, _)| event != broken)
        .map(|(_, m, r)| (m, r))
        .collect();
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 9);
    // The game whose movetext breaks after the ply limit counts.
    assert!(
        ours.iter()
            .any(|(moves, _)| moves.len() == 15 && moves[0] == "e2e4" && moves[14] == "b1d2")
    );
}

#[test]
fn files_compressed_with_a_long_window_are_read() {
    // `zstd --long=31` from a pipe declares a 2 GiB window, which decoders refuse by
    // default (zstd -d itself asks for --long=31).
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.pgn.zst");
    let text = std::fs::read(edge_cases()).unwrap();
    let mut zstd = std::process::Command::new("zstd")
        .args(["-q", "--long=31", "-c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(&long).unwrap())
        .spawn()
        .expect("zstd runs");
    std::io::Write::write_all(zstd.stdin.as_mut().unwrap(), &text).unwrap();
    drop(zstd.stdin.take());
    assert!(zstd.wait().unwrap().success());
    let plain =
        okb::games::aggregate::aggregate_file(&edge_cases(), &GameFilter::default(), 15).unwrap();
    let read = okb::games::aggregate::aggregate_file(&long, &GameFilter::default(), 15).unwrap();
    assert_eq!(read.broken, None);
    assert_eq!(read.stats, plain.stats);
    assert_eq!(read.counters.games_counted, 9);
}
