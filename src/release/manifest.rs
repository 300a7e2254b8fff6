//! The build manifest: what a build was made from and what it made.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The manifest's format version (bumped when fields change meaning).
pub const FORMAT: u32 = 1;

/// What a build was made from and what it made.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub manifest: u32,
    /// The okb that built it.
    pub okb: Tool,
    /// The pipeline file (relative to the project) and its parameters after the profile.
    pub pipeline: PipelineFacts,
    /// Taxonomy sources by name.
    pub sources: BTreeMap<String, SourceFacts>,
    /// Game files, in path order.
    pub game_files: Vec<GameFileFacts>,
    /// What each game source holds, read from its games (how many, and the dates they
    /// span): how fresh the knowledge base is, in facts that the same inputs reproduce.
    /// (When a source was fetched is not here, since it would change with every fetch;
    /// `okb status` and the API's metadata show it.)
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub coverage: BTreeMap<String, Coverage>,
    /// The engine, when the pipeline annotates.
    pub engine: Option<EngineFacts>,
    /// Output files (exports and side reports), in path order.
    pub outputs: Vec<OutputFile>,
    /// The store: listed apart because it carries its own build history (a build number
    /// and a change log), so only a first build of a project reproduces it byte for byte.
    pub store: Option<OutputFile>,
}

/// The okb binary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// `CARGO_PKG_VERSION`.
    pub version: String,
    /// The git commit it was built from (`unknown` outside a checkout).
    pub commit: String,
}

/// The commit the running binary was built from, recorded by `main` at start-up (the
/// stamp is the binary's, so that a commit does not recompile this library).
static BUILT_FROM: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

impl Tool {
    /// Records the commit this binary was built from (`OKB_COMMIT`); the first call wins.
    pub fn record_commit(commit: &'static str) {
        let _ = BUILT_FROM.set(commit);
    }

    /// This binary (`unknown` commit when none was recorded, as in the library's tests).
    pub fn this() -> Tool {
        let commit = BUILT_FROM.get().copied().unwrap_or("unknown");
        Tool { version: env!("CARGO_PKG_VERSION").into(), commit: commit.into() }
    }
}

/// The pipeline as built.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PipelineFacts {
    /// Its file name, relative to the project.
    pub file: String,
    /// Every table, after the profile (as JSON).
    pub parameters: serde_json::Value,
}

/// One taxonomy source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceFacts {
    /// `lichess-tsv`, `scid-eco`, `eco-pgn`.
    pub kind: String,
    /// Where it is downloaded from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// Its local path, when it has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    /// BLAKE3 of the bytes read.
    pub blake3: String,
}

/// What one game source's games cover.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Game files (or counts files and crawls) of the source.
    pub files: u64,
    /// Games read, whatever became of them.
    pub games_read: u64,
    /// Games counted in the tree (each distinct game once).
    pub games_counted: u64,
    /// Counted games of the source's files left out as repeats of a game counted already
    /// (in this source or one before it).
    #[serde(default)]
    pub games_repeated: u64,
    /// The earliest day the oldest dated game can be on (`YYYY-MM-DD`; null when no game
    /// is dated). Always written: the value is also a step's, stored with postcard, which
    /// cannot read a record with a field left out.
    pub first_date: Option<String>,
    /// The earliest day the newest dated game can be on (`YYYY-MM-DD`; a game dated
    /// `2025.??.??` counts as 2025-01-01, so this never claims more than the tags say).
    pub last_date: Option<String>,
}

impl Coverage {
    /// Adds the counters of one of the source's files.
    pub fn add(&mut self, counters: &crate::games::report::Counters) {
        self.files += 1;
        self.games_read += counters.games_read;
        self.games_counted += counters.games_counted;
        if let Some((first, last)) = counters.dated {
            let (first, last) = (iso_day(first), iso_day(last));
            self.first_date = Some(self.first_date.take().map_or(first.clone(), |d| d.min(first)));
            self.last_date = Some(self.last_date.take().map_or(last.clone(), |d| d.max(last)));
        }
    }

