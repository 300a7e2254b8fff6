//! Adding a month to the state: the month's sorted runs grouped and cut by shard, and
//! each shard merged once with the month's slice of it, two shards at a time.
//!
//! A shard is written whole before the next replaces its predecessor, and every finished
//! shard is noted in a progress file before the shard it replaces is removed: a merge
//! killed at any point resumes at the first unfinished shard, and the disk holds at most
//! the state and the shards in flight besides.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::codec::{Decoder, Encoder, Group, Malformed, Span, state_key};
use super::hot::{Cutter, HotCut};
use crate::games::runs::{self, MoveRecord, PosRecord, RunError, Source};

/// Where shards are kept, by name (the build keeps them as cache blobs).
pub trait ShardStore: Sync {
    /// The bytes of shard `name`, verified.
    fn read(&self, name: &str) -> io::Result<Vec<u8>>;
    /// Stores `bytes`; returns their name.
    fn write(&self, bytes: &[u8]) -> io::Result<String>;
    /// Whether shard `name` is present (not verified).
    fn exists(&self, name: &str) -> bool;
    /// Removes shard `name` (a version no step will read again) and its hot cuts.
    fn remove(&self, name: &str);
    /// `len` bytes of shard `name` from `offset`, not verified (a block's check does).
    fn read_at(&self, name: &str, offset: u64, len: u64) -> io::Result<Vec<u8>>;
    /// Stores shard `name`'s hot cut (replacing one at the same threshold).
    fn put_hot(&self, name: &str, cut: &HotCut) -> io::Result<()>;
    /// Shard `name`'s hot cut at `min_games`, if one is stored and intact.
    fn get_hot(&self, name: &str, min_games: u64) -> Option<HotCut>;
}

/// Where sorted runs are kept, by name (the build keeps them as cache blobs).
pub trait RunStore: Sync {
    /// Opens run `name` as a stream that fails at its end if the bytes are not the run's.
    fn open_run(&self, name: &str) -> io::Result<Box<dyn io::Read + Send>>;
}

/// One stored shard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Its name in the store.
    pub name: String,
    /// Positions (groups) it holds.
    pub groups: u64,
    /// (position, move) pairs it holds.
    pub moves: u64,
    /// Its size.
    pub bytes: u64,
}

/// The shard of state key `key` among `shards`: the key's top bits scaled, so shards
/// hold consecutive key ranges and read one after another give every key in order.
pub fn shard_of(key: u128, shards: usize) -> usize {
    ((u128::from((key >> 64) as u64) * shards as u128) >> 64) as usize
}

/// Why a month could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The month's runs could not be read.
    #[error(transparent)]
    Month(#[from] RunError),
    /// A shard could not be read, is corrupt, or could not be written.
    #[error("counts state shard {shard}: {source}")]
    Shard {
        /// The shard's name (or "new" when writing).
        shard: String,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The progress file could not be written.
    #[error("counts state progress {path}: {source}")]
    Progress {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// A shard found malformed, as a shard error.
pub fn malformed(name: &str, e: Malformed) -> MergeError {
    MergeError::Shard {
        shard: name.to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, e),
    }
}

/// A month's (or any runs') counts as groups in key order: position and move runs read
/// side by side, keys cut to the state's 72 bits, and the rare keys that become equal
/// when cut summed (`collisions` counts them).
pub struct RunGroups<'a> {
    positions: Source<'a, PosRecord>,
    moves: Source<'a, MoveRecord>,
    next_position: Option<PosRecord>,
    next_move: Option<MoveRecord>,
    /// Distinct full keys that fell onto one state key.
    pub collisions: u64,
}

impl<'a> RunGroups<'a> {
    /// Groups of the two sorted runs.
    pub fn new(
        mut positions: Source<'a, PosRecord>,
        mut moves: Source<'a, MoveRecord>,
    ) -> Result<RunGroups<'a>, RunError> {
        let (next_position, next_move) = (positions()?, moves()?);
        Ok(RunGroups { positions, moves, next_position, next_move, collisions: 0 })
    }

    /// Groups of the runs stored as `positions` and `moves` in `store` (read as step
    /// `step`'s, for messages).
    pub fn open(
        store: &'a dyn RunStore,
        step: &str,
        positions: &str,
        moves: &str,
    ) -> Result<RunGroups<'a>, RunError> {
        let (p, m) = (positions.to_string(), moves.to_string());
        let positions =
            runs::from_reader::<PosRecord, _>(step.to_string(), move || store.open_run(&p))()?;
        let moves =
            runs::from_reader::<MoveRecord, _>(step.to_string(), move || store.open_run(&m))()?;
        RunGroups::new(positions, moves)
    }

    /// The next group into `group`; `false` when both runs are done.
    pub fn next_into(&mut self, group: &mut Group) -> Result<bool, RunError> {
        group.clear();
        let key = match (&self.next_position, &self.next_move) {
            (None, None) => return Ok(false),
            (Some(p), None) => state_key(p.0),
            (None, Some(m)) => state_key(m.0),
            (Some(p), Some(m)) => state_key(p.0).min(state_key(m.0)),
        };
        group.key = key;
        let mut full = None;
        while let Some(p) = self.next_position.filter(|p| state_key(p.0) == key) {
            self.note(&mut full, p.0.0);
            group.position.get_or_insert_with(Default::default).add(&p.1);
            self.next_position = (self.positions)()?;
        }
        while let Some(m) = self.next_move.filter(|m| state_key(m.0) == key) {
            // Collisions are counted once, from the positions (a move's position has one).
            group.moves.push((m.1, m.2));
            self.next_move = (self.moves)()?;
        }
        group.normalize_moves();
        Ok(true)
    }

    fn note(&mut self, full: &mut Option<u128>, key: u128) {
        match full {
            Some(seen) if *seen != key => {
                self.collisions += 1;
                *seen = key;
            }
            _ => *full = Some(key),
        }
    }
}

