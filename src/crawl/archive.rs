//! Where crawled answers live: `sources/explorer/` in the project (beside the other
//! pinned sources, so `okb clean` of the build cache never loses a fetched answer), and
//! the same layout under `explorer/` in mirror folders:
//!
//! ```text
//! explorer/objects/ab/<blake3>      one answer body, named by its hash
//! explorer/manifests/<blake3>.json  one finished crawl (the pin is its hash)
//! explorer/journals/<source>-<server>.journal
//!                                   `request<TAB>blake3` per answer, in fetch order
//! ```
//!
//! An answer is written (temporary file, then rename) before its journal line is
//! appended, so after a kill at any point every journal line names a stored answer; a
//! torn last line is ignored when the journal is read.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::files::{Hash, hash_bytes, write_atomic};

/// The answers of a project, and its mirrors'.
#[derive(Clone, Debug)]
pub struct Archive {
    /// `sources/explorer` of the project.
    pub root: PathBuf,
    /// `explorer` folders of the mirrors, searched in order.
    pub mirrors: Vec<PathBuf>,
}

impl Archive {
    /// The archive of a project whose source store is `sources` and mirrors `mirrors`.
    pub fn new(sources: &Path, mirrors: &[PathBuf]) -> Archive {
        Archive::at(sources, mirrors, "explorer")
    }

    /// The same layout under `folder` of the source store and the mirrors (the answers of
    /// another API: `cloud-eval`).
    pub fn at(sources: &Path, mirrors: &[PathBuf], folder: &str) -> Archive {
        Archive {
            root: sources.join(folder),
            mirrors: mirrors.iter().map(|m| m.join(folder)).collect(),
        }
    }

    fn object_in(dir: &Path, hash: &str) -> PathBuf {
        dir.join("objects").join(&hash[..2.min(hash.len())]).join(hash)
    }

    fn manifest_in(dir: &Path, hash: &str) -> PathBuf {
        dir.join("manifests").join(format!("{hash}.json"))
    }

    /// Where the answer `hash` is kept in the project.
    pub fn object_path(&self, hash: &str) -> PathBuf {
        Self::object_in(&self.root, hash)
    }

    /// Where the manifest `hash` is kept in the project.
    pub fn manifest_path(&self, hash: &str) -> PathBuf {
        Self::manifest_in(&self.root, hash)
    }

    /// Stores an answer body, returning its hash.
    pub fn put(&self, body: &[u8]) -> std::io::Result<Hash> {
        self.put_in(Self::object_in, body)
    }

    /// Stores a manifest's bytes, returning their hash.
    pub fn put_manifest(&self, bytes: &[u8]) -> std::io::Result<Hash> {
        self.put_in(Self::manifest_in, bytes)
    }

    /// The answer `hash`: from the project, else from a mirror (copied into the project);
    /// `None` when no copy has those bytes.
    pub fn get(&self, hash: &str) -> std::io::Result<Option<Vec<u8>>> {
        self.get_in(Self::object_in, hash)
    }

    /// The manifest `hash`'s bytes, from the project or a mirror (then copied in).
    pub fn get_manifest(&self, hash: &str) -> std::io::Result<Option<Vec<u8>>> {
        self.get_in(Self::manifest_in, hash)
    }

    /// Whether the project holds the answer `hash` (mirrors are not searched: this is the
    /// cheap check of a make that has everything).
    pub fn has(&self, hash: &str) -> bool {
        self.object_path(hash).exists()
    }

    fn put_in(&self, place: fn(&Path, &str) -> PathBuf, bytes: &[u8]) -> std::io::Result<Hash> {
        let hash = hash_bytes(bytes);
        let path = place(&self.root, &hash);
        if !path.exists() {
            write_atomic(&path, bytes)?;
        }
        Ok(hash)
    }

    fn get_in(
        &self,
        place: fn(&Path, &str) -> PathBuf,
        hash: &str,
    ) -> std::io::Result<Option<Vec<u8>>> {
        if let Some(bytes) = read_verified(&place(&self.root, hash), hash)? {
            return Ok(Some(bytes));
        }
        for mirror in &self.mirrors {
            if let Some(bytes) = read_verified(&place(mirror, hash), hash)? {
                write_atomic(&place(&self.root, hash), &bytes)?;
                return Ok(Some(bytes));
            }
        }
        Ok(None)
    }

