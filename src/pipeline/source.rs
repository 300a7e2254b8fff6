//! `[sources.<name>]`: each kind of source as a type holding only the settings it takes.
//!
//! pipeline.toml writes a source as one flat table with a `kind`. It is read through
//! [`FlatSource`], that table, and turned into the [`SourceSpec`] variant of its kind; a
//! setting written under a kind that does not take it is an error there, naming the
//! source, the setting and the kind. A source is written back through the same flat
//! table, so the pipeline's JSON (the parameters every step's hash and the release
//! manifest are made of) is what it was before kinds had types of their own.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::crawl::{Database, Politeness};
use crate::repertoire::players::PlayerSpec;
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
    /// A counts state folder (`path`) made by `okb state` or spark/okb_state.py, pinned
    /// by the BLAKE3 of its manifest: the tree reads it as it reads a `state = true`
    /// source's state.
    CountsState,
}

impl SourceKind {
    /// Every kind, in the order pipeline.toml's documentation lists them.
    const ALL: [SourceKind; 12] = [
        SourceKind::LichessTsv,
        SourceKind::ScidEco,
        SourceKind::EcoPgn,
        SourceKind::Pgn,
        SourceKind::Bgn,
        SourceKind::Counts,
        SourceKind::StructureLabels,
        SourceKind::LichessExplorer,
        SourceKind::LichessDb,
        SourceKind::CountsState,
        SourceKind::LichessEvals,
        SourceKind::LichessCloudEval,
    ];

    /// Whether this kind is one file pinned by BLAKE3 (`url` or `path`), as opposed to a
    /// game collection (`paths`, each file hashed as it is read).
    pub fn is_pinned_file(self) -> bool {
        self.file_kind().is_some()
    }

    /// Whether this kind gives evaluations (`[engine] sources`).
    pub fn is_evals(self) -> bool {
        matches!(self, SourceKind::LichessEvals | SourceKind::LichessCloudEval)
    }

    /// Whether this kind is game collections (`paths`).
    pub fn is_games(self) -> bool {
        matches!(self, SourceKind::Pgn | SourceKind::Bgn)
    }

    /// The kind as pipeline.toml writes it (`lichess-tsv`).
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::LichessTsv => "lichess-tsv",
            SourceKind::ScidEco => "scid-eco",
            SourceKind::EcoPgn => "eco-pgn",
            SourceKind::Pgn => "pgn",
            SourceKind::Bgn => "bgn",
            SourceKind::Counts => "counts",
            SourceKind::StructureLabels => "structure-labels",
            SourceKind::LichessExplorer => "lichess-explorer",
            SourceKind::LichessEvals => "lichess-evals",
            SourceKind::LichessCloudEval => "lichess-cloud-eval",
            SourceKind::LichessDb => "lichess-db",
            SourceKind::CountsState => "counts-state",
        }
    }

    /// The kind of pinned file, for the kinds that are one.
    fn file_kind(self) -> Option<FileKind> {
        match self {
            SourceKind::LichessTsv => Some(FileKind::LichessTsv),
            SourceKind::ScidEco => Some(FileKind::ScidEco),
            SourceKind::EcoPgn => Some(FileKind::EcoPgn),
            SourceKind::Counts => Some(FileKind::Counts),
            SourceKind::StructureLabels => Some(FileKind::StructureLabels),
            SourceKind::LichessEvals => Some(FileKind::LichessEvals),
            SourceKind::CountsState => Some(FileKind::CountsState),
            SourceKind::Pgn
            | SourceKind::Bgn
            | SourceKind::LichessExplorer
            | SourceKind::LichessCloudEval
            | SourceKind::LichessDb => None,
        }
    }

    /// The settings a source of this kind takes, besides `kind`.
    fn takes(self) -> &'static [&'static str] {
        match self {
            SourceKind::Pgn | SourceKind::Bgn => &[
                "url",
                "path",
                "paths",
                "manifest",
                "blake3",
                "filter",
                "allow_empty",
                "players",
                "state",
                "pins",
            ],
            SourceKind::LichessDb => &["months", "variant", "url", "blake3", "filter", "state"],
            SourceKind::CountsState => &["path", "blake3"],
            SourceKind::LichessExplorer => &[
                "database",
                "url",
                "token_env",
                "speeds",
                "ratings",
                "since",
                "until",
                "root",
                "max_ply",
                "min_games",
                "moves",
                "politeness",
                "blake3",
            ],
            SourceKind::LichessCloudEval => {
                &["url", "token_env", "politeness", "multipv", "blake3"]
            }
            _ => &["url", "path", "blake3"],
        }
    }
}

