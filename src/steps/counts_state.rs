//! `counts-state:<source>`: a counts state folder (`okb state`, spark/okb_state.py) read
//! as the tree's counts state, in place of the one `state` steps build in the cache. The
//! value is the folder's state as its manifest says; the tree reads the shards from the
//! folder (`games::state::folder`), each checked against its name.

use super::planning::{Planner, Planning, SourceFile, counts_state_id};
use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use crate::games::state::folder::StateFolder;

/// The rule.
pub static RULE: Rule = Rule { name: "counts-state", about: "a counts state folder (okb state) read as the tree's state", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per counts-state source.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.counts_state_files().map(|file| declare(p, file)).collect()
}

/// Reads state folder `file`, which must be counted to the tree's depth and hold every
/// shard its manifest names.
fn declare(p: &Planning<'_>, file: &SourceFile) -> Result<Decl<'static>, BuildError> {
    let (source, path, hash) = (file.name.clone(), file.path.clone(), file.hash.clone());
    let mut d = p.declare(counts_state_id(&source), &RULE);
    d.file(&source, &file.hash);
    let max_ply: usize = d.param("tree.max_ply")?;
    let run = move |cx: &Ctx<'_>| {
        let fail = |e: &dyn std::fmt::Display| cx.fail(format!("counts-state source {source}: {e}"));
        let folder = StateFolder::open(&path).map_err(|e| fail(&e))?;
        if folder.hash != hash {
            return Err(fail(&format!("{} changed while okb read it: run okb make again once the state is committed", path.display())));
        }
        let counted = folder.manifest.settings.max_ply;
        if counted != max_ply {
            return Err(fail(&format!("{} was counted to ply {counted}, the tree is built to ply {max_ply}: set tree.max_ply = {counted}, or count the months again into a state made with `okb state init --max-ply {max_ply}`", path.display())));
        }
        for shard in folder.manifest.state.shards.iter().flatten() {
            let file = folder.shard_path(&shard.name);
            if std::fs::metadata(&file).map(|m| m.len()).ok() != Some(shard.bytes) {
                return Err(fail(&format!("shard {} is missing or damaged (not {} bytes)", file.display(), shard.bytes)));
            }
        }
        let state = folder.manifest.state;
        let (positions, pairs, bytes) = state.size();
        let months = state.months.len();
        let s = if months == 1 { "" } else { "s" };
        let text = format!("{months} month{s}, {positions} positions and {pairs} pairs in {:.1} MB", bytes as f64 / 1e6);
        Ok(Produced::new(state, text))
    };
    Ok(d.value(run).priority(760))
}
