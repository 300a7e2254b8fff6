//! The persistent cache: content-addressed blobs plus step records, all in `cache/`.
//!
//! * `objects/<blake3>`: step outputs and export files, named by the BLAKE3 of their
//!   bytes and verified on every read (a corrupt blob is treated as missing). One flat
//!   folder, not git's 256 shards: a build stores a few large blobs, and creating a
//!   folder costs as much as writing a megabyte (~0.4 ms on the ext4 here). Blobs of
//!   the sharded layout of earlier versions (`objects/ab/<blake3>`) move up when read.
//! * `steps/<key>`: a step's record (its output hash and report), named by the step key,
//!   the BLAKE3 of (step id, code version, parameters, input hashes).
//! * `last-parts.json`: the key components of each step's latest run, for `--explain`,
//!   in one file saved at the end of a make (one file per step cost a file creation per
//!   step built; a make killed before the end only loses explanations).
//!
//! Every file is written to a temporary name and renamed, so a build killed at any point
//! leaves either the old file or the new one, never a torn one.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, de::DeserializeOwned};

pub use crate::files::{Hash, hash_bytes, write_atomic};

/// Writes through to `inner`, hashing what passes.
struct HashingWriter<W> {
    inner: W,
    hasher: blake3::Hasher,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(bytes)?;
        self.hasher.update(&bytes[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A blob read as a stream and hashed on the way ([`Cache::open_blob`]).
pub struct VerifiedReader {
    inner: std::fs::File,
    hasher: blake3::Hasher,
    expected: Hash,
    checked: bool,
}

impl std::io::Read for VerifiedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        if n == 0 && !buf.is_empty() && !self.checked {
            // End of file: only now is it known whether the bytes were the blob's.
            self.checked = true;
            let found = self.hasher.finalize().to_hex().to_string();
            if found != self.expected {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "cache object {} is corrupt (its bytes hash to {found})",
                        self.expected
                    ),
                ));
            }
        }
        Ok(n)
    }
}

/// Writes postcard's encoding of the sequence `items` to `out` (its length, then each
/// item), encoding chunks of items on all cores. The bytes are exactly what
/// `postcard::to_extend` writes for a slice or `Vec`, so a value whose bulk is one long
/// vector can be streamed to [`Cache::put_stream`] in parallel and still be read back by
/// [`Cache::get_value`].
pub fn encode_seq_in_parallel<T: Serialize + Sync>(
    items: &[T],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    /// Items a worker encodes at once, and items encoded before their bytes are written:
    /// the bytes in memory stay a window's (tens of megabytes for a tree of millions of
    /// nodes, whose whole encoding was held twice before it was written).
    const CHUNK: usize = 256;
    const WINDOW: usize = 256 * CHUNK;
    let mut len = items.len() as u64;
    let mut prefix = Vec::with_capacity(10);
    while len >= 0x80 {
        prefix.push(len as u8 | 0x80);
        len >>= 7;
    }
    prefix.push(len as u8);
    out.write_all(&prefix)?;
    for window in items.chunks(WINDOW) {
        let chunks: Vec<Vec<u8>> = window
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut bytes = Vec::new();
                for item in chunk {
                    bytes = postcard::to_extend(item, bytes)
                        .expect("serializing to memory does not fail");
                }
                bytes
            })
            .collect();
        for chunk in chunks {
            out.write_all(&chunk)?;
        }
    }
    Ok(())
}

/// The record of one step run, stored under its key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Hash of the step's output blob.
    pub output: Hash,
    /// One-line description of what the step produced (`3807 rows, 0 warnings`).
    pub summary: String,
    /// Warnings the step reported.
    pub warnings: usize,
    /// The blob of the warnings themselves (a list of `Warning`), when there were any, so
    /// that a later run can show them again (`--strict`, `--json`) without rerunning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning_list: Option<Hash>,
}

