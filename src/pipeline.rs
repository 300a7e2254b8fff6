//! `pipeline.toml`: the declarative description of a knowledge base.
//!
//! Errors point at the offending line with a miette diagnostic. A `[profile.<name>]` table
//! is merged over the document (deeply, table by table) when `--profile <name>` is given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::{Deserialize, Serialize};

use crate::tree::TreeParams;

/// What a source holds and how it is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// lichess-org/chess-openings TSV (the ECO authority).
    LichessTsv,
    /// SCID's `scid.eco`.
    ScidEco,
    /// pgn-extract's `eco.pgn`.
    EcoPgn,
    /// PGN game collections (plain, .zst, .bz2, .gz).
    Pgn,
    /// BGN JSON games, one per line.
    Bgn,
    /// A counts file made by `okb count` (the partial counts of some games), pinned by
    /// BLAKE3: merged with the game sources' counts into the tree.
    Counts,
    /// Labelled pawn skeletons (a TSV with `label` and `fen` or `moves` columns), such as
    /// a filled-in `okb review structures` form: they name those skeletons in Phase 5.
    StructureLabels,
    /// A crawl of a server that speaks the Lichess opening explorer API (`url`), pinned
    /// by the BLAKE3 of its manifest: its counts are added to the game sources' (declare
    /// sources whose games differ, or they count twice).
    LichessExplorer,
    /// A dump of engine evaluations in the Lichess evaluation database's format (JSON
    /// lines, plain or `.zst`), pinned by BLAKE3: `[engine] sources` names it to take
    /// its evaluations instead of searching.
    LichessEvals,
    /// A server that speaks Lichess's `/api/cloud-eval` (`url`), asked about the
    /// positions the engine step takes, politely, every answer kept; `blake3` pins the
    /// manifest of the answers used. `[engine] sources` names it like a dump.
    LichessCloudEval,
    /// Months of Lichess's database dumps (`months`, `variant`, `url` the server), each
    /// verified by the published SHA-256 and pinned together by `blake3` (`okb pin`).
    LichessDb,
}

impl SourceKind {
    /// Whether this kind is one file pinned by BLAKE3 (`url` or `path`), as opposed to a
    /// game collection (`paths`, each file hashed as it is read).
    pub fn is_pinned_file(self) -> bool {
        !matches!(self, SourceKind::Pgn | SourceKind::Bgn | SourceKind::LichessExplorer | SourceKind::LichessCloudEval | SourceKind::LichessDb)
    }

    /// Whether this kind gives evaluations (`[engine] sources`).
    pub fn is_evals(self) -> bool {
        matches!(self, SourceKind::LichessEvals | SourceKind::LichessCloudEval)
    }

    /// Whether this kind is game collections (`paths`).
    pub fn is_games(self) -> bool {
        matches!(self, SourceKind::Pgn | SourceKind::Bgn)
    }
}

