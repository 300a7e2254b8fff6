//! The counts state as a folder any machine can read and write: what `okb state` and
//! `spark/okb_state.py` build a month at a time, and a `kind = "counts-state"` source
//! reads. The build's own state ([`super::CountsState`] in the cache) holds the same
//! shards, byte for byte.
//!
//! ```text
//! STATE/manifest.json          the state: settings, months, shards, counters
//! STATE/shards/<blake3>.shard  a shard, named by the BLAKE3 of its bytes
//! STATE/hot/<blake3>-<m>.hot   its hot cut at min_games m (see super::hot)
//! STATE/pending/<i>.json       shard i merged with a month, not yet committed
//! ```
//!
//! Every file is written whole to a temporary name and renamed, and every read is
//! checked (a shard against its name, a hot cut against its own hash, a pending merge
//! against the manifest it was made from), so a task killed at any point leaves nothing
//! a later run trusts. Only [`StateFolder::commit`] writes the manifest: until then the
//! state is the previous month's, and shard merges may run again and again (their new
//! shards are named by their bytes, so a rerun writes the same file).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CountsState;
use super::hot::HotCut;
use super::merge::{Shard, ShardStore};
use crate::files::hash::{Hash, hash_bytes};
use crate::files::write::write_atomic;
use crate::games::filter::GameFilter;

/// The manifest's name in a state folder.
pub const MANIFEST: &str = "manifest.json";

/// The manifest format this okb writes and reads: 2 since the shards' compact layout
/// (see [`super::codec`]); a folder of format 1 is built again with `okb state`.
pub const FORMAT: u32 = 2;

/// What a state is counted with: every month added to it must be counted alike.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Shards the keys are cut into.
    pub shards: usize,
    /// Plies counted per game (the tree's `max_ply`).
    pub max_ply: usize,
    /// The game filter the months are counted with.
    pub filter: GameFilter,
}

/// `manifest.json`: a state folder's settings and state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// What the months are counted with.
    pub settings: Settings,
    /// The months merged, the shards, the counters.
    pub state: CountsState,
}

/// Why a state folder could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// A file does not hold what okb writes there.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A month's games are in the state already.
    #[error(
        "{state}: the state holds month {existing} (BLAKE3 {hash}) already: {month} holds the same games; add each month once"
    )]
    MonthTwice {
        /// The state folder.
        state: PathBuf,
        /// The month being added.
        month: String,
        /// The month already merged.
        existing: String,
        /// Its BLAKE3.
        hash: String,
    },
}

/// An I/O error on `path`.
pub fn io_error(path: &Path) -> impl FnOnce(io::Error) -> FolderError + '_ {
    move |source| FolderError::Io { path: path.to_path_buf(), source }
}

/// A state folder, its manifest read.
pub struct StateFolder {
    root: PathBuf,
    /// The manifest as read.
    pub manifest: Manifest,
    /// The BLAKE3 of the manifest's bytes: the state's identity.
    pub hash: Hash,
    /// Where hot cuts cut after the merge go (default: the folder's `hot/`).
    cuts: Option<PathBuf>,
}

/// One shard merged with a month and stored, waiting for the commit (`pending/<i>.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The BLAKE3 of the manifest the merge read its old shard from.
    pub base: Hash,
    /// The BLAKE3 of the month merged ([`super::staging::month_hash`]).
    pub month: Hash,
    /// The new shard.
    pub shard: Shard,
}

