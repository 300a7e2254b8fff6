//! `bench/run repertoire`: a repertoire of about `--positions` positions drawn from a
//! built knowledge base (White plays its three most played moves, Black every reply), then
//! gaps + coverage over that knowledge base timed (`--runs`, best), and the first
//! `--games` games of the game files judged against it (every game, as White's), read
//! and judged on all cores. Writes the repertoire PGN to `--out` for the python-chess
//! comparison and prints `key=value` figures.
//!
//!   cargo run --release --example repertoire_bench -- PIPELINE --out DIR [--positions 5000] [--games 100000] [--runs 5]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use okb::dataflow::{Ctx, Produced};
use okb::repertoire::{Side, flow, games, judge, parse, players::Matcher};
use okb::tree::Tree;
use rayon::prelude::*;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// The chosen moves of the generated repertoire: node → (SAN, child), breadth first.
fn choose(tree: &Tree, positions: usize) -> BTreeMap<u32, Vec<(String, u32)>> {
    let mut chosen: BTreeMap<u32, Vec<(String, u32)>> = BTreeMap::new();
    let mut seen = BTreeSet::from([tree.root]);
    let mut queue = std::collections::VecDeque::from([tree.root]);
    while let Some(at) = queue.pop_front() {
        let node = &tree.nodes[at as usize];
        let white = node.epd.split(' ').nth(1) == Some("w");
        let edges =
            node.children.iter().filter(|e| e.stats.is_some_and(|s| s.outcomes.games() > 0));
        for e in edges.take(if white { 3 } else { usize::MAX }) {
            if seen.len() >= positions && !seen.contains(&e.child) {
                continue;
            }
            chosen.entry(at).or_default().push((e.san.clone(), e.child));
            if seen.insert(e.child) {
                queue.push_back(e.child);
            }
        }
    }
    chosen
}

/// The chosen moves as PGN movetext: the first move the main line, the others
/// variations; a position reached twice is written out once.
fn emit(
    chosen: &BTreeMap<u32, Vec<(String, u32)>>,
    at: u32,
    ply: usize,
    out: &mut String,
    written: &mut BTreeSet<u32>,
) {
    let Some(kids) = chosen.get(&at).filter(|_| written.insert(at)) else { return };
    let number = |ply: usize, first: bool| {
        if ply.is_multiple_of(2) {
            format!("{}. ", ply / 2 + 1)
        } else if first {
            format!("{}... ", ply / 2 + 1)
        } else {
            String::new()
        }
    };
    out.push_str(&format!("{}{} ", number(ply, false), kids[0].0));
    for (san, child) in &kids[1..] {
        out.push_str(&format!("({}{san} ", number(ply, true)));
        emit(chosen, *child, ply + 1, out, written);
        out.push_str(") ");
    }
    // After variations, Black's move needs its number again.
    if ply.is_multiple_of(2) && kids.len() > 1 {
        out.push_str(&format!("{}... ", ply / 2 + 1));
    }
    emit(chosen, kids[0].1, ply + 1, out, written);
}

fn main() -> miette::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pipeline = PathBuf::from(args.first().expect("usage: repertoire_bench PIPELINE --out DIR"));
    let out_dir = PathBuf::from(
        args.iter().position(|a| a == "--out").and_then(|i| args.get(i + 1)).expect("--out DIR"),
    );
    let (positions, want_games, runs) =
        (arg(&args, "--positions", 5000), arg(&args, "--games", 100_000), arg(&args, "--runs", 5));
    let loaded = okb::pipeline::load(&pipeline, None).map_err(|e| miette::Report::new(*e))?;
    let found: Arc<Mutex<Option<Arc<Tree>>>> = Arc::default();
    let keep = found.clone();
    let adapt = move |planning: &okb::steps::planning::Planning<'_>, plan| {
        let mut plan = okb::make::upstream_of(plan, "tree");
        let keep = keep.clone();
        let mut bench = planning.declare("repertoire-bench", &okb::steps::repertoire_report::RULE);
        let tree = bench.input(okb::steps::ids::TREE);
        plan.steps.push(bench.value(move |cx: &Ctx<'_>| {
            *keep.lock().unwrap() = Some(cx.get(&tree)?);
            Ok(Produced::new(0u8, "tree loaded").complete(false))
        }));
        Ok(plan)
    };
    okb::make::make_adapted(&loaded, &okb::make::MakeOptions::default(), |_| {}, &adapt)
        .map_err(miette::Report::new)?;
    let tree = found.lock().unwrap().take().expect("the bench step ran");

    let chosen = choose(&tree, positions);
    let mut pgn = String::from("[Event \"bench repertoire\"]\n\n");
    emit(&chosen, tree.root, 0, &mut pgn, &mut BTreeSet::new());
    pgn.push_str("*\n");
    std::fs::write(out_dir.join("repertoire.pgn"), &pgn).expect("writing the repertoire");
    let rep =
        parse::parse("bench", Side::White, "repertoire.pgn", &pgn).map_err(miette::Report::new)?;
    let params = flow::FlowParams {
        min_probability: 0.005,
        min_share: 0.0,
        plies: flow::default_plies(&rep),
        scope: Default::default(),
    };
    let mut best_flow = f64::MAX;
    let mut figures = None;
    for _ in 0..runs {
        let start = Instant::now();
        let f = flow::compute(&rep, &tree, None, &params);
        best_flow = best_flow.min(start.elapsed().as_secs_f64());
        figures = Some(f);
    }
    let f = figures.expect("one run");

    let files: Vec<PathBuf> =
        okb::games::input::expand_paths(&[out_dir.join("games/*.pgn.zst").display().to_string()])
            .expect("game files");
    let max_ply = usize::from(rep.depth()) + 1;
    let (everyone, judge) = (Matcher::everyone(), judge::Judge::new(&rep));
    let mut best_read = f64::MAX;
    let mut best_judge = f64::MAX;
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    let mut judged = 0;
    for _ in 0..runs {
        let start = Instant::now();
        // Files a core's worth at a time, until the games are enough.
        let mut all: Vec<games::PlayerGame> = Vec::new();
        for batch in files.chunks(rayon::current_num_threads()) {
            if all.len() >= want_games {
                break;
            }
            let read: Vec<Vec<games::PlayerGame>> = batch
                .par_iter()
                .map(|p| {
                    games::read_file(p, "", &everyone, max_ply, Some(judge.book()))
                        .expect("reading")
                })
                .collect();
            all.extend(read.into_iter().flatten());
        }
        all.truncate(want_games);
        let verdicts: Vec<judge::Verdict> =
            all.par_iter().map(|g| judge.judge_game(g, max_ply).verdict).collect();
        best_read = best_read.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let again: Vec<judge::Verdict> =
            all.par_iter().map(|g| judge.judge_game(g, max_ply).verdict).collect();
        best_judge = best_judge.min(start.elapsed().as_secs_f64());
        assert_eq!(verdicts, again);
        tally.clear();
        for v in &verdicts {
            *tally.entry(v.word()).or_default() += 1;
        }
        judged = all.len();
    }
    for (v, n) in &tally {
        println!("{v:<19} {n:>7}");
    }
    let inside = f
        .coverage
        .iter()
        .map(|c| format!("{}:{:.3}", c.ply, c.inside))
        .collect::<Vec<_>>()
        .join(",");
    println!(
        "positions={} gaps={} coverage={inside} flow_s={best_flow:.5} games={judged} read_and_judge_s={best_read:.4} judge_only_s={best_judge:.5} threads={}",
        rep.nodes.len(),
        f.gaps.len(),
        rayon::current_num_threads()
    );
    Ok(())
}
