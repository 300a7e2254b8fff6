//! What every step module plans its steps from: one [`Planning`] value, the pipeline with
//! its sources resolved (found, fetched, pinned) and its game files listed, made by
//! [`crate::make`] before any step is declared. It also names the steps other steps
//! read (`parse:<source>`, `games:<source>:<file>`), so that no step module needs another.
//!
//! This file decides which steps exist and with which inputs; it computes no step's
//! value, and everything it hands over is part of the steps' keys (files by hash,
//! parameters by path), so it is left out of the rules' code fingerprints
//! ([`crate::dataflow::code`]): editing it reruns no step by itself.

use std::path::PathBuf;

use crate::dataflow::{BuildError, Ctx, Decl, Declaring, Input, Rule};
use crate::eco::EcoFormat;
use crate::engine::{EngineConfig, EvalSource};
use crate::evals::Selection;
use crate::games::filter::GameFilter;
use crate::pipeline::{ExportSpec, Loaded, SourceKind, SourceSpec};
use crate::release::Manifest;

/// The pipeline as the step modules plan from it.
pub struct Planning<'a> {
    /// The loaded pipeline (its folder, cache and `pipeline.toml`).
    pub loaded: &'a Loaded,
    /// The pipeline's parameters as JSON: what [`Declaring::param`] reads and keys.
    pub params: serde_json::Value,
    /// Mirror folders for pinned sources.
    pub mirrors: Vec<PathBuf>,
    /// Never download (or, for a dry run, never ask a server).
    pub offline: bool,
    /// Only reporting what would run (`okb status`, `okb graph`).
    pub dry_run: bool,
    /// Every pinned file source (taxonomies, counts, structure labels, evaluation dumps),
    /// in pipeline order.
    pub files: Vec<SourceFile>,
    /// Every game source's files, in pipeline order.
    pub game_files: Vec<GameFile>,
    /// Every explorer crawl: its source's name and its manifest's BLAKE3.
    pub crawls: Vec<(String, String)>,
    /// Every cloud-eval source, as the client asks it.
    pub clouds: Vec<crate::evals::cloud::CloudSource>,
    /// The engine's settings (its binary found) and the binary's BLAKE3, with `[engine]`.
    pub engine: Option<(EngineConfig, String)>,
    /// Every repertoire's file, resolved.
    pub repertoires: Vec<RepertoireFile>,
    /// What the release manifest says of the sources, game files and parameters.
    pub facts: Manifest,
}

/// One `[exports.<name>]` table, its settings read by its format's step module.
#[derive(Clone, Debug)]
pub struct Export<S> {
    /// The table's name: the step is `export:<name>`.
    pub name: String,
    /// Where it writes, resolved against the pipeline's folder.
    pub target: PathBuf,
    /// The format's settings.
    pub settings: S,
}

/// The settings of a format that has none: any key in its table is an error.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// The settings of export `name` of `format`, read as `S` from its table; an error
/// names the table and the key it is about.
fn read_settings<S: serde::de::DeserializeOwned>(
    name: &str,
    format: &str,
    table: &toml::Table,
) -> Result<S, BuildError> {
    let read =
        |t: toml::Table| toml::Value::Table(t).try_into::<S>().map_err(|e| e.message().to_string());
    let why = match read(table.clone()) {
        Ok(settings) => return Ok(settings),
        Err(why) => why,
    };
    // serde names the key of an unknown field only; a bad value's key is the one that,
    // alone in the table, is refused the same way (every other setting has a default).
    if let Some((key, expected)) = unknown_field(&why) {
        let message = format!("export {name:?}: format {format:?} has no setting `{key}`");
        let takes = expected.unwrap_or("no settings");
        let help =
            format!("format {format:?} takes {takes} (docs/pipeline.md lists every format's)");
        return Err(refused(name, message, Some(key.to_string()), help));
    }
    let alone = |(k, v): &(&String, &toml::Value)| {
        read(toml::Table::from_iter([((*k).clone(), (*v).clone())])).err() == Some(why.clone())
    };
    let key = table.iter().find(alone).map(|(k, _)| k.clone());
    let message = format!("export {name:?} (format {format:?}): {why}");
    Err(refused(name, message, key, "docs/pipeline.md lists every format's settings".into()))
}

/// The key and the expected keys of serde's "unknown field `k`, expected `a` or `b`"
/// (`None` for "there are no fields").
fn unknown_field(why: &str) -> Option<(&str, Option<&str>)> {
    let (key, rest) = why.strip_prefix("unknown field `")?.split_once('`')?;
    let expected = rest.strip_prefix(", expected ").map(|e| e.trim_start_matches("one of "));
    Some((key, expected))
}