/// The kinds that are one file pinned by BLAKE3.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `lichess-tsv`.
    LichessTsv,
    /// `scid-eco`.
    ScidEco,
    /// `eco-pgn`.
    EcoPgn,
    /// `counts`.
    Counts,
    /// `structure-labels`.
    StructureLabels,
    /// `lichess-evals`.
    LichessEvals,
    /// `counts-state` (a folder, pinned by its manifest).
    CountsState,
}

impl From<FileKind> for SourceKind {
    fn from(kind: FileKind) -> SourceKind {
        match kind {
            FileKind::LichessTsv => SourceKind::LichessTsv,
            FileKind::ScidEco => SourceKind::ScidEco,
            FileKind::EcoPgn => SourceKind::EcoPgn,
            FileKind::Counts => SourceKind::Counts,
            FileKind::StructureLabels => SourceKind::StructureLabels,
            FileKind::LichessEvals => SourceKind::LichessEvals,
            FileKind::CountsState => SourceKind::CountsState,
        }
    }
}

/// A source that is one file pinned by BLAKE3 (a taxonomy, counts, structure labels, an
/// evaluation dump): a local `path`, or downloaded from `url`, or both (at least one).
#[derive(Clone, Debug, PartialEq)]
pub struct FileSource {
    /// What the file holds.
    pub kind: FileKind,
    /// Where to download it from.
    pub url: Option<String>,
    /// A local file, relative to pipeline.toml.
    pub path: Option<String>,
    /// BLAKE3 of the file's bytes (64 hex digits).
    pub blake3: Option<String>,
}

/// How a game source's games are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GameFormat {
    /// `pgn`.
    Pgn,
    /// `bgn`.
    Bgn,
}

/// How a game source names its files: exactly one of `path`, `paths` or `manifest`.
#[derive(Clone, Debug, PartialEq)]
pub enum GameFiles {
    /// `path`: one file or glob, relative to pipeline.toml.
    Path(String),
    /// `paths`: files or globs, relative to pipeline.toml.
    Paths(Vec<String>),
    /// `manifest`: a collection's manifest file (relative to pipeline.toml), lines of
    /// `url<TAB>bytes<TAB>blake3`, pinned by `blake3`: every file it lists is a game file.
    Manifest(String),
}

/// A game source (`pgn`, `bgn`).
#[derive(Clone, Debug, PartialEq)]
pub struct GameSource {
    /// How its games are written.
    pub format: GameFormat,
    /// Its files.
    pub files: GameFiles,
    /// Where a collection's manifest is downloaded from.
    pub url: Option<String>,
    /// BLAKE3 of the manifest's bytes, for a collection.
    pub blake3: Option<String>,
    /// Game filters, passed to Phase 2.
    pub filter: Option<toml::Table>,
    /// Whether matching no file at all is fine (an empty drop folder, a tree with the ECO
    /// skeleton only). Otherwise it is an error: a typo or an unmounted disk would
    /// silently rebuild the store without games.
    pub allow_empty: Option<bool>,
    /// The players whose games the collection is read as (repertoire `games` reports),
    /// by White/Black tag.
    pub players: Option<Vec<PlayerSpec>>,
    /// Whether its counts accumulate in a counts state (`games::state`) instead of
    /// being merged from every file's runs on every make (default: no).
    pub state: Option<bool>,
    /// The BLAKE3 of each file a `path` or `paths` source matches, by its path relative
    /// to pipeline.toml (`[sources.<name>.pins]`, written by `okb pin`): a file whose
    /// bytes differ stops the make, and `okb make --locked` requires a pin for every file.
    pub pins: Option<BTreeMap<String, String>>,
}

/// Months of Lichess's database (`lichess-db`).
#[derive(Clone, Debug, PartialEq)]
pub struct LichessDbSource {
    /// Months, `YYYY-MM` or `YYYY-MM..YYYY-MM`.
    pub months: Vec<String>,
    /// The variant's folder (default `standard`).
    pub variant: Option<String>,
    /// The server (default: Lichess's database).
    pub url: Option<String>,
    /// BLAKE3 of the months' manifest.
    pub blake3: Option<String>,
    /// Game filters, passed to Phase 2.
    pub filter: Option<toml::Table>,
    /// Whether its counts accumulate in a counts state (`games::state`; default: yes).
    pub state: Option<bool>,
}

