//! `parse:<source>`: one taxonomy file (Lichess TSV, SCID eco, pgn-extract eco.pgn)
//! parsed into rows (Phase 1).

use std::path::PathBuf;

use crate::dataflow::{Action, Decl, Produced, Rule};
use crate::eco::{self, EcoFormat};

/// The rule.
pub static RULE: Rule = Rule { name: "parse", about: "one taxonomy file parsed into named lines", file: file!() };

/// Parses the source `name` (resolved to `path`, with BLAKE3 `hash`, `size` bytes).
pub fn declare(name: &str, format: EcoFormat, path: PathBuf, hash: &str, size: u64) -> Decl<'static> {
    let file = name.to_string();
    let run = move |cx: &crate::dataflow::Ctx<'_>| {
        let bytes = std::fs::read(&path).map_err(|e| cx.fail(format!("reading {}: {e}", path.display())))?;
        let parsed = eco::parse(format, &file, &bytes);
        let text = format!("{} rows", parsed.rows.len());
        let warnings = parsed.warnings.len();
        cx.warn(parsed.warnings.iter().cloned());
        Ok(Produced::new(parsed, text).warnings(warnings))
    };
    // The merge waits for the last parse, and scid.eco alone takes as long as the other
    // files together: the largest file starts first.
    Decl::new(format!("parse:{name}"), &RULE, Action::Value(Box::new(run)))
        .file(name, hash)
        .param_at(vec!["sources".into(), name.into(), "kind".into()])
        .priority(1000 + (size >> 10) as i64)
}
