//! `pipeline.toml`: the declarative description of a knowledge base.
//!
//! Errors point at the offending line with a miette diagnostic. A `[profile.<name>]` table
//! is merged over the document (deeply, table by table) when `--profile <name>` is given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::{Deserialize, Serialize};

pub mod layout;
mod source;

pub use source::{
    CloudEvalSource, ExplorerSource, FileKind, FileSource, GameFiles, GameFormat, GameSource,
    LichessDbSource, SourceKind, SourceSpec,
};

/// `[exports.<name>]`: what every export has, its format and its output; the rest of
/// the table is the format's settings, which only the format's step module knows and
/// reads (`Planning::exports` in `steps::planning`), so that a setting is declared once
/// and a setting the format does not have is an error naming it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportSpec {
    /// Output format: the name of an `export:<format>` rule (`okb graph --rules` lists
    /// them): `eco-json`, `csv`, `polyglot`, `classified-pgn`, `classified-bgn`,
    /// `openingiq`, `pgn`, `packed`, `neo4j`, `lichess-evals`. Each export's step module
    /// plans the tables of its format; a format no module plans is an error when the
    /// make is planned, pointing at the table.
    pub format: String,
    /// Output path (a directory for multi-file formats), relative to pipeline.toml.
    pub output: String,
    /// The format's settings, as the table writes them (`delimiter = ";"`).
    #[serde(flatten)]
    pub settings: toml::Table,
}

/// `[games]`: Phase 2 parameters: whether each distinct game counts once, and budgets that
/// do not change results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GamesParams {
    /// Count each distinct game of the game files once (`games::dedup` says what
    /// makes two games the same); `false` counts every copy.
    pub deduplicate: bool,
    /// Memory for in-memory counting before sorted runs spill to disk, in MiB.
    pub memory_budget_mb: usize,
    /// Shards of a counts state (`state = true` sources): a merge holds about two shards
    /// in memory per core, so a state of S bytes wants S / shards well under the budget.
    pub state_shards: usize,
}

impl Default for GamesParams {
    fn default() -> Self {
        GamesParams { deduplicate: true, memory_budget_mb: 2048, state_shards: 256 }
    }
}

/// `[store]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSpec {
    /// The SQLite database file, relative to pipeline.toml.
    pub path: String,
    /// A PostgreSQL server to copy the knowledge base into (`postgres://user@host:port/db`,
    /// no password: see `password_env`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The PostgreSQL schema that holds the tables.
    pub schema: String,
    /// The environment variable with the PostgreSQL password (default: `PGPASSWORD`,
    /// then `~/.pgpass`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// How many builds' changes `node_changelog` keeps (0: no changelog). Why a bound:
    /// a rebuild changes most nodes' counts (a Lichess month changes them all), so an
    /// unbounded log grows with every build, and so does every store step that copies it.
    pub changelog_builds: u32,
    /// Above this many nodes, the store also holds every node's `GET /node/fen` answer,
    /// one row per position (`node_answers`), so that `okb serve` answers a store larger
    /// than memory with one indexed read. Default: the size above which the server no
    /// longer holds the graph in memory (`okb serve --in-memory-nodes`'s default).
    pub answers_above: u64,
}

impl Default for StoreSpec {
    fn default() -> Self {
        StoreSpec {
            path: "build/okb.sqlite".into(),
            url: None,
            schema: "okb".into(),
            password_env: None,
            changelog_builds: 10,
            answers_above: crate::store::answers::LARGE_STORE_NODES,
        }
    }
}

impl StoreSpec {
    /// The PostgreSQL target, when `url` is set.
    pub fn postgres(
        &self,
    ) -> Option<Result<crate::store::postgres::PgTarget, crate::store::postgres::PgError>> {
        self.url.as_deref().map(|url| {
            crate::store::postgres::PgTarget::new(url, &self.schema, self.password_env.as_deref())
        })
    }
}

/// `[eco]`: Phase 1 parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcoParams {
    /// Fill the gaps between named lines with interpolated entries.
    pub interpolate: bool,
}

impl Default for EcoParams {
    fn default() -> Self {
        EcoParams { interpolate: true }
    }
}

