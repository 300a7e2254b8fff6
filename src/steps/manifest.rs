//! `manifest`: `manifest.json` beside the store, written after every other output: what
//! the build was made from and the BLAKE3 and size of every file it made.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::dataflow::{Action, Ctx, Decl, ExportFile, Rule};
use crate::engine::Annotations;
use crate::release::manifest::{Coverage, EngineFacts, Manifest, OutputFile, relative};

/// The rule.
pub static RULE: Rule = Rule { name: "manifest", about: "what the build was made from and made (release manifest)", file: file!() };

/// Everything the manifest says except the outputs' hashes, which it reads from disk
/// once the steps that write them are done.
pub struct Inputs {
    /// The manifest with sources, game files, engine and parameters filled in.
    pub facts: Manifest,
    /// The project folder (paths are written relative to it).
    pub root: PathBuf,
    /// The steps that write files: (step id, target, whether the step's value lists its
    /// files with their hashes — [`Action::Files`] — or it writes one file itself).
    pub outputs: Vec<(String, PathBuf, bool)>,
    /// The store's path, when the store step is part of the build.
    pub store: Option<PathBuf>,
    /// Whether the engine step is part of the build (its value names the engine and
    /// where each evaluation came from).
    pub engine: bool,
}

/// Declares the manifest step at `target`, reading every step in `inputs.outputs`, the
/// store and the sources' `coverage`. Its key covers every parameter and input hash, so
/// it is fresh exactly when the files it describes are.
/// The manifest it replaces is kept in `previous` (for `okb diff`'s export section).
pub fn declare(inputs: Inputs, target: PathBuf, previous: PathBuf) -> Decl<'static> {
    let written = target.clone();
    let ids: Vec<String> = inputs.outputs.iter().map(|(id, _, _)| id.clone()).collect();
    let has_store = inputs.store.is_some();
    let has_engine = inputs.engine;
    let facts = serde_json::to_vec(&inputs.facts).expect("a manifest serializes");
    let run = move |cx: &Ctx<'_>| {
        let mut manifest = inputs.facts.clone();
        // A step that writes one file itself has that file's BLAKE3 as its output hash:
        // the file is not read again (a classified-games export can be gigabytes).
        let single = |id: &str, file: &PathBuf| -> Result<OutputFile, crate::dataflow::BuildError> {
            let bytes = std::fs::metadata(file).map_err(|e| cx.fail(format!("{}: {e}", file.display())))?.len();
            Ok(OutputFile { path: relative(&inputs.root, file), step: id.to_string(), blake3: cx.hash_of(id), bytes })
        };
        for (id, target, listed) in &inputs.outputs {
            if !listed {
                manifest.outputs.push(single(id, target)?);
                continue;
            }
            // A file-writing step's value lists its files with their BLAKE3.
            let files: Arc<Vec<(String, String)>> = cx.load(id)?;
            for (name, blake3) in files.iter() {
                let path = if name.is_empty() { target.clone() } else { target.join(name) };
                let bytes = std::fs::metadata(&path).map_err(|e| cx.fail(format!("{}: {e}", path.display())))?.len();
                let path = relative(&inputs.root, &path);
                manifest.outputs.push(OutputFile { path, step: id.clone(), blake3: blake3.clone(), bytes });
            }
        }
        manifest.outputs.sort_by(|a, b| a.path.cmp(&b.path));
        manifest.coverage = cx.load::<BTreeMap<String, Coverage>>("coverage")?.as_ref().clone();
        if let (true, Some(engine)) = (has_engine, manifest.engine.as_mut()) {
            let annotations: Arc<Annotations> = cx.load("engine")?;
            record_evaluations(engine, &annotations);
        }
        if let Some(store) = &inputs.store {
            manifest.store = Some(single("store", store)?);
        }
        let kept = previous.join("manifest.json");
        crate::diff::keep_previous(&written, &kept).map_err(|e| cx.fail(format!("keeping the previous manifest as {}: {e}", kept.display())))?;
        let summary = format!("{} output files", manifest.outputs.len() + usize::from(manifest.store.is_some()));
        Ok((vec![ExportFile { name: String::new(), bytes: manifest.to_bytes() }], summary))
    };
    let mut decl = Decl::new("manifest", &RULE, Action::Files(target, Box::new(run)))
        .file("facts", blake3::hash(&facts).to_hex().to_string())
        .reads("coverage")
        .priority(0);
    for id in ids {
        decl = decl.reads(id);
    }
    if has_store {
        decl = decl.reads("store");
    }
    if has_engine {
        decl = decl.reads("engine");
    }
    decl
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
