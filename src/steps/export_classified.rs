//! `export:<name>` of formats `classified-pgn` and `classified-bgn`: the games of some
//! sources with their openings named from the tree.

use std::path::PathBuf;

use crate::classify::Classifier;
use crate::dataflow::{Action, Ctx, Decl, Rule};
use crate::tree::Tree;

/// The rule of `classified-pgn`.
pub static PGN_RULE: Rule = Rule { name: "export:classified-pgn", about: "games with ECO/Opening tags from the tree", file: file!() };
/// The rule of `classified-bgn`.
pub static BGN_RULE: Rule = Rule { name: "export:classified-bgn", about: "games as BGN, openings from the tree", file: file!() };

/// Classifies the games of `files` (path, shown name, BLAKE3) into `target`, as BGN when `bgn`.
pub fn declare(name: &str, target: PathBuf, files: Vec<(PathBuf, String, String)>, bgn: bool) -> Decl<'static> {
    let paths: Vec<PathBuf> = files.iter().map(|f| f.0.clone()).collect();
    let out = target.clone();
    let run = move |cx: &Ctx<'_>| {
        let classifier = Classifier::from_tree(&*cx.load::<Tree>("tree")?);
        if bgn { to_bgn(cx, &classifier, &paths, &out) } else { to_pgn(cx, &classifier, &paths, &out) }
    };
    let rule = if bgn { &BGN_RULE } else { &PGN_RULE };
    let mut decl = Decl::new(format!("export:{name}"), rule, Action::File(target, Box::new(run)))
        .reads("tree")
        .param_at(vec!["exports".into(), name.into()])
        .priority(200);
    for (_, shown, hash) in files {
        decl = decl.file(shown, hash);
    }
    decl
}

fn to_pgn(cx: &Ctx<'_>, classifier: &Classifier, paths: &[PathBuf], target: &std::path::Path) -> Result<String, crate::dataflow::BuildError> {
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(|e| cx.fail(format!("{}: {e}", dir.display())))?;
    }
    let tmp = crate::files::temp::for_file(target);
    let file = std::fs::File::create(&tmp).map_err(|e| cx.fail(format!("{}: {e}", tmp.display())))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let report = crate::classify::files::classify_files(classifier, paths, &mut out).map_err(|e| cx.fail(e))?;
    drop(out);
    std::fs::rename(&tmp, target).map_err(|e| cx.fail(format!("{}: {e}", target.display())))?;
    Ok(format!(
        "{} games, {} classified, {} without a known position, {} unreadable",
        report.games,
        report.classified,
        report.unclassified,
        report.bad.skipped()
    ))
}

fn to_bgn(cx: &Ctx<'_>, classifier: &Classifier, paths: &[PathBuf], target: &std::path::Path) -> Result<String, crate::dataflow::BuildError> {
    let lookup = crate::convert::FromKnowledgeBase::new(classifier);
    let sink = crate::convert::SplitWriter::single(target);
    let converted = crate::convert::pgn_to_bgn(paths, &lookup, sink)
        .map_err(|e| cx.fail(e.chain().map(ToString::to_string).collect::<Vec<_>>().join(": ")))?;
    let (named, from_tags) = lookup.counts();
    Ok(format!("{} games, {named} classified, {from_tags} named by their tags, {} unreadable", converted.games, converted.bad.skipped()))
}
