//! `repertoire:<name>`: one `[repertoires.<name>]` PGN read into positions merged by
//! identity. Only its file and `color` key it, so editing the repertoire reruns this and
//! the repertoire's reports, nothing else.


use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{Planner, Planning, RepertoireFile, repertoire_id};
use crate::repertoire::Side;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire", about: "a repertoire PGN read into positions merged by identity", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per repertoire, reading its resolved file.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.repertoires.iter().map(|file| declare(p, file)).collect()
}

/// Reads repertoire `file` as its table's `color`.
fn declare(p: &Planning<'_>, file: &RepertoireFile) -> Result<Decl<'static>, BuildError> {
    let RepertoireFile { name, path, shown, hash } = file.clone();
    let mut d = p.declare(repertoire_id(&name), &RULE);
    d.file(&name, &hash);
    let color: Side = d.param_at(&["repertoires", &name, "color"])?;
    let run = move |cx: &Ctx<'_>| {
        let bytes = std::fs::read(&path).map_err(|e| cx.fail(format!("reading {}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        let rep = crate::repertoire::parse::parse(&name, color, &shown, &text).map_err(|e| cx.fail(e))?;
        let summary = format!("{} positions, {} prepared moves, {} chapters", rep.nodes.len(), rep.own_moves(), rep.chapters);
        let doubts = rep.doubts(&shown);
        let count = doubts.len();
        cx.warn(doubts);
        Ok(Produced::new(rep, summary).warnings(count))
    };
    Ok(d.value(run).priority(900))
}
