//! Drives okb's engine phase over a positions file, for `bench/engine`.
//!
//! Input lines: `subtree<TAB>fen<TAB>priority`. Runs [`okb::engine::annotate`] on a fresh
//! cache and prints one `key=value` line with the throughput.
//!
//! ```text
//! engine_bench --positions FILE --depth 16 [--engines 2] [--engine PATH]
//!              [--multipv 3] [--locality] [--no-new-game] [--results out.json]
//! ```

use std::error::Error;
use std::path::PathBuf;

use okb::engine::{EngineCache, EngineConfig, Job, annotate, engine_identity, resolve_engine};

fn main() -> Result<(), Box<dyn Error>> {
    let mut positions = None;
    let mut results = None;
    let mut config = EngineConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--positions" => positions = Some(PathBuf::from(value()?)),
            "--results" => results = Some(PathBuf::from(value()?)),
            "--engine" => config.path = Some(PathBuf::from(value()?)),
            "--engines" => config.engines = value()?.parse()?,
            "--multipv" => config.multipv = value()?.parse()?,
            "--depth" => {
                let d = value()?.parse()?;
                (config.depth_branching, config.depth_leaf, config.depth_popular) = (d, d, d);
            }
            "--locality" => config.tt_locality = true,
            "--no-new-game" => config.new_game = false,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let positions = positions.ok_or("--positions FILE is required")?;
    let mut jobs = Vec::new();
    for line in std::fs::read_to_string(&positions)?.lines().filter(|l| !l.trim().is_empty()) {
        let mut cols = line.split('\t');
        let (Some(subtree), Some(fen), Some(priority)) = (cols.next(), cols.next(), cols.next())
        else {
            return Err(format!("bad positions line {line:?}").into());
        };
        jobs.push(Job {
            fen: fen.to_string(),
            depth: config.depth_leaf,
            priority: priority.parse()?,
            subtree: subtree.to_string(),
        });
    }

    let dir = tempfile::tempdir()?;
    let cache = EngineCache::open(&dir.path().join("engine.sqlite"))?;
    // Learn the engine's name outside the timed run, as a pipeline's warm cache would.
    engine_identity(&resolve_engine(config.path.as_deref())?, &config, &cache)?;
    let bar = okb::progress::start(jobs.len() as u64, "engine positions");
    let report = annotate(jobs, &config, &cache, &[], &|p| {
        bar.set_length(p.to_analyse as u64);
        bar.set((p.analysed + p.failed) as u64);
    })?;
    drop(bar);
    if let Some(path) = results {
        std::fs::write(path, serde_json::to_string_pretty(&report.results)?)?;
    }
    let secs = report.elapsed.as_secs_f64();
    println!(
        "positions={} failed={} elapsed_s={:.3} positions_per_s={:.4} nodes={} nodes_per_s={:.0} engines={} multipv={} locality={} new_game={}",
        report.analysed,
        report.failed,
        secs,
        report.analysed as f64 / secs,
        report.nodes,
        report.nodes as f64 / secs,
        config.engines,
        config.multipv,
        config.tt_locality,
        config.new_game,
    );
    Ok(())
}