/// What went into a step key, kept to explain the next rebuild.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyParts {
    /// Fingerprint of the step's code.
    pub code: Hash,
    /// The code files with short hashes.
    pub code_files: Vec<(String, String)>,
    /// Hash of each parameter, by path.
    pub params: Vec<(String, Hash)>,
    /// Named input hashes.
    pub inputs: Vec<(String, Hash)>,
}

/// Handle on the cache folder.
#[derive(Debug)]
pub struct Cache {
    root: PathBuf,
    /// `last-parts.json`, read when first asked.
    last_parts: std::sync::Mutex<Option<LastParts>>,
    /// What this process found, read or wrote ([`Cache::used`]).
    used: std::sync::Mutex<Used>,
}

/// The step records and objects a run of the plan found, read or wrote: after a dry
/// run with every step fresh, exactly what the current build needs (`okb clean
/// --unused` removes the rest).
#[derive(Clone, Debug, Default)]
pub struct Used {
    /// Step keys (names under `steps/`).
    pub records: std::collections::BTreeSet<String>,
    /// Object hashes (names under `objects/`).
    pub objects: std::collections::BTreeSet<Hash>,
}

/// The key parts of each step's latest run, by step id.
#[derive(Debug, Default)]
struct LastParts {
    by_step: std::collections::BTreeMap<String, KeyParts>,
    changed: bool,
}

impl Cache {
    /// The cache in `root` (created on first write).
    pub fn new(root: PathBuf) -> Cache {
        Cache { root, last_parts: Default::default(), used: Default::default() }
    }

    /// The latest key parts, loaded on first use (missing or unreadable: none).
    fn with_last_parts<R>(&self, f: impl FnOnce(&mut LastParts) -> R) -> R {
        let mut guard = self.last_parts.lock().expect("last parts poisoned");
        let loaded = guard.get_or_insert_with(|| {
            let by_step = std::fs::read(self.root.join("last-parts.json"))
                .ok()
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .unwrap_or_default();
            LastParts { by_step, changed: false }
        });
        f(loaded)
    }

    /// Notes that object `hash` is needed by what this process ran (an object a value
    /// names, which no read of the cache passes through).
    pub fn mark(&self, hash: &str) {
        self.used.lock().expect("used poisoned").objects.insert(hash.to_string());
    }

    fn mark_record(&self, key: &str, record: &StepRecord) {
        let mut used = self.used.lock().expect("used poisoned");
        used.records.insert(key.to_string());
        used.objects.insert(record.output.clone());
        used.objects.extend(record.warning_list.iter().cloned());
    }

    /// The records and objects found, read or written so far.
    pub fn used(&self) -> Used {
        self.used.lock().expect("used poisoned").clone()
    }

    /// The cache folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a side file of object `hash` is kept: something derived from the object
    /// alone (a shard's hot cut), `kind` naming what and `suffix` telling versions apart.
    /// It is no step's output: readers verify it or derive it again, and `okb clean
    /// --unused` removes it with its object.
    pub fn side_path(&self, kind: &str, hash: &str, suffix: &str) -> PathBuf {
        self.root.join("sides").join(kind).join(format!("{hash}-{suffix}"))
    }

    /// Where blob `hash` is stored.
    pub fn object_path(&self, hash: &str) -> PathBuf {
        self.root.join("objects").join(hash)
    }

    /// The path of blob `hash` if it is present, moving it out of the sharded layout of
    /// earlier versions (`objects/ab/<hash>`) when it is found there.
    fn present_object(&self, hash: &str) -> Option<PathBuf> {
        let path = self.object_path(hash);
        if path.exists() {
            return Some(path);
        }
        let shard = hash.get(..2)?;
        let sharded = self.root.join("objects").join(shard).join(hash);
        std::fs::rename(&sharded, &path).ok()?;
        Some(path)
    }

    /// Stores `bytes`, returning their hash.
    pub fn put_blob(&self, bytes: &[u8]) -> std::io::Result<Hash> {
        let hash = hash_bytes(bytes);
        // Written even when present: only a step that runs stores blobs, and an existing
        // blob may be the corrupt one it is replacing.
        write_atomic(&self.object_path(&hash), bytes)?;
        self.mark(&hash);
        Ok(hash)
    }

