//! Getting a pinned source's bytes: the project's content-addressed store `sources/`,
//! then mirror folders (matched by content hash, whatever the file names), then a
//! download. Every byte is verified against the pin before anything reads it.
//!
//! A mirror may hold a file zstd-compressed: `<name>.zst`, where `<name>` is the last
//! segment of the source's URL, is taken when its *decompressed* bytes match the pin,
//! and is kept compressed in the store as `sources/<pin>.zst` (game readers decompress
//! by magic bytes; the pin stays the BLAKE3 of the original bytes).

pub mod collection;
mod download;
pub mod fetched;
pub mod lichess_db;
pub mod resume;

use std::path::{Path, PathBuf};

use crate::files::{FileStates, files_in};
use crate::files::{Hash, write_atomic};

/// Where a source's bytes were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Already in the project's `sources/` store.
    Store,
    /// A local `path` in pipeline.toml.
    Local,
    /// Copied from a mirror folder.
    Mirror(PathBuf),
    /// Downloaded.
    Download(String),
}

/// A source file ready to read.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The verified file.
    pub path: PathBuf,
    /// Its BLAKE3.
    pub hash: Hash,
    /// Where it came from.
    pub origin: Origin,
}

/// Why a source could not be had.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SourceError {
    /// The bytes are not the pinned ones.
    #[error("source {name}: pinned blake3 {expected},\n{location} gave blake3 {actual}")]
    #[diagnostic(
        code(okb::source::mismatch),
        help("if the new bytes are intended, run `okb pin --force {name}`")
    )]
    Mismatch {
        /// Source name.
        name: String,
        /// URL or path.
        location: String,
        /// The pin.
        expected: Hash,
        /// What the bytes hash to.
        actual: Hash,
    },
    /// The download failed.
    #[error("source {name}: download of {url} failed: {reason}")]
    #[diagnostic(code(okb::source::download))]
    Download {
        /// Source name.
        name: String,
        /// URL.
        url: String,
        /// What went wrong (HTTP status, dropped connection, …).
        reason: String,
    },
    /// Nowhere to get it from.
    #[error("source {name}: not in sources/, not in any mirror ({mirrors}), and {why}")]
    #[diagnostic(
        code(okb::source::missing),
        help(
            "put the file in a mirror folder (--mirror DIR or OKB_MIRROR), or download it: the same command without --offline or --locked"
        )
    )]
    NotFound {
        /// Source name.
        name: String,
        /// The mirrors searched.
        mirrors: String,
        /// Why no download was tried.
        why: String,
    },
    /// A collection's manifest is malformed.
    #[error("source {name}: {error}")]
    #[diagnostic(code(okb::source::collection))]
    Collection {
        /// Source name.
        name: String,
        /// The line at fault.
        #[source]
        error: Box<collection::ManifestError>,
    },
    /// A local file could not be read.
    #[error("source {name}: cannot read {path}: {source}")]
    #[diagnostic(code(okb::source::io))]
    Io {
        /// Source name.
        name: String,
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Resolves pinned sources for one project.
pub struct Resolver {
    /// The project's content-addressed store (`sources/`).
    pub store: PathBuf,
    /// Mirror folders, searched recursively.
    pub mirrors: Vec<PathBuf>,
    /// Never download.
    pub offline: bool,
}

impl Resolver {
    /// A resolver over the source store `store`, searching `mirrors` before downloading
    /// (never, when `offline`).
    pub fn new(store: PathBuf, mirrors: Vec<PathBuf>, offline: bool) -> Resolver {
        Resolver { store, mirrors, offline }
    }
}

/// What pipeline.toml says about one source file.
#[derive(Clone, Debug)]
pub struct Wanted<'a> {
    /// Source name (for messages).
    pub name: &'a str,
    /// Pin, if any.
    pub blake3: Option<&'a str>,
    /// Local path (already resolved against the pipeline's folder).
    pub path: Option<PathBuf>,
    /// Download URL.
    pub url: Option<&'a str>,
}