/// The whole pipeline.toml.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// Input sources by name.
    #[serde(default, deserialize_with = "source::deserialize_sources")]
    pub sources: BTreeMap<String, SourceSpec>,
    /// Phase 1 parameters.
    #[serde(default)]
    pub eco: EcoParams,
    /// Tree assembly parameters.
    #[serde(default)]
    pub tree: crate::tree::TreeParams,
    /// Phase 2 tuning.
    #[serde(default)]
    pub games: GamesParams,
    /// Phase 5: the structure review.
    #[serde(default)]
    pub structures: crate::structure::review::StructureParams,
    /// Phase 4: engine annotation (absent: no annotation).
    pub engine: Option<crate::engine::EngineConfig>,
    /// Phase 3: validation against games' Opening tags (absent: no validation).
    pub validate: Option<crate::validate::ValidateParams>,
    /// The explorer index for `okb serve`'s `/masters` and `/lichess` filters and game
    /// references (absent: not built).
    pub explorer: Option<crate::explorer_index::ExplorerParams>,
    /// Where the store lives.
    #[serde(default)]
    pub store: StoreSpec,
    /// Exports by name.
    #[serde(default)]
    pub exports: BTreeMap<String, ExportSpec>,
    /// Repertoires by name: reports of each against the knowledge base.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub repertoires: BTreeMap<String, crate::repertoire::RepertoireSpec>,
    /// What `okb make --strict` lets pass.
    #[serde(default)]
    pub strict: StrictSpec,
    /// Answers that are part of the contract, checked by `okb check`.
    #[serde(default)]
    pub check: CheckSpec,
    /// Named overrides, merged over the document by `--profile`.
    #[serde(default)]
    pub profile: BTreeMap<String, toml::Table>,
}

/// `[strict]`: warnings reviewed and accepted, which `okb make --strict` does not fail on.
///
/// ```toml
/// [strict]
/// allow = [
///     "duplicate:pgn-extract:5581",   # one warning: kind:file:line
///     "engine-failure",               # a whole kind
///     "illegal-move:games/old.pgn",   # a kind in one file
/// ]
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrictSpec {
    /// Warnings allowed, by `kind`, `kind:file` or `kind:file:line`.
    #[serde(default)]
    pub allow: Vec<String>,
}

/// `[check]`: positions whose answers are part of the contract. `okb check` builds and
/// compares each with its snapshot file (committed beside pipeline.toml).
///
/// ```toml
/// [check]
/// lines = ["1. e4 c5 2. Nf3 d6 3. d4"]          # SAN lines
/// fens = ["rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"]
/// openings = ["Sicilian Defense: Najdorf Variation"]   # by name
/// snapshots = "checks"                         # the folder of snapshot files
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// Lines of SAN moves from the start position.
    #[serde(default)]
    pub lines: Vec<String>,
    /// Positions as FEN or EPD.
    #[serde(default)]
    pub fens: Vec<String>,
    /// Opening names, matched exactly (case-insensitive) against names and aliases.
    #[serde(default)]
    pub openings: Vec<String>,
    /// The folder of snapshot files, relative to pipeline.toml.
    #[serde(default = "default_snapshots")]
    pub snapshots: String,
}

impl Default for CheckSpec {
    fn default() -> Self {
        CheckSpec {
            lines: Vec::new(),
            fens: Vec::new(),
            openings: Vec::new(),
            snapshots: default_snapshots(),
        }
    }
}

fn default_snapshots() -> String {
    "checks".into()
}

/// A problem in pipeline.toml, shown with the offending line.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(code(okb::pipeline))]
pub struct PipelineError {
    /// What is wrong.
    pub message: String,
    #[source_code]
    src: NamedSource<String>,
    #[label("here")]
    span: Option<SourceSpan>,
    #[help]
    help: Option<String>,
}

/// A loaded pipeline and where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The pipeline, with the profile applied.
    pub pipeline: Pipeline,
    /// Directory that relative paths are resolved against.
    pub root: PathBuf,
    /// The file it was read from.
    pub file: PathBuf,
    /// Its text, for diagnostics.
    pub text: String,
    /// Things to tell the user about how the file was read (profile tables left out).
    pub notes: Vec<String>,
    /// The build cache folder: `cache/` beside the file (`okb verify --fresh` builds with
    /// an empty one elsewhere).
    pub cache: PathBuf,
}

impl Loaded {
    /// Where the project's files live.
    pub fn layout(&self) -> layout::Layout {
        layout::Layout::of(self)
    }

