//! `structure-labels:<source>`: a pipeline's labelled pawn skeletons, parsed (Phase 5).

use std::path::PathBuf;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};

/// The rule.
pub static RULE: Rule = Rule { name: "structure-labels", about: "one structure-labels file parsed into labelled skeletons", file: file!() };

/// The step id of the labels source `name`.
pub fn id(name: &str) -> String {
    format!("structure-labels:{name}")
}

/// Parses the labels source `name` (resolved to `path`, with BLAKE3 `hash`).
pub fn declare(name: &str, path: PathBuf, hash: &str) -> Decl<'static> {
    let source = name.to_string();
    let run = move |cx: &Ctx<'_>| {
        let bytes = std::fs::read(&path).map_err(|e| cx.fail(format!("reading {}: {e}", path.display())))?;
        let labels = crate::structure::labels::parse(&source, &bytes);
        let text = format!("{} labelled skeletons", labels.rows.len());
        let warnings = labels.warnings.len();
        cx.warn(labels.warnings.iter().cloned());
        Ok(Produced::new(labels, text).warnings(warnings))
    };
    Decl::new(id(name), &RULE, Action::Value(Box::new(run))).file(name, hash).priority(900)
}