impl Resolver {
    /// Finds the bytes of `wanted`, verified against its pin. Sources without a pin must be
    /// local files (`okb pin` computes pins for downloads).
    pub fn resolve(
        &self,
        wanted: &Wanted<'_>,
        files: &mut FileStates,
    ) -> Result<Resolved, SourceError> {
        let name = wanted.name.to_string();
        let io = |path: &Path| {
            let path = path.display().to_string();
            let name = name.clone();
            move |source| SourceError::Io { name, path, source }
        };
        let Some(pin) = wanted.blake3 else {
            if let Some(path) = &wanted.path {
                let hash = files.hash(path).map_err(io(path))?;
                return Ok(Resolved { path: path.clone(), hash, origin: Origin::Local });
            }
            let url = wanted.url.unwrap_or_default();
            if self.offline {
                let why = "it has no pin (so no copy can be found by hash), and --offline (or --locked) forbids downloading".into();
                return Err(SourceError::NotFound { name, mirrors: self.describe_mirrors(), why });
            }
            let (path, hash) = self.download(&name, url, None)?;
            return Ok(Resolved { path, hash, origin: Origin::Download(url.to_string()) });
        };
        let stored = self.store.join(pin);
        if stored.exists() && files.matches(&stored, pin) {
            return Ok(Resolved { path: stored, hash: pin.to_string(), origin: Origin::Store });
        }
        let packed = self.store.join(format!("{pin}.zst"));
        if packed.exists() && files.decoded_hash(&packed).is_ok_and(|h| h == pin) {
            return Ok(Resolved { path: packed, hash: pin.to_string(), origin: Origin::Store });
        }
        if let Some(path) = &wanted.path {
            let hash = files.hash(path).map_err(io(path))?;
            if hash != pin {
                return Err(SourceError::Mismatch {
                    name,
                    location: path.display().to_string(),
                    expected: pin.into(),
                    actual: hash,
                });
            }
            return Ok(Resolved { path: path.clone(), hash, origin: Origin::Local });
        }
        if let Some(found) = self.compressed_in_mirrors(wanted.url, pin, files) {
            copy_atomic(&found, &packed).map_err(io(&packed))?;
            files.record_decoded(&packed, pin);
            fetched::write(
                &self.store,
                pin,
                &fetched::FetchRecord::now(format!("mirror {}", found.display()), None, None),
            );
            return Ok(Resolved { path: packed, hash: pin.into(), origin: Origin::Mirror(found) });
        }
        for mirror in &self.mirrors {
            if let Some(found) = find_in_mirror(mirror, pin, files) {
                let bytes = std::fs::read(&found).map_err(io(&found))?;
                write_atomic(&stored, &bytes).map_err(io(&stored))?;
                files.record(&stored, pin);
                fetched::write(
                    &self.store,
                    pin,
                    &fetched::FetchRecord::now(format!("mirror {}", found.display()), None, None),
                );
                return Ok(Resolved {
                    path: stored,
                    hash: pin.into(),
                    origin: Origin::Mirror(found),
                });
            }
        }
        let downloaded = match (wanted.url, self.offline) {
            (Some(url), false) => match self.download(&name, url, Some(pin)) {
                Ok((path, hash)) => {
                    files.record(&path, &hash);
                    return Ok(Resolved { path, hash, origin: Origin::Download(url.into()) });
                }
                Err(e @ SourceError::Mismatch { .. }) => return Err(e),
                Err(e) => Some(e),
            },
            _ => None,
        };
        // A mirror file named like the source but with other bytes explains more than
        // "not found" or a network error: the pin, or the mirror, is out of date.
        if let Some((found, actual)) = self.same_name_in_mirrors(wanted, files) {
            let location = format!("mirror file {}", found.display());
            return Err(SourceError::Mismatch { name, location, expected: pin.into(), actual });
        }
        if let Some(e) = downloaded {
            return Err(e);
        }
        let mirrors = self.describe_mirrors();
        let why = if wanted.url.is_some() {
            "--offline (or --locked) forbids downloading"
        } else {
            "it has no url"
        };
        Err(SourceError::NotFound { name, mirrors, why: why.into() })
    }