    /// Resolves `relative` against the pipeline's directory.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// A diagnostic pointing at the `[sources.<name>]` header or the given key inside it.
    pub fn error_at(&self, needle: &str, message: String, help: Option<String>) -> PipelineError {
        let span = self.text.find(needle).map(|start| SourceSpan::from((start, needle.len())));
        PipelineError {
            message,
            src: NamedSource::new(self.file.display().to_string(), self.text.clone()),
            span,
            help,
        }
    }

    /// A diagnostic pointing at `key` of table `[<table>]`, or at the table's header when
    /// the key is not written under it (a profile sets it, or it is missing).
    pub fn error_at_key(
        &self,
        table: &str,
        key: &str,
        message: String,
        help: Option<String>,
    ) -> PipelineError {
        let header = format!("[{table}]");
        let mut error = self.error_at(&header, message, help);
        if let Some(at) = key_offset(&self.text, &header, key) {
            error.span = Some(SourceSpan::from((at, key.len())));
        }
        error
    }
}

/// Where `key = …` is written in the table under `header`, up to the next header.
fn key_offset(text: &str, header: &str, key: &str) -> Option<usize> {
    let start = text.find(header)? + header.len();
    let body = &text[start..];
    let body = &body[..body.find("\n[").unwrap_or(body.len())];
    let mut offset = start;
    for line in body.split_inclusive('\n') {
        let written = line.trim_start();
        let rest = written.strip_prefix(key).map(str::trim_start);
        if rest.is_some_and(|r| r.starts_with('=')) {
            return Some(offset + (line.len() - written.len()));
        }
        offset += line.len();
    }
    None
}

/// Reads pipeline.toml at `file` and applies `profile`.
pub fn load(file: &Path, profile: Option<&str>) -> Result<Loaded, Box<PipelineError>> {
    let shown = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| {
        Box::new(PipelineError {
            message: format!("cannot read {shown}: {e}"),
            src: NamedSource::new(shown.clone(), String::new()),
            span: None,
            help: Some("run okb in a folder with a pipeline.toml, or pass --pipeline FILE".into()),
        })
    })?;
    parse(text, file, profile)
}

/// Reads pipeline text as if it came from `file` (relative paths resolve against its
/// folder; diagnostics name it) and applies `profile`.
pub fn parse(
    text: String,
    file: &Path,
    profile: Option<&str>,
) -> Result<Loaded, Box<PipelineError>> {
    let shown = file.display().to_string();
    let diagnostic = |e: toml::de::Error, text: &str| {
        Box::new(PipelineError {
            message: e.message().to_string(),
            src: NamedSource::new(shown.clone(), text.to_string()),
            span: e.span().map(SourceSpan::from),
            help: None,
        })
    };
    let mut pipeline: Pipeline = toml::from_str(&text).map_err(|e| diagnostic(e, &text))?;
    let root = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let root = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root };
    let cache = root.join("cache");
    let mut loaded = Loaded {
        pipeline: pipeline.clone(),
        root,
        file: file.to_path_buf(),
        text: text.clone(),
        notes: Vec::new(),
        cache,
    };
    if let Some(name) = profile {
        let Some(overrides) = pipeline.profile.get(name).cloned() else {
            let known: Vec<&str> = pipeline.profile.keys().map(String::as_str).collect();
            return Err(Box::new(loaded.error_at(
                "[profile",
                format!("no profile named {name:?}"),
                Some(format!(
                    "profiles in this file: {}",
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                )),
            )));
        };
        let mut document: toml::Table = toml::from_str(&text).map_err(|e| diagnostic(e, &text))?;
        for table in deep_merge(&mut document, overrides, "") {
            loaded
                .notes
                .push(format!("profile {name:?} leaves [{table}] out: the file has no such table"));
        }
        pipeline = toml::Value::Table(document).try_into().map_err(|e: toml::de::Error| {
            Box::new(loaded.error_at(
                &format!("[profile.{name}"),
                format!("profile {name:?} makes the pipeline invalid: {}", e.message()),
                None,
            ))
        })?;
    }
    loaded.pipeline = pipeline;
    validate(&loaded)?;
    Ok(loaded)
}

