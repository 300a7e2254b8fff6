//! `repertoire-export:<name>`: the repertoire as files in `build/repertoire-<name>/`: a
//! PGN ordered by popularity with `[%eval]` and opening names, Anki cards (CSV) and a
//! Polyglot book of the prepared moves.

use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::engine::Annotations;
use crate::repertoire::{Repertoire, export};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-export", about: "a repertoire as PGN, Anki cards and a Polyglot book", file: file!() };

/// Writes the exports of repertoire `name` into `dir`.
pub fn declare(name: &str, dir: PathBuf, with_engine: bool) -> Decl<'static> {
    let source = format!("repertoire:{name}");
    let reads = source.clone();
    let run = move |cx: &Ctx<'_>| {
        let rep: Arc<Repertoire> = cx.load(&source)?;
        let tree: Arc<Tree> = cx.load("tree")?;
        let annotations: Option<Arc<Annotations>> = if with_engine { Some(cx.load("engine")?) } else { None };
        let context = export::Context { tree: &tree, annotations: annotations.as_deref() };
        let book = export::book(&rep, &context);
        let entries = book.len() / 16;
        let files = vec![
            ExportFile { name: "repertoire.pgn".into(), bytes: export::pgn(&rep, &context) },
            ExportFile { name: "cards.csv".into(), bytes: export::anki_csv(&rep, &context) },
            ExportFile { name: "book.bin".into(), bytes: book },
        ];
        Ok((files, format!("PGN, {} cards, {entries} book entries", rep.nodes.iter().filter(|n| rep.mine(n) && !n.moves.is_empty()).count())))
    };
    let decl = Decl::new(format!("repertoire-export:{name}"), &RULE, Action::Files(dir, Box::new(run))).reads(reads).reads("tree").priority(200);
    if with_engine { decl.reads("engine") } else { decl }
}
