//! `manifest`: `manifest.json` beside the store, written after every other output: what
//! the build was made from and the BLAKE3 and size of every file it made.

use super::ids::{COVERAGE, ENGINE, STORE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::dataflow::{BuildError, Ctx, Decl, ExportFile, Input, Rule};
use super::planning::{Planner, Planning, is_declared};
use crate::engine::Annotations;
use crate::release::manifest::{Coverage, EngineFacts, OutputFile, relative};

/// The rule.
pub static RULE: Rule = Rule { name: "manifest", about: "what the build was made from and made (release manifest)", file: file!() };

/// How the rule's steps are planned (its line in [`super::PLANNERS`]).
pub static PLANNER: Planner = Planner { rules: &[&RULE], plan };

/// The steps that write files the build delivers: (step, target, whether the step's
/// value lists its files with their hashes — a files step — or it writes one file
/// itself). Files in the cache (the store's entries) are no output, and the store is
/// described apart.
fn delivered(p: &Planning<'_>, declared: &[Decl<'static>]) -> Vec<(String, PathBuf, bool)> {
    let cache = p.cache_dir();
    let delivers = |d: &&Decl<'_>| d.id != STORE.name() && d.action.writes().1.is_some_and(|t| !t.starts_with(&cache));
    let outputs = declared.iter().filter(delivers).filter_map(|d| match d.action.writes() {
        ("files", Some(target)) => Some((d.id.clone(), target.clone(), true)),
        ("file", Some(target)) => Some((d.id.clone(), target.clone(), false)),
        _ => None,
    });
    outputs.collect()
}

/// One delivered output as the manifest step reads it.
enum Output {
    /// A files step: its value lists the files and their hashes.
    Listed(Input<Vec<(String, String)>>, PathBuf),
    /// A step that writes one file itself: its output hash is the file's BLAKE3.
    Single(Input<()>, PathBuf),
}

/// The manifest beside the store, describing the outputs of every step `declared` and the
/// facts the planning gathered (sources, game files, engine, parameters). Its key covers
/// every parameter and input hash, so it is fresh exactly when the files it describes
/// are. The manifest it replaces is kept in the cache's `previous` (for `okb diff`).
pub fn plan(p: &Planning<'_>, declared: &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError> {
    let mut d = p.declare("manifest", &RULE);
    let facts = p.facts.clone();
    d.file("facts", blake3::hash(&serde_json::to_vec(&facts).expect("a manifest serializes")).to_hex().to_string());
    let coverage: Input<BTreeMap<String, Coverage>> = d.input(COVERAGE);
    let outputs: Vec<Output> = delivered(p, declared)
        .into_iter()
        .map(|(id, target, listed)| if listed { Output::Listed(d.input(id), target) } else { Output::Single(d.after(id), target) })
        .collect();
    let store = is_declared(declared, STORE.name()).then(|| (d.after(STORE), p.store_path()));
    let engine: Option<Input<Annotations>> = facts.engine.is_some().then(|| d.input(ENGINE));
    let (root, written, previous) = (p.loaded.root.clone(), p.manifest_path(), p.previous_dir());
    let run = move |cx: &Ctx<'_>| {
        let mut manifest = facts.clone();
        for output in &outputs {
            manifest.outputs.extend(files_of(cx, &root, output)?);
        }
        manifest.outputs.sort_by(|a, b| a.path.cmp(&b.path));
        manifest.coverage = cx.get(&coverage)?.as_ref().clone();
        if let (Some(engine), Some(facts)) = (&engine, manifest.engine.as_mut()) {
            record_evaluations(facts, &*cx.get(engine)?);
        }
        if let Some((step, file)) = &store {
            manifest.store = Some(single(cx, &root, step, file)?);
        }
        let kept = previous.join("manifest.json");
        crate::files::write::keep_previous(&written, &kept).map_err(|e| cx.fail(format!("keeping the previous manifest as {}: {e}", kept.display())))?;
        let summary = format!("{} output files", manifest.outputs.len() + usize::from(manifest.store.is_some()));
        Ok((vec![ExportFile { name: String::new(), bytes: manifest.to_bytes() }], summary))
    };
    Ok(vec![d.files(p.manifest_path(), run).priority(0)])
}

/// The files of one output, with their sizes read from disk.
fn files_of(cx: &Ctx<'_>, root: &Path, output: &Output) -> Result<Vec<OutputFile>, BuildError> {
    match output {
        Output::Single(step, target) => Ok(vec![single(cx, root, step, target)?]),
        Output::Listed(input, target) => cx
            .get(input)?
            .iter()
            .map(|(name, blake3)| {
                let path = if name.is_empty() { target.clone() } else { target.join(name) };
                let bytes = std::fs::metadata(&path).map_err(|e| cx.fail(format!("{}: {e}", path.display())))?.len();
                Ok(OutputFile { path: relative(root, &path), step: input.id().to_string(), blake3: blake3.clone(), bytes })
            })
            .collect(),
    }
}

/// A file one step wrote itself: its BLAKE3 is the step's output hash, so the file is not
/// read again (a classified-games export can be gigabytes).
fn single(cx: &Ctx<'_>, root: &Path, step: &Input<()>, file: &Path) -> Result<OutputFile, BuildError> {
    let bytes = std::fs::metadata(file).map_err(|e| cx.fail(format!("{}: {e}", file.display())))?.len();
    Ok(OutputFile { path: relative(root, file), step: step.id().to_string(), blake3: cx.hash_of(step), bytes })
}

/// The engine's name (when the build identified it) and how many positions each origin
/// gave, from the engine step's value.
fn record_evaluations(engine: &mut EngineFacts, annotations: &Annotations) {
    engine.name = Some(annotations.engine_name.clone()).filter(|n| !n.is_empty());
    for epd in annotations.results.keys() {
        if let Some(origin) = annotations.origin(epd) {
            *engine.evaluations.entry(origin.to_string()).or_default() += 1;
        }
    }
}