/// Merges `overrides` over `base`, table by table. A profile only changes tables the
/// file has: a table missing from `base` (the user removed `[engine]`) is not brought
/// back; its path is returned so that the caller can say so.
fn deep_merge(base: &mut toml::Table, overrides: toml::Table, path: &str) -> Vec<String> {
    let mut skipped = Vec::new();
    for (key, value) in overrides {
        let here = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => {
                skipped.extend(deep_merge(b, o, &here))
            }
            (None, toml::Value::Table(_)) => skipped.push(here),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
    skipped
}

/// The game source and pattern that match an export's `output`, or a file the export
/// writes into it when it is a folder: such an export would be read back as games.
fn input_reading<'a>(loaded: &'a Loaded, output: &str) -> Option<(&'a str, String)> {
    let tidy = |p: PathBuf| p.components().collect::<PathBuf>();
    let out = tidy(loaded.path(output));
    let probes: Vec<PathBuf> = std::iter::once(out.clone())
        .chain(["pgn", "bgn", "zst", "json", "csv"].iter().map(|ext| out.join(format!("x.{ext}"))))
        .collect();
    let sources = loaded.pipeline.sources.iter().filter(|(_, s)| s.kind().is_games());
    sources.flat_map(|(name, s)| s.game_paths().into_iter().map(move |p| (name.as_str(), p))).find(
        |(_, pattern)| {
            let full = tidy(loaded.path(pattern));
            // As glob() walks folders, `*` stays within one of them.
            let options =
                glob::MatchOptions { require_literal_separator: true, ..Default::default() };
            glob::Pattern::new(&full.to_string_lossy())
                .is_ok_and(|g| probes.iter().any(|f| g.matches_path_with(f, options)))
        },
    )
}

