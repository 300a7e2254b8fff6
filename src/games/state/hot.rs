//! A shard's hot cut: the groups a tree can keep by their counts alone, and an index of
//! the shard's blocks for the few groups it keeps besides (skeleton positions played in
//! fewer games).
//!
//! Why: without it the tree reads the whole state on every build, a second pass over the
//! state beside the merge's, and the state is the one thing that grows with the corpus.
//! The merge writes each new shard's cut as it writes the shard, at the `min_games` of
//! the make that merges; the tree reads the cuts (a few MB where the state is tens of
//! GB), looks the skeleton's cold positions up block by block, and cuts a shard again
//! from its bytes only when `min_games` changed since. A cut is a function of the shard's
//! bytes and the threshold alone, so which make wrote it never changes what a tree holds.
//!
//! A cut's bytes: its postcard, then the BLAKE3 of the postcard (a cut that does not
//! match is cut again, never trusted).

use serde::{Deserialize, Serialize};

use super::codec::{Decoder, Encoder, Group, Malformed, Span};

/// Groups per block of the index: a point lookup reads one block (tens of KB).
pub const BLOCK_GROUPS: u64 = 1024;

/// One block of a shard: where it starts and how to check and decode it alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// Its first group's key.
    pub first: u128,
    /// The key of the group before it (what its first delta is from).
    pub prev: u128,
    /// Where it starts in the shard.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// The first 16 bytes of the BLAKE3 of its bytes.
    pub check: [u8; 16],
}

/// The hot cut of one shard at `min_games`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotCut {
    /// The threshold it was cut at.
    pub min_games: u64,
    /// The shard's blocks, in key order.
    pub blocks: Vec<Block>,
    /// The groups that reach `min_games` (by the position or any move), encoded whole.
    pub groups: Vec<u8>,
    /// How many groups `groups` holds.
    pub hot: u64,
}

/// Whether `group` reaches `min_games` by its position's games or any move's.
pub fn is_hot(group: &Group, min_games: u64) -> bool {
    group.position_games() >= min_games
        || group.moves.iter().any(|(_, s)| s.outcomes.games() >= min_games)
}

/// Builds a cut while a shard is written (or read): told of each group and where it
/// starts.
pub struct Cutter {
    cut: HotCut,
    encoder: Encoder,
    in_block: u64,
}

impl Cutter {
    /// A cutter at `min_games`.
    pub fn new(min_games: u64) -> Cutter {
        Cutter {
            cut: HotCut { min_games, ..Default::default() },
            encoder: Encoder::default(),
            in_block: 0,
        }
    }

    /// Notes `group`, which starts at `offset` of the shard after a group of key `prev`.
    pub fn note(&mut self, group: &Group, offset: usize, prev: u128) {
        self.start(group.key, offset, prev);
        if is_hot(group, self.cut.min_games) {
            self.keep(group);
        }
    }

    /// Notes that a group of `key` starts at `offset` after a group of key `prev` (then
    /// [`Cutter::keep`] it if [`Cutter::wants`] it): for a caller that knows a group's
    /// reach before decoding it.
    pub fn start(&mut self, key: u128, offset: usize, prev: u128) {
        if self.in_block == 0 {
            let offset = offset as u64;
            self.cut.blocks.push(Block { first: key, prev, offset, len: 0, check: [0; 16] });
        }
        self.in_block = (self.in_block + 1) % BLOCK_GROUPS;
    }

    /// Whether a group whose position or best move reaches `reach` games is hot.
    pub fn wants(&self, reach: u64) -> bool {
        reach >= self.cut.min_games
    }

    /// Keeps `group` (the one last started) in the cut.
    pub fn keep(&mut self, group: &Group) {
        self.encoder.put(group, &mut self.cut.groups);
        self.cut.hot += 1;
    }

    /// The cut, its blocks measured and checked against the shard's bytes.
    pub fn finish(mut self, shard: &[u8]) -> HotCut {
        let ends: Vec<u64> = self.cut.blocks.iter().skip(1).map(|b| b.offset).collect();
        for (block, end) in
            self.cut.blocks.iter_mut().zip(ends.into_iter().chain([shard.len() as u64]))
        {
            block.len = end - block.offset;
            block.check = check(&shard[block.offset as usize..end as usize]);
        }
        self.cut
    }
}

fn check(bytes: &[u8]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&blake3::hash(bytes).as_bytes()[..16]);
    out
}

/// The cut of a stored shard's bytes at `min_games` (the shard was merged at another).
pub fn cut(shard: &[u8], min_games: u64) -> Result<HotCut, Malformed> {
    let mut cutter = Cutter::new(min_games);
    let mut decoder = Decoder::new(shard);
    let (mut span, mut group) = (Span::default(), Group::default());
    loop {
        let prev = decoder.prev();
        if !decoder.skip_into(&mut span)? {
            return Ok(cutter.finish(shard));
        }
        cutter.start(span.key, span.start, prev);
        if cutter.wants(span.reach) {
            Decoder::decode_span(shard, &span, &mut group)?;
            cutter.keep(&group);
        }
    }
}

impl HotCut {
    /// The cut's bytes as stored: postcard, then its BLAKE3.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = postcard::to_allocvec(self).expect("serializing to memory does not fail");
        let hash = blake3::hash(&bytes);
        bytes.extend_from_slice(hash.as_bytes());
        bytes
    }

    /// A cut from its stored bytes; `None` when they are not a whole, intact cut.
    pub fn from_bytes(bytes: &[u8]) -> Option<HotCut> {
        let (body, hash) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
        (blake3::hash(body).as_bytes() == hash).then(|| postcard::from_bytes(body).ok())?
    }

    /// The hot groups, in key order, to `f`.
    pub fn for_each(&self, mut f: impl FnMut(&Group)) -> Result<(), Malformed> {
        let mut decoder = Decoder::new(&self.groups);
        let mut group = Group::default();
        while decoder.next_into(&mut group)? {
            f(&group);
        }
        Ok(())
    }

    /// The block that holds `key` if the shard does.
    pub fn block_of(&self, key: u128) -> Option<&Block> {
        let after = self.blocks.partition_point(|b| b.first <= key);
        after.checked_sub(1).map(|i| &self.blocks[i])
    }
}

