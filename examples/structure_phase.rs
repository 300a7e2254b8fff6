//! Phase 5 alone, for `bench/structures`: classifies the FENs of a file (one per line,
//! optionally `FEN<TAB>games`) `--runs` times and prints the best time and the tally.
//!
//!   cargo run --release --example structure_phase -- terminal.tsv --runs 5

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args.first().expect("usage: structure_phase FILE [--runs N]");
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let text = std::fs::read_to_string(file).expect("reading the FEN file");
    let rows: Vec<(shakmaty::Chess, u64)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (fen, games) = l.split_once('\t').unwrap_or((l, "1"));
            (okb::position::parse_fen(fen).expect("a FEN"), games.trim().parse().unwrap_or(1))
        })
        .collect();
    let classifier = okb::structure::Classifier::default();
    // The first call builds the rule and skeleton tables; time the steady state too.
    let first = Instant::now();
    let _ = okb::structure::classify(&rows[0].0);
    let setup = first.elapsed();
    let mut best = f64::MAX;
    let mut tally: std::collections::BTreeMap<&str, (usize, u64)> = Default::default();
    for _ in 0..runs {
        tally.clear();
        let start = Instant::now();
        for (pos, games) in &rows {
            let tag = classifier.classify(pos);
            let how = tag.confidence.map_or("none", |c| c.as_str());
            let entry = tally.entry(how).or_default();
            entry.0 += 1;
            entry.1 += games;
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    let (nodes, games): (usize, u64) = tally.values().fold((0, 0), |(n, g), (a, b)| (n + a, g + b));
    let (unknown_nodes, unknown_games) = tally.get("none").copied().unwrap_or_default();
    for (how, (n, g)) in &tally {
        println!("{how:<6} {n:>7} nodes {g:>9} games");
    }
    println!(
        "positions={nodes} classify_s={best:.4} setup_s={:.4} unknown_nodes_pct={:.1} unknown_games_pct={:.1}",
        setup.as_secs_f64(),
        100.0 * unknown_nodes as f64 / nodes as f64,
        100.0 * unknown_games as f64 / games.max(1) as f64
    );
}