/// Groups of `groups` encoded shard by shard: (shard, bytes) for every shard the groups
/// touch, in order.
pub fn slices<'s, 'a: 's>(
    groups: &'s mut RunGroups<'a>,
    shards: usize,
) -> impl Iterator<Item = Result<(usize, Vec<u8>), RunError>> + Send + 's {
    let mut group = Group::default();
    let mut pending: Option<Result<bool, RunError>> = None;
    std::iter::from_fn(move || {
        let mut first = match pending.take().unwrap_or_else(|| groups.next_into(&mut group)) {
            Ok(true) => shard_of(group.key, shards),
            Ok(false) => return None,
            Err(e) => return Some(Err(e)),
        };
        let shard = first;
        let (mut encoder, mut bytes) = (Encoder::default(), Vec::new());
        while first == shard {
            encoder.put(&group, &mut bytes);
            match groups.next_into(&mut group) {
                Ok(true) => first = shard_of(group.key, shards),
                Ok(false) => {
                    pending = Some(Ok(false));
                    break;
                }
                Err(e) => {
                    pending = Some(Err(e));
                    break;
                }
            }
        }
        if first != shard {
            pending = Some(Ok(true));
        }
        Some(Ok((shard, bytes)))
    })
}

/// Merges two shards' bytes (each sorted, each key once) into `out`, summing equal keys,
/// and tells `cutter` (if any) of every group written.
pub fn merge_bytes(
    old: &[u8],
    month: &[u8],
    out: &mut Vec<u8>,
    mut cutter: Option<&mut Cutter>,
) -> Result<Encoder, Malformed> {
    let mut encoder = Encoder::default();
    let (mut a, mut b) = (Decoder::new(old), Decoder::new(month));
    let (mut span, mut ga, mut gb) = (Span::default(), Group::default(), Group::default());
    let (mut has_a, mut has_b) = (a.skip_into(&mut span)?, b.next_into(&mut gb)?);
    while has_a || has_b {
        if has_a && (!has_b || span.key < gb.key) {
            // Most groups: in the old shard only, copied without decoding their moves.
            if let Some(cutter) = cutter.as_deref_mut() {
                cutter.start(span.key, out.len(), encoder.prev());
                if cutter.wants(span.reach) {
                    Decoder::decode_span(old, &span, &mut ga)?;
                    cutter.keep(&ga);
                }
            }
            encoder.put_raw(span.key, span.head, &old[span.body..span.end], span.moves, out);
            has_a = a.skip_into(&mut span)?;
            continue;
        }
        let group = if has_a && span.key == gb.key {
            Decoder::decode_span(old, &span, &mut ga)?;
            ga.add(&gb);
            has_a = a.skip_into(&mut span)?;
            &ga
        } else {
            &gb
        };
        if let Some(cutter) = cutter.as_deref_mut() {
            cutter.note(group, out.len(), encoder.prev());
        }
        encoder.put(group, out);
        has_b = b.next_into(&mut gb)?;
    }
    Ok(encoder)
}

/// Every group of two shards' bytes (each sorted, each key once) in key order, equal keys
/// summed.
pub fn merge_groups(a: &[u8], b: &[u8], mut f: impl FnMut(&Group)) -> Result<(), Malformed> {
    let (mut a, mut b) = (Decoder::new(a), Decoder::new(b));
    let (mut ga, mut gb) = (Group::default(), Group::default());
    let (mut has_a, mut has_b) = (a.next_into(&mut ga)?, b.next_into(&mut gb)?);
    while has_a || has_b {
        if has_a && (!has_b || ga.key < gb.key) {
            f(&ga);
            has_a = a.next_into(&mut ga)?;
        } else if has_b && (!has_a || gb.key < ga.key) {
            f(&gb);
            has_b = b.next_into(&mut gb)?;
        } else {
            ga.add(&gb);
            f(&ga);
            has_a = a.next_into(&mut ga)?;
            has_b = b.next_into(&mut gb)?;
        }
    }
    Ok(())
}

