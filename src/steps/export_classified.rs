//! `export:<name>` of formats `classified-pgn` and `classified-bgn`: the games of some
//! sources with their openings named from the tree.

use super::ids::{TREE};
use std::path::PathBuf;

use crate::classify::Classifier;
use crate::dataflow::{BuildError, Ctx, Decl, Input, Rule};
use super::planning::{Export, Planner, Planning};
use crate::tree::Tree;

/// The rule of `classified-pgn`.
pub static PGN_RULE: Rule = Rule { name: "export:classified-pgn", about: "games with ECO/Opening tags from the tree", file: file!() };
/// The rule of `classified-bgn`.
pub static BGN_RULE: Rule = Rule { name: "export:classified-bgn", about: "games as BGN, openings from the tree", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&PGN_RULE, &BGN_RULE], plan };

/// A step per `[exports.<name>]` of format `classified-pgn` or `classified-bgn`.
pub fn plan(p: &Planning<'_>, _: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let pgn = p.exports::<Settings>("classified-pgn")?.into_iter().map(|e| declare(p, e, false));
    let bgn = p.exports::<Settings>("classified-bgn")?.into_iter().map(|e| declare(p, e, true));
    pgn.chain(bgn).collect()
}

/// The settings of a `classified-pgn` or `classified-bgn` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    /// Game sources whose games are written, each of kind pgn.
    #[serde(default)]
    sources: Vec<String>,
}

/// Classifies the games of the table's `sources` into its target, as BGN when `bgn`.
fn declare(p: &Planning<'_>, export: Export<Settings>, bgn: bool) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare_export(&export, if bgn { &BGN_RULE } else { &PGN_RULE });
    let tree: Input<Tree> = d.input(TREE);
    let Export { name, target, settings: Settings { sources } } = export;
    check_sources(p, &name, &sources)?;
    let files = p.files_of(&sources);
    for (_, shown, hash) in &files {
        d.file(shown, hash);
    }
    let paths: Vec<PathBuf> = files.into_iter().map(|f| f.0).collect();
    let out = target.clone();
    let run = move |cx: &Ctx<'_>| {
        let classifier = Classifier::from_tree(&*cx.get(&tree)?);
        if bgn { to_bgn(cx, &classifier, &paths, &out) } else { to_pgn(cx, &classifier, &paths, &out) }
    };
    Ok(d.writes_file(target, run).priority(200))
}

/// An error unless `sources` names game sources of kind pgn, at least one.
fn check_sources(p: &Planning<'_>, name: &str, sources: &[String]) -> Result<(), BuildError> {
    let bad = match sources.iter().find(|s| !p.is_pgn_source(s)) {
        Some(bad) => bad.as_str(),
        None if sources.is_empty() => "",
        None => return Ok(()),
    };
    Err(BuildError::Param {
        step: format!("export:{name}"),
        path: vec!["exports".into(), name.into(), "sources".into()],
        message: format!("export {name:?}: sources must name game sources of kind pgn (got {bad:?})"),
        help: None,
    })
}

fn to_pgn(cx: &Ctx<'_>, classifier: &Classifier, paths: &[PathBuf], target: &std::path::Path) -> Result<String, BuildError> {
    let failed = |e: std::io::Error| cx.fail(format!("{}: {e}", target.display()));
    let mut out = crate::files::write::AtomicFile::create(target).map_err(failed)?;
    let report = crate::classify::files::classify_files(classifier, paths, &mut out).map_err(|e| cx.fail(e))?;
    out.commit().map_err(failed)?;
    Ok(format!(
        "{} games, {} classified, {} without a known position, {} unreadable",
        report.games,
        report.classified,
        report.unclassified,
        report.bad.skipped()
    ))
}

fn to_bgn(cx: &Ctx<'_>, classifier: &Classifier, paths: &[PathBuf], target: &std::path::Path) -> Result<String, BuildError> {
    let lookup = crate::convert::FromKnowledgeBase::new(classifier);
    let sink = crate::convert::SplitWriter::single(target);
    let converted = crate::convert::pgn_to_bgn(paths, &lookup, sink)
        .map_err(|e| cx.fail(e.chain().map(ToString::to_string).collect::<Vec<_>>().join(": ")))?;
    let (named, from_tags) = lookup.counts();
    Ok(format!("{} games, {named} classified, {from_tags} named by their tags, {} unreadable", converted.games, converted.bad.skipped()))
}
