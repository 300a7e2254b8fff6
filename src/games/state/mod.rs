//! The cumulative counts state of a large game source: the exact counts of every
//! (position, move) and every position of all its months, kept on disk in shards, so
//! that adding a month costs counting that month plus one merge per shard, whatever the
//! number of months before it.
//!
//! Why not the runs every other source keeps: the `games` step merges every file's runs
//! on every make, so adding a file costs more the more files there are (all of Lichess is
//! about 20 billion run records). Exact pruning at `min_games` still needs every key's
//! total, below the threshold too (any key can reach it next month): so the state holds
//! them all, as compactly as [`codec`] can; what a tree keeps is cut from each shard as
//! the merge writes it.
//!
//! - [`codec`]: the bytes of a shard (72-bit keys, positions and their moves in groups).
//! - [`merge`]: a month's runs grouped and cut by shard; the per-shard merge, resumable.
//! - [`hot`]: each shard's hot cut (what a tree keeps by counts) and block index, written
//!   by the merge, so that a build reads the state once (the merge's pass), not twice.
//! - [`folder`]: the state as a folder of files (manifest, shards, hot cuts) that `okb
//!   state` and Spark build and a `kind = "counts-state"` source reads.
//! - [`staging`]: a month added to a state folder by many machines: slices counted apart,
//!   one merge per shard, one commit.

pub mod codec;
pub mod folder;
pub mod hot;
pub mod merge;
pub mod staging;

use serde::{Deserialize, Serialize};

use self::codec::Group;
use self::hot::HotCut;
use self::merge::{MergeError, RunGroups, Shard, ShardStore};
use super::report::{BadGames, Counters};
use super::runs::{MoveRecord, PosRecord};

/// The state after some months: the value of a `state` step.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CountsState {
    /// The game files merged, in order: (shown name, BLAKE3).
    pub months: Vec<(String, String)>,
    /// One entry per shard (`None`: no key falls in it yet).
    pub shards: Vec<Option<Shard>>,
    /// Bad games by reason, over all months.
    pub bad: BadGames,
    /// Games read, counted and filtered, over all months.
    pub counters: Counters,
    /// Distinct positions that fell onto one state key (see [`codec`]), over all months.
    pub collisions: u64,
}

impl CountsState {
    /// An empty state of `shards` shards.
    pub fn empty(shards: usize) -> CountsState {
        CountsState { shards: vec![None; shards.max(1)], ..Default::default() }
    }

    /// The stored objects it names.
    pub fn objects(&self) -> Vec<String> {
        self.shards.iter().flatten().map(|s| s.name.clone()).collect()
    }

    /// Positions, (position, move) pairs and bytes held.
    pub fn size(&self) -> (u64, u64, u64) {
        self.shards
            .iter()
            .flatten()
            .fold((0, 0, 0), |(g, m, b), s| (g + s.groups, m + s.moves, b + s.bytes))
    }
}

/// What a tree keeps of the state: every statistic over `min_games` games or more, and
/// every statistic of the `pinned` keys (the skeleton's, as state keys, sorted) whatever
/// their games.
pub struct Wanted<'a> {
    /// The tree's `min_games`.
    pub min_games: u64,
    /// Keys kept whatever their games, sorted.
    pub pinned: &'a [u128],
}

impl Wanted<'_> {
    /// Whether a statistic of `key` over `games` games is kept.
    pub fn keeps(&self, key: u128, games: u64) -> bool {
        games >= self.min_games || self.pinned.binary_search(&key).is_ok()
    }
}

/// Kept positions and moves, each sorted by key.
type Kept = (Vec<PosRecord>, Vec<MoveRecord>);

/// The statistics a tree keeps (see [`Wanted`]), summed with `others` (another source's
/// runs, key by key). Keys are state keys (see [`codec::state_key`]).
///
/// Alone, the state is read through its shards' hot cuts ([`hot`]): the pinned keys the
/// cuts lack are looked up block by block, and a shard is cut again (one read of it)
/// only when no cut at `min_games` is stored. With `others`, any key of theirs may reach
/// `min_games` by the sum, so every shard is read whole, with `others` cut to the same
/// shards as it streams by.
pub fn kept(
    state: &CountsState,
    store: &dyn ShardStore,
    others: Option<RunGroups<'_>>,
    wanted: &Wanted<'_>,
) -> Result<Kept, MergeError> {
    match others {
        Some(others) => kept_with(state, store, others, &|key, games| wanted.keeps(key, games)),
        None => kept_from_cuts(state, store, wanted),
    }
}

