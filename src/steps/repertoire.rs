//! `repertoire:<name>`: one `[repertoires.<name>]` PGN read into positions merged by
//! identity. Only its file and `color` key it, so editing the repertoire reruns this and
//! the repertoire's reports, nothing else.

use std::path::PathBuf;

use crate::dataflow::{Action, Ctx, Decl, Produced, Rule};
use crate::repertoire::Side;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire", about: "a repertoire PGN read into positions merged by identity", file: file!() };

/// The step id of repertoire `name`.
pub fn id(name: &str) -> String {
    format!("repertoire:{name}")
}

/// Reads repertoire `name` for `color` from `path` (shown as `shown`, BLAKE3 `hash`).
pub fn declare(name: &str, color: Side, path: PathBuf, shown: String, hash: &str) -> Decl<'static> {
    let rep_name = name.to_string();
    let run = move |cx: &Ctx<'_>| {
        let bytes = std::fs::read(&path).map_err(|e| cx.fail(format!("reading {}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&bytes);
        let rep = crate::repertoire::parse::parse(&rep_name, color, &shown, &text).map_err(|e| cx.fail(e))?;
        let summary = format!("{} positions, {} prepared moves, {} chapters", rep.nodes.len(), rep.own_moves(), rep.chapters);
        Ok(Produced::new(rep, summary))
    };
    Decl::new(id(name), &RULE, Action::Value(Box::new(run)))
        .file(name, hash)
        .param_at(vec!["repertoires".into(), name.into(), "color".into()])
        .priority(900)
}