/// A crawl of an opening explorer server (`lichess-explorer`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExplorerSource {
    /// `masters` or `lichess`.
    pub database: Database,
    /// The server (`https://explorer.lichess.org`).
    pub url: String,
    /// The environment variable holding the OAuth token (never stored).
    pub token_env: Option<String>,
    /// Speeds counted (`lichess`).
    pub speeds: Option<Vec<String>>,
    /// Rating groups counted (`lichess`).
    pub ratings: Option<Vec<u32>>,
    /// First year (`masters`) or month (`lichess`, YYYY-MM) counted.
    pub since: Option<String>,
    /// Last year or month counted.
    pub until: Option<String>,
    /// Moves from the start position to the crawl's root.
    pub root: Option<String>,
    /// Deepest ply asked about (default: the tree's `max_ply`).
    pub max_ply: Option<u16>,
    /// Least games of a move that is followed (default: the tree's `min_games`).
    pub min_games: Option<u64>,
    /// Moves listed per answer (default 100).
    pub moves: Option<u32>,
    /// Rate limit, waits and attempts.
    pub politeness: Option<Politeness>,
    /// BLAKE3 of the crawl's manifest.
    pub blake3: Option<String>,
}

/// A server that speaks Lichess's `/api/cloud-eval` (`lichess-cloud-eval`).
#[derive(Clone, Debug, PartialEq)]
pub struct CloudEvalSource {
    /// The server (`https://lichess.org`).
    pub url: String,
    /// The environment variable holding the OAuth token (never stored).
    pub token_env: Option<String>,
    /// Rate limit, waits and attempts.
    pub politeness: Option<Politeness>,
    /// Lines asked for (default: `[engine] multipv`).
    pub multipv: Option<u32>,
    /// BLAKE3 of the manifest of the answers used.
    pub blake3: Option<String>,
}

/// `[sources.<name>]`: a source of one kind, with the settings that kind takes.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(into = "FlatSource")]
pub enum SourceSpec {
    /// One file pinned by BLAKE3.
    File(FileSource),
    /// Game files.
    Games(GameSource),
    /// Months of Lichess's database.
    LichessDb(LichessDbSource),
    /// An opening explorer crawl.
    Explorer(ExplorerSource),
    /// A cloud evaluation server.
    CloudEval(CloudEvalSource),
}

impl SourceSpec {
    /// The source's kind.
    pub fn kind(&self) -> SourceKind {
        match self {
            SourceSpec::File(f) => f.kind.into(),
            SourceSpec::Games(g) if g.format == GameFormat::Bgn => SourceKind::Bgn,
            SourceSpec::Games(_) => SourceKind::Pgn,
            SourceSpec::LichessDb(_) => SourceKind::LichessDb,
            SourceSpec::Explorer(_) => SourceKind::LichessExplorer,
            SourceSpec::CloudEval(_) => SourceKind::LichessCloudEval,
        }
    }

    /// The URL it is read from: the file, a collection's manifest or the server.
    pub fn url(&self) -> Option<&str> {
        match self {
            SourceSpec::File(f) => f.url.as_deref(),
            SourceSpec::Games(g) => g.url.as_deref(),
            SourceSpec::LichessDb(d) => d.url.as_deref(),
            SourceSpec::Explorer(e) => Some(&e.url),
            SourceSpec::CloudEval(c) => Some(&c.url),
        }
    }

    /// The one local file (`path`) it names, as written.
    pub fn path(&self) -> Option<&str> {
        match self {
            SourceSpec::File(f) => f.path.as_deref(),
            SourceSpec::Games(GameSource { files: GameFiles::Path(path), .. }) => Some(path),
            _ => None,
        }
    }

    /// The pin (`blake3`).
    pub fn blake3(&self) -> Option<&str> {
        match self {
            SourceSpec::File(f) => f.blake3.as_deref(),
            SourceSpec::Games(g) => g.blake3.as_deref(),
            SourceSpec::LichessDb(d) => d.blake3.as_deref(),
            SourceSpec::Explorer(e) => e.blake3.as_deref(),
            SourceSpec::CloudEval(c) => c.blake3.as_deref(),
        }
    }

