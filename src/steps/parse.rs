//! `parse:<source>`: one taxonomy file (Lichess TSV, SCID eco, pgn-extract eco.pgn)
//! parsed into rows (Phase 1).

use std::path::PathBuf;

use crate::dataflow::{BuildError, Decl, Produced, Rule};
use super::planning::{Planner, Planning, SourceFile, parse_id};
use crate::eco::{self, EcoFormat};

/// The rule.
pub static RULE: Rule = Rule { name: "parse", about: "one taxonomy file parsed into named lines", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per taxonomy source.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.taxonomies().map(|(file, format)| declare(p, file, format)).collect()
}

/// Parses taxonomy `source` as `format`.
fn declare(p: &Planning<'_>, source: &SourceFile, format: EcoFormat) -> Result<Decl<'static>, BuildError> {
    let (file, path): (String, PathBuf) = (source.name.clone(), source.path.clone());
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    let mut d = p.declare(parse_id(&file), &RULE);
    d.file(&file, &source.hash);
    d.key_at(&["sources", &file, "kind"]);
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
    Ok(d.value(run).priority(1000 + (size >> 10) as i64))
}
