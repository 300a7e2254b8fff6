//! `structure-review`: the terminal positions no structure names, or only a near
//! skeleton does, for review (Phase 5).

use super::ids::{STRUCTURES, TREE};
use std::sync::Arc;

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning};
use crate::structure::StructureTags;
use crate::structure::labels::Labels;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule {
    name: "structure-review",
    about: "Unknown and near pawn structures listed for review (structures-review.{json,txt,tsv})",
    file: file!(),
};

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// Writes the review files into `dir`; `labels` are the `structure-labels` steps.
/// The files the step writes into its folder (what `okb clean` removes).
pub const FILES: [&str; 3] = ["structures-review.json", "structures-review.txt", "structures-review.tsv"];

/// The review files beside the store, with every structure-labels source's labels.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare("structure-review", &RULE);
    let tree: Input<Tree> = d.input(TREE);
    let tags: Input<StructureTags> = d.input(STRUCTURES);
    let labels: Vec<Input<Labels>> = p.labels().into_iter().map(|id| d.input(id)).collect();
    let limit: usize = d.param("structures.review_limit")?;
    let run = move |cx: &Ctx<'_>| {
        let (tree, tags) = (cx.get(&tree)?, cx.get(&tags)?);
        let loaded: Vec<Arc<Labels>> = labels.iter().map(|l| cx.get(l)).collect::<Result<_, _>>()?;
        // The structures step reported the labels' warnings already.
        let (classifier, _) = crate::structure::labels::classifier(loaded.iter().map(|l| l.as_ref()));
        let review = crate::structure::review::review(&tree, &tags, &classifier, limit);
        let text = format!("{} positions to review{}", review.to_review, review.cut_note());
        let files = vec![
            ExportFile { name: FILES[0].into(), bytes: review.to_json() },
            ExportFile { name: FILES[1].into(), bytes: review.to_table() },
            ExportFile { name: FILES[2].into(), bytes: review.to_form() },
        ];
        Ok((files, text))
    };
    Ok(vec![d.files(p.build_dir(), run).priority(300)])
}