    /// A game collection's manifest file, as written.
    pub fn manifest(&self) -> Option<&str> {
        match self {
            SourceSpec::Games(GameSource { files: GameFiles::Manifest(manifest), .. }) => {
                Some(manifest)
            }
            _ => None,
        }
    }

    /// The players of a game source read as a player collection.
    pub fn players(&self) -> Option<&[PlayerSpec]> {
        match self {
            SourceSpec::Games(g) => g.players.as_deref(),
            _ => None,
        }
    }

    /// Whether the source's counts accumulate in a counts state (`state`: on by default
    /// for `lichess-db`, off for the other game sources).
    pub fn keeps_state(&self) -> bool {
        match self {
            SourceSpec::Games(g) => g.state == Some(true),
            SourceSpec::LichessDb(d) => d.state != Some(false),
            _ => false,
        }
    }

    /// Whether a game source may match no file at all (`allow_empty = true`).
    pub fn allows_empty(&self) -> bool {
        matches!(self, SourceSpec::Games(GameSource { allow_empty: Some(true), .. }))
    }

    /// The game filter of a game or Lichess database source (`[sources.<name>.filter]`),
    /// checked; the empty filter for other kinds.
    pub fn game_filter(&self) -> Result<crate::games::filter::GameFilter, String> {
        let table = match self {
            SourceSpec::Games(g) => g.filter.as_ref(),
            SourceSpec::LichessDb(d) => d.filter.as_ref(),
            _ => None,
        };
        let filter: crate::games::filter::GameFilter = match table {
            Some(table) => toml::Value::Table(table.clone())
                .try_into()
                .map_err(|e: toml::de::Error| format!("filter: {}", e.message()))?,
            None => Default::default(),
        };
        filter.compile().map_err(|e| format!("filter: {e}"))?;
        Ok(filter)
    }

    /// The file pins of a game source given by `path` or `paths` (none for other sources).
    pub fn file_pins(&self) -> Option<&BTreeMap<String, String>> {
        match self {
            SourceSpec::Games(GameSource { pins, .. }) => pins.as_ref(),
            _ => None,
        }
    }

    /// The paths or globs of a game source, as written (none for a collection).
    pub fn game_paths(&self) -> Vec<String> {
        match self {
            SourceSpec::Games(GameSource { files: GameFiles::Path(path), .. }) => {
                vec![path.clone()]
            }
            SourceSpec::Games(GameSource { files: GameFiles::Paths(paths), .. }) => paths.clone(),
            _ => Vec::new(),
        }
    }

    /// An explorer crawl source as the crawler takes it (see [`ExplorerSource::crawl`]).
    pub fn crawl(
        &self,
        name: &str,
        tree: &TreeParams,
    ) -> Result<crate::crawl::source::CrawlSource, String> {
        match self {
            SourceSpec::Explorer(e) => e.crawl(name, tree),
            _ => Err(format!("kind {:?} is not an explorer crawl", self.kind().name())),
        }
    }

    /// The Lichess database months of a `lichess-db` source (see [`LichessDbSource::months`]).
    pub fn lichess_db(&self, name: &str) -> Result<crate::sources::lichess_db::LichessDb, String> {
        match self {
            SourceSpec::LichessDb(d) => d.months(name),
            _ => Err(format!("kind {:?} is not a Lichess database source", self.kind().name())),
        }
    }

    /// A cloud-eval source as the engine step asks it (`multipv` by default that of
    /// `[engine]`); `None` for other kinds.
    pub fn cloud_eval(&self, name: &str, multipv: u32) -> Option<crate::evals::cloud::CloudSource> {
        let SourceSpec::CloudEval(c) = self else { return None };
        Some(crate::evals::cloud::CloudSource {
            name: name.into(),
            server: c.url.trim_end_matches('/').to_string(),
            token_env: c.token_env.clone(),
            politeness: c.politeness.clone().unwrap_or_default(),
            multipv: c.multipv.unwrap_or(multipv),
            pin: c.blake3.clone(),
        })
    }
}

