//! `validate`: the Opening tags of a game corpus checked against the tree's names
//! (Phase 3). Its report feeds the `validation-report` files and, with stubs on, the store.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::eco::EcoSkeleton;
use crate::tree::Tree;
use crate::validate::ValidateParams;

/// The rule.
pub static RULE: Rule = Rule { name: "validate", about: "a corpus's Opening tags against the tree's names", file: file!() };

/// Validates the games of `files` (path, shown name, BLAKE3).
pub fn declare(params: ValidateParams, files: Vec<(PathBuf, String, String)>) -> Decl<'static> {
    let paths: Vec<PathBuf> = files.iter().map(|f| f.0.clone()).collect();
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let skeleton: Arc<EcoSkeleton> = cx.load("eco")?;
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
    let mut decl = Decl::new("validate", &RULE, Action::Value(Box::new(run))).reads("tree").reads("eco").param("validate").priority(400);
    for (_, shown, hash) in files {
        decl = decl.file(shown, hash);
    }
    decl
}
