//! `evals:<source>`: a pinned evaluation dump (`kind = "lichess-evals"`) read once for
//! the tree's positions.
//!
//! The step keeps the evaluations of every node of the tree, not only of the nodes the
//! engine selects, so changing `[engine]` settings never re-reads the dump; it reads
//! the dump again only when the tree gains positions or the pin changes, and then once
//! per make whatever number of steps use it. (A dump of the real size, about 40 GB, takes
//! minutes per pass: see `bench/run evals` and README.)

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::diagnostics::Warning;
use crate::evals::{Selection, scan};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "evals", about: "a pinned evaluation dump read for the tree's positions", file: file!() };

/// The step id of the evaluation source `name`.
pub fn id(name: &str) -> String {
    format!("evals:{name}")
}

/// Reads the evaluation source `name` (resolved to `path`, shown as `shown`, with
/// BLAKE3 `hash`) for the positions of the tree.
pub fn declare(name: &str, path: PathBuf, shown: String, hash: &str) -> Decl<'static> {
    let source = name.to_string();
    let run = move |cx: &Ctx<'_>| {
        let tree: Arc<Tree> = cx.load("tree")?;
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
    Decl::new(id(name), &RULE, Action::Value(Box::new(run))).reads("tree").file(name, hash).priority(700)
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
            message: format!("line skipped: {reason}"),
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
