//! `repertoire-evals:<name>`: the positions a repertoire's lines reach, at any ply,
//! evaluated as the engine step evaluates the tree's: evaluation sources first, then the
//! engine cache, then the engine. The searches ask what the engine step would ask of the
//! same position (the depth policy over the tree's game counts), through the same engine
//! cache, so a position both want is searched once and a second make starts no engine.
//! The repertoire's engine flags read these, so prepared moves beyond `[engine] max_ply`
//! are checked too.
//!
//! With no engine installed, the positions no evaluation source covers are listed as not
//! evaluated (the flags report says so) instead of failing the make: the tree's engine
//! step fails then only when the tree itself needs a search.

use super::ids::{ENGINE, TREE};
use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning, repertoire_evals_id, repertoire_id, load_eval_sources};
use crate::engine::{AnnotationReport, Annotations, EngineCache, EngineConfig, EngineError, EvalSource, Failure, Job, Wanted};
use crate::repertoire::Repertoire;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-evals", about: "evaluations of a repertoire's positions, at any ply", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With `[engine]`: a step per repertoire.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let Some((config, hash)) = &p.engine else { return Ok(Vec::new()) };
    Ok(p.repertoires.iter().map(|file| declare(p, &file.name, config.clone(), hash.clone())).collect())
}

/// Evaluates repertoire `name`'s positions with `config` and the engine binary of
/// BLAKE3 `binary_hash` (`none` when no engine is installed).
fn declare(p: &Planning<'_>, name: &str, config: EngineConfig, binary_hash: String) -> Decl<'static> {
    let cache_path = p.engine_cache();
    let mut d = p.declare(repertoire_evals_id(name), &RULE);
    let rep: Input<Repertoire> = d.input(repertoire_id(name));
    let tree: Input<Tree> = d.input(TREE);
    // After the tree's searches: a position both want is then a cache hit here, never
    // two engines searching it at once.
    d.after(ENGINE);
    let sources = p.eval_source_refs(&mut d, &config);
    d.file("engine-binary", binary_hash).key_at(&["engine"]);
    let run = move |cx: &Ctx<'_>| {
        let (rep, tree) = (cx.get(&rep)?, cx.get(&tree)?);
        let sources = load_eval_sources(cx, &sources)?;
        let jobs = jobs(&rep, &tree, &config);
        let cache = EngineCache::open(&cache_path).map_err(|e| cx.fail(e))?;
        let bar = crate::progress::start(jobs.len() as u64, "repertoire positions");
        let annotated = crate::engine::annotate(jobs.clone(), &config, &cache, &sources, &|p| {
            bar.set_length(p.to_analyse as u64);
            bar.set((p.analysed + p.failed) as u64);
        });
        drop(bar);
        match annotated {
            Ok(report) => Ok(searched(report)),
            Err(e @ EngineError::NotFound { .. }) => Ok(without_engine(jobs, &sources, &config, &e)),
            Err(e) => Err(cx.fail(e)),
        }
    };
    d.value(run).priority(590)
}

/// A search per repertoire position, asked as the engine step asks the tree's nodes: a
/// position of the tree with its game count and branching, any other as a leaf no game
/// reached.
fn jobs(rep: &Repertoire, tree: &Tree, config: &EngineConfig) -> Vec<Job> {
    let job = |i: usize| {
        let epd = rep.nodes[i].epd.clone();
        let subtree = rep.line(i as u32).join(" ");
        match tree.find(&epd).map(|t| &tree.nodes[t as usize]) {
            Some(n) => Job::for_node(epd, n.is_branching(), n.game_count(), subtree, config),
            None => Job::for_node(epd, false, 0, subtree, config),
        }
    };
    (0..rep.nodes.len()).map(job).collect()
}

/// The evaluations an annotation run found, and its line.
fn searched(report: AnnotationReport) -> Produced {
    let from_sources: usize = report.from_sources.iter().map(|(_, d)| d.len()).sum();
    let mut summary = format!(
        "{} positions: {from_sources} from evaluation sources, {} cached, {} analysed, {} failed, {} engines started",
        report.results.len() + report.failures.len(),
        report.cached,
        report.analysed,
        report.failed,
        report.engines_started
    );
    if let Some(why) = &report.stopped {
        summary.push_str(&format!("; stopped ({why}): {} positions left; run `okb make` again to continue", report.left));
    }
    let complete = report.left == 0;
    let annotations = Annotations { engine_name: report.engine_name, results: report.results, failures: report.failures, origins: report.origins };
    Produced::new(annotations, summary).complete(complete)
}

/// Without an engine: what the rules and the evaluation sources evaluate, and the other
/// positions as failures saying why (`no_engine`).
fn without_engine(jobs: Vec<Job>, sources: &[EvalSource], config: &EngineConfig, no_engine: &EngineError) -> Produced {
    let mut wanted = Wanted::of(jobs, sources, config.multipv);
    let mut annotations = Annotations { failures: std::mem::take(&mut wanted.invalid), ..Annotations::default() };
    for (epd, analysis) in std::mem::take(&mut wanted.finished) {
        annotations.origins.insert(epd.clone(), crate::engine::FINISHED_ORIGIN.to_string());
        annotations.results.insert(epd, analysis);
    }
    for (epd, (i, analysis)) in std::mem::take(&mut wanted.from_sources) {
        annotations.origins.insert(epd.clone(), sources[i].label.clone());
        annotations.results.insert(epd, analysis);
    }
    let reason = no_engine.to_string();
    for (epd, _) in wanted.missing() {
        annotations.failures.insert(epd.to_string(), Failure { fen: epd.to_string(), reason: reason.clone() });
    }
    let summary = format!(
        "{} positions: {} evaluated, {} not evaluated (no engine found)",
        annotations.results.len() + annotations.failures.len(),
        annotations.results.len(),
        annotations.failures.len()
    );
    Produced::new(annotations, summary)
}