fn kept_from_cuts(
    state: &CountsState,
    store: &dyn ShardStore,
    wanted: &Wanted<'_>,
) -> Result<Kept, MergeError> {
    use rayon::prelude::*;
    let shards = state.shards.len();
    let first_pinned =
        |i: usize| wanted.pinned.partition_point(|k| merge::shard_of(*k, shards) < i);
    let parts = (0..shards)
        .into_par_iter()
        .map(|i| match &state.shards[i] {
            Some(shard) => kept_in_shard(
                shard,
                store,
                wanted,
                &wanted.pinned[first_pinned(i)..first_pinned(i + 1)],
            ),
            None => Ok(Kept::default()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(concat(parts))
}

/// The shards' parts one after the other, in vectors allocated once at their length.
fn concat(parts: Vec<Kept>) -> Kept {
    let mut positions = Vec::with_capacity(parts.iter().map(|(p, _)| p.len()).sum());
    let mut moves = Vec::with_capacity(parts.iter().map(|(_, m)| m.len()).sum());
    for (p, m) in parts {
        positions.extend(p);
        moves.extend(m);
    }
    (positions, moves)
}

/// What the tree keeps of one shard: its hot groups, and its `pinned` keys (sorted) the
/// cut lacks, looked up in their blocks.
fn kept_in_shard(
    shard: &Shard,
    store: &dyn ShardStore,
    wanted: &Wanted<'_>,
    pinned: &[u128],
) -> Result<Kept, MergeError> {
    let cut = hot_cut(shard, store, wanted.min_games)?;
    let keep = |key, games| wanted.keeps(key, games);
    let mut out = Kept::default();
    let mut missing = pinned.to_vec();
    cut.for_each(|group| {
        keep_group(group, &keep, &mut out);
        if let Ok(at) = missing.binary_search(&group.key) {
            missing.remove(at);
        }
    })
    .map_err(|e| merge::malformed(&shard.name, e))?;
    if missing.is_empty() {
        return Ok(out);
    }
    for group in look_up(shard, store, &cut, &missing)? {
        keep_group(&group, &keep, &mut out);
    }
    out.0.sort_unstable_by_key(|p| p.0);
    out.1.sort_unstable_by_key(|m| (m.0, m.1));
    Ok(out)
}

/// Shard `shard`'s hot cut at `min_games`: the stored one, or one cut now and stored.
fn hot_cut(shard: &Shard, store: &dyn ShardStore, min_games: u64) -> Result<HotCut, MergeError> {
    if let Some(cut) = store.get_hot(&shard.name, min_games) {
        return Ok(cut);
    }
    let failed = |source| MergeError::Shard { shard: shard.name.clone(), source };
    let bytes = store.read(&shard.name).map_err(failed)?;
    let cut = hot::cut(&bytes, min_games).map_err(|e| merge::malformed(&shard.name, e))?;
    store.put_hot(&shard.name, &cut).map_err(failed)?;
    Ok(cut)
}

/// The groups of `keys` (sorted) that shard `shard` holds, read block by block.
fn look_up(
    shard: &Shard,
    store: &dyn ShardStore,
    cut: &HotCut,
    keys: &[u128],
) -> Result<Vec<Group>, MergeError> {
    let failed = |source| MergeError::Shard { shard: shard.name.clone(), source };
    let mut found = Vec::new();
    let mut rest = keys;
    while let Some(&key) = rest.first() {
        let Some(block) = cut.block_of(key) else {
            rest = &rest[1..];
            continue;
        };
        let end = cut.blocks.iter().find(|b| b.first > block.first).map(|b| b.first);
        let here = rest.partition_point(|k| end.is_none_or(|end| *k < end));
        let bytes = store.read_at(&shard.name, block.offset, block.len).map_err(failed)?;
        let groups = hot::find_in_block(block, &bytes, &rest[..here])
            .map_err(|e| failed(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        found.extend(groups);
        rest = &rest[here..];
    }
    Ok(found)
}

/// [`kept`] with another source's runs: every shard read whole.
fn kept_with(
    state: &CountsState,
    store: &dyn ShardStore,
    mut others: RunGroups<'_>,
    keep: &(dyn Fn(u128, u64) -> bool + Sync),
) -> Result<Kept, MergeError> {
    use rayon::prelude::*;
    let shards = state.shards.len();
    let mut slices = merge::slices(&mut others, shards).peekable();
    let mut next = 0;
    let jobs = std::iter::from_fn(|| {
        let i = (next < shards).then_some(next)?;
        next += 1;
        let other = match slices.peek() {
            Some(Ok((j, _))) if *j != i => None,
            _ => slices.next().map(|r| r.map(|(_, bytes)| bytes)),
        };
        Some((i, other))
    });
    let mut parts = jobs
        .par_bridge()
        .map(|(i, other)| -> Result<_, MergeError> {
            let other = other.transpose()?.unwrap_or_default();
            let (name, bytes) = match &state.shards[i] {
                Some(s) => (
                    s.name.as_str(),
                    store
                        .read(&s.name)
                        .map_err(|source| MergeError::Shard { shard: s.name.clone(), source })?,
                ),
                None => ("none", Vec::new()),
            };
            let mut out = Kept::default();
            merge::merge_groups(&bytes, &other, |group| keep_group(group, keep, &mut out))
                .map_err(|e| merge::malformed(name, e))?;
            Ok((i, out))
        })
        .collect::<Result<Vec<_>, _>>()?;
    parts.sort_unstable_by_key(|(i, _)| *i);
    Ok(concat(parts.into_iter().map(|(_, kept)| kept).collect()))
}

fn keep_group(group: &Group, keep: &dyn Fn(u128, u64) -> bool, (positions, moves): &mut Kept) {
    let key = group.position_key();
    if let Some(p) = group.position.filter(|p| keep(group.key, p.games())) {
        positions.push((key, p));
    }
    for (mv, stats) in &group.moves {
        if keep(group.key, stats.outcomes.games()) {
            moves.push((key, *mv, *stats));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::merge::{RunGroups, Shard, ShardStore, add_month};
    use super::*;
    use crate::games::runs::{MoveRecord, PosRecord, Source};
    use crate::games::stats::{MoveStats, Outcomes};
    use crate::position::{MoveKey, PositionKey};

    /// Shards and their cuts in memory, counting whole reads of shards.
    #[derive(Default)]
    struct Memory {
        blobs: Mutex<BTreeMap<String, Vec<u8>>>,
        cuts: Mutex<BTreeMap<(String, u64), Vec<u8>>>,
        reads: std::sync::atomic::AtomicUsize,
    }

    impl Memory {
        fn with_blobs(blobs: BTreeMap<String, Vec<u8>>) -> Memory {
            Memory { blobs: Mutex::new(blobs), ..Default::default() }
        }
    }

    impl ShardStore for Memory {
        fn read(&self, name: &str) -> std::io::Result<Vec<u8>> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.blobs
                .lock()
                .unwrap()
                .get(name)
                .cloned()
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, name.to_string()))
        }
        fn write(&self, bytes: &[u8]) -> std::io::Result<String> {
            let name = blake3::hash(bytes).to_hex().to_string();
            self.blobs.lock().unwrap().insert(name.clone(), bytes.to_vec());
            Ok(name)
        }
        fn exists(&self, name: &str) -> bool {
            self.blobs.lock().unwrap().contains_key(name)
        }
        fn remove(&self, name: &str) {
            self.blobs.lock().unwrap().remove(name);
            self.cuts.lock().unwrap().retain(|(shard, _), _| shard != name);
        }
        fn read_at(&self, name: &str, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
            let blobs = self.blobs.lock().unwrap();
            let bytes = blobs.get(name).ok_or(std::io::ErrorKind::NotFound)?;
            Ok(bytes[offset as usize..(offset + len) as usize].to_vec())
        }
        fn put_hot(&self, name: &str, cut: &HotCut) -> std::io::Result<()> {
            self.cuts.lock().unwrap().insert((name.to_string(), cut.min_games), cut.to_bytes());
            Ok(())
        }
        fn get_hot(&self, name: &str, min_games: u64) -> Option<HotCut> {
            HotCut::from_bytes(self.cuts.lock().unwrap().get(&(name.to_string(), min_games))?)
        }
    }

    /// A month: position and move records of a few keys (some shared by months, some
    /// agreeing with another on the top 64 bits only), summed as counting would.
    fn month(seed: u64, games: usize) -> (Vec<PosRecord>, Vec<MoveRecord>) {
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut positions, mut moves) = (BTreeMap::new(), BTreeMap::new());
        for _ in 0..games {
            let result = next() % 3;
            let outcome = Outcomes {
                white: u64::from(result == 0),
                draws: u64::from(result == 1),
                black: u64::from(result == 2),
            };
            for _ in 0..4 {
                let hi = next() % 40; // few keys: every count from 1 up occurs
                let key = PositionKey(
                    (u128::from(hi) << 120) | (u128::from(next() % 2) << 56) | u128::from(hi),
                );
                positions.entry(key).or_insert_with(Outcomes::default).add(&outcome);
                let rated = next() % 2;
                let stats = MoveStats {
                    outcomes: outcome,
                    rating_sum: rated * (1000 + next() % 2000),
                    rated_games: rated,
                    ..Default::default()
                };
                let mv = MoveKey((next() % 3) as u16);
                codec::add_stats(moves.entry((key, mv)).or_insert_with(MoveStats::default), &stats);
            }
        }
        (positions.into_iter().collect(), moves.into_iter().map(|((k, m), s)| (k, m, s)).collect())
    }

    fn source<'a, T: Send + 'a>(records: Vec<T>) -> Source<'a, T> {
        let mut it = records.into_iter();
        Box::new(move || Ok(it.next()))
    }

    fn naive(
        months: &[(Vec<PosRecord>, Vec<MoveRecord>)],
        keep: &dyn Fn(u128, u64) -> bool,
    ) -> (Vec<PosRecord>, Vec<MoveRecord>) {
        let (mut positions, mut moves) = (BTreeMap::new(), BTreeMap::new());
        for (p, m) in months {
            for (k, o) in p {
                positions.entry(codec::state_key(*k)).or_insert_with(Outcomes::default).add(o);
            }
            for (k, mv, s) in m {
                codec::add_stats(
                    moves.entry((codec::state_key(*k), *mv)).or_insert_with(MoveStats::default),
                    s,
                );
            }
        }
        let positions = positions
            .into_iter()
            .filter(|(k, o)| keep(*k, o.games()))
            .map(|(k, o)| (PositionKey(k), o))
            .collect();
        let moves = moves
            .into_iter()
            .filter(|((k, _), s)| keep(*k, s.outcomes.games()))
            .map(|((k, mv), s)| (PositionKey(k), mv, s))
            .collect();
        (positions, moves)
    }

    #[test]
    fn months_added_in_any_order_and_shard_count_keep_exactly_what_one_sum_keeps() {
        let months: Vec<_> = (1..=6).map(|m| month(m, 30 + 7 * m as usize)).collect();
        // A skeleton key every month plays, and one no month plays.
        let pinned = [codec::state_key(PositionKey(3u128 << 120 | 3)), 7u128 << 100];
        for min_games in [1, 5, 12, 40] {
            let wanted = Wanted { min_games, pinned: &pinned };
            let want = naive(&months, &|key, games| wanted.keeps(key, games));
            for (shards, order, hot_at) in [
                (1, vec![0, 1, 2, 3, 4, 5], Some(min_games)),
                (7, vec![5, 3, 1, 0, 2, 4], None),
                (64, vec![2, 0, 5, 4, 1, 3], Some(min_games + 1)),
            ] {
                let store = Memory::default();
                let dir = tempfile::tempdir().unwrap();
                let mut state = CountsState::empty(shards);
                for i in order {
                    let (p, m) = months[i].clone();
                    let mut groups = RunGroups::new(source(p), source(m)).unwrap();
                    let progress = dir.path().join(format!("{i}.progress"));
                    state.shards =
                        add_month(&state.shards, &mut groups, &store, &progress, hot_at).unwrap().0;
                }
                let context = format!("{shards} shards, min_games {min_games}, cut at {hot_at:?}");
                store.reads.store(0, std::sync::atomic::Ordering::Relaxed);
                assert_eq!(kept(&state, &store, None, &wanted).unwrap(), want, "{context}");
                // Cut by the merge at the tree's threshold, no shard is read whole again;
                // cut at another, each is read once and its cut kept for the next build.
                let whole_reads = store.reads.swap(0, std::sync::atomic::Ordering::Relaxed);
                let live = state.objects().len();
                assert_eq!(
                    whole_reads,
                    if hot_at == Some(min_games) { 0 } else { live },
                    "{context}"
                );
                assert_eq!(kept(&state, &store, None, &wanted).unwrap(), want, "{context}");
                assert_eq!(store.reads.load(std::sync::atomic::Ordering::Relaxed), 0, "{context}");
                // Only the current shards are stored: replaced ones were removed.
                assert_eq!(store.blobs.lock().unwrap().len(), live);
            }
        }
    }

    #[test]
    fn positions_that_agree_on_the_kept_72_bits_are_summed_and_counted_as_collisions() {
        let a = PositionKey(0xABCD << 112 | 0x0F << 56 | 1);
        let b = PositionKey(0xABCD << 112 | 0x0F << 56 | 2); // the same top 72 bits
        let c = PositionKey(0xABCD << 112 | 0x0E << 56 | 3); // another check byte
        let one = Outcomes { white: 1, draws: 0, black: 0 };
        let mv =
            |k: PositionKey| (k, MoveKey(5), MoveStats { outcomes: one, ..Default::default() });
        let mut groups = RunGroups::new(
            source(vec![(c, one), (a, one), (b, one)]),
            source(vec![mv(c), mv(a), mv(b)]),
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut g = Group::default();
        while groups.next_into(&mut g).unwrap() {
            seen.push((g.key, g.position_games(), g.moves.len(), g.moves[0].1.outcomes.games()));
        }
        assert_eq!(seen, vec![(codec::state_key(c), 1, 1, 1), (codec::state_key(a), 2, 1, 2)]);
        assert_eq!(groups.collisions, 1);
    }

    #[test]
    fn another_sources_counts_are_summed_before_the_cut() {
        let months: Vec<_> = (1..=3).map(|m| month(m, 40)).collect();
        let wanted = Wanted { min_games: 20, pinned: &[] };
        let store = Memory::default();
        let dir = tempfile::tempdir().unwrap();
        let mut state = CountsState::empty(5);
        for (i, (p, m)) in months[..2].iter().cloned().enumerate() {
            let mut groups = RunGroups::new(source(p), source(m)).unwrap();
            state.shards = add_month(
                &state.shards,
                &mut groups,
                &store,
                &dir.path().join(format!("{i}")),
                Some(20),
            )
            .unwrap()
            .0;
        }
        let (p, m) = months[2].clone();
        let others = RunGroups::new(source(p), source(m)).unwrap();
        let want = naive(&months, &|key, games| wanted.keeps(key, games));
        assert_eq!(kept(&state, &store, Some(others), &wanted).unwrap(), want);
    }

    #[test]
    fn a_merge_stopped_part_way_resumes_from_its_progress() {
        let months: Vec<_> = (1..=2).map(|m| month(m, 60)).collect();
        let store = Memory::default();
        let dir = tempfile::tempdir().unwrap();
        let run =
            |store: &Memory, before: &[Option<Shard>], i: usize, progress: &std::path::Path| {
                let (p, m) = months[i].clone();
                let mut groups = RunGroups::new(source(p), source(m)).unwrap();
                add_month(before, &mut groups, store, progress, Some(1)).unwrap()
            };
        let first = run(&store, &CountsState::empty(8).shards, 0, &dir.path().join("a")).0;
        let before_second = store.blobs.lock().unwrap().clone();
        let progress = dir.path().join("b");
        let done = run(&store, &first, 1, &progress).0;
        // What a kill after two shards leaves: their new shards noted and stored, the
        // shards they replaced removed, every other old shard still there.
        let text = std::fs::read_to_string(&progress).unwrap();
        let noted: Vec<&str> = text.lines().take(2).collect();
        std::fs::write(&progress, noted.join("\n") + "\n").unwrap();
        let killed = Memory::with_blobs(before_second);
        for line in &noted {
            let i: usize = line.split(' ').next().unwrap().parse().unwrap();
            let new = done[i].as_ref().unwrap();
            killed.blobs.lock().unwrap().insert(new.name.clone(), store.read(&new.name).unwrap());
            if let Some(old) = first[i].as_ref().filter(|old| old.name != new.name) {
                killed.remove(&old.name);
            }
        }
        let (again, report) = run(&killed, &first, 1, &progress);
        assert_eq!(again, done);
        assert_eq!(report.resumed, 2);
        let wanted = Wanted { min_games: 1, pinned: &[] };
        let state = CountsState { shards: again, ..CountsState::empty(8) };
        let want = naive(&months, &|key, games| wanted.keeps(key, games));
        assert_eq!(kept(&state, &killed, None, &wanted).unwrap(), want);
    }
}