impl ExplorerSource {
    /// The crawl as the crawler takes it (the tree's parameters give the defaults of
    /// `max_ply` and `min_games`), its values checked.
    pub fn crawl(
        &self,
        name: &str,
        tree: &TreeParams,
    ) -> Result<crate::crawl::source::CrawlSource, String> {
        let params = crate::crawl::CrawlParams {
            database: self.database,
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
        let politeness = self.politeness.clone().unwrap_or_default();
        politeness.for_server(&self.url)?;
        Ok(crate::crawl::source::CrawlSource {
            name: name.into(),
            server: self.url.clone(),
            token_env: self.token_env.clone(),
            params,
            politeness,
            pin: self.blake3.clone(),
        })
    }
}

impl LichessDbSource {
    /// The months, expanded, with the variant and server, checked.
    pub fn months(&self, name: &str) -> Result<crate::sources::lichess_db::LichessDb, String> {
        let months = crate::sources::lichess_db::expand_months(&self.months)?;
        if months.is_empty() {
            return Err("`months` is empty".into());
        }
        let variant = self.variant.clone().unwrap_or_else(|| "standard".into());
        if variant.is_empty() || !variant.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(format!(
                "variant {variant:?} is not a folder name of the Lichess database (standard, chess960, …)"
            ));
        }
        let base = self
            .url
            .as_deref()
            .unwrap_or(crate::sources::lichess_db::DEFAULT_BASE)
            .trim_end_matches('/')
            .to_string();
        Ok(crate::sources::lichess_db::LichessDb { name: name.into(), base, variant, months })
    }
}

/// A source as pipeline.toml writes it: one table, every setting of every kind optional.
/// Its fields and their order are those of the pipeline's JSON (step hashes depend on it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlatSource {
    kind: SourceKind,
    url: Option<String>,
    path: Option<String>,
    paths: Option<Vec<String>>,
    manifest: Option<String>,
    blake3: Option<String>,
    filter: Option<toml::Table>,
    months: Option<Vec<String>>,
    variant: Option<String>,
    allow_empty: Option<bool>,
    database: Option<Database>,
    token_env: Option<String>,
    speeds: Option<Vec<String>>,
    ratings: Option<Vec<u32>>,
    since: Option<String>,
    until: Option<String>,
    root: Option<String>,
    max_ply: Option<u16>,
    min_games: Option<u64>,
    moves: Option<u32>,
    politeness: Option<Politeness>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    multipv: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    players: Option<Vec<PlayerSpec>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pins: Option<BTreeMap<String, String>>,
}

impl FlatSource {
    /// A table with only `kind`.
    fn of_kind(kind: SourceKind) -> FlatSource {
        FlatSource {
            kind,
            url: None,
            path: None,
            paths: None,
            manifest: None,
            blake3: None,
            filter: None,
            months: None,
            variant: None,
            allow_empty: None,
            database: None,
            token_env: None,
            speeds: None,
            ratings: None,
            since: None,
            until: None,
            root: None,
            max_ply: None,
            min_games: None,
            moves: None,
            politeness: None,
            multipv: None,
            players: None,
            state: None,
            pins: None,
        }
    }

    /// The settings written (besides `kind`), in the table's field order: read off the
    /// table's own serialization, so a setting added to it is checked against the kinds
    /// without another list to keep.
    fn written(&self) -> Vec<String> {
        let serde_json::Value::Object(table) =
            serde_json::to_value(self).expect("a source table is JSON")
        else {
            unreachable!("a struct serializes as a map")
        };
        table
            .into_iter()
            .filter(|(name, value)| name != "kind" && !value.is_null())
            .map(|(name, _)| name)
            .collect()
    }

