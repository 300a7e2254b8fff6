//! `repertoire-export:<name>`: the repertoire as files in `build/repertoire-<name>/`: a
//! PGN ordered by popularity with `[%eval]` and opening names, Anki cards (CSV) and a
//! Polyglot book of the prepared moves.


use super::ids::{ENGINE, TREE};
use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning, repertoire_id};
use crate::engine::Annotations;
use crate::repertoire::{Repertoire, export};
use crate::tree::Tree;

/// The rule.
pub static RULE: Rule = Rule { name: "repertoire-export", about: "a repertoire as PGN, Anki cards and a Polyglot book", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// A step per repertoire: its PGN, cards and book in `build/repertoire-<name>/`.
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    p.repertoires.iter().map(|file| declare(p, declared, &file.name)).collect()
}

/// Exports repertoire `name` with the tree's counts (and the evaluations, when declared).
fn declare(p: &Planning<'_>, declared: &[Decl<'static>], name: &str) -> Result<Decl<'static>, BuildError> {
    let mut d = p.declare(format!("repertoire-export:{name}"), &RULE);
    let rep: Input<Repertoire> = d.input(repertoire_id(name));
    let tree: Input<Tree> = d.input(TREE);
    let engine: Option<Input<Annotations>> = d.input_if(declared, ENGINE);
    let run = move |cx: &Ctx<'_>| {
        let (rep, tree) = (cx.get(&rep)?, cx.get(&tree)?);
        let annotations = engine.as_ref().map(|e| cx.get(e)).transpose()?;
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
    Ok(d.files(p.repertoire_dir(name), run).priority(200))
}