    /// Takes `repeats` of the counted games away as repeats.
    pub fn skip_repeats(&mut self, repeats: u64) {
        self.games_counted -= repeats;
        self.games_repeated += repeats;
    }

    /// `380615 games, 1749-01 to 2025-05, 73576 repeats skipped` (months: days say more
    /// than the tags often know).
    pub fn summary(&self) -> String {
        let month = |d: &str| d.get(..7).unwrap_or(d).to_string();
        let repeats = match self.games_repeated {
            0 => String::new(),
            n => format!(", {n} repeats skipped"),
        };
        match (&self.first_date, &self.last_date) {
            (Some(first), Some(last)) => {
                format!(
                    "{} games, {} to {}{repeats}",
                    self.games_counted,
                    month(first),
                    month(last)
                )
            }
            _ => format!("{} games, undated{repeats}", self.games_counted),
        }
    }
}

/// `yyyymmdd` as `YYYY-MM-DD`.
fn iso_day(day: u32) -> String {
    format!("{:04}-{:02}-{:02}", day / 10000, day / 100 % 100, day % 100)
}

/// One game file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GameFileFacts {
    /// The `[sources.X]` it belongs to.
    pub source: String,
    /// Its path relative to the project.
    pub path: String,
    /// BLAKE3 of its bytes.
    pub blake3: String,
}

/// The engine: its binary's hash (its identity: a name or a path says less), the name it
/// gave over UCI, where the evaluations came from, and the settings it ran with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineFacts {
    /// BLAKE3 of the binary (`none` when no engine is installed and evaluation sources
    /// cover every node).
    pub binary_blake3: String,
    /// The engine's `id name` over UCI (`Stockfish 15.1`) when the build asked it for a
    /// result (searched, or served from the engine cache); `None` when evaluation sources
    /// covered every node, so no engine was identified. Only the binary decides it, so
    /// the manifest stays a function of the pins and the binary.
    #[serde(default)]
    pub name: Option<String>,
    /// Where the store's evaluations came from: an evaluation source's `<name>@<pin>` or
    /// the engine's name, with the number of positions each gave.
    #[serde(default)]
    pub evaluations: BTreeMap<String, usize>,
    /// `[engine]` as built (depths, multipv, …).
    pub settings: serde_json::Value,
}

/// One output file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputFile {
    /// Relative to the project.
    pub path: String,
    /// The step that writes it.
    pub step: String,
    /// BLAKE3 of its bytes.
    pub blake3: String,
    /// Its size.
    pub bytes: u64,
}

impl OutputFile {
    /// Hashes the file at `root/path`.
    pub fn read(root: &Path, path: &str, step: &str) -> std::io::Result<OutputFile> {
        let full = root.join(path);
        let blake3 = crate::files::hash_own_file(&full)?;
        let bytes = std::fs::metadata(&full)?.len();
        Ok(OutputFile { path: path.into(), step: step.into(), blake3, bytes })
    }
}

/// `path` relative to `root`, with `/` separators (as written in pipeline.toml).
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

impl Manifest {
    /// The manifest as written: pretty JSON, fields in a fixed order, a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a manifest serializes");
        bytes.push(b'\n');
        bytes
    }

    /// Reads a manifest file.
    pub fn load(path: &Path) -> Result<Manifest, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not an okb manifest: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_survives_the_step_cache_dated_or_not() {
        // The `coverage` step's value is stored with postcard, which writes every field.
        let mut sources = BTreeMap::new();
        let mut dated = Coverage::default();
        dated.add(&crate::games::report::Counters {
            games_read: 3,
            games_counted: 2,
            dated: Some((17490101, 20250102)),
            ..Default::default()
        });
        sources.insert("masters".to_string(), dated);
        sources.insert(
            "undated".to_string(),
            Coverage { files: 1, games_read: 5, games_counted: 5, ..Default::default() },
        );
        let bytes = postcard::to_allocvec(&sources).unwrap();
        assert_eq!(postcard::from_bytes::<BTreeMap<String, Coverage>>(&bytes).unwrap(), sources);
        assert_eq!(sources["masters"].summary(), "2 games, 1749-01 to 2025-01");
        assert_eq!(sources["undated"].summary(), "5 games, undated");
    }
}