/// The values of source `name` that its type cannot check: the pin's shape, the
/// settings of a crawl, the months of a Lichess database, game filters, and the engine a
/// cloud-eval source serves.
fn validate_source(
    loaded: &Loaded,
    name: &str,
    spec: &SourceSpec,
) -> Result<(), Box<PipelineError>> {
    let header = format!("[sources.{name}]");
    if let Some(pin) = spec.blake3()
        && (pin.len() != 64
            || !pin.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
    {
        return Err(Box::new(loaded.error_at(
            pin,
            format!("source {name:?}: blake3 must be 64 lowercase hex digits"),
            Some("run `okb pin` to compute it".into()),
        )));
    }
    let why = match spec {
        SourceSpec::CloudEval(_) if loaded.pipeline.engine.is_none() => {
            Err("a cloud-eval source serves [engine], and there is no [engine] table".to_string())
        }
        SourceSpec::Explorer(crawl) => crawl.crawl(name, &loaded.pipeline.tree).map(drop),
        SourceSpec::LichessDb(db) => db.months(name).and_then(|_| spec.game_filter()).map(drop),
        SourceSpec::Games(_) => {
            if let Err(message) = spec.game_filter() {
                let at = format!("[sources.{name}.filter]");
                let at = if loaded.text.contains(&at) { at } else { header };
                return Err(Box::new(loaded.error_at(
                    &at,
                    format!("source {name:?}: {message}"),
                    None,
                )));
            }
            Ok(())
        }
        SourceSpec::CloudEval(_) | SourceSpec::File(_) => Ok(()),
    };
    why.map_err(|why| Box::new(loaded.error_at(&header, format!("source {name:?}: {why}"), None)))
}

fn validate(loaded: &Loaded) -> Result<(), Box<PipelineError>> {
    for (name, spec) in &loaded.pipeline.sources {
        validate_source(loaded, name, spec)?;
    }
    validate_repertoires(loaded)?;
    if let Some(Err(e)) = loaded.pipeline.store.postgres() {
        return Err(Box::new(loaded.error_at("[store]", e.to_string(), None)));
    }
    if let Some(engine) = &loaded.pipeline.engine {
        if let Err(e) = engine.validate() {
            return Err(Box::new(loaded.error_at("[engine]", e.to_string(), None)));
        }
        let evals_source =
            |name: &str| loaded.pipeline.sources.get(name).is_some_and(|s| s.kind().is_evals());
        if let Some(bad) = engine.sources.iter().find(|s| !evals_source(s)) {
            return Err(Box::new(loaded.error_at(
                "[engine]",
                format!("[engine] sources: {bad:?} is not an evaluation source"),
                Some("list names of [sources.NAME] tables with kind = \"lichess-evals\" or \"lichess-cloud-eval\"".into()),
            )));
        }
    }
    for (name, spec) in &loaded.pipeline.exports {
        if spec.format == "lichess-evals" && loaded.pipeline.engine.is_none() {
            return Err(Box::new(loaded.error_at(
                &format!("[exports.{name}]"),
                format!("export {name:?}: format \"lichess-evals\" exports the engine's evaluations, and there is no [engine] table"),
                None,
            )));
        }
    }
    let game_source =
        |name: &str| loaded.pipeline.sources.get(name).is_some_and(|s| s.kind() == SourceKind::Pgn);
    if let Some(validate) = &loaded.pipeline.validate
        && let Some(bad) = validate.sources.iter().find(|s| !game_source(s))
    {
        return Err(Box::new(loaded.error_at(
            "[validate]",
            format!("[validate] sources: {bad:?} is not a game source of kind pgn"),
            Some("list names of [sources.NAME] tables with kind = \"pgn\"".into()),
        )));
    }
    for (name, spec) in &loaded.pipeline.exports {
        if let Some((source, pattern)) = input_reading(loaded, &spec.output) {
            return Err(Box::new(loaded.error_at(
                &format!("[exports.{name}]"),
                format!("export {name:?}: output {:?} is matched by {pattern:?} of game source {source:?}, so the next make would read it back as games", spec.output),
                Some("write the export outside the game sources' paths (e.g. under out/)".into()),
            )));
        }
    }
    Ok(())
}

/// `[repertoires.*]`: a file to read, a well-formed pin, game sources with players.
fn validate_repertoires(loaded: &Loaded) -> Result<(), Box<PipelineError>> {
    for (name, spec) in &loaded.pipeline.repertoires {
        let header = format!("[repertoires.{name}]");
        let wrong = if spec.path.is_none() && spec.url.is_none() {
            Some("needs `path` or `url`".to_string())
        } else if spec.blake3.as_ref().is_some_and(|p| {
            p.len() != 64 || !p.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }) {
            Some("blake3 must be 64 lowercase hex digits".into())
        } else if let Some(share) = spec.min_share.filter(|s| !(0.0..=1.0).contains(s)) {
            Some(format!("min_share must be a share between 0 and 1 (got {share})"))
        } else if !(0.0..=1.0).contains(&spec.min_probability) {
            Some(format!(
                "min_probability must be a probability between 0 and 1 (got {})",
                spec.min_probability
            ))
        } else {
            let players =
                |s: &str| loaded.pipeline.sources.get(s).is_some_and(|s| s.players().is_some());
            spec.games
                .iter()
                .find(|s| !players(s))
                .map(|s| format!("games: {s:?} is not a game source with `players`"))
        };
        if let Some(why) = wrong {
            return Err(Box::new(loaded.error_at(
                &header,
                format!("repertoire {name:?}: {why}"),
                None,
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source of every kind, each with every setting it takes (the 64-digit pins are
    /// made up: only their shape is checked here).
    const EVERY_KIND: &str = r#"
[sources.tsv]
kind = "lichess-tsv"
url = "https://example.org/a.tsv"
path = "eco/a.tsv"
blake3 = "0000000000000000000000000000000000000000000000000000000000000001"

[sources.scid]
kind = "scid-eco"
url = "https://example.org/scid.eco"

[sources.eco-pgn]
kind = "eco-pgn"
path = "eco/eco.pgn"

[sources.counted]
kind = "counts"
path = "counts/all.okbc"
blake3 = "0000000000000000000000000000000000000000000000000000000000000002"

[sources.labels]
kind = "structure-labels"
path = "structures/labels.tsv"

[sources.state]
kind = "counts-state"
path = "state/lichess"
blake3 = "0000000000000000000000000000000000000000000000000000000000000009"

[sources.dump]
kind = "lichess-evals"
url = "https://example.org/evals.jsonl.zst"
blake3 = "0000000000000000000000000000000000000000000000000000000000000003"

[sources.listed]
kind = "pgn"
paths = ["games/*.pgn", "more/*.pgn.zst"]
allow_empty = true
players = ["Carlsen, Magnus", { name = "Nakamura, Hikaru", aliases = ["Hikaru"] }]

[sources.listed.filter]
min_avg_rating = 2000
speeds = ["blitz", "rapid"]
date_from = "2000.01.01"

[sources.one]
kind = "pgn"
path = "games/one.pgn"

[sources.collection]
kind = "pgn"
manifest = "collections/masters.tsv"
url = "https://example.org/masters.tsv"
blake3 = "0000000000000000000000000000000000000000000000000000000000000004"

[sources.bgn]
kind = "bgn"
paths = ["games/*.bgn"]
allow_empty = false

[sources.db]
kind = "lichess-db"
months = ["2013-01", "2013-03..2013-04"]
variant = "chess960"
url = "http://127.0.0.1:9/"
blake3 = "0000000000000000000000000000000000000000000000000000000000000005"

[sources.db.filter]
min_rating = 1500

[sources.crawl]
kind = "lichess-explorer"
database = "lichess"
url = "http://127.0.0.1:9"
token_env = "OKB_TOKEN"
speeds = ["blitz"]
ratings = [2000, 2200]
since = "2015-01"
until = "2016-12"
root = "1. e4 c5"
max_ply = 6
min_games = 10
moves = 12
blake3 = "0000000000000000000000000000000000000000000000000000000000000006"

[sources.crawl.politeness]
rate = 0.0
max_attempts = 3

[sources.masters-crawl]
kind = "lichess-explorer"
database = "masters"
url = "http://127.0.0.1:9"

[sources.cloud]
kind = "lichess-cloud-eval"
url = "http://127.0.0.1:9"
token_env = "OKB_TOKEN"
multipv = 2
blake3 = "0000000000000000000000000000000000000000000000000000000000000007"

[sources.cloud.politeness]
rate = 0.0

[sources.cloud-plain]
kind = "lichess-cloud-eval"
url = "http://127.0.0.1:9"

[engine]
sources = ["dump", "cloud", "cloud-plain"]
"#;

    #[test]
    fn a_key_is_found_under_its_table_only() {
        let text = "[exports.a]\nweights = 1\n[exports.b]\n  weights= 2\nweightsx = 3\n";
        let b = text.find("  weights=").unwrap() + 2;
        assert_eq!(key_offset(text, "[exports.b]", "weights"), Some(b));
        assert_eq!(key_offset(text, "[exports.a]", "weights"), Some(12));
        assert_eq!(key_offset(text, "[exports.a]", "pretty"), None);
        assert_eq!(key_offset(text, "[exports.c]", "weights"), None);
    }

    /// Only `format` and `output` are the pipeline's: an export's other keys are kept as
    /// written, for its format's step module to read.
    #[test]
    fn an_export_keeps_its_settings_as_written() {
        let text =
            "[exports.book]\nformat = \"polyglot\"\noutput = \"b.bin\"\nweigths = \"games\"\n";
        let loaded = parse(text.into(), Path::new("pipeline.toml"), None).expect("parses");
        let book = &loaded.pipeline.exports["book"];
        assert_eq!((book.format.as_str(), book.output.as_str()), ("polyglot", "b.bin"));
        assert_eq!(book.settings.get("weigths").and_then(|v| v.as_str()), Some("games"));
        assert_eq!(book.settings.len(), 1);
    }

    /// The pipeline's parameters as `okb make` hashes them (`serde_json::to_value`), pretty.
    fn parameters(text: String, file: &Path) -> String {
        let loaded = parse(text, file, None).unwrap_or_else(|e| panic!("{e:?}"));
        let value = serde_json::to_value(&loaded.pipeline).expect("a pipeline is JSON");
        serde_json::to_string_pretty(&value).expect("JSON prints")
    }

    /// Every step's parameter hash and the release manifest read the pipeline as JSON:
    /// sources serialize as the flat table they were before kinds had types of their own
    /// (snapshots taken from that code), or every step would rerun. Exports serialize as
    /// their tables write them: their steps, not this file, know their settings.
    #[test]
    fn sources_serialize_as_before() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/every-step.toml");
        let every_step = parameters(std::fs::read_to_string(&fixture).expect("fixture"), &fixture);
        let every_kind = parameters(EVERY_KIND.into(), Path::new("pipeline.toml"));
        insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("pipeline_parameters_every_step", every_step);
            insta::assert_snapshot!("pipeline_parameters_every_kind", every_kind);
        });
    }
}
