//! Getting a pinned source's bytes: the project's content-addressed store `sources/`,
//! then mirror folders (matched by content hash, whatever the file names), then a
//! download. Every byte is verified against the pin before anything reads it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::dataflow::cache::{Hash, write_atomic};
use crate::dataflow::filestate::{FileStates, files_in};

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
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The bytes are not the pinned ones.
    #[error("source {name}: content hash mismatch for {location}\n  expected blake3 {expected}\n  actual   blake3 {actual}")]
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
    NotFound {
        /// Source name.
        name: String,
        /// The mirrors searched.
        mirrors: String,
        /// Why no download was tried.
        why: String,
    },
    /// A local file could not be read.
    #[error("source {name}: cannot read {path}: {source}")]
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
    pub fn resolve(&self, wanted: &Wanted<'_>, files: &mut FileStates) -> Result<Resolved, SourceError> {
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
            let (path, hash) = self.download(&name, url, None)?;
            return Ok(Resolved { path, hash, origin: Origin::Download(url.to_string()) });
        };
        let stored = self.store.join(pin);
        if stored.exists() && files.matches(&stored, pin) {
            return Ok(Resolved { path: stored, hash: pin.to_string(), origin: Origin::Store });
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
        for mirror in &self.mirrors {
            if let Some(found) = find_in_mirror(mirror, pin, files) {
                let bytes = std::fs::read(&found).map_err(io(&found))?;
                write_atomic(&stored, &bytes).map_err(io(&stored))?;
                files.record(&stored, pin);
                return Ok(Resolved { path: stored, hash: pin.into(), origin: Origin::Mirror(found) });
            }
        }
        let mirrors = if self.mirrors.is_empty() {
            "none given".to_string()
        } else {
            self.mirrors.iter().map(|m| m.display().to_string()).collect::<Vec<_>>().join(", ")
        };
        match (wanted.url, self.offline) {
            (Some(url), false) => {
                let (path, hash) = self.download(&name, url, Some(pin))?;
                files.record(&path, &hash);
                Ok(Resolved { path, hash, origin: Origin::Download(url.into()) })
            }
            (Some(_), true) => Err(SourceError::NotFound { name, mirrors, why: "--offline forbids downloading".into() }),
            (None, _) => Err(SourceError::NotFound { name, mirrors, why: "it has no url".into() }),
        }
    }

    /// Downloads `url` into the store, hashing while streaming; verifies against `pin`.
    pub fn download(&self, name: &str, url: &str, pin: Option<&str>) -> Result<(PathBuf, Hash), SourceError> {
        let fail = |reason: String| SourceError::Download { name: name.into(), url: url.into(), reason };
        let client = reqwest::blocking::Client::builder()
            .user_agent(concat!("okb/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(20))
            .timeout(std::time::Duration::from_secs(600))
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let mut response = client.get(url).send().map_err(|e| fail(error_chain(&e)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(fail(format!("HTTP {status}")));
        }
        let expected_len = response.content_length();
        std::fs::create_dir_all(&self.store).map_err(|e| fail(e.to_string()))?;
        let tmp = crate::dataflow::temp::path(&self.store, "download");
        let mut file = std::fs::File::create(&tmp).map_err(|e| fail(e.to_string()))?;
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        let result = loop {
            match response.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    total += n as u64;
                    if let Err(e) = file.write_all(&buf[..n]) {
                        break Err(fail(e.to_string()));
                    }
                }
                Err(e) => break Err(fail(format!("connection broke after {total} bytes: {e}"))),
            }
        };
        let result = result.and_then(|()| match expected_len {
            Some(len) if len != total => Err(fail(format!("connection closed after {total} of {len} bytes"))),
            _ => Ok(()),
        });
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        file.sync_data().map_err(|e| fail(e.to_string()))?;
        let hash = hasher.finalize().to_hex().to_string();
        if let Some(pin) = pin
            && pin != hash {
                let _ = std::fs::remove_file(&tmp);
                return Err(SourceError::Mismatch { name: name.into(), location: url.into(), expected: pin.into(), actual: hash });
            }
        let path = self.store.join(&hash);
        std::fs::rename(&tmp, &path).map_err(|e| fail(e.to_string()))?;
        Ok((path, hash))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
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
