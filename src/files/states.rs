//! Knowing a file's hash without reading it: a stat cache, like git's index.
//!
//! A file whose size, modification time and inode are unchanged since it was last hashed
//! keeps its recorded hash; touching a file changes its mtime, so it is re-hashed, and if
//! its bytes are the same nothing downstream reruns.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::hash::{Hash, hash_file};
use super::write::write_atomic;

/// The stat cache's file name, in the build cache (a make, `okb fetch` and `okb pin`
/// share it).
pub const FILE_NAME: &str = "file-states.json";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    len: u64,
    mtime_ns: i128,
    inode: u64,
    hash: Hash,
}

/// The stat cache, loaded from and saved to one file.
#[derive(Debug, Default)]
pub struct FileStates {
    path: PathBuf,
    stamps: BTreeMap<String, Stamp>,
    dirty: bool,
}

fn stamp_of(meta: &std::fs::Metadata) -> (u64, i128, u64) {
    (meta.len(), meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128, meta.ino())
}

impl FileStates {
    /// Loads the stat cache at `path` (empty when missing or unreadable).
    pub fn load(path: PathBuf) -> FileStates {
        let stamps = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        FileStates { path, stamps, dirty: false }
    }

    /// The BLAKE3 of the file at `file`, from the stat cache when the file is unchanged.
    pub fn hash(&mut self, file: &Path) -> std::io::Result<Hash> {
        self.cached(file.display().to_string(), file, hash_file)
    }

    /// The hash recorded under `key` if `file` is unchanged since, else `compute`'s
    /// (recorded with the file's stamp).
    fn cached(
        &mut self,
        key: String,
        file: &Path,
        compute: impl FnOnce(&Path) -> std::io::Result<Hash>,
    ) -> std::io::Result<Hash> {
        let meta = std::fs::metadata(file)?;
        let (len, mtime_ns, inode) = stamp_of(&meta);
        if let Some(s) = self.stamps.get(&key)
            && s.len == len
            && s.mtime_ns == mtime_ns
            && s.inode == inode
        {
            return Ok(s.hash.clone());
        }
        let hash = compute(file)?;
        self.stamps.insert(key, Stamp { len, mtime_ns, inode, hash: hash.clone() });
        self.dirty = true;
        Ok(hash)
    }

    /// Whether `file` exists and its recorded hash is `hash` (re-hashing if it changed).
    pub fn matches(&mut self, file: &Path, hash: &str) -> bool {
        self.hash(file).is_ok_and(|h| h == hash)
    }

    /// The BLAKE3 of the bytes that the zstd file `file` decompresses to, from the stat
    /// cache when the file is unchanged (kept apart from [`FileStates::hash`]'s entry).
    pub fn decoded_hash(&mut self, file: &Path) -> std::io::Result<Hash> {
        self.cached(format!("zstd:{}", file.display()), file, |file| {
            let mut hasher = blake3::Hasher::new();
            hasher.update_reader(zstd::stream::read::Decoder::new(std::fs::File::open(file)?)?)?;
            Ok(hasher.finalize().to_hex().to_string())
        })
    }

    /// Records that the zstd file `file` (just written) decompresses to bytes with `hash`.
    pub fn record_decoded(&mut self, file: &Path, hash: &str) {
        self.record_as(format!("zstd:{}", file.display()), file, hash);
    }

    /// Records that `file` (just written) holds bytes with `hash`.
    pub fn record(&mut self, file: &Path, hash: &str) {
        self.record_as(file.display().to_string(), file, hash);
    }

    fn record_as(&mut self, key: String, file: &Path, hash: &str) {
        if let Ok(meta) = std::fs::metadata(file) {
            let (len, mtime_ns, inode) = stamp_of(&meta);
            self.stamps.insert(key, Stamp { len, mtime_ns, inode, hash: hash.to_string() });
            self.dirty = true;
        }
    }

    /// Saves the stat cache if it changed.
    pub fn save(&mut self) -> std::io::Result<()> {
        if self.dirty {
            write_atomic(&self.path, &serde_json::to_vec(&self.stamps)?)?;
            self.dirty = false;
        }
        Ok(())
    }
}
