//! Aggregation: an independent recount, determinism across threads, chunking and
//! spilling.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use okb::games::aggregate::{
    AggregateOptions, FileAggregate, aggregate_files, merge, spill_runs_written,
};
use okb::games::filter::GameFilter;
use okb::games::stats::GameStats;
use okb::position::{MoveKey, PositionKey};
use shakmaty::san::San;
use shakmaty::{Chess, Position};

fn masters(names: &[&str]) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters");
    names
        .iter()
        .map(|n| dir.join(format!("{n}.pgn.zst")))
        .collect()
}

const SAMPLE: [&str; 4] = ["Karpov", "Adams", "Alburt", "Stein"];

fn run(
    paths: &[PathBuf],
    threads: usize,
    opts: &AggregateOptions,
) -> (Vec<FileAggregate>, GameStats) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
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
            let elo = |n| {
                tag(n)
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|v| (1..=4000).contains(v))
            };
            let elos = [elo("WhiteElo"), elo("BlackElo")];
            let body: String = game
                .lines()
                .filter(|l| !l.starts_with('['))
                .collect::<Vec<_>>()
                .join(" ");
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
    let ours_p: BTreeMap<u128, [u64; 3]> = stats
        .positions
        .iter()
        .map(|(k, o)| (k.0, [o.white, o.draws, o.black]))
        .collect();
    assert_eq!(ours_p.len(), positions.len());
    assert!(ours_p == positions, "position counts differ");
    let ours_m: BTreeMap<(u128, u16), [u64; 5]> = stats
        .moves
        .iter()
        .map(|(k, m, s)| {
            (
                (k.0, m.0),
                [
                    s.outcomes.white,
                    s.outcomes.draws,
                    s.outcomes.black,
                    s.rating_sum,
                    s.rated_games,
                ],
            )
        })
        .collect();
    assert_eq!(ours_m.len(), moves.len());
    assert!(ours_m == moves, "move counts differ");
    // Spot check through the public lookup API.
    let start = stats
        .position(PositionKey(okb::position::key(&Chess::default()).0))
        .unwrap();
    assert_eq!(
        start.games(),
        positions[&okb::position::key(&Chess::default()).0]
            .iter()
            .sum::<u64>()
    );
}

#[test]
fn results_do_not_depend_on_threads_chunks_or_spilling() {
    let paths = masters(&SAMPLE);
    let base = AggregateOptions::default();
    let (a1, s1) = run(&paths, 1, &base);
    let small_chunks = AggregateOptions {
        chunk_bytes: 64 << 10,
        ..base.clone()
    };
    let (a4, s4) = run(&paths, 4, &small_chunks);
    let bytes = |a: &[FileAggregate]| {
        a.iter()
            .map(|f| postcard::to_stdvec(f).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        bytes(&a1),
        bytes(&a4),
        "-j1 vs -j4 with 64 KiB chunks: FileAggregate bytes"
    );
    assert_eq!(
        postcard::to_stdvec(&s1).unwrap(),
        postcard::to_stdvec(&s4).unwrap()
    );

    let spill_dir = tempfile::tempdir().unwrap();
    let before = spill_runs_written();
    let tiny = AggregateOptions {
        memory_budget_mb: 1,
        spill_dir: Some(spill_dir.path().to_path_buf()),
        ..small_chunks
    };
    let (a_spill, s_spill) = run(&paths, 2, &tiny);
    assert!(
        spill_runs_written() > before + 4,
        "a 1 MiB budget must spill"
    );
    assert_eq!(bytes(&a1), bytes(&a_spill), "spilled FileAggregate bytes");
    assert_eq!(s1, s_spill);
    assert_eq!(
        std::fs::read_dir(spill_dir.path()).unwrap().count(),
        0,
        "spill files are removed"
    );
    // The merge does not depend on input order either.
    let mut rev: Vec<&FileAggregate> = a1.iter().collect();
    rev.reverse();
    assert_eq!(merge(&rev), s1);
}
