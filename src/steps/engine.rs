//! `engine`: Stockfish evaluations of the tree's nodes (Phase 4). Every result goes to
//! the engine cache as it arrives, so a run that stops (a budget, Ctrl-C, kill) loses
//! nothing: the step is then left unrecorded and the next make continues where it was.
//!
//! `engine-queue` (not part of `okb make`'s plans: `okb engine queue` declares it) lists
//! the same searches that the cache cannot serve yet, for other machines to run.

use super::ids::{self, TREE};
use std::sync::{Arc, Mutex};

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning, EvalSourceRef, load_eval_sources};
use crate::diagnostics::Warning;
use crate::engine::estimate::{self, DEFAULT_SECONDS_AT_10};
use crate::engine::queue::{self, Planned};
use crate::engine::{AnnotationReport, Annotations, EngineCache, EngineConfig, Job};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "engine", about: "engine evaluations of the tree's nodes (resumable)", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With `[engine]`: the tree's nodes annotated.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    Ok(p.engine.iter().map(|(config, hash)| declare(p, config.clone(), hash.clone())).collect())
}

/// Annotates the tree's nodes that `config` selects (games, ply): from the evaluation
/// sources where they cover a node, otherwise with the engine at `config.path` whose
/// binary has BLAKE3 `binary_hash` (`none` when no engine is installed), most played
/// first; results are kept in the project's engine cache.
fn declare(p: &Planning<'_>, config: EngineConfig, binary_hash: String) -> Decl<'static> {
    let cache_path = p.engine_cache();
    let (left_config, left_cache) = (config.clone(), cache_path.clone());
    let mut d = p.declare(ids::ENGINE, &RULE);
    let sources = p.eval_source_refs(&mut d, &config);
    let tree: Input<Tree> = d.input(TREE);
    d.file("engine-binary", binary_hash).key_at(&["engine"]);
    let (run_sources, run_tree) = (sources.clone(), tree.clone());
    let run = move |cx: &Ctx<'_>| {
        let tree = cx.get(&run_tree)?;
        let sources = load_eval_sources(cx, &run_sources)?;
        let jobs = jobs(&tree, &config);
        let mean_cost = jobs.iter().map(|j| estimate::cost(j.depth)).sum::<f64>() / jobs.len().max(1) as f64;
        let cache = EngineCache::open(&cache_path).map_err(|e| cx.fail(e))?;
        let bar = crate::progress::start(jobs.len() as u64, "engine positions");
        // The bar counts engine searches only: cache hits are instant and would make the
        // rate and the ETA meaningless.
        let report = crate::engine::annotate(jobs, &config, &cache, &sources, &|p| {
            bar.set_length(p.to_analyse as u64);
            bar.set((p.analysed + p.failed) as u64);
            bar.set_message(format!("engine positions ({} cached, {} failed)", p.cached, p.failed));
        })
        .map_err(|e| cx.fail(e))?;
        drop(bar);
        let engines = config.engines.min(report.analysed.max(1));
        if let Some(seconds) = estimate::calibrate(report.analysed, mean_cost, report.elapsed, engines) {
            cache.set_speed(&report.engine_identity, seconds).map_err(|e| cx.fail(e))?;
        }
        let summary = summary(&report, &cache, &config, mean_cost);
        cx.warn(report.failures.iter().map(|(epd, failure)| Warning {
            kind: "engine-failure".into(),
            file: "engine".into(),
            line: None,
            message: failure.reason.clone(),
            text: Some(epd.clone()),
        }));
        let (complete, failed) = (report.left == 0, report.failed);
        let annotations = Annotations { engine_name: report.engine_name, results: report.results, failures: report.failures, origins: report.origins };
        Ok(Produced::new(annotations, summary).warnings(failed).complete(complete))
    };
    let left = move |cx: &Ctx<'_>| left(cx, &tree, &left_config, &left_cache, &sources);
    d.value(run).priority(600).left(Box::new(left))
}