/// A refused setting of export `name`, at `key` of its table when known.
fn refused(name: &str, message: String, key: Option<String>, help: String) -> BuildError {
    let mut path = vec!["exports".to_string(), name.to_string()];
    path.extend(key);
    BuildError::Param { step: format!("export:{name}"), path, message, help: Some(help) }
}

/// A pinned file source, resolved: found in the source store, a mirror or downloaded.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The source's name in pipeline.toml.
    pub name: String,
    /// Its kind.
    pub kind: SourceKind,
    /// Where its bytes are.
    pub path: PathBuf,
    /// Their BLAKE3.
    pub hash: String,
}

/// One game file of a game source.
#[derive(Clone, Debug)]
pub struct GameFile {
    /// The source's name.
    pub source: String,
    /// BGN rather than PGN.
    pub bgn: bool,
    /// The source's game filter.
    pub filter: GameFilter,
    /// The file.
    pub path: PathBuf,
    /// The file as shown (relative to the project).
    pub shown: String,
    /// Its BLAKE3.
    pub hash: String,
}

impl GameFile {
    /// The id of the step that counts it.
    pub fn id(&self) -> String {
        format!("games:{}:{}", self.source, self.shown)
    }
}

/// A repertoire's file, resolved like a pinned source.
#[derive(Clone, Debug)]
pub struct RepertoireFile {
    /// The repertoire's name in pipeline.toml.
    pub name: String,
    /// Where its bytes are.
    pub path: PathBuf,
    /// Its path or URL as written.
    pub shown: String,
    /// Their BLAKE3.
    pub hash: String,
}

/// The id of taxonomy source `name`'s step.
pub fn parse_id(name: &str) -> String {
    format!("parse:{name}")
}

/// The id of counts source `name`'s step.
pub fn counts_id(name: &str) -> String {
    format!("counts:{name}")
}

/// The id of crawl source `name`'s step.
pub fn crawl_id(name: &str) -> String {
    format!("crawl:{name}")
}

/// The id of the step that adds game file `file` to the counts state.
pub fn state_id(file: &GameFile) -> String {
    format!("state:{}:{}", file.source, file.shown)
}

/// The id of counts-state source `name`'s step.
pub fn counts_state_id(name: &str) -> String {
    format!("counts-state:{name}")
}

/// The id of evaluation dump `name`'s step.
pub fn evals_id(name: &str) -> String {
    format!("evals:{name}")
}

/// The id of cloud-eval source `name`'s step.
pub fn cloud_eval_id(name: &str) -> String {
    format!("cloud-eval:{name}")
}

/// The id of structure-labels source `name`'s step.
pub fn labels_id(name: &str) -> String {
    format!("structure-labels:{name}")
}

/// The id of repertoire `name`'s reading step.
pub fn repertoire_id(name: &str) -> String {
    format!("repertoire:{name}")
}

/// The id of repertoire `name`'s evaluations step.
pub fn repertoire_evals_id(name: &str) -> String {
    format!("repertoire-evals:{name}")
}

/// The ECO format of a taxonomy source's kind (none for other kinds).
pub fn eco_format(kind: SourceKind) -> Option<EcoFormat> {
    match kind {
        SourceKind::LichessTsv => Some(EcoFormat::LichessTsv),
        SourceKind::ScidEco => Some(EcoFormat::Scid),
        SourceKind::EcoPgn => Some(EcoFormat::PgnExtract),
        _ => None,
    }
}