    /// The source this table describes, or why it describes none: a setting its kind
    /// does not take, or one its kind needs missing.
    fn into_spec(self) -> Result<SourceSpec, String> {
        if let Some(stray) =
            self.written().into_iter().find(|s| !self.kind.takes().contains(&s.as_str()))
        {
            return Err(stray_setting(self.kind, &stray));
        }
        let FlatSource {
            kind,
            url,
            path,
            paths,
            manifest,
            blake3,
            filter,
            months,
            variant,
            allow_empty,
            database,
            token_env,
            speeds,
            ratings,
            since,
            until,
            root,
            max_ply,
            min_games,
            moves,
            politeness,
            multipv,
            players,
            state,
            pins,
        } = self;
        Ok(match kind {
            SourceKind::Pgn | SourceKind::Bgn => {
                let format =
                    if kind == SourceKind::Bgn { GameFormat::Bgn } else { GameFormat::Pgn };
                let files = match (path, paths, manifest) {
                    (Some(path), None, None) => GameFiles::Path(path),
                    (None, Some(paths), None) => GameFiles::Paths(paths),
                    (None, None, Some(manifest)) => GameFiles::Manifest(manifest),
                    (None, None, None) => {
                        return Err("a game source needs `paths` or `manifest`".into());
                    }
                    (path, paths, _) => {
                        let given: Vec<&str> = [
                            ("`path`", path.is_some()),
                            ("`paths`", paths.is_some()),
                            ("`manifest`", true),
                        ]
                        .into_iter()
                        .filter(|(_, on)| *on)
                        .map(|(s, _)| s)
                        .take(2)
                        .collect();
                        return Err(format!(
                            "a game source has both {}: give one",
                            given.join(" and ")
                        ));
                    }
                };
                if pins.is_some() && matches!(files, GameFiles::Manifest(_)) {
                    return Err("`pins` pins the files of `path` or `paths`; a collection's files are pinned by its manifest".into());
                }
                SourceSpec::Games(GameSource {
                    format,
                    files,
                    url,
                    blake3,
                    filter,
                    allow_empty,
                    players,
                    state,
                    pins,
                })
            }
            SourceKind::LichessDb => {
                let months = months.ok_or(
                    "a lichess-db source needs `months`, e.g. [\"2013-01\", \"2024-03..2024-05\"]",
                )?;
                SourceSpec::LichessDb(LichessDbSource {
                    months,
                    variant,
                    url,
                    blake3,
                    filter,
                    state,
                })
            }
            SourceKind::LichessExplorer => {
                let database = database
                    .ok_or("an explorer crawl needs `database` (\"masters\" or \"lichess\")")?;
                let url = url.ok_or(
                    "an explorer crawl needs `url` (e.g. \"https://explorer.lichess.org\")",
                )?;
                SourceSpec::Explorer(ExplorerSource {
                    database,
                    url,
                    token_env,
                    speeds,
                    ratings,
                    since,
                    until,
                    root,
                    max_ply,
                    min_games,
                    moves,
                    politeness,
                    blake3,
                })
            }
            SourceKind::LichessCloudEval => {
                let url = url.ok_or(
                    "a cloud-eval source needs `url`, the server (\"https://lichess.org\")",
                )?;
                SourceSpec::CloudEval(CloudEvalSource {
                    url,
                    token_env,
                    politeness,
                    multipv,
                    blake3,
                })
            }
            _ => {
                let kind = kind.file_kind().expect("the other kinds are pinned files");
                if url.is_none() && path.is_none() {
                    return Err(match kind {
                        FileKind::CountsState => {
                            "a counts-state source needs `path`, the state folder".into()
                        }
                        _ => "needs `url` or `path`".into(),
                    });
                }
                SourceSpec::File(FileSource { kind, url, path, blake3 })
            }
        })
    }
}

/// Why `setting` may not be written under `kind`, and the kinds it belongs to.
fn stray_setting(kind: SourceKind, setting: &str) -> String {
    let owners: Vec<String> = SourceKind::ALL
        .iter()
        .filter(|k| k.takes().contains(&setting))
        .map(|k| format!("{:?}", k.name()))
        .collect();
    format!(
        "kind {:?} takes no `{setting}` (a setting of kind {}); it takes {}",
        kind.name(),
        owners.join(", "),
        kind.takes().iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
    )
}