/// `[sources.<name>]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Format of the source.
    pub kind: SourceKind,
    /// Where to download it from.
    pub url: Option<String>,
    /// A local file, relative to pipeline.toml.
    pub path: Option<String>,
    /// Local files or globs, relative to pipeline.toml (game sources).
    pub paths: Option<Vec<String>>,
    /// Game sources: a collection's manifest file (relative to pipeline.toml), lines of
    /// `url<TAB>bytes<TAB>blake3`, pinned by `blake3`: every file it lists is a game file.
    pub manifest: Option<String>,
    /// BLAKE3 of the file's bytes (64 hex digits); of the manifest's, for a collection.
    pub blake3: Option<String>,
    /// Game filters (game sources), passed to Phase 2.
    pub filter: Option<toml::Table>,
    /// Lichess database (`lichess-db`): months, `YYYY-MM` or `YYYY-MM..YYYY-MM`.
    pub months: Option<Vec<String>>,
    /// Lichess database: the variant's folder (default `standard`).
    pub variant: Option<String>,
    /// Game sources: whether matching no file at all is fine (an empty drop folder, a
    /// tree with the ECO skeleton only). Otherwise it is an error: a typo or an unmounted
    /// disk would silently rebuild the store without games.
    pub allow_empty: Option<bool>,
    /// Explorer crawls: `masters` or `lichess`.
    pub database: Option<crate::crawl::Database>,
    /// Explorer crawls: the environment variable holding the OAuth token (never stored).
    pub token_env: Option<String>,
    /// Explorer crawls (`lichess`): speeds counted.
    pub speeds: Option<Vec<String>>,
    /// Explorer crawls (`lichess`): rating groups counted.
    pub ratings: Option<Vec<u32>>,
    /// Explorer crawls: first year (`masters`) or month (`lichess`, YYYY-MM) counted.
    pub since: Option<String>,
    /// Explorer crawls: last year or month counted.
    pub until: Option<String>,
    /// Explorer crawls: moves from the start position to the crawl's root.
    pub root: Option<String>,
    /// Explorer crawls: deepest ply asked about (default: the tree's `max_ply`).
    pub max_ply: Option<u16>,
    /// Explorer crawls: least games of a move that is followed (default: the tree's
    /// `min_games`).
    pub min_games: Option<u64>,
    /// Explorer crawls: moves listed per answer (default 100).
    pub moves: Option<u32>,
    /// Explorer crawls and cloud evaluations: rate limit, waits and attempts.
    pub politeness: Option<crate::crawl::Politeness>,
    /// Cloud evaluations: lines asked for (default: `[engine] multipv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multipv: Option<u32>,
    /// Game sources: the players whose games the collection is read as (repertoire
    /// `games` reports), by White/Black tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub players: Option<Vec<crate::repertoire::players::PlayerSpec>>,
}

impl SourceSpec {
    /// The game filter of a game source (`[sources.<name>.filter]`), checked.
    pub fn game_filter(&self) -> Result<crate::games::filter::GameFilter, String> {
        let filter: crate::games::filter::GameFilter = match &self.filter {
            Some(table) => toml::Value::Table(table.clone()).try_into().map_err(|e: toml::de::Error| {
                format!("filter: {}", e.message())
            })?,
            None => Default::default(),
        };
        filter.compile().map_err(|e| format!("filter: {e}"))?;
        Ok(filter)
    }

    /// An explorer crawl source as the crawler takes it (the tree's parameters give the
    /// defaults of `max_ply` and `min_games`).
    pub fn crawl(&self, name: &str, tree: &TreeParams) -> Result<crate::crawl::source::CrawlSource, String> {
        let params = crate::crawl::CrawlParams {
            database: self.database.ok_or("an explorer crawl needs `database` (\"masters\" or \"lichess\")")?,
            root: self.root.clone().unwrap_or_default(),
            max_ply: self.max_ply.unwrap_or(tree.max_ply),
            min_games: self.min_games.unwrap_or(tree.min_games),
            moves: self.moves.unwrap_or(100),
            speeds: self.speeds.clone().unwrap_or_default(),
            ratings: self.ratings.clone().unwrap_or_default(),
            since: self.since.clone(),
            until: self.until.clone(),
        };
        params.check()?;
        let server = self.url.clone().ok_or("an explorer crawl needs `url` (e.g. \"https://explorer.lichess.org\")")?;
        let politeness = self.politeness.clone().unwrap_or_default();
        politeness.for_server(&server)?;
        Ok(crate::crawl::source::CrawlSource { name: name.into(), server, token_env: self.token_env.clone(), params, politeness, pin: self.blake3.clone() })
    }