    /// The journal of source `name` against `server`, optionally of a refresh.
    pub fn journal_path(&self, name: &str, server: &str, refresh: bool) -> PathBuf {
        let server = &hash_bytes(server.trim_end_matches('/').as_bytes())[..12];
        let suffix = if refresh { ".refresh.journal" } else { ".journal" };
        self.root.join("journals").join(format!("{name}-{server}{suffix}"))
    }
}

/// `path`'s bytes if it exists and they hash to `hash` (a damaged copy is removed: it
/// can only be fetched again).
fn read_verified(path: &Path, hash: &str) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) if hash_bytes(&bytes) == hash => Ok(Some(bytes)),
        Ok(_) => {
            let _ = std::fs::remove_file(path);
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The requests a server has answered, and the file that remembers them.
pub struct Journal {
    path: PathBuf,
    answered: HashMap<String, Hash>,
    file: Option<std::fs::File>,
}

impl Journal {
    /// Reads the journal at `path` (none yet: empty). A line that is not
    /// `request<TAB>hash` (the torn end of a killed write) is ignored.
    pub fn open(path: PathBuf) -> std::io::Result<Journal> {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut answered = HashMap::new();
        for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            if let Some((request, hash)) = line.trim_end().split_once('\t')
                && hash.len() == 64
            {
                answered.insert(request.to_string(), hash.to_string());
            }
        }
        Ok(Journal { path, answered, file: None })
    }

    /// Whether the server answered `request` before.
    pub fn contains(&self, request: &str) -> bool {
        self.get(request).is_some()
    }

    /// The stored answer's hash for `request`, if the server answered it.
    pub fn get(&self, request: &str) -> Option<&Hash> {
        self.answered.get(request)
    }

    /// Requests answered.
    pub fn len(&self) -> usize {
        self.answered.len()
    }

    /// Whether nothing was answered yet.
    pub fn is_empty(&self) -> bool {
        self.answered.is_empty()
    }

    /// Records that `request` was answered with `hash` (whose bytes are stored already).
    pub fn record(&mut self, request: &str, hash: &str) -> std::io::Result<()> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            // A torn last line (a killed write) must not swallow the next one.
            let torn =
                std::fs::read(&self.path).is_ok_and(|b| !b.is_empty() && !b.ends_with(b"\n"));
            let mut file =
                std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?;
            if torn {
                file.write_all(b"\n")?;
            }
            self.file = Some(file);
        }
        let file = self.file.as_mut().expect("opened above");
        // One write per line: a kill leaves whole lines and at most one torn one.
        file.write_all(format!("{request}\t{hash}\n").as_bytes())?;
        self.answered.insert(request.to_string(), hash.to_string());
        Ok(())
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_from_the_project_or_a_mirror_and_damage_is_a_miss() {
        let dir = std::env::temp_dir().join(format!("okb-archive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mirror = dir.join("mirror");
        let other = Archive::new(&mirror, &[]);
        let hash = other.put(b"{}").unwrap();
        let archive = Archive::new(&dir.join("sources"), std::slice::from_ref(&mirror));
        assert!(!archive.has(&hash));
        assert_eq!(archive.get(&hash).unwrap().unwrap(), b"{}");
        assert!(archive.has(&hash), "copied in from the mirror");
        std::fs::write(archive.object_path(&hash), b"{ }").unwrap();
        std::fs::remove_dir_all(&mirror).unwrap();
        assert_eq!(archive.get(&hash).unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_journal_survives_a_torn_last_line() {
        let dir = std::env::temp_dir().join(format!("okb-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("j.journal");
        let hash = "a".repeat(64);
        let mut journal = Journal::open(path.clone()).unwrap();
        journal.record("/masters?fen=x", &hash).unwrap();
        drop(journal);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"/masters?fen=y\taaaa");
        std::fs::write(&path, bytes).unwrap();
        let mut journal = Journal::open(path.clone()).unwrap();
        assert_eq!(journal.len(), 1);
        journal.record("/masters?fen=z", &hash).unwrap();
        let journal = Journal::open(path).unwrap();
        assert_eq!(journal.get("/masters?fen=z"), Some(&hash));
        assert_eq!(journal.len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
