//! `structure-labels:<source>`: a pipeline's labelled pawn skeletons, parsed (Phase 5).


use crate::dataflow::{BuildError, Ctx, Decl, Produced, Rule};
use super::planning::{Planner, Planning, SourceFile, labels_id};

/// The rule.
pub static RULE: Rule = Rule { name: "structure-labels", about: "one structure-labels file parsed into labelled skeletons", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per structure-labels source.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    Ok(p.label_files().map(|file| declare(p, file)).collect())
}

/// Parses structure-labels source `file`.
fn declare(p: &Planning<'_>, file: &SourceFile) -> Decl<'static> {
    let (source, path) = (file.name.clone(), file.path.clone());
    let mut d = p.declare(labels_id(&source), &RULE);
    d.file(&source, &file.hash);
    let run = move |cx: &Ctx<'_>| {
        let bytes = std::fs::read(&path).map_err(|e| cx.fail(format!("reading {}: {e}", path.display())))?;
        let labels = crate::structure::labels::parse(&source, &bytes);
        let text = format!("{} labelled skeletons", labels.rows.len());
        let warnings = labels.warnings.len();
        cx.warn(labels.warnings.iter().cloned());
        Ok(Produced::new(labels, text).warnings(warnings))
    };
    d.value(run).priority(900)
}