    /// The explorer-crawl settings this source sets (for other kinds, each is a mistake).
    fn crawl_fields(&self) -> Vec<&'static str> {
        let set = [
            ("database", self.database.is_some()),
            ("token_env", self.token_env.is_some()),
            ("speeds", self.speeds.is_some()),
            ("ratings", self.ratings.is_some()),
            ("since", self.since.is_some()),
            ("until", self.until.is_some()),
            ("root", self.root.is_some()),
            ("max_ply", self.max_ply.is_some()),
            ("min_games", self.min_games.is_some()),
            ("moves", self.moves.is_some()),
            ("politeness", self.politeness.is_some()),
        ];
        set.into_iter().filter(|(_, on)| *on).map(|(name, _)| name).collect()
    }

    /// The Lichess database months of a `lichess-db` source.
    pub fn lichess_db(&self, name: &str) -> Result<crate::sources::lichess_db::LichessDb, String> {
        let months = crate::sources::lichess_db::expand_months(self.months.as_deref().ok_or("needs `months`, e.g. [\"2013-01\", \"2024-03..2024-05\"]")?)?;
        if months.is_empty() {
            return Err("`months` is empty".into());
        }
        let variant = self.variant.clone().unwrap_or_else(|| "standard".into());
        if variant.is_empty() || !variant.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(format!("variant {variant:?} is not a folder name of the Lichess database (standard, chess960, …)"));
        }
        let base = self.url.as_deref().unwrap_or(crate::sources::lichess_db::DEFAULT_BASE).trim_end_matches('/').to_string();
        Ok(crate::sources::lichess_db::LichessDb { name: name.into(), base, variant, months })
    }

    /// Checks that a game source names its files one way: `paths` (or `path`), or a
    /// `manifest` (pinned by `blake3`, or unpinned until `okb pin`).
    fn game_files_given(&self) -> Result<(), &'static str> {
        let listed = self.paths.is_some() || self.path.is_some();
        match (listed, &self.manifest, &self.blake3) {
            (true, Some(_), _) => Err("has both `paths` and `manifest`: give one"),
            (false, None, _) => Err("needs `paths` or `manifest`"),
            _ => Ok(()),
        }
    }

    /// The paths or globs of a game source, as written.
    pub fn game_paths(&self) -> Vec<String> {
        match (&self.paths, &self.path) {
            (Some(paths), _) => paths.clone(),
            (None, Some(path)) => vec![path.clone()],
            (None, None) => Vec::new(),
        }
    }
}

/// `[exports.<name>]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportSpec {
    /// Output format: the name of an `export:<format>` rule (`okb graph --rules` lists
    /// them): `eco-json`, `csv`, `polyglot`, `classified-pgn`, `classified-bgn`,
    /// `openingiq`, `pgn`, `packed`, `neo4j`, `lichess-evals`. Each export's step module
    /// plans the tables of its format; a format no module plans is an error when the
    /// make is planned, pointing at the table.
    pub format: String,
    /// Output path (a directory for multi-file formats), relative to pipeline.toml.
    pub output: String,
    /// Indented JSON (eco-json).
    #[serde(default = "default_true")]
    pub pretty: bool,
    /// Field delimiter (csv), one character.
    #[serde(default = "default_delimiter")]
    pub delimiter: String,
    /// Book weights (polyglot): `polyglot` (2 × wins + draws) or `games` (game counts).
    #[serde(default)]
    pub weights: crate::export::polyglot::WeightMode,
    /// Game sources whose games are written (classified-pgn, classified-bgn).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// Plies of tree below each named opening (openingiq, pgn).
    #[serde(default = "default_max_depth")]
    pub max_depth: u16,
}

fn default_max_depth() -> u16 {
    crate::export::openingiq::DEFAULT_MAX_DEPTH as u16
}

fn default_true() -> bool {
    true
}

fn default_delimiter() -> String {
    ",".into()
}

/// `[games]`: Phase 2 parameters that do not change results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GamesParams {
    /// Memory for in-memory counting before sorted runs spill to disk, in MiB.
    pub memory_budget_mb: usize,
}

