//! `validate`: the Opening tags of a game corpus checked against the tree's names
//! (Phase 3). Its report feeds the `validation-report` files and, with stubs on, the store.

use super::ids::{self, ECO, TREE};
use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning};
use crate::eco::EcoSkeleton;
use crate::tree::Tree;
use crate::validate::ValidateParams;

/// The rule.
pub static RULE: Rule = Rule { name: "validate", about: "a corpus's Opening tags against the tree's names", file: file!() };


/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// With `[validate]`: the tree checked against its sources' games.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let Some(validate) = &p.loaded.pipeline.validate else { return Ok(Vec::new()) };
    let mut d = p.declare(ids::VALIDATE, &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let eco: Input<EcoSkeleton> = d.input(ECO);
    let params: ValidateParams = d.param("validate")?;
    let files = p.files_of(&validate.sources);
    for (_, shown, hash) in &files {
        d.file(shown, hash);
    }
    let paths: Vec<PathBuf> = files.into_iter().map(|f| f.0).collect();
    let run = move |cx: &Ctx<'_>| {
        let (tree, skeleton) = (cx.get(&tree)?, cx.get(&eco)?);
        let names = crate::validate::TreeNames::new(&tree, &skeleton);
        let validation = crate::validate::validate_files(&names, &paths, params.max_ply).map_err(|e| cx.fail(e))?;
        let report = crate::validate::report::build(&validation, &tree, &names, &params);
        let c = &report.counts;
        let text = format!(
            "{} tagged games, {} known, {} renamed, {} reach names the tree lacks; {} variations reported, {} corrupt games",
            c.games_tagged, c.games_known, c.games_renamed, c.games_missing, report.missing.len(), report.corrupt_games
        );
        Ok(Produced::new(report, text))
    };
    Ok(vec![d.value(run).priority(400)])
}