/// The rule of the queue step.
pub static QUEUE_RULE: Rule =
    Rule { name: "engine-queue", about: "the engine searches the cache cannot serve yet (okb engine queue)", file: file!() };

/// With `[engine]`: the queue of the searches the engine step would run and the engine
/// cache cannot serve, handed to the caller in `out`. The step is never recorded (its
/// answer depends on the cache's contents, which no key covers), so it runs every time
/// it is declared.
pub fn plan_queue(p: &Planning<'_>, out: Arc<Mutex<Option<Planned>>>) -> Option<Decl<'static>> {
    let (config, binary_hash) = p.engine.clone()?;
    let cache_path = p.engine_cache();
    let mut d = p.declare("engine-queue", &QUEUE_RULE);
    let sources = p.eval_source_refs(&mut d, &config);
    let tree: Input<Tree> = d.input(TREE);
    d.file("engine-binary", binary_hash).key_at(&["engine"]);
    let run = move |cx: &Ctx<'_>| {
        let tree = cx.get(&tree)?;
        let cache = EngineCache::open(&cache_path).map_err(|e| cx.fail(e))?;
        let path = config.path.clone().unwrap_or_default();
        let planned = queue::plan(jobs(&tree, &config), &load_eval_sources(cx, &sources)?, &path, &config, &cache).map_err(|e| cx.fail(e))?;
        let queued = planned.queue.entries.len();
        let summary = format!("{} positions: {} cached, {queued} queued", planned.total, planned.cached);
        *out.lock().unwrap_or_else(|p| p.into_inner()) = Some(planned);
        Ok(Produced::new(queued, summary).complete(false))
    };
    Some(d.value(run))
}

/// The searches `config` asks for: nodes with at least `min_games` games and at most
/// `max_ply` plies deep.
fn jobs(tree: &Tree, config: &EngineConfig) -> Vec<Job> {
    tree.nodes
        .iter()
        .filter(|n| config.selects(n.game_count(), n.line.len()))
        .map(|n| Job::for_node(n.fen.clone(), n.is_branching(), n.game_count(), n.movetext.clone(), config))
        .collect()
}

/// The step's line: what was served, searched and failed, and when it stopped early,
/// what is left and how to continue.
fn summary(report: &AnnotationReport, cache: &EngineCache, config: &EngineConfig, mean_cost: f64) -> String {
    let mut from_sources = String::new();
    for (name, depths) in &report.from_sources {
        let mut depths = depths.clone();
        depths.sort_unstable();
        let median = depths.get(depths.len() / 2).map_or(String::new(), |d| format!(" (median depth {d})"));
        from_sources.push_str(&format!("{} from {name}{median}, ", depths.len()));
    }
    if report.finished > 0 {
        // Said only when there are some, so that other builds' lines stay as they were.
        from_sources.push_str(&format!("{} finished (no search), ", report.finished));
    }
    let mut summary = format!(
        "{} positions: {from_sources}{} cached, {} analysed, {} failed, {} engines started",
        report.results.len() + report.failures.len(),
        report.cached,
        report.analysed,
        report.failed,
        report.engines_started
    );
    if let Some(why) = &report.stopped {
        let seconds = cache.speed(&report.engine_identity).ok().flatten().unwrap_or(DEFAULT_SECONDS_AT_10);
        let eta = estimate::human(std::time::Duration::from_secs_f64(
            report.left as f64 * mean_cost * seconds / config.engines.max(1) as f64,
        ));
        summary.push_str(&format!("; stopped ({why}): {} positions left (≈ {eta}); run `okb make` again to continue", report.left));
    }
    summary
}

/// For `okb status`: the positions not in the engine cache yet, and the time they take.
fn left(cx: &Ctx<'_>, tree: &Input<Tree>, config: &EngineConfig, cache_path: &std::path::Path, sources: &[EvalSourceRef]) -> Result<String, BuildError> {
    let tree = cx.get(tree)?;
    let left = crate::engine::wanted::left(jobs(&tree, config), &load_eval_sources(cx, sources)?, config, cache_path).map_err(|e| cx.fail(e))?;
    Ok(left.to_string())
}