    /// The blob `hash`, if present and intact.
    pub fn get_blob(&self, hash: &str) -> Option<Vec<u8>> {
        self.mark(hash);
        let bytes = std::fs::read(self.present_object(hash)?).ok()?;
        (hash_bytes(&bytes) == hash).then_some(bytes)
    }

    /// Whether blob `hash` is present (not verified).
    pub fn has_blob(&self, hash: &str) -> bool {
        self.mark(hash);
        self.present_object(hash).is_some()
    }

    /// Stores a serializable value as a blob (postcard), streamed ([`Cache::put_stream`]):
    /// step values run to megabytes, and are never held whole in memory.
    pub fn put_value<T: Serialize>(&self, value: &T) -> std::io::Result<Hash> {
        self.put_stream(|out| postcard::to_io(value, out).map(drop).map_err(std::io::Error::other))
    }

    /// Stores the bytes `write` writes, returning their hash. They are streamed to a
    /// temporary file and hashed on the way (never held in memory: game counts run to
    /// gigabytes), then renamed to their hash. A failure of `write` is returned as it is;
    /// the cache's own I/O errors convert.
    pub fn put_stream<E: From<std::io::Error>>(
        &self,
        write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<Hash, E> {
        let dir = self.root.join("objects");
        std::fs::create_dir_all(&dir)?;
        let tmp = crate::files::temp::path(&dir, "value");
        let stored = (|| -> Result<Hash, E> {
            let hashing = HashingWriter {
                inner: std::fs::File::create(&tmp)?,
                hasher: blake3::Hasher::new(),
            };
            let mut out = std::io::BufWriter::with_capacity(1 << 16, hashing);
            write(&mut out)?;
            let hashing = out.into_inner().map_err(|e| e.into_error())?;
            let hash = hashing.hasher.finalize().to_hex().to_string();
            std::fs::rename(&tmp, self.object_path(&hash))?;
            self.mark(&hash);
            Ok(hash)
        })();
        if stored.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        stored
    }

    /// Reads blob `hash` as a stream, verified as it is read: the end of the stream is an
    /// `InvalidData` error instead when the bytes were not the blob's. A reader must so
    /// read to the end before it trusts what it read (the k-way merges do).
    pub fn open_blob(&self, hash: &str) -> std::io::Result<VerifiedReader> {
        self.mark(hash);
        let path = self.present_object(hash).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("cache object {hash} is missing"),
            )
        })?;
        let file = std::fs::File::open(path)?;
        Ok(VerifiedReader {
            inner: file,
            hasher: blake3::Hasher::new(),
            expected: hash.to_string(),
            checked: false,
        })
    }

    /// Loads a value stored by [`Cache::put_value`]; `None` when missing or corrupt.
    pub fn get_value<T: DeserializeOwned>(&self, hash: &str) -> Option<T> {
        postcard::from_bytes(&self.get_blob(hash)?).ok()
    }

    /// The record of step key `key`, if the step ran before and its output is present.
    pub fn step(&self, key: &str) -> Option<StepRecord> {
        self.record(key).filter(|record| self.has_blob(&record.output))
    }

    /// The record of step key `key`, whatever became of its output (steps whose output
    /// is a file outside the cache check that file themselves).
    pub fn record(&self, key: &str) -> Option<StepRecord> {
        let bytes = std::fs::read(self.root.join("steps").join(key)).ok()?;
        let record = serde_json::from_slice(&bytes).ok()?;
        self.mark_record(key, &record);
        Some(record)
    }

    /// The record of step key `key`, read without counting it as used by this run
    /// (what an earlier run left, consulted to explain or to check a file).
    pub fn peek_record(&self, key: &str) -> Option<StepRecord> {
        serde_json::from_slice(&std::fs::read(self.root.join("steps").join(key)).ok()?).ok()
    }

    /// Records that step key `key` produced `record`.
    pub fn put_step(&self, key: &str, record: &StepRecord) -> std::io::Result<()> {
        self.mark_record(key, record);
        write_atomic(&self.root.join("steps").join(key), &serde_json::to_vec(record)?)
    }

    /// The key parts of step `id`'s latest run.
    pub fn last_parts(&self, id: &str) -> Option<KeyParts> {
        self.with_last_parts(|last| last.by_step.get(id).cloned())
    }

    /// Remembers the key parts of step `id`'s latest run (saved by [`Cache::save_last_parts`]).
    pub fn put_last_parts(&self, id: &str, parts: &KeyParts) {
        self.with_last_parts(|last| {
            if last.by_step.get(id) != Some(parts) {
                last.by_step.insert(id.to_string(), parts.clone());
                last.changed = true;
            }
        })
    }

    /// Saves the latest key parts, if any changed.
    pub fn save_last_parts(&self) -> std::io::Result<()> {
        let mut guard = self.last_parts.lock().expect("last parts poisoned");
        let Some(last) = guard.as_mut().filter(|last| last.changed) else { return Ok(()) };
        write_atomic(&self.root.join("last-parts.json"), &serde_json::to_vec(&last.by_step)?)?;
        last.changed = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_verified_and_blobs_of_the_sharded_layout_move_up() {
        let root = tempfile::tempdir().unwrap();
        let cache = Cache::new(root.path().to_path_buf());
        let hash = cache.put_blob(b"opening").unwrap();
        assert_eq!(cache.object_path(&hash), root.path().join("objects").join(&hash));
        assert_eq!(cache.get_blob(&hash).as_deref(), Some(&b"opening"[..]));
        std::fs::write(cache.object_path(&hash), b"tampered").unwrap();
        assert_eq!(cache.get_blob(&hash), None);
        assert!(cache.has_blob(&hash), "present, though corrupt");

        // A blob where earlier versions kept it.
        let old = hash_bytes(b"earlier");
        let shard = root.path().join("objects").join(&old[..2]);
        std::fs::create_dir_all(&shard).unwrap();
        std::fs::write(shard.join(&old), b"earlier").unwrap();
        assert!(cache.has_blob(&old));
        assert!(!shard.join(&old).exists());
        assert_eq!(cache.get_blob(&old).as_deref(), Some(&b"earlier"[..]));
        assert!(!cache.has_blob(&hash_bytes(b"never stored")));
    }

    #[test]
    fn latest_key_parts_are_kept_in_one_file_saved_on_request() {
        let root = tempfile::tempdir().unwrap();
        let parts = |n: u32| KeyParts {
            code: n.to_string(),
            params: vec![("tree".into(), "p".into())],
            inputs: vec![("eco".into(), "h".into())],
            ..KeyParts::default()
        };
        let cache = Cache::new(root.path().to_path_buf());
        assert_eq!(cache.last_parts("tree"), None);
        cache.put_last_parts("tree", &parts(1));
        cache.put_last_parts("export:csv", &parts(2));
        assert_eq!(cache.last_parts("tree"), Some(parts(1)));
        assert_eq!(Cache::new(root.path().to_path_buf()).last_parts("tree"), None, "not saved yet");
        cache.save_last_parts().unwrap();
        let file = root.path().join("last-parts.json");
        let reopened = Cache::new(root.path().to_path_buf());
        assert_eq!(reopened.last_parts("export:csv"), Some(parts(2)));
        // Nothing changed: the file is not written again.
        std::fs::remove_file(&file).unwrap();
        reopened.put_last_parts("tree", &parts(1));
        reopened.save_last_parts().unwrap();
        assert!(!file.exists());
        reopened.put_last_parts("tree", &parts(3));
        reopened.save_last_parts().unwrap();
        assert_eq!(Cache::new(root.path().to_path_buf()).last_parts("tree"), Some(parts(3)));
        // An unreadable file is an empty history.
        std::fs::write(&file, b"{torn").unwrap();
        assert_eq!(Cache::new(root.path().to_path_buf()).last_parts("tree"), None);
    }
}
