//! The cumulative counts state of a large game source: the exact counts of every
//! (position, move) and every position of all its months, kept on disk in shards, so
//! that adding a month costs counting that month plus one merge per shard, whatever the
//! number of months before it.
//!
//! Why not the runs every other source keeps: the `games` step merges every file's runs
//! on every make, so adding a file costs more the more files there are (all of Lichess is
//! about 20 billion run records). Exact pruning at `min_games` still needs every key's
//! total, below the threshold too (any key can reach it next month): so the state holds
//! them all, as compactly as [`codec`] can, and the tree reads it once per build,
//! keeping what it needs.
//!
//! - [`codec`]: the bytes of a shard (72-bit keys, positions and their moves in groups).
//! - [`merge`]: a month's runs grouped and cut by shard; the per-shard merge, resumable.

pub mod codec;
pub mod merge;

use serde::{Deserialize, Serialize};

use self::codec::Group;
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

/// The statistics a tree keeps: the state's groups and `others` (another source's runs,
/// summed key by key) read once in key order, each position and move kept when `keep`
/// says so for its key and games. Keys are state keys (see [`codec::state_key`]). Shards
/// are read on every core, `others` cut to the same shards as it streams by.
pub fn kept(
    state: &CountsState,
    store: &dyn ShardStore,
    mut others: Option<RunGroups<'_>>,
    keep: &(dyn Fn(u128, u64) -> bool + Sync),
) -> Result<(Vec<PosRecord>, Vec<MoveRecord>), MergeError> {
    use rayon::prelude::*;
    let shards = state.shards.len();
    let mut slices = others.as_mut().map(|o| merge::slices(o, shards).peekable());
    let mut next = 0;
    let jobs = std::iter::from_fn(|| {
        let i = (next < shards).then_some(next)?;
        next += 1;
        let other = slices.as_mut().and_then(|s| match s.peek() {
            Some(Ok((j, _))) if *j != i => None,
            _ => s.next().map(|r| r.map(|(_, bytes)| bytes)),
        });
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
            let mut out = (Vec::new(), Vec::new());
            merge::merge_groups(&bytes, &other, |group| keep_group(group, keep, &mut out))
                .map_err(|e| merge::malformed(name, e))?;
            Ok((i, out))
        })
        .collect::<Result<Vec<_>, _>>()?;
    parts.sort_unstable_by_key(|(i, _)| *i);
    let (mut positions, mut moves) = (Vec::new(), Vec::new());
    for (_, (p, m)) in parts {
        positions.extend(p);
        moves.extend(m);
    }
    Ok((positions, moves))
}

fn keep_group(
    group: &Group,
    keep: &dyn Fn(u128, u64) -> bool,
    (positions, moves): &mut (Vec<PosRecord>, Vec<MoveRecord>),
) {
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

    /// Shards in memory, counting removals.
    #[derive(Default)]
    struct Memory {
        blobs: Mutex<BTreeMap<String, Vec<u8>>>,
    }

    impl ShardStore for Memory {
        fn read(&self, name: &str) -> std::io::Result<Vec<u8>> {
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
        let skeleton = codec::state_key(PositionKey(3u128 << 120 | 3));
        for min_games in [1, 5, 12, 40] {
            let keep = |key: u128, games: u64| games >= min_games || key == skeleton;
            let want = naive(&months, &keep);
            for (shards, order) in [
                (1, vec![0, 1, 2, 3, 4, 5]),
                (7, vec![5, 3, 1, 0, 2, 4]),
                (64, vec![2, 0, 5, 4, 1, 3]),
            ] {
                let store = Memory::default();
                let dir = tempfile::tempdir().unwrap();
                let mut state = CountsState::empty(shards);
                for i in order {
                    let (p, m) = months[i].clone();
                    let mut groups = RunGroups::new(source(p), source(m)).unwrap();
                    let progress = dir.path().join(format!("{i}.progress"));
                    state.shards =
                        add_month(&state.shards, &mut groups, &store, &progress).unwrap().0;
                }
                assert_eq!(
                    kept(&state, &store, None, &keep).unwrap(),
                    want,
                    "{shards} shards, min_games {min_games}"
                );
                // Only the current shards are stored: replaced ones were removed.
                assert_eq!(store.blobs.lock().unwrap().len(), state.objects().len());
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
        let keep = |_: u128, games: u64| games >= 20;
        let store = Memory::default();
        let dir = tempfile::tempdir().unwrap();
        let mut state = CountsState::empty(5);
        for (i, (p, m)) in months[..2].iter().cloned().enumerate() {
            let mut groups = RunGroups::new(source(p), source(m)).unwrap();
            state.shards =
                add_month(&state.shards, &mut groups, &store, &dir.path().join(format!("{i}")))
                    .unwrap()
                    .0;
        }
        let (p, m) = months[2].clone();
        let others = RunGroups::new(source(p), source(m)).unwrap();
        assert_eq!(kept(&state, &store, Some(others), &keep).unwrap(), naive(&months, &keep));
    }

    #[test]
    fn a_merge_stopped_part_way_resumes_from_its_progress() {
        let months: Vec<_> = (1..=2).map(|m| month(m, 60)).collect();
        let store = Memory::default();
        let dir = tempfile::tempdir().unwrap();
        let run = |store: &Memory,
                   before: &[Option<Shard>],
                   i: usize,
                   progress: &std::path::Path| {
            let (p, m) = months[i].clone();
            add_month(before, &mut RunGroups::new(source(p), source(m)).unwrap(), store, progress)
                .unwrap()
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
        let killed = Memory { blobs: Mutex::new(before_second) };
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
        let keep = |_: u128, games: u64| games >= 1;
        let state = CountsState { shards: again, ..CountsState::empty(8) };
        assert_eq!(kept(&state, &killed, None, &keep).unwrap(), naive(&months, &keep));
    }
}
