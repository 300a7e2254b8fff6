//! The counting tables of one worker: open addressing with linear probing, the key
//! inline with its counts, so that finding a key costs one cache line and the lines of
//! a game's 31 keys can be fetched at once ([`CountTable::prefetch`]) before any is read.
//!
//! A month of Lichess games has hundreds of millions of distinct keys: the tables are far
//! bigger than the caches, and most keys past the opening are met for the first time. A
//! `HashMap` spends two dependent cache misses on each (its control bytes, then the
//! slot); these tables spend one, and overlap those of a game. Their memory is what they
//! allocate ([`CountTable::bytes`]), which the memory budget counts exactly.

/// A key of a [`CountTable`]: a Zobrist-derived value, already uniformly random.
pub(super) trait TableKey: Copy + PartialEq {
    /// The empty-slot marker. The key equal to it is kept beside the table.
    const EMPTY: Self;
    /// 64 well-mixed bits of the key.
    fn hash(&self) -> u64;
}

/// A table from keys to counts that only grows, and is emptied whole ([`CountTable::drain`]).
pub(super) struct CountTable<K, V> {
    slots: Vec<(K, V)>,
    len: usize,
    /// 64 − log2(slots): the top bits of a multiplied hash index the table.
    shift: u32,
    /// The counts of the key equal to [`TableKey::EMPTY`], if it was met.
    empty_key: Option<V>,
}

/// Fibonacci hashing: the top bits of the product index the table.
const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;
const INITIAL_SLOTS_LOG2: u32 = 12;

impl<K: TableKey, V: Copy + Default> CountTable<K, V> {
    /// An empty table with a few thousand slots.
    pub(super) fn new() -> Self {
        CountTable {
            slots: vec![(K::EMPTY, V::default()); 1 << INITIAL_SLOTS_LOG2],
            len: 0,
            shift: 64 - INITIAL_SLOTS_LOG2,
            empty_key: None,
        }
    }

    /// Number of keys held.
    pub(super) fn len(&self) -> usize {
        self.len + usize::from(self.empty_key.is_some())
    }

    /// Bytes allocated.
    pub(super) fn bytes(&self) -> usize {
        self.slots.len() * size_of::<(K, V)>()
    }

    /// Whether adding `more` new keys would double the table (it does when three
    /// quarters full).
    pub(super) fn needs_growth(&self, more: usize) -> bool {
        (self.len + more) * 4 > self.slots.len() * 3
    }

    #[inline]
    fn home(&self, key: &K) -> usize {
        (key.hash().wrapping_mul(SPREAD) >> self.shift) as usize
    }

    /// Asks the processor to start fetching `key`'s slot; [`CountTable::entry`] on it a
    /// little later then finds it in cache.
    #[inline]
    pub(super) fn prefetch(&self, key: &K) {
        #[cfg(target_arch = "x86_64")]
        {
            let slot: *const (K, V) = &self.slots[self.home(key)];
            // SAFETY: prefetching is a hint with no effect on memory; the pointer is to an
            // element of `self.slots`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast())
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The counts of `key`, inserted as `V::default()` if absent.
    #[inline]
    pub(super) fn entry(&mut self, key: K) -> &mut V {
        if key == K::EMPTY {
            return self.empty_key.get_or_insert_with(V::default);
        }
        if self.needs_growth(1) {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(&key);
        loop {
            // Two reborrows of the slot, so the borrow checker sees one of them returned.
            if self.slots[i].0 == key {
                return &mut self.slots[i].1;
            }
            if self.slots[i].0 == K::EMPTY {
                self.len += 1;
                self.slots[i] = (key, V::default());
                return &mut self.slots[i].1;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let doubled = vec![(K::EMPTY, V::default()); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        self.len = 0;
        let empty_key = self.empty_key.take();
        for (key, counts) in old {
            if key != K::EMPTY {
                *self.entry(key) = counts;
            }
        }
        self.empty_key = empty_key;
    }

    /// Every key with its counts, in no particular order; the table is left empty with
    /// its memory kept for what comes next.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = (K, V)> + '_ {
        self.len = 0;
        let empty_key = self.empty_key.take().map(|v| (K::EMPTY, v));
        let slots = self
            .slots
            .iter_mut()
            .filter(|s| s.0 != K::EMPTY)
            .map(|s| std::mem::replace(s, (K::EMPTY, V::default())));
        empty_key.into_iter().chain(slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Copy, Clone, PartialEq, Debug)]
    struct Key(u64);

    impl TableKey for Key {
        const EMPTY: Self = Key(0);
        fn hash(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn counts_like_a_hash_map_through_growth_and_drains() {
        let mut table: CountTable<Key, u32> = CountTable::new();
        let mut reference = std::collections::HashMap::new();
        // Keys that share their home slot (the same top bits) probe linearly; 0 is the
        // empty marker and is counted beside the table.
        let keys = (0..100_000u64)
            .map(|i| if i % 7 == 0 { i % 13 } else { i.wrapping_mul(0x2545_f491_4f6c_dd1d) });
        for (round, key) in keys.enumerate() {
            table.prefetch(&Key(key));
            *table.entry(Key(key)) += 1;
            *reference.entry(key).or_insert(0u32) += 1;
            if round == 60_000 {
                let drained: std::collections::HashMap<u64, u32> =
                    table.drain().map(|(k, v)| (k.0, v)).collect();
                assert_eq!(drained, reference);
                assert_eq!(table.drain().count(), 0);
                reference.clear();
            }
        }
        let drained: std::collections::HashMap<u64, u32> =
            table.drain().map(|(k, v)| (k.0, v)).collect();
        assert_eq!(drained, reference);
    }
}
