//! `structure-review`: the terminal positions no structure names, or only a near
//! skeleton does, for review (Phase 5).

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::structure::StructureTags;
use crate::structure::labels::Labels;
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule {
    name: "structure-review",
    about: "Unknown and near pawn structures listed for review (structures-review.{json,txt,tsv})",
    file: file!(),
};

/// Writes the review files into `dir`; `labels` are the `structure-labels` steps.
/// The files the step writes into its folder (what `okb clean` removes).
pub const FILES: [&str; 3] = ["structures-review.json", "structures-review.txt", "structures-review.tsv"];

pub fn declare(dir: PathBuf, labels: Vec<String>) -> Decl<'static> {
    let reads = labels.clone();
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
        let tags: Arc<StructureTags> = cx.load("structures")?;
        let loaded: Vec<Arc<Labels>> = labels.iter().map(|id| cx.load(id)).collect::<Result<_, _>>()?;
        // The structures step reported the labels' warnings already.
        let (classifier, _) = crate::structure::labels::classifier(loaded.iter().map(|l| l.as_ref()));
        let review = crate::structure::review::review(&tree, &tags, &classifier);
        let text = format!("{} positions to review", review.unknown.len());
        let files = vec![
            ExportFile { name: FILES[0].into(), bytes: review.to_json() },
            ExportFile { name: FILES[1].into(), bytes: review.to_table() },
            ExportFile { name: FILES[2].into(), bytes: review.to_form() },
        ];
        Ok((files, text))
    };
    let decl = Decl::new("structure-review", &RULE, Action::Files(dir, Box::new(run))).reads("tree").reads("structures");
    reads.iter().fold(decl, |d, id| d.reads(id)).priority(300)
}
