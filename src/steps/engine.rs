//! `engine`: Stockfish evaluations of the tree's nodes (Phase 4). Every result goes to
//! the engine cache as it arrives, so a run that stops at its budget (or is killed)
//! loses nothing: the step is then left unrecorded and the next make continues.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::diagnostics::Warning;
use crate::engine::{Annotations, EngineCache, EngineConfig, Job};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "engine", about: "engine evaluations of the tree's nodes (resumable)", file: file!() };

/// Annotates the tree's nodes with at least `min_games` games, most played first, with
/// the engine whose binary has BLAKE3 `binary_hash`; results are kept in `cache_path`.
pub fn declare(config: EngineConfig, binary_hash: String, cache_path: PathBuf) -> Decl<'static> {
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let jobs: Vec<Job> = tree
            .nodes
            .iter()
            .filter(|n| n.game_count() >= config.min_games)
            .map(|n| Job::for_node(n.fen.clone(), n.is_branching(), n.game_count(), n.movetext.clone(), &config))
            .collect();
        let cache = EngineCache::open(&cache_path).map_err(|e| cx.fail(e))?;
        let bar = crate::progress::start(jobs.len() as u64, "engine positions");
        // The bar counts engine searches only: cache hits are instant and would make the
        // rate and the ETA meaningless.
        let report = crate::engine::annotate(jobs, &config, &cache, &|p| {
            bar.set_length(p.to_analyse as u64);
            bar.set((p.analysed + p.failed) as u64);
            bar.set_message(format!("engine positions ({} cached, {} failed)", p.cached, p.failed));
        })
        .map_err(|e| cx.fail(e))?;
        drop(bar);
        let mut summary = format!(
            "{} positions: {} cached, {} analysed, {} failed, {} engines started",
            report.results.len() + report.failures.len(),
            report.cached,
            report.analysed,
            report.failed,
            report.engines_started
        );
        if let Some(why) = &report.stopped {
            summary.push_str(&format!("; stopped ({why}), {} left for the next make", report.left));
        }
        cx.warn(report.failures.iter().map(|(epd, failure)| Warning {
            kind: "engine-failure".into(),
            file: "engine".into(),
            line: None,
            message: failure.reason.clone(),
            text: Some(epd.clone()),
        }));
        let complete = report.left == 0;
        let failed = report.failed;
        let annotations = Annotations { engine_name: report.engine_name, results: report.results, failures: report.failures };
        Ok(Produced::new(annotations, summary).warnings(failed).complete(complete))
    };
    Decl::new("engine", &RULE, Action::Value(Box::new(run))).reads("tree").file("engine-binary", binary_hash).param("engine").priority(600)
}
