//! A month added to a state folder ([`super::folder`]) by many machines: each counts some
//! of the month's files into a *slices folder* ([`write_slices`]: the month's groups cut
//! by shard, one file per touched shard, and `counted.json`), each shard is merged with
//! its slices from every folder ([`merge_shard`], one task per shard, reading and writing
//! only that shard), and the driver commits the month ([`commit`]).
//!
//! Counts are sums and a slice is the codec's bytes of whole groups, so the slices of any
//! partition of the month, merged, are the bytes of the month's slice counted at once,
//! and the new shards are those the build's own merge writes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::folder::{FolderError, Pending, Settings, StateFolder, io_error, to_json};
use super::merge::{self, RunGroups, Shard};
use crate::files::hash::{Hash, hash_bytes};
use crate::files::write::write_atomic;
use crate::games::report::{BadGames, Counters};

/// The description of a slices folder's contents.
pub const COUNTED: &str = "counted.json";

/// One slice: the month's groups (of these files) that fall in one shard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// The shard.
    pub shard: usize,
    /// The BLAKE3 of its bytes.
    pub blake3: Hash,
    /// Its size.
    pub bytes: u64,
}

/// `counted.json`: what a slices folder holds, written after its slices.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Sliced {
    /// The shards' layout the slices are written in: the state folder's
    /// [`super::folder::FORMAT`] (0 when counted by an okb before the field).
    #[serde(default)]
    pub format: u32,
    /// The settings counted with (the state's).
    pub settings: Settings,
    /// The game files counted: (as given, BLAKE3).
    pub files: Vec<(String, Hash)>,
    /// The slices, by shard.
    pub slices: Vec<Slice>,
    /// Bad games by reason.
    pub bad: BadGames,
    /// Games read, counted and filtered.
    pub counters: Counters,
    /// Distinct positions that fell onto one state key within these files.
    pub collisions: u64,
}

/// A slices folder, its `counted.json` read.
pub struct Staged {
    /// The folder.
    pub dir: PathBuf,
    /// Its contents.
    pub counted: Sliced,
}

fn slice_path(dir: &Path, shard: usize) -> PathBuf {
    dir.join(format!("{shard:05}.slice"))
}