impl Default for GamesParams {
    fn default() -> Self {
        GamesParams { memory_budget_mb: 2048 }
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
}

impl Default for StoreSpec {
    fn default() -> Self {
        StoreSpec { path: "build/okb.sqlite".into(), url: None, schema: "okb".into(), password_env: None }
    }
}

impl StoreSpec {
    /// The PostgreSQL target, when `url` is set.
    pub fn postgres(&self) -> Option<Result<crate::store::postgres::PgTarget, crate::store::postgres::PgError>> {
        self.url.as_deref().map(|url| crate::store::postgres::PgTarget::new(url, &self.schema, self.password_env.as_deref()))
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
    #[serde(default)]
    pub sources: BTreeMap<String, SourceSpec>,
    /// Phase 1 parameters.
    #[serde(default)]
    pub eco: EcoParams,
    /// Tree assembly parameters.
    #[serde(default)]
    pub tree: TreeParams,
    /// Phase 2 tuning.
    #[serde(default)]
    pub games: GamesParams,
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
        CheckSpec { lines: Vec::new(), fens: Vec::new(), openings: Vec::new(), snapshots: default_snapshots() }
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
pub fn parse(text: String, file: &Path, profile: Option<&str>) -> Result<Loaded, Box<PipelineError>> {
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
    let mut loaded = Loaded { pipeline: pipeline.clone(), root, file: file.to_path_buf(), text: text.clone(), notes: Vec::new(), cache };
    if let Some(name) = profile {
        let Some(overrides) = pipeline.profile.get(name).cloned() else {
            let known: Vec<&str> = pipeline.profile.keys().map(String::as_str).collect();
            return Err(Box::new(loaded.error_at(
                "[profile",
                format!("no profile named {name:?}"),
                Some(format!("profiles in this file: {}", if known.is_empty() { "none".into() } else { known.join(", ") })),
            )));
        };
        let mut document: toml::Table = toml::from_str(&text).map_err(|e| diagnostic(e, &text))?;
        for table in deep_merge(&mut document, overrides, "") {
            loaded.notes.push(format!("profile {name:?} leaves [{table}] out: the file has no such table"));
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
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => skipped.extend(deep_merge(b, o, &here)),
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
    let sources = loaded.pipeline.sources.iter().filter(|(_, s)| s.kind.is_games());
    sources.flat_map(|(name, s)| s.game_paths().into_iter().map(move |p| (name.as_str(), p))).find(|(_, pattern)| {
        let full = tidy(loaded.path(pattern));
        // As glob() walks folders, `*` stays within one of them.
        let options = glob::MatchOptions { require_literal_separator: true, ..Default::default() };
        glob::Pattern::new(&full.to_string_lossy()).is_ok_and(|g| probes.iter().any(|f| g.matches_path_with(f, options)))
    })
}

fn validate(loaded: &Loaded) -> Result<(), Box<PipelineError>> {
    for (name, spec) in &loaded.pipeline.sources {
        let header = format!("[sources.{name}]");
        if let Some(pin) = &spec.blake3
            && (pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())) {
                return Err(Box::new(loaded.error_at(
                    pin,
                    format!("source {name:?}: blake3 must be 64 lowercase hex digits"),
                    Some("run `okb pin` to compute it".into()),
                )));
            }
        if spec.kind == SourceKind::LichessCloudEval {
            let stray = spec.crawl_fields().into_iter().find(|f| !matches!(*f, "token_env" | "politeness"));
            let why = match (&spec.url, stray, &loaded.pipeline.engine) {
                (None, _, _) => Some("a cloud-eval source needs `url`, the server (\"https://lichess.org\")".to_string()),
                (_, Some(field), _) => Some(format!("`{field}` is a setting of explorer crawls")),
                (_, _, None) => Some("a cloud-eval source serves [engine], and there is no [engine] table".to_string()),
                _ => None,
            };
            if let Some(why) = why {
                return Err(Box::new(loaded.error_at(&header, format!("source {name:?}: {why}"), None)));
            }
            continue;
        }
        if spec.multipv.is_some() {
            return Err(Box::new(loaded.error_at(&header, format!("source {name:?}: `multipv` is a setting of cloud-eval sources"), None)));
        }
        if spec.kind == SourceKind::LichessExplorer {
            if let Err(why) = spec.crawl(name, &loaded.pipeline.tree) {
                return Err(Box::new(loaded.error_at(&header, format!("source {name:?}: {why}"), None)));
            }
            continue;
        }
        let lichess_db = spec.kind == SourceKind::LichessDb;
        let db_fields = spec.months.is_some() || spec.variant.is_some();
        if (!lichess_db && db_fields) || (lichess_db && (spec.paths.is_some() || spec.path.is_some() || spec.manifest.is_some())) {
            let why = if lichess_db { "takes `months`, `variant`, `url`, `blake3` and `filter`" } else { "`months` and `variant` are settings of kind \"lichess-db\"" };
            return Err(Box::new(loaded.error_at(&header, format!("source {name:?}: {why}"), None)));
        }
        if lichess_db {
            if let Err(why) = spec.lichess_db(name).and_then(|_| spec.game_filter()) {
                return Err(Box::new(loaded.error_at(&header, format!("source {name:?}: {why}"), None)));
            }
            continue;
        }
        if let Some(field) = spec.crawl_fields().first() {
            return Err(Box::new(loaded.error_at(
                &header,
                format!("source {name:?}: `{field}` is a setting of explorer crawls (kind = \"lichess-explorer\")"),
                None,
            )));
        }
        if spec.kind.is_pinned_file() {
            if spec.url.is_none() && spec.path.is_none() {
                return Err(Box::new(loaded.error_at(
                    &header,
                    format!("source {name:?} needs `url` or `path`"),
                    None,
                )));
            }
            if spec.paths.is_some() || spec.filter.is_some() || spec.players.is_some() || spec.manifest.is_some() || spec.allow_empty.is_some() {
                return Err(Box::new(loaded.error_at(
                    &header,
                    format!("source {name:?}: `paths`, `manifest`, `filter`, `players` and `allow_empty` are for game sources (kind pgn or bgn)"),
                    None,
                )));
            }
        } else {
            if let Err(why) = spec.game_files_given() {
                return Err(Box::new(loaded.error_at(&header, format!("game source {name:?} {why}"), None)));
            }
            if let Err(message) = spec.game_filter() {
                let at = format!("[sources.{name}.filter]");
                let at = if loaded.text.contains(&at) { at } else { header.clone() };
                return Err(Box::new(loaded.error_at(&at, format!("source {name:?}: {message}"), None)));
            }
        }
    }
    validate_repertoires(loaded)?;
    if let Some(Err(e)) = loaded.pipeline.store.postgres() {
        return Err(Box::new(loaded.error_at("[store]", e.to_string(), None)));
    }
    if let Some(engine) = &loaded.pipeline.engine {
        if let Err(e) = engine.validate() {
            return Err(Box::new(loaded.error_at("[engine]", e.to_string(), None)));
        }
        let evals_source = |name: &str| loaded.pipeline.sources.get(name).is_some_and(|s| s.kind.is_evals());
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
    let game_source = |name: &str| loaded.pipeline.sources.get(name).is_some_and(|s| s.kind == SourceKind::Pgn);
    if let Some(validate) = &loaded.pipeline.validate
        && let Some(bad) = validate.sources.iter().find(|s| !game_source(s)) {
            return Err(Box::new(loaded.error_at(
                "[validate]",
                format!("[validate] sources: {bad:?} is not a game source of kind pgn"),
                Some("list names of [sources.NAME] tables with kind = \"pgn\"".into()),
            )));
        }
    for (name, spec) in &loaded.pipeline.exports {
        if matches!(spec.format.as_str(), "classified-pgn" | "classified-bgn")
            && let Some(bad) = spec.sources.iter().find(|s| !game_source(s)).or(spec.sources.is_empty().then_some(&String::new())) {
                return Err(Box::new(loaded.error_at(
                    &format!("[exports.{name}]"),
                    format!("export {name:?}: sources must name game sources of kind pgn (got {bad:?})"),
                    None,
                )));
            }
        if let Some((source, pattern)) = input_reading(loaded, &spec.output) {
            return Err(Box::new(loaded.error_at(
                &format!("[exports.{name}]"),
                format!("export {name:?}: output {:?} is matched by {pattern:?} of game source {source:?}, so the next make would read it back as games", spec.output),
                Some("write the export outside the game sources' paths (e.g. under out/)".into()),
            )));
        }
        if spec.delimiter.len() != 1 {
            return Err(Box::new(loaded.error_at(
                &format!("[exports.{name}]"),
                format!("export {name:?}: delimiter must be one ASCII character"),
                None,
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
        } else if spec.blake3.as_ref().is_some_and(|p| p.len() != 64 || !p.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))) {
            Some("blake3 must be 64 lowercase hex digits".into())
        } else if !(0.0..=1.0).contains(&spec.min_share) {
            Some(format!("min_share must be a share between 0 and 1 (got {})", spec.min_share))
        } else {
            let players = |s: &str| loaded.pipeline.sources.get(s).is_some_and(|s| s.kind.is_games() && s.players.is_some());
            spec.games.iter().find(|s| !players(s)).map(|s| format!("games: {s:?} is not a game source with `players`"))
        };
        if let Some(why) = wrong {
            return Err(Box::new(loaded.error_at(&header, format!("repertoire {name:?}: {why}"), None)));
        }
    }
    Ok(())
}