    /// The mirror file whose name is the last segment of the source's url (the longest
    /// match of trailing path segments wins), with its hash.
    fn same_name_in_mirrors(
        &self,
        wanted: &Wanted<'_>,
        files: &mut FileStates,
    ) -> Option<(PathBuf, Hash)> {
        let url = wanted.url?;
        let segments: Vec<&str> =
            url.split(['?', '#']).next()?.rsplit('/').take_while(|s| !s.is_empty()).collect();
        let file_name = *segments.first()?;
        let mut best: Option<(usize, PathBuf)> = None;
        for mirror in &self.mirrors {
            let mut candidates = files_in(mirror, true);
            candidates.sort();
            for path in candidates {
                if path.file_name().and_then(|n| n.to_str()) != Some(file_name) {
                    continue;
                }
                let components: Vec<_> = path.iter().rev().filter_map(|c| c.to_str()).collect();
                let matched = segments.iter().zip(&components).take_while(|(a, b)| a == b).count();
                if best.as_ref().is_none_or(|(m, _)| matched > *m) {
                    best = Some((matched, path));
                }
            }
        }
        let (_, path) = best?;
        let hash = files.hash(&path).ok()?;
        Some((path, hash))
    }

    /// A mirror file `<url's file name>.zst` that decompresses to bytes hashing to `pin`.
    fn compressed_in_mirrors(
        &self,
        url: Option<&str>,
        pin: &str,
        files: &mut FileStates,
    ) -> Option<PathBuf> {
        let file_name =
            url?.split(['?', '#']).next()?.rsplit('/').next().filter(|n| !n.is_empty())?;
        let packed_name = format!("{file_name}.zst");
        for mirror in &self.mirrors {
            let mut candidates: Vec<PathBuf> = files_in(mirror, true)
                .into_iter()
                .filter(|p| p.file_name().and_then(|n| n.to_str()) == Some(packed_name.as_str()))
                .collect();
            candidates.sort();
            if let Some(found) =
                candidates.into_iter().find(|p| files.decoded_hash(p).is_ok_and(|h| h == pin))
            {
                return Some(found);
            }
        }
        None
    }

    /// The mirror folders for a message, flagging those that do not exist.
    fn describe_mirrors(&self) -> String {
        if self.mirrors.is_empty() {
            return "none given: pass --mirror DIR or set OKB_MIRROR".to_string();
        }
        let describe = |m: &PathBuf| {
            if m.is_dir() {
                m.display().to_string()
            } else {
                format!("{} (no such folder)", m.display())
            }
        };
        self.mirrors.iter().map(describe).collect::<Vec<_>>().join(", ")
    }

    /// Downloads `url` into the store (retrying transient failures), verified against `pin`.
    pub fn download(
        &self,
        name: &str,
        url: &str,
        pin: Option<&str>,
    ) -> Result<(PathBuf, Hash), SourceError> {
        download::download(&self.store, name, url, pin)
    }
}

/// Copies `from` to `to` through a temporary file, so `to` is whole or absent.
fn copy_atomic(from: &Path, to: &Path) -> std::io::Result<()> {
    let dir = to.parent().unwrap_or(Path::new(""));
    std::fs::create_dir_all(dir)?;
    let tmp = crate::files::temp::path(dir, "mirror");
    std::fs::copy(from, &tmp)?;
    std::fs::rename(&tmp, to)
}

/// A file under `dir` (recursively) whose bytes hash to `pin`.
fn find_in_mirror(dir: &Path, pin: &str, files: &mut FileStates) -> Option<PathBuf> {
    let mut candidates = files_in(dir, true);
    candidates.sort();
    candidates.into_iter().find(|p| files.matches(p, pin))
}

/// Mirror folders from `--mirror` flags and the `OKB_MIRROR` variable (colon-separated).
pub fn mirrors(flags: &[PathBuf]) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = flags.to_vec();
    if let Ok(env) = std::env::var("OKB_MIRROR") {
        all.extend(env.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    all
}