/// Writes the groups of `groups` (counted from `counted.files` with `counted.settings`)
/// into the slices folder `dir`, one file per touched shard, then `counted.json`.
pub fn write_slices(
    dir: &Path,
    mut counted: Sliced,
    groups: &mut RunGroups<'_>,
) -> Result<Sliced, FolderError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    counted.format = super::folder::FORMAT;
    for slice in merge::slices(groups, counted.settings.shards) {
        let (shard, bytes) = slice.map_err(|e| FolderError::Invalid {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let path = slice_path(dir, shard);
        write_atomic(&path, &bytes).map_err(io_error(&path))?;
        counted.slices.push(Slice { shard, blake3: hash_bytes(&bytes), bytes: bytes.len() as u64 });
    }
    counted.collisions = groups.collisions;
    let path = dir.join(COUNTED);
    write_atomic(&path, &to_json(&counted)).map_err(io_error(&path))?;
    Ok(counted)
}

impl Staged {
    /// Opens the slices folder `dir`, counted for `folder`'s state.
    pub fn open(dir: &Path, folder: &StateFolder) -> Result<Staged, FolderError> {
        let path = dir.join(COUNTED);
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        let invalid = |message: String| FolderError::Invalid { path: path.clone(), message };
        let counted: Sliced = serde_json::from_slice(&bytes)
            .map_err(|e| invalid(format!("not a slices description: {e}")))?;
        if counted.format != super::folder::FORMAT {
            let (format, root) = (counted.format, folder.root().display());
            return Err(invalid(format!(
                "slices of layout {format}, counted by another okb; this okb merges layout {} \
                 (count again with `okb state count --state {root}`)",
                super::folder::FORMAT
            )));
        }
        if counted.settings != folder.manifest.settings {
            return Err(invalid(format!(
                "counted with other settings than the state {} (count again with `okb state count --state {}`)",
                folder.root().display(),
                folder.root().display()
            )));
        }
        Ok(Staged { dir: dir.to_path_buf(), counted })
    }

    /// The bytes of this folder's slice of shard `shard` (none if no group falls there),
    /// checked against their BLAKE3.
    pub fn slice(&self, shard: usize) -> Result<Option<Vec<u8>>, FolderError> {
        let Some(slice) = self.counted.slices.iter().find(|s| s.shard == shard) else {
            return Ok(None);
        };
        let path = slice_path(&self.dir, shard);
        let bytes = std::fs::read(&path).map_err(io_error(&path))?;
        if hash_bytes(&bytes) != slice.blake3 {
            return Err(FolderError::Invalid {
                path,
                message: format!("damaged: not the slice {COUNTED} describes"),
            });
        }
        Ok(Some(bytes))
    }
}

/// The BLAKE3 a month of these folders' files is known by: its file's, for a month of
/// one file (as the build's state knows a file), else that of the files' hashes, sorted.
pub fn month_hash(staged: &[Staged]) -> Hash {
    let mut hashes: Vec<&str> =
        staged.iter().flat_map(|s| s.counted.files.iter().map(|(_, h)| h.as_str())).collect();
    hashes.sort_unstable();
    match hashes.as_slice() {
        [one] => one.to_string(),
        all => hash_bytes(all.iter().map(|h| format!("{h}\n")).collect::<String>().as_bytes()),
    }
}

/// The shards any of `staged` touches, sorted.
pub fn touched(staged: &[Staged]) -> Vec<usize> {
    let mut shards: Vec<usize> =
        staged.iter().flat_map(|s| s.counted.slices.iter().map(|x| x.shard)).collect();
    shards.sort_unstable();
    shards.dedup();
    shards
}

/// Refuses a month whose games `folder`'s state holds already (by its hash or a file's).
pub fn check_new(folder: &StateFolder, month: &str, staged: &[Staged]) -> Result<(), FolderError> {
    let hash = month_hash(staged);
    let files = staged.iter().flat_map(|s| s.counted.files.iter());
    let mut pins = std::iter::once((month, &hash)).chain(files.map(|(n, h)| (n.as_str(), h)));
    let repeat = pins.find_map(|(name, pin)| {
        let months = &folder.manifest.state.months;
        months.iter().find(|(_, p)| p == pin).map(|(existing, p)| (name, existing, p))
    });
    match repeat {
        Some((name, existing, hash)) => Err(FolderError::MonthTwice {
            state: folder.root().to_path_buf(),
            month: name.to_string(),
            existing: existing.clone(),
            hash: hash.clone(),
        }),
        None => Ok(()),
    }
}

/// Merges shard `shard` of `folder`'s state with its slices in `staged`, storing the new
/// shard (with its hot cut at `hot_at`) and noting it pending; `None` when no slice
/// touches it. Rerun before the commit, it writes the same shard again.
pub fn merge_shard(
    folder: &StateFolder,
    shard: usize,
    staged: &[Staged],
    hot_at: Option<u64>,
) -> Result<Option<Shard>, FolderError> {
    let shards = &folder.manifest.state.shards;
    if shard >= shards.len() {
        let message = format!(
            "shard {shard} does not exist: the state has {} shards (0 to {})",
            shards.len(),
            shards.len() - 1
        );
        return Err(FolderError::Invalid {
            path: folder.root().join(super::folder::MANIFEST),
            message,
        });
    }
    let mut month: Option<Vec<u8>> = None;
    for part in staged {
        let Some(bytes) = part.slice(shard)? else { continue };
        month = Some(match month {
            None => bytes,
            Some(before) => combine(&before, &bytes, &slice_path(&part.dir, shard))?,
        });
    }
    let Some(month) = month else { return Ok(None) };
    let failed = |e: merge::MergeError| FolderError::Invalid {
        path: folder.root().to_path_buf(),
        message: e.to_string(),
    };
    let (new, _) =
        merge::merge_one(shards[shard].as_ref(), &month, folder, hot_at).map_err(failed)?;
    let pending =
        Pending { base: folder.hash.clone(), month: month_hash(staged), shard: new.clone() };
    folder.put_pending(shard, &pending)?;
    Ok(Some(new))
}

/// Two slices of one shard summed into one.
fn combine(a: &[u8], b: &[u8], path: &Path) -> Result<Vec<u8>, FolderError> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    merge::merge_bytes(a, b, &mut out, None).map_err(|e| FolderError::Invalid {
        path: path.to_path_buf(),
        message: format!("damaged slice: {e}"),
    })?;
    Ok(out)
}

