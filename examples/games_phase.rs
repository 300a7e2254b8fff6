//! Drives okb's Phase 2 alone, for benchmarks: `games_phase [--max-ply N] [-j N]
//! [--budget-mb N] [--book OUT.bin --min-game N] PATHS...` prints counts as key=value.

use std::path::PathBuf;
use std::time::Instant;

use okb::export::book::{BookOptions, build_book};
use okb::export::polyglot::{WeightMode, write_book};
use okb::games::aggregate::{AggregateOptions, aggregate_files, merge, merge_reports};
use okb::games::filter::GameFilter;
use okb::games::input::expand_paths;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut max_ply = 15;
    let mut jobs = 0;
    let mut budget = 2048;
    let mut book: Option<PathBuf> = None;
    let mut min_game = 3;
    let mut paths = Vec::new();
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match a.as_str() {
            "--max-ply" => max_ply = num("--max-ply"),
            "-j" => jobs = num("-j"),
            "--budget-mb" => budget = num("--budget-mb"),
            "--min-game" => min_game = num("--min-game") as u64,
            "--book" => book = args.next().map(PathBuf::from),
            _ => paths.push(a),
        }
    }
    let files = expand_paths(&paths).expect("paths");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().expect("pool");
    let t = Instant::now();
    if let Some(out) = book {
        let opts =
            BookOptions { max_ply, min_game, weights: WeightMode::Polyglot, ..Default::default() };
        let r = pool.install(|| build_book(&files, &opts)).expect("book");
        write_book(&out, &r.entries).expect("write");
        eprint!("{}", r.bad.render_table());
        println!(
            "entries={} games_read={} games_counted={} wall_s={:.3}",
            r.entries.len(),
            r.counters.games_read,
            r.counters.games_counted,
            t.elapsed().as_secs_f64()
        );
        return;
    }
    let opts = AggregateOptions { max_ply, memory_budget_mb: budget, ..Default::default() };
    let (stats, bad, counters) = pool.install(|| {
        let aggs = aggregate_files(&files, &GameFilter::default(), &opts).expect("aggregate");
        let t_merge = Instant::now();
        let refs: Vec<_> = aggs.iter().collect();
        let stats = merge(&refs);
        eprintln!(
            "aggregate_s={:.3} merge_s={:.3}",
            (t_merge - t).as_secs_f64(),
            t_merge.elapsed().as_secs_f64()
        );
        let (bad, counters) = merge_reports(&refs);
        (stats, bad, counters)
    });
    let wall = t.elapsed().as_secs_f64();
    eprint!("{}", bad.render_table());
    eprint!("{}", counters.render_filtered());
    println!(
        "files={} games_read={} games_counted={} games_bad={} positions={} moves={} wall_s={:.3}",
        files.len(),
        counters.games_read,
        counters.games_counted,
        counters.games_bad,
        stats.positions.len(),
        stats.moves.len(),
        wall
    );
}