impl From<SourceSpec> for FlatSource {
    fn from(spec: SourceSpec) -> FlatSource {
        let mut flat = FlatSource::of_kind(spec.kind());
        match spec {
            SourceSpec::File(FileSource { kind: _, url, path, blake3 }) => {
                FlatSource { url, path, blake3, ..flat }
            }
            SourceSpec::Games(GameSource {
                format: _,
                files,
                url,
                blake3,
                filter,
                allow_empty,
                players,
                state,
                pins,
            }) => {
                match files {
                    GameFiles::Path(path) => flat.path = Some(path),
                    GameFiles::Paths(paths) => flat.paths = Some(paths),
                    GameFiles::Manifest(manifest) => flat.manifest = Some(manifest),
                }
                FlatSource { url, blake3, filter, allow_empty, players, state, pins, ..flat }
            }
            SourceSpec::LichessDb(LichessDbSource {
                months,
                variant,
                url,
                blake3,
                filter,
                state,
            }) => FlatSource { months: Some(months), variant, url, blake3, filter, state, ..flat },
            SourceSpec::Explorer(ExplorerSource {
                database,
                url,
                token_env,
                speeds,
                ratings,
                since,
                until,
                root,
                max_ply,
                min_games,
                moves,
                politeness,
                blake3,
            }) => FlatSource {
                database: Some(database),
                url: Some(url),
                token_env,
                speeds,
                ratings,
                since,
                until,
                root,
                max_ply,
                min_games,
                moves,
                politeness,
                blake3,
                ..flat
            },
            SourceSpec::CloudEval(CloudEvalSource {
                url,
                token_env,
                politeness,
                multipv,
                blake3,
            }) => FlatSource { url: Some(url), token_env, politeness, multipv, blake3, ..flat },
        }
    }
}

/// Reads `[sources]`: each table as a [`FlatSource`] turned into its kind's
/// [`SourceSpec`]. A table that describes no source is an error of that table, so that
/// the diagnostic points at its header and names the source.
pub(super) fn deserialize_sources<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, SourceSpec>, D::Error> {
    deserializer.deserialize_map(SourcesVisitor)
}

/// The visitor of the `[sources]` table.
struct SourcesVisitor;

impl<'de> Visitor<'de> for SourcesVisitor {
    type Value = BTreeMap<String, SourceSpec>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("tables of sources by name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut sources = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            let spec = map.next_value_seed(NamedSource(&name))?;
            sources.insert(name, spec);
        }
        Ok(sources)
    }
}