/// Adds month `month` (the files of `staged`, every touched shard merged and pending) to
/// `folder`'s state: its manifest rewritten at once, the shards replaced removed.
pub fn commit(folder: &mut StateFolder, month: &str, staged: &[Staged]) -> Result<(), FolderError> {
    check_new(folder, month, staged)?;
    let hash = month_hash(staged);
    let mut state = folder.manifest.state.clone();
    for shard in touched(staged) {
        state.shards[shard] = Some(folder.pending(shard, &hash)?);
    }
    for part in staged {
        state.bad.merge(&part.counted.bad);
        state.counters.merge(&part.counted.counters);
        state.collisions += part.counted.collisions;
    }
    state.months.push((month.to_string(), hash));
    folder.commit(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::runs::{MoveRecord, PosRecord, Source};
    use crate::games::state::CountsState;
    use crate::games::state::merge::{ShardStore, add_month};
    use crate::games::stats::{MoveStats, Outcomes};
    use crate::position::{MoveKey, PositionKey};

    /// Sorted runs of `keys` (each played `games` times by White's win, with a move).
    fn runs(keys: &[u128], games: u64) -> (Vec<PosRecord>, Vec<MoveRecord>) {
        let won = Outcomes { white: games, draws: 0, black: 0 };
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        let positions = keys.iter().map(|k| (PositionKey(*k), won)).collect();
        let stats = MoveStats { outcomes: won, ..Default::default() };
        let moves = keys.iter().map(|k| (PositionKey(*k), MoveKey(7), stats)).collect();
        (positions, moves)
    }

    fn source<'a, T: Send + 'a>(records: Vec<T>) -> Source<'a, T> {
        let mut it = records.into_iter();
        Box::new(move || Ok(it.next()))
    }

    fn groups((p, m): (Vec<PosRecord>, Vec<MoveRecord>)) -> RunGroups<'static> {
        RunGroups::new(source(p), source(m)).unwrap()
    }

    /// Keys spread over the whole key space (so over every shard).
    fn keys(seed: u128, n: u128) -> Vec<u128> {
        (0..n)
            .map(|i| (i * 0x9E37_79B9_7F4A_7C15 + seed).wrapping_mul(0xD1B5_4A32_D192_ED03) << 56)
            .collect()
    }

    /// `files` (name, keys) counted into a slices folder each under `dir`.
    fn stage(folder: &StateFolder, dir: &Path, files: &[(&str, Vec<u128>)]) -> Vec<Staged> {
        let settings = folder.manifest.settings.clone();
        files
            .iter()
            .map(|(name, keys)| {
                let out = dir.join(name);
                let sliced = Sliced {
                    settings: settings.clone(),
                    files: vec![(name.to_string(), hash_bytes(name.as_bytes()))],
                    ..Default::default()
                };
                write_slices(&out, sliced, &mut groups(runs(keys, 1))).unwrap();
                Staged::open(&out, folder).unwrap()
            })
            .collect()
    }

    fn add(folder: &mut StateFolder, month: &str, staged: &[Staged]) {
        for shard in touched(staged) {
            merge_shard(folder, shard, staged, Some(2)).unwrap();
        }
        commit(folder, month, staged).unwrap();
    }

    /// A state of `shards` shards holding month `m1`, a file of `keys`, in a new folder.
    fn with_a_month(shards: usize, keys: Vec<u128>) -> (tempfile::TempDir, StateFolder) {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings { shards, max_ply: 8, ..Default::default() };
        let mut folder = StateFolder::init(&dir.path().join("state"), &settings).unwrap();
        let month = stage(&folder, &dir.path().join("m1"), &[("a", keys)]);
        add(&mut folder, "m1", &month);
        (dir, folder)
    }

    #[test]
    fn months_merged_shard_by_shard_give_the_shards_of_the_builds_merge() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings { shards: 5, max_ply: 8, ..Default::default() };
        let mut folder = StateFolder::init(&dir.path().join("state"), &settings).unwrap();
        let (a, b, c) = (keys(1, 300), keys(2, 200), keys(1, 100));
        let first = stage(&folder, &dir.path().join("m1"), &[("a", a.clone()), ("b", b.clone())]);
        add(&mut folder, "m1", &first);
        let second = stage(&folder, &dir.path().join("m2"), &[("c", c.clone())]);
        add(&mut folder, "m2", &second);

        // The build's merge, a month at a time, into another folder used as a plain store.
        let local = StateFolder::init(&dir.path().join("local"), &settings).unwrap();
        let mut shards = CountsState::empty(5).shards;
        let union = [a, b].concat();
        for (i, month) in [union, c].iter().enumerate() {
            let progress = dir.path().join(format!("{i}.progress"));
            shards = add_month(&shards, &mut groups(runs(month, 1)), &local, &progress, Some(2))
                .unwrap()
                .0;
        }
        assert_eq!(folder.manifest.state.shards, shards);
        assert!(shards.iter().all(Option::is_some), "every shard touched: {shards:?}");
        for shard in shards.iter().flatten() {
            assert_eq!(folder.read(&shard.name).unwrap(), local.read(&shard.name).unwrap());
            assert!(folder.get_hot(&shard.name, 2).is_some(), "the merge wrote its hot cut");
        }
        let months: Vec<&str> =
            folder.manifest.state.months.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(months, ["m1", "m2"]);
        // Only the live shards are left.
        let files = std::fs::read_dir(dir.path().join("state/shards")).unwrap().count();
        assert_eq!(files, 5);
        // Reopened, the folder says the same.
        let again = StateFolder::open(folder.root()).unwrap();
        assert_eq!((again.hash, again.manifest.state.shards), (folder.hash.clone(), shards));
    }

    #[test]
    fn a_damaged_shard_is_refused_with_its_path() {
        let (dir, folder) = with_a_month(2, keys(3, 50));
        let shard = folder.manifest.state.shards[0].clone().unwrap();
        let path = folder.shard_path(&shard.name);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[3] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let e = folder.read(&shard.name).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()) && e.contains("damaged"), "{e}");
        // The next month's merge of that shard says so too.
        let next = stage(&folder, &dir.path().join("m2"), &[("b", keys(4, 50))]);
        let e = merge_shard(&folder, 0, &next, Some(2)).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
    }

    /// Slices written by an okb of the shards' earlier layout (no `format` in their
    /// `counted.json`) would be misread: they are refused, saying to count again.
    #[test]
    fn slices_of_another_layout_are_refused() {
        let (dir, folder) = with_a_month(2, keys(3, 50));
        let out = dir.path().join("old");
        stage(&folder, &out, &[("b", keys(4, 50))]);
        let path = out.join("b").join(COUNTED);
        let mut counted: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        counted.as_object_mut().unwrap().remove("format");
        std::fs::write(&path, serde_json::to_vec(&counted).unwrap()).unwrap();
        let e = Staged::open(&out.join("b"), &folder).err().expect("refused").to_string();
        assert!(e.contains("slices of layout 0") && e.contains("okb state count --state"), "{e}");
    }

    #[test]
    fn a_month_committed_twice_is_refused() {
        let (dir, mut folder) = with_a_month(3, keys(5, 40));
        let before = std::fs::read(folder.root().join(super::super::folder::MANIFEST)).unwrap();
        let again = stage(&folder, &dir.path().join("again"), &[("a", keys(5, 40))]);
        let e = commit(&mut folder, "m1-again", &again).unwrap_err().to_string();
        assert!(e.contains("holds month m1") && e.contains("add each month once"), "{e}");
        let after = std::fs::read(folder.root().join(super::super::folder::MANIFEST)).unwrap();
        assert_eq!(before, after, "the manifest is untouched");
        // A state made with other settings is refused too.
        let other = Settings { shards: 4, ..folder.manifest.settings.clone() };
        let e = StateFolder::init(folder.root(), &other).err().unwrap().to_string();
        assert!(e.contains("the state was made with 3 shards"), "{e}");
    }

    #[test]
    fn a_pending_merge_of_another_state_is_not_committed() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings { shards: 2, max_ply: 8, ..Default::default() };
        let mut folder = StateFolder::init(&dir.path().join("state"), &settings).unwrap();
        let first = stage(&folder, &dir.path().join("m1"), &[("a", keys(6, 40))]);
        let second = stage(&folder, &dir.path().join("m2"), &[("b", keys(7, 40))]);
        // Month 2's shards merged over the empty state, then month 1 committed first.
        for shard in touched(&second) {
            merge_shard(&folder, shard, &second, None).unwrap();
        }
        add(&mut folder, "m1", &first);
        let e = commit(&mut folder, "m2", &second).unwrap_err().to_string();
        assert!(e.contains("not merged with the month") || e.contains("merge shard"), "{e}");
        add(&mut folder, "m2", &second);
        assert_eq!(folder.manifest.state.months.len(), 2);
    }
}