/// What a month's merge did.
#[derive(Clone, Debug, Default)]
pub struct MergeReport {
    /// Shards rewritten by this run (not counting those a killed run had finished).
    pub merged: usize,
    /// Shards a previous, interrupted run had finished.
    pub resumed: usize,
    /// Bytes of old shards read and new shards written.
    pub read: u64,
    /// Bytes written.
    pub written: u64,
    /// Keys that fell onto one state key within the month.
    pub collisions: u64,
}

/// Adds the groups of `month` to the shards of `state` (one entry per shard, `None` when
/// empty): each touched shard is merged and stored with its hot cut at `hot_at` (if
/// given: see [`super::hot`]), noted in `progress`, and the shard it replaces removed.
/// Returns the new shards.
pub fn add_month(
    state: &[Option<Shard>],
    month: &mut RunGroups<'_>,
    store: &dyn ShardStore,
    progress: &Path,
    hot_at: Option<u64>,
) -> Result<(Vec<Option<Shard>>, MergeReport), MergeError> {
    let done = read_progress(progress);
    let shards = state.len();
    let new: Mutex<Vec<Option<Shard>>> = Mutex::new(state.to_vec());
    let report = Mutex::new(MergeReport::default());
    let log = Mutex::new(ProgressLog { path: progress.to_path_buf(), file: None });
    let slices = slices(month, shards);
    slices.par_bridge().try_for_each(|slice| -> Result<(), MergeError> {
        let (i, bytes) = slice?;
        if let Some(finished) = done.get(&i).filter(|s| store.exists(&s.name)) {
            new.lock().expect("shards poisoned")[i] = Some(finished.clone());
            report.lock().expect("report poisoned").resumed += 1;
            return Ok(());
        }
        let (shard, read) = merge_one(state[i].as_ref(), &bytes, store, hot_at)?;
        log.lock().expect("progress poisoned").note(i, &shard)?;
        if let Some(old) = state[i].as_ref().filter(|old| old.name != shard.name) {
            store.remove(&old.name);
        }
        let mut r = report.lock().expect("report poisoned");
        (r.merged, r.read, r.written) = (r.merged + 1, r.read + read, r.written + shard.bytes);
        new.lock().expect("shards poisoned")[i] = Some(shard);
        Ok(())
    })?;
    let mut report = report.into_inner().expect("report poisoned");
    report.collisions = month.collisions;
    Ok((new.into_inner().expect("shards poisoned"), report))
}

/// Shard `old` (if any) merged with the month's slice and stored, with its hot cut at
/// `hot_at`; with the bytes read.
pub fn merge_one(
    old: Option<&Shard>,
    month: &[u8],
    store: &dyn ShardStore,
    hot_at: Option<u64>,
) -> Result<(Shard, u64), MergeError> {
    let old_bytes = match old {
        Some(s) => store
            .read(&s.name)
            .map_err(|source| MergeError::Shard { shard: s.name.clone(), source })?,
        None => Vec::new(),
    };
    let mut out = Vec::with_capacity(old_bytes.len() + month.len());
    let name = old.map_or("new", |s| s.name.as_str());
    let mut cutter = hot_at.map(Cutter::new);
    let encoder = merge_bytes(&old_bytes, month, &mut out, cutter.as_mut())
        .map_err(|e| malformed(name, e))?;
    let stored =
        store.write(&out).map_err(|source| MergeError::Shard { shard: "new".into(), source })?;
    if let Some(cutter) = cutter {
        store
            .put_hot(&stored, &cutter.finish(&out))
            .map_err(|source| MergeError::Shard { shard: format!("{stored} (hot cut)"), source })?;
    }
    Ok((
        Shard {
            name: stored,
            groups: encoder.groups,
            moves: encoder.moves,
            bytes: out.len() as u64,
        },
        old_bytes.len() as u64 + month.len() as u64,
    ))
}

/// The shards a run of this merge finished before it was stopped.
fn read_progress(path: &Path) -> std::collections::BTreeMap<usize, Shard> {
    let Ok(file) = std::fs::File::open(path) else { return Default::default() };
    let parse = |line: &str| -> Option<(usize, Shard)> {
        let mut f = line.split(' ');
        let i = f.next()?.parse().ok()?;
        let name = f.next()?.to_string();
        let mut n = || f.next()?.parse().ok();
        Some((i, Shard { name, groups: n()?, moves: n()?, bytes: n()? }))
    };
    // A line cut by a kill does not parse and is ignored: its shard is merged again.
    io::BufReader::new(file).lines().map_while(Result::ok).filter_map(|l| parse(&l)).collect()
}

struct ProgressLog {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl ProgressLog {
    fn note(&mut self, shard: usize, s: &Shard) -> Result<(), MergeError> {
        let err = |source| MergeError::Progress { path: self.path.clone(), source };
        if self.file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(err)?;
            }
            self.file = Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)
                    .map_err(err)?,
            );
        }
        let line = format!("{shard} {} {} {} {}\n", s.name, s.groups, s.moves, s.bytes);
        let file = self.file.as_mut().expect("opened above");
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|source| MergeError::Progress { path: self.path.clone(), source })
    }
}