/// Whether step `id` is among `declared`.
pub fn is_declared(declared: &[Decl<'_>], id: &str) -> bool {
    declared.iter().any(|d| d.id == id)
}

impl Planning<'_> {
    /// Starts declaring step `id` of `rule`.
    pub fn declare(&self, id: impl Into<String>, rule: &'static Rule) -> Declaring<'_> {
        Declaring::new(id, rule, &self.params)
    }

    /// The pinned file sources of `kind`.
    fn files_of_kind(&self, kind: SourceKind) -> impl Iterator<Item = &SourceFile> {
        self.files.iter().filter(move |f| f.kind == kind)
    }

    /// The counts sources (`kind = "counts"`).
    pub fn counts_files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files_of_kind(SourceKind::Counts)
    }

    /// The counts state folders (`kind = "counts-state"`).
    pub fn counts_state_files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files_of_kind(SourceKind::CountsState)
    }

    /// The evaluation dumps (`kind = "lichess-evals"`).
    pub fn eval_files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files_of_kind(SourceKind::LichessEvals)
    }

    /// The structure-labels sources.
    pub fn label_files(&self) -> impl Iterator<Item = &SourceFile> {
        self.files_of_kind(SourceKind::StructureLabels)
    }

    /// Every evaluation source (dumps and cloud-eval servers) as (name, step id, pin;
    /// `unpinned` for a cloud source without `blake3`), in pipeline order.
    pub fn eval_sources(&self) -> Vec<(String, String, String)> {
        let dumps = self.eval_files().map(|f| (f.name.clone(), evals_id(&f.name), f.hash.clone()));
        let clouds = self.clouds.iter().map(|c| {
            (
                c.name.clone(),
                cloud_eval_id(&c.name),
                c.pin.clone().unwrap_or_else(|| "unpinned".into()),
            )
        });
        dumps.chain(clouds).collect()
    }

    /// Whether source `name` is a game source of kind pgn.
    pub fn is_pgn_source(&self, name: &str) -> bool {
        self.loaded.pipeline.sources.get(name).is_some_and(|s| s.kind() == SourceKind::Pgn)
    }

    /// Whether source `name` keeps a counts state (`games::state`).
    pub fn keeps_state(&self, name: &str) -> bool {
        self.loaded.pipeline.sources.get(name).is_some_and(|s| s.keeps_state())
    }

    /// The counting parts the `games` step merges: every counting step but the game files
    /// of sources that keep a counts state.
    pub fn merged_parts(&self) -> Vec<(String, String)> {
        self.counting_parts()
            .into_iter()
            .filter(|(source, id)| !(self.keeps_state(source) && id.starts_with("games:")))
            .collect()
    }

    /// The game files whose counts accumulate in the counts state, in the order they are
    /// listed (sources in pipeline order, files sorted by path): the order they are added
    /// in, so a file that sorts last costs one merge.
    pub fn state_files(&self) -> Vec<GameFile> {
        self.game_files.iter().filter(|g| self.keeps_state(&g.source)).cloned().collect()
    }

    /// The taxonomy sources with their formats, in pipeline order.
    pub fn taxonomies(&self) -> impl Iterator<Item = (&SourceFile, EcoFormat)> {
        self.files.iter().filter_map(|f| eco_format(f.kind).map(|format| (f, format)))
    }

    /// The sources of `kind` with their specs, in pipeline order.
    pub fn sources_of_kind(
        &self,
        kind: SourceKind,
    ) -> impl Iterator<Item = (&String, &SourceSpec)> {
        self.loaded.pipeline.sources.iter().filter(move |(_, s)| s.kind() == kind)
    }

    /// Every step that counts games (files, counts sources, crawls) as (source, step id):
    /// the parts the `games` step merges, none when the tree has no games.
    pub fn counting_parts(&self) -> Vec<(String, String)> {
        let files = self.game_files.iter().map(|g| (g.source.clone(), g.id()));
        let counts =
            self.files_of_kind(SourceKind::Counts).map(|f| (f.name.clone(), counts_id(&f.name)));
        let crawls = self.crawls.iter().map(|(name, _)| (name.clone(), crawl_id(name)));
        files.chain(counts).chain(crawls).collect()
    }

    /// The `[exports.<name>]` tables of `format` (as pipeline.toml writes it: `"csv"`),
    /// each with its settings read as `S`: the format's step module declares them, so
    /// a setting the format does not have (`delimiter` on a polyglot export) or a bad
    /// value is an error naming the table and, when it can, the key.
    pub fn exports<S: serde::de::DeserializeOwned>(
        &self,
        format: &str,
    ) -> Result<Vec<Export<S>>, BuildError> {
        let exports = self.loaded.pipeline.exports.iter().filter(|(_, spec)| spec.format == format);
        let read = |(name, spec): (&String, &ExportSpec)| {
            let settings = read_settings(name, format, &spec.settings)?;
            Ok(Export { name: name.clone(), target: self.loaded.path(&spec.output), settings })
        };
        exports.map(read).collect()
    }

    /// Starts declaring the step of `export`, of `rule`, keyed by the export's table as
    /// pipeline.toml writes it: a change of its settings reruns it, and only it.
    pub fn declare_export<S>(&self, export: &Export<S>, rule: &'static Rule) -> Declaring<'_> {
        let mut d = self.declare(format!("export:{}", export.name), rule);
        d.key_at(&["exports", &export.name]);
        d
    }

    /// The step ids of the structure-labels sources, in pipeline order.
    pub fn labels(&self) -> Vec<String> {
        self.label_files().map(|f| labels_id(&f.name)).collect()
    }

    /// The first counts source's name, if any.
    pub fn counts_source(&self) -> Option<&str> {
        self.files_of_kind(SourceKind::Counts).next().map(|f| f.name.as_str())
    }

    /// The game files of the named sources: (path, shown name, BLAKE3).
    pub fn files_of(&self, sources: &[String]) -> Vec<(PathBuf, String, String)> {
        self.game_files
            .iter()
            .filter(|g| sources.contains(&g.source))
            .map(|g| (g.path.clone(), g.shown.clone(), g.hash.clone()))
            .collect()
    }

    /// Where the project's files live.
    pub fn layout(&self) -> crate::pipeline::layout::Layout {
        self.loaded.layout()
    }

    /// The store's file.
    pub fn store_path(&self) -> PathBuf {
        self.layout().store
    }

    /// The folder beside the store where a make writes its reports and manifest.
    pub fn build_dir(&self) -> PathBuf {
        self.layout().build
    }

    /// Where a make writes its manifest: `manifest.json` beside the store.
    pub fn manifest_path(&self) -> PathBuf {
        self.layout().manifest
    }

    /// The project's cache folder.
    pub fn cache_dir(&self) -> PathBuf {
        self.layout().cache
    }

    /// Where a make keeps the store and the manifest it replaced (for `okb diff`).
    pub fn previous_dir(&self) -> PathBuf {
        self.layout().previous
    }

    /// The store's entries, written by `store:entries` into the cache for the store step.
    pub fn store_entries(&self) -> PathBuf {
        self.layout().store_entries
    }

    /// The tree's edges, written by `store:edges` into the cache for the store step.
    pub fn store_edges(&self) -> PathBuf {
        self.layout().store_edges
    }

    /// The folder of repertoire `name`'s reports, beside the store.
    pub fn repertoire_dir(&self, name: &str) -> PathBuf {
        self.layout().repertoire_dir(name)
    }

    /// The project's engine cache.
    pub fn engine_cache(&self) -> PathBuf {
        self.layout().engine_cache
    }

    /// A planning error of step `step`.
    pub fn fail(step: &str, message: impl std::fmt::Display) -> BuildError {
        BuildError::Step { step: step.to_string(), message: message.to_string() }
    }
}

