//! `evals:<source>`: a pinned evaluation dump (`kind = "lichess-evals"`) read once for
//! the tree's positions.
//!
//! The step keeps the evaluations of every node of the tree, not only of the nodes the
//! engine selects, so changing `[engine]` settings never re-reads the dump; it reads
//! the dump again only when the tree gains positions or the pin changes, and then once
//! per make whatever number of steps use it. (A dump of the real size, about 40 GB, takes
//! minutes per pass: see `bench/run evals` and bench/README.md.)

use super::ids::{TREE};
use std::collections::BTreeSet;

use crate::dataflow::{BuildError, Ctx, Decl, Input, Produced, Rule};
use super::planning::{Planner, Planning, SourceFile, evals_id};
use crate::diagnostics::Warning;
use crate::evals::{Selection, scan};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "evals", about: "a pinned evaluation dump read for the tree's positions", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per evaluation dump.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    Ok(p.eval_files().map(|file| declare(p, file)).collect())
}

/// Reads the evaluations of dump `file` for the tree's positions.
fn declare(p: &Planning<'_>, file: &SourceFile) -> Decl<'static> {
    let (source, path) = (file.name.clone(), file.path.clone());
    let shown = path.strip_prefix(&p.loaded.root).unwrap_or(&path).display().to_string();
    let mut d = p.declare(evals_id(&source), &RULE);
    let tree: Input<Tree> = d.input(TREE);
    d.file(&source, &file.hash);
    let run = move |cx: &Ctx<'_>| {
        let tree = cx.get(&tree)?;
        let wanted: BTreeSet<String> = tree.nodes.iter().map(|n| n.epd.clone()).collect();
        let selection: Selection = scan(&path, &wanted).map_err(|e| cx.fail(format!("evaluation source {source}: {e}")))?;
        cx.warn(malformed(&selection, &shown));
        let summary = format!(
            "{} of {} positions found in {} lines{}",
            selection.evals.len(),
            wanted.len(),
            selection.lines,
            if selection.malformed_count > 0 { format!(", {} malformed lines", selection.malformed_count) } else { String::new() }
        );
        let warnings = selection.malformed.len() + usize::from(selection.malformed_count > selection.malformed.len() as u64);
        Ok(Produced::new(selection, summary).warnings(warnings))
    };
    d.value(run).priority(700)
}

/// The warnings of the malformed lines: each reported line, then a count of the rest.
fn malformed(selection: &Selection, shown: &str) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = selection
        .malformed
        .iter()
        .map(|(line, reason)| Warning {
            kind: "malformed-eval".into(),
            file: shown.to_string(),
            line: u32::try_from(*line).ok(),
            message: reason.clone(),
            text: None,
        })
        .collect();
    let unreported = selection.malformed_count - selection.malformed.len() as u64;
    if unreported > 0 {
        warnings.push(Warning {
            kind: "malformed-eval".into(),
            file: shown.to_string(),
            line: None,
            message: format!("{unreported} more malformed lines skipped (the first {} are listed)", selection.malformed.len()),
            text: None,
        });
    }
    warnings
}