/// Why a block could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BlockError {
    /// Its bytes do not match the cut's check (the shard changed or is corrupt).
    #[error("block at byte {offset} does not match its check")]
    Check {
        /// Where the block starts.
        offset: u64,
    },
    /// Its bytes are not groups.
    #[error(transparent)]
    Malformed(#[from] Malformed),
}

/// The groups of `keys` (sorted) found in `block`, whose bytes are `bytes`.
pub fn find_in_block(block: &Block, bytes: &[u8], keys: &[u128]) -> Result<Vec<Group>, BlockError> {
    if check(bytes) != block.check {
        return Err(BlockError::Check { offset: block.offset });
    }
    let mut decoder = Decoder::resume(bytes, block.prev);
    let (mut group, mut found) = (Group::default(), Vec::new());
    while decoder.next_into(&mut group)? {
        if keys.binary_search(&group.key).is_ok() {
            found.push(group.clone());
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::stats::{MoveStats, Outcomes};
    use crate::position::MoveKey;

    /// `n` groups with keys spread over the range, group `i` seen in `i % 7` games.
    fn shard(n: u64) -> (Vec<Group>, Vec<u8>) {
        let mut groups = Vec::new();
        for i in 0..n {
            let games = i % 7;
            let one = Outcomes { white: games, draws: 0, black: 0 };
            let stats = MoveStats { outcomes: one, ..Default::default() };
            groups.push(Group {
                key: (u128::from(i * 1_000_003) << 64) | (u128::from(i as u8) << 56),
                position: (games > 0).then_some(one),
                moves: vec![(MoveKey(i as u16), stats)],
            });
        }
        let (mut encoder, mut bytes, mut cutter) = (Encoder::default(), Vec::new(), Cutter::new(5));
        for g in &groups {
            let (offset, prev) = (bytes.len(), encoder.prev());
            encoder.put(g, &mut bytes);
            cutter.note(g, offset, prev);
        }
        assert_eq!(cutter.finish(&bytes), cut(&bytes, 5).unwrap(), "written and read cuts agree");
        (groups, bytes)
    }

    #[test]
    fn a_cut_holds_the_hot_groups_and_finds_any_other_by_its_block() {
        let (groups, bytes) = shard(3000);
        let hot = cut(&bytes, 5).unwrap();
        let mut seen = Vec::new();
        hot.for_each(|g| seen.push(g.clone())).unwrap();
        let want: Vec<_> = groups.iter().filter(|g| is_hot(g, 5)).cloned().collect();
        assert_eq!(seen, want);
        assert_eq!(hot.blocks.len(), 3);
        for g in [&groups[0], &groups[1023], &groups[1024], &groups[2999]] {
            let block = hot.block_of(g.key).unwrap();
            let range = block.offset as usize..(block.offset + block.len) as usize;
            assert_eq!(find_in_block(block, &bytes[range], &[g.key]).unwrap(), vec![g.clone()]);
        }
        let stored = HotCut::from_bytes(&hot.to_bytes()).unwrap();
        assert_eq!(stored, hot);
    }

    #[test]
    fn a_merge_that_copies_untouched_groups_writes_what_decoding_every_group_writes() {
        let (groups, bytes) = shard(3000);
        // A month touching every third group of the shard, and adding new keys between.
        let mut month: Vec<Group> = Vec::new();
        for (i, g) in groups.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
            let mut touched = g.clone();
            touched.key += u128::from(i % 2 == 0) << 60;
            touched.moves[0].1.outcomes.black += 1;
            touched.position = Some(touched.moves[0].1.outcomes);
            month.push(touched);
        }
        month.sort_by_key(|g| g.key);
        month.dedup_by_key(|g| g.key);
        let (mut encoder, mut month_bytes) = (Encoder::default(), Vec::new());
        month.iter().for_each(|g| encoder.put(g, &mut month_bytes));

        let (mut copied, mut cutter) = (Vec::new(), Cutter::new(5));
        let written = crate::games::state::merge::merge_bytes(
            &bytes,
            &month_bytes,
            &mut copied,
            Some(&mut cutter),
        )
        .unwrap();
        let (mut decoded, mut encoder) = (Vec::new(), Encoder::default());
        crate::games::state::merge::merge_groups(&bytes, &month_bytes, |g| {
            encoder.put(g, &mut decoded)
        })
        .unwrap();
        assert_eq!(copied, decoded);
        assert_eq!((written.groups, written.moves), (encoder.groups, encoder.moves));
        assert_eq!(cutter.finish(&copied), cut(&decoded, 5).unwrap());
    }

    #[test]
    fn a_damaged_cut_or_block_is_refused() {
        let (groups, bytes) = shard(100);
        let hot = cut(&bytes, 5).unwrap();
        let mut stored = hot.to_bytes();
        stored[3] ^= 1;
        assert_eq!(HotCut::from_bytes(&stored), None);
        let mut damaged = bytes.clone();
        damaged[10] ^= 1;
        let block = &hot.blocks[0];
        let err = find_in_block(block, &damaged[..block.len as usize], &[groups[0].key]);
        assert!(matches!(err, Err(BlockError::Check { offset: 0 })), "{err:?}");
    }
}