/// How a step module plans: its steps for a pipeline, given the steps the modules before
/// it in [`super::PLANNERS`] declared (the release manifest lists them; the store reads
/// the engine's evaluations when there are any).
pub type PlanFn = fn(&Planning<'_>, &[Decl<'static>]) -> Result<Vec<Decl<'static>>, BuildError>;

/// A step module in the plan: its rules and how it plans.
pub struct Planner {
    /// The rules it declares steps of.
    pub rules: &'static [&'static Rule],
    /// Its planning function.
    pub plan: PlanFn,
}

/// An evaluation source a step takes evaluations from (the engine's and a repertoire's):
/// its name in pipeline.toml, its step's value, and the label its evaluations carry.
#[derive(Clone, Debug)]
pub struct EvalSourceRef {
    name: String,
    step: Input<Selection>,
    label: String,
}

impl Planning<'_> {
    /// The evaluation sources `config` names, in `[engine] sources` order, read by `d`.
    pub fn eval_source_refs(
        &self,
        d: &mut Declaring<'_>,
        config: &EngineConfig,
    ) -> Vec<EvalSourceRef> {
        let sources = self.eval_sources();
        let named =
            config.sources.iter().filter_map(|name| sources.iter().find(|(n, _, _)| n == name));
        named
            .map(|(name, step, pin)| EvalSourceRef {
                name: name.clone(),
                step: d.input(step.clone()),
                label: EvalSource::label(name, pin),
            })
            .collect()
    }
}

/// The evaluation sources' selections, in `[engine] sources` order.
pub fn load_eval_sources(
    cx: &Ctx<'_>,
    sources: &[EvalSourceRef],
) -> Result<Vec<EvalSource>, BuildError> {
    sources
        .iter()
        .map(|s| {
            Ok(EvalSource {
                name: s.name.clone(),
                label: s.label.clone(),
                selection: cx.get(&s.step)?,
            })
        })
        .collect()
}
