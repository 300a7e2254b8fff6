//! `cloud-eval:<source>`: the positions the engine step takes, asked of a cloud-eval
//! server (`kind = "lichess-cloud-eval"`), most played first; every answer is kept in
//! `sources/cloud-eval/`, so a stopped make asks nothing twice and a pinned source asks
//! nothing at all. Its value is the evaluations found, read by `engine` like a dump's.


use super::ids::{TREE};
use crate::crawl::archive::Archive;
use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning, cloud_eval_id};
use crate::engine::EngineConfig;
use crate::evals::cloud::CloudSource;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "cloud-eval", about: "the engine's positions asked of a cloud-eval server (resumable)", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// Asks `source` about the nodes `engine` selects; answers live in the source store
/// `sources` (and are searched in `mirrors`); `offline` asks nothing.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let Some((engine, _)) = &p.engine else { return Ok(Vec::new()) };
    Ok(p.clouds.iter().map(|source| declare(p, source.clone(), engine.clone())).collect())
}

/// Asks `source` for the positions `engine` selects in the tree.
fn declare(p: &Planning<'_>, source: CloudSource, engine: EngineConfig) -> Decl<'static> {
    let name = source.name.clone();
    let (sources, mirrors, offline) = (p.loaded.path("sources"), p.mirrors.clone(), p.offline || p.dry_run);
    let mut d = p.declare(cloud_eval_id(&name), &RULE);
    let tree: Input<Tree> = d.input(TREE);
    // The source's table holds its pin, so the key changes with the pinned answers.
    d.key_at(&["sources", &name]).key_at(&["engine", "max_ply"]).key_at(&["engine", "min_games"]);
    let run = move |cx: &Ctx<'_>| {
        let tree = cx.get(&tree)?;
        let mut nodes: Vec<(u64, &str)> =
            tree.nodes.iter().filter(|n| engine.selects(n.game_count(), n.line.len())).map(|n| (n.game_count(), n.epd.as_str())).collect();
        nodes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        nodes.dedup_by(|a, b| a.1 == b.1);
        let positions: Vec<String> = nodes.into_iter().map(|(_, epd)| epd.to_string()).collect();
        let archive = Archive::at(&sources, &mirrors, "cloud-eval");
        let bar = crate::progress::start(positions.len() as u64, "cloud evaluations");
        let fetched = source.fetch(&positions, &archive, offline, &|done, _| bar.set(done));
        drop(bar);
        let run = fetched.map_err(|e| cx.fail(crate::diagnostics::error_chain(&e)))?;
        let mut summary = format!(
            "{} positions: {} evaluated, {} unknown to the server, {} asked, {} replayed",
            positions.len(),
            run.selection.evals.len(),
            run.unknown,
            run.asked,
            run.replayed
        );
        if run.not_asked > 0 {
            summary.push_str(&format!(", {} not asked ({})", run.not_asked, if source.pin.is_some() { "outside the pinned manifest" } else { "offline" }));
        }
        if source.pin.is_none() {
            summary.push_str(&format!("; not pinned: `blake3 = \"{}\"` in [sources.{}] pins these answers", run.manifest, source.name));
        }
        // Offline without every answer: run again when the server can be asked.
        let complete = source.pin.is_some() || !offline || run.not_asked == 0;
        Ok(Produced::new(run.selection, summary).complete(complete))
    };
    d.value(run).priority(700)
}