impl StateFolder {
    /// Opens the state folder `root` (its manifest must exist).
    pub fn open(root: &Path) -> Result<StateFolder, FolderError> {
        let path = root.join(MANIFEST);
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        let invalid = |message: String| FolderError::Invalid { path: path.clone(), message };
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| invalid(format!("not a counts state manifest: {e}")))?;
        if manifest.format != FORMAT {
            let format = manifest.format;
            return Err(invalid(format!(
                "manifest format {format}; this okb reads {FORMAT} (its shards are laid out \
                 otherwise): build it again into a new folder (`okb state init`, then its months)"
            )));
        }
        let shards = manifest.state.shards.len();
        if shards != manifest.settings.shards {
            let want = manifest.settings.shards;
            return Err(invalid(format!("{shards} shards listed, the settings say {want}")));
        }
        Ok(StateFolder { root: root.to_path_buf(), manifest, hash: hash_bytes(&bytes), cuts: None })
    }

    /// Opens the state folder `root`, made empty with `settings` if it has no manifest;
    /// an existing state must have been made with the same settings.
    pub fn init(root: &Path, settings: &Settings) -> Result<StateFolder, FolderError> {
        if !root.join(MANIFEST).exists() {
            let state = CountsState::empty(settings.shards);
            let settings = Settings { shards: state.shards.len(), ..settings.clone() };
            let manifest = Manifest { format: FORMAT, settings, state };
            write_manifest(root, &manifest)?;
        }
        let folder = StateFolder::open(root)?;
        if folder.manifest.settings != *settings {
            return Err(FolderError::Invalid {
                path: folder.root.join(MANIFEST),
                message: format!(
                    "the state was made with {}, not {}",
                    describe(&folder.manifest.settings),
                    describe(settings)
                ),
            });
        }
        Ok(folder)
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Keeps hot cuts cut after the merge (a tree's other threshold) in `dir` instead of
    /// the folder, which a reader then never writes.
    pub fn with_cuts_in(mut self, dir: PathBuf) -> StateFolder {
        self.cuts = Some(dir);
        self
    }

    /// Where shard `name` is.
    pub fn shard_path(&self, name: &str) -> PathBuf {
        self.root.join("shards").join(format!("{name}.shard"))
    }

    fn hot_path(&self, dir: &Path, name: &str, min_games: u64) -> PathBuf {
        dir.join(format!("{name}-{min_games}.hot"))
    }

    fn hot_dir(&self) -> PathBuf {
        self.root.join("hot")
    }

    /// Where shard `shard`'s pending merge is.
    pub fn pending_path(&self, shard: usize) -> PathBuf {
        self.root.join("pending").join(format!("{shard}.json"))
    }

    /// Notes shard `shard` merged with a month (see [`Pending`]).
    pub fn put_pending(&self, shard: usize, pending: &Pending) -> Result<(), FolderError> {
        let path = self.pending_path(shard);
        write_atomic(&path, &to_json(pending)).map_err(io_error(&path))
    }

    /// Shard `shard`'s pending merge of month `month` over this manifest, checked: its
    /// new shard must be stored.
    pub fn pending(&self, shard: usize, month: &str) -> Result<Shard, FolderError> {
        let path = self.pending_path(shard);
        let invalid = |message: String| FolderError::Invalid { path: path.clone(), message };
        let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => invalid(format!("shard {shard} was not merged with the month: run `okb state merge --shard {shard}` first")),
            _ => FolderError::Io { path: path.clone(), source: e },
        })?;
        let pending: Pending = serde_json::from_slice(&bytes)
            .map_err(|e| invalid(format!("not a pending merge: {e}")))?;
        if pending.base != self.hash || pending.month != month {
            return Err(invalid(format!(
                "merged over another state or month (state {}, month {}): merge shard {shard} again",
                pending.base, pending.month
            )));
        }
        let stored = std::fs::metadata(self.shard_path(&pending.shard.name)).map(|m| m.len());
        if stored.ok() != Some(pending.shard.bytes) {
            let shard = self.shard_path(&pending.shard.name);
            return Err(invalid(format!(
                "its shard {} is missing or damaged: merge shard again",
                shard.display()
            )));
        }
        Ok(pending.shard)
    }

    /// Writes the manifest of `state` (this one's next, a month added), refusing a month
    /// whose games the state holds already, then removes every file it no longer names.
    pub fn commit(&mut self, state: CountsState) -> Result<(), FolderError> {
        let (month, hash) = state.months.last().cloned().unwrap_or_default();
        if let Some((existing, _)) =
            self.manifest.state.months.iter().find(|(name, pin)| *pin == hash || *name == month)
        {
            return Err(FolderError::MonthTwice {
                state: self.root.clone(),
                month,
                existing: existing.clone(),
                hash,
            });
        }
        let manifest = Manifest { state, ..self.manifest.clone() };
        write_manifest(&self.root, &manifest)?;
        *self = StateFolder::open(&self.root)?;
        self.sweep();
        Ok(())
    }

    /// Removes the shards and hot cuts the manifest does not name, the pending merges and
    /// any temporary file (no task runs during a commit).
    fn sweep(&self) {
        let live: std::collections::BTreeSet<String> =
            self.manifest.state.objects().into_iter().collect();
        let named = |file: &str| file.split(['.', '-']).next().is_some_and(|n| live.contains(n));
        for dir in [self.root.join("shards"), self.hot_dir()] {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if !named(&entry.file_name().to_string_lossy()) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        let _ = std::fs::remove_dir_all(self.root.join("pending"));
    }

    fn shard_error(&self, name: &str, message: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {message}", self.shard_path(name).display()),
        )
    }
}

/// `256 shards, max_ply 15, filter {…}`.
fn describe(settings: &Settings) -> String {
    let filter = serde_json::to_string(&settings.filter).unwrap_or_default();
    format!("{} shards, max_ply {}, filter {filter}", settings.shards, settings.max_ply)
}

/// `value` as pretty JSON with a final newline (manifests are read by people too).
pub fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("serializing to memory does not fail");
    bytes.push(b'\n');
    bytes
}

fn write_manifest(root: &Path, manifest: &Manifest) -> Result<(), FolderError> {
    let path = root.join(MANIFEST);
    write_atomic(&path, &to_json(manifest)).map_err(io_error(&path))
}

/// Shards are files named by their BLAKE3, read whole and checked against it.
impl ShardStore for StateFolder {
    fn read(&self, name: &str) -> io::Result<Vec<u8>> {
        let path = self.shard_path(name);
        let bytes = std::fs::read(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let actual = hash_bytes(&bytes);
        if actual != name {
            let message = format!("damaged: its bytes hash to {actual}, not to its name");
            return Err(self.shard_error(name, message));
        }
        Ok(bytes)
    }

    fn write(&self, bytes: &[u8]) -> io::Result<String> {
        let name = hash_bytes(bytes);
        write_atomic(&self.shard_path(&name), bytes)?;
        Ok(name)
    }

    fn exists(&self, name: &str) -> bool {
        self.shard_path(name).exists()
    }

    fn remove(&self, name: &str) {
        let _ = std::fs::remove_file(self.shard_path(name));
        let prefix = format!("{name}-");
        for dir in [Some(self.hot_dir()), self.cuts.clone()].into_iter().flatten() {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }

    fn read_at(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let path = self.shard_path(name);
        let mut file = std::fs::File::open(&path)?;
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = vec![0; len as usize];
        file.read_exact(&mut bytes)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(bytes)
    }

    fn put_hot(&self, name: &str, cut: &HotCut) -> io::Result<()> {
        let dir = self.cuts.clone().unwrap_or_else(|| self.hot_dir());
        write_atomic(&self.hot_path(&dir, name, cut.min_games), &cut.to_bytes())
    }

    fn get_hot(&self, name: &str, min_games: u64) -> Option<HotCut> {
        [Some(self.hot_dir()), self.cuts.clone()].into_iter().flatten().find_map(|dir| {
            HotCut::from_bytes(&std::fs::read(self.hot_path(&dir, name, min_games)).ok()?)
        })
    }
}