/// One `[sources.<name>]` table, read knowing its name: an error raised here is the
/// table's, which the TOML reader places at its header.
struct NamedSource<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for NamedSource<'_> {
    type Value = SourceSpec;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<SourceSpec, D::Error> {
        FlatSource::deserialize(deserializer)?
            .into_spec()
            .map_err(|why| D::Error::custom(format!("source {:?}: {why}", self.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The error of pipeline text `text`: its message and the text its label points at.
    fn error_of(text: &str) -> (String, String) {
        let e = super::super::parse(text.into(), Path::new("pipeline.toml"), None)
            .expect_err("an invalid pipeline");
        let span = e.span.expect("a diagnostic with a place");
        (e.message.clone(), text[span.offset()..span.offset() + span.len()].to_string())
    }

    /// A setting written under a kind that does not take it is refused at the source's
    /// header, naming the source, the setting, the kind and where the setting belongs.
    #[test]
    fn a_setting_of_another_kind_is_named_at_its_source() {
        let cases = [
            (
                "[sources.a]\nkind = \"pgn\"\npaths = [\"g.pgn\"]\nmonths = [\"2013-01\"]\n",
                "[sources.a]",
                "source \"a\": kind \"pgn\" takes no `months` (a setting of kind \"lichess-db\")",
            ),
            (
                "[sources.t]\nkind = \"lichess-tsv\"\npath = \"a.tsv\"\n\n[sources.t.filter]\nmin_rating = 1\n",
                "[sources.t]",
                "kind \"lichess-tsv\" takes no `filter` (a setting of kind \"pgn\", \"bgn\", \"lichess-db\")",
            ),
            (
                "[sources.e]\nkind = \"lichess-explorer\"\ndatabase = \"masters\"\nurl = \"http://127.0.0.1:9\"\nmultipv = 2\n",
                "[sources.e]",
                "kind \"lichess-explorer\" takes no `multipv` (a setting of kind \"lichess-cloud-eval\")",
            ),
            (
                "[sources.c]\nkind = \"lichess-cloud-eval\"\nurl = \"http://127.0.0.1:9\"\nroot = \"1. e4\"\n",
                "[sources.c]",
                "kind \"lichess-cloud-eval\" takes no `root` (a setting of kind \"lichess-explorer\")",
            ),
            (
                "[sources.d]\nkind = \"lichess-db\"\nmonths = [\"2013-01\"]\nplayers = [\"X\"]\n",
                "[sources.d]",
                "kind \"lichess-db\" takes no `players` (a setting of kind \"pgn\", \"bgn\")",
            ),
            (
                "[sources.p]\nkind = \"pgn\"\npaths = [\"g.pgn\"]\ntoken_env = \"T\"\n",
                "[sources.p]",
                "takes no `token_env` (a setting of kind \"lichess-explorer\", \"lichess-cloud-eval\"); it takes `url`, `path`, `paths`",
            ),
            // An inline table is pointed at as a whole.
            (
                "sources.i = { kind = \"counts\", path = \"c.okbc\", allow_empty = true }\n",
                "{ kind = \"counts\", path = \"c.okbc\", allow_empty = true }",
                "source \"i\": kind \"counts\" takes no `allow_empty`",
            ),
        ];
        for (text, at, said) in cases {
            let (message, place) = error_of(text);
            assert!(message.contains(said), "{message}");
            assert_eq!(place, at, "{message}");
        }
    }

    /// A setting a kind needs, missing, or two ways of naming a game source's files.
    #[test]
    fn a_missing_or_doubled_setting_is_named_at_its_source() {
        let cases = [
            (
                "[sources.t]\nkind = \"scid-eco\"\nblake3 = \"00\"\n",
                "source \"t\": needs `url` or `path`",
            ),
            (
                "[sources.g]\nkind = \"bgn\"\nallow_empty = true\n",
                "source \"g\": a game source needs `paths` or `manifest`",
            ),
            (
                "[sources.g]\nkind = \"pgn\"\npaths = [\"a\"]\nmanifest = \"m.tsv\"\n",
                "a game source has both `paths` and `manifest`: give one",
            ),
            (
                "[sources.g]\nkind = \"pgn\"\npath = \"a\"\npaths = [\"b\"]\n",
                "a game source has both `path` and `paths`: give one",
            ),
            ("[sources.d]\nkind = \"lichess-db\"\n", "a lichess-db source needs `months`"),
            (
                "[sources.e]\nkind = \"lichess-explorer\"\nurl = \"http://127.0.0.1:9\"\n",
                "an explorer crawl needs `database`",
            ),
            (
                "[sources.e]\nkind = \"lichess-explorer\"\ndatabase = \"lichess\"\n",
                "an explorer crawl needs `url`",
            ),
            ("[sources.c]\nkind = \"lichess-cloud-eval\"\n", "a cloud-eval source needs `url`"),
        ];
        for (text, said) in cases {
            let (message, place) = error_of(text);
            assert!(message.contains(said), "{message}");
            assert!(place.starts_with("[sources."), "{place}");
        }
    }

    /// Under a profile the table has no place of its own: the profile's header is shown,
    /// and the message still names the source.
    #[test]
    fn a_profile_that_breaks_a_source_names_it() {
        let text = "[sources.g]\nkind = \"pgn\"\npaths = [\"a.pgn\"]\n\n[profile.db.sources.g]\nkind = \"lichess-db\"\n";
        let e = super::super::parse(text.into(), Path::new("pipeline.toml"), Some("db"))
            .expect_err("an invalid profile");
        assert!(e.message.contains("profile \"db\" makes the pipeline invalid: source \"g\": kind \"lichess-db\" takes no `paths`"), "{}", e.message);
    }

    /// Each kind becomes its variant, reads back to the same flat table, and has the name
    /// pipeline.toml gives it.
    #[test]
    fn every_kind_has_its_variant_and_round_trips() {
        for kind in SourceKind::ALL {
            let mut flat = FlatSource::of_kind(kind);
            flat.url = Some("http://127.0.0.1:9".into());
            match kind {
                SourceKind::Pgn | SourceKind::Bgn => {
                    flat.paths = Some(vec!["g/*".into()]);
                    flat.pins = Some(BTreeMap::from([("g/a.pgn".into(), "00".repeat(32))]));
                }
                SourceKind::LichessDb => flat.months = Some(vec!["2013-01".into()]),
                SourceKind::LichessExplorer => flat.database = Some(Database::Masters),
                SourceKind::CountsState => (flat.url, flat.path) = (None, Some("state".into())),
                _ => {}
            }
            let spec = flat.clone().into_spec().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            assert_eq!(spec.kind(), kind);
            assert_eq!(
                serde_json::to_value(kind).expect("a kind is JSON"),
                kind.name(),
                "the name pipeline.toml writes"
            );
            assert_eq!(spec.kind().is_pinned_file(), matches!(spec, SourceSpec::File(_)));
            assert_eq!(FlatSource::from(spec), flat);
        }
    }
}
