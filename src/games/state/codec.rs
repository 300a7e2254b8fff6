//! The state's bytes: groups of a position and its moves, keyed by 72 bits.
//!
//! A shard (and a month's slice of one) is a sequence of groups sorted by key. A group is
//! one position's counts and the counts of the moves played from it, written as:
//! - the key's top 64 bits as a LEB128 delta from the previous group's (keys are sorted,
//!   so a shard of n uniform keys spends about 64 − log2(n) bits here), then its next 8
//!   bits as one check byte;
//! - a header `(moves << 2) | position`, where `position` is 0 (no position record), 1
//!   (the position's counts are the sum of its moves': the usual case, nothing written)
//!   or 2 (three varints follow: White wins, draws, Black wins);
//! - per move, in move-key order: the move key (2 bytes LE) and its statistics. A move
//!   seen in one game (most of a month's) takes a tag byte (result, whether each side's
//!   rating is known) and the known ratings as varints; any other takes 0x80 and seven
//!   varints.
//!
//! Why 72 bits: a 128-bit key costs about 15 bytes a group as a delta, 72 bits about 7.
//! Two positions that agree on the top 64 bits but not on the check byte stay apart (and
//! are counted as told apart); two that agree on all 72 bits would be counted as one:
//! about 0.008 such pairs are expected among the ~10^10 positions of all Lichess. The
//! tree reports any two of its own positions that do (`tree::Built::shared_keys`).

use crate::games::stats::{MoveStats, Outcomes};
use crate::position::{MoveKey, PositionKey};

/// The bits of a [`PositionKey`] the state keeps (the top 72).
pub const KEY_MASK: u128 = !((1u128 << 56) - 1);

/// A position key as the state keys it.
pub fn state_key(key: PositionKey) -> u128 {
    key.0 & KEY_MASK
}

/// One position's counts and its moves', under a state key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The state key (see [`state_key`]).
    pub key: u128,
    /// The position's counts, when a game reached it.
    pub position: Option<Outcomes>,
    /// Its moves' counts, sorted by move key, each once.
    pub moves: Vec<(MoveKey, MoveStats)>,
}

impl Group {
    /// Empties the group for reuse (keeping the moves' allocation).
    pub fn clear(&mut self) {
        self.key = 0;
        self.position = None;
        self.moves.clear();
    }

    /// Adds `other`'s counts (same key) to `self`.
    pub fn add(&mut self, other: &Group) {
        debug_assert_eq!(self.key, other.key);
        if let Some(theirs) = &other.position {
            self.position.get_or_insert_with(Outcomes::default).add(theirs);
        }
        self.moves.extend_from_slice(&other.moves);
        self.normalize_moves();
    }

    /// Sorts the moves by key and sums those given twice.
    pub fn normalize_moves(&mut self) {
        if self.moves.windows(2).all(|w| w[0].0 < w[1].0) {
            return;
        }
        self.moves.sort_by_key(|(m, _)| *m);
        self.moves.dedup_by(|later, kept| {
            if later.0 != kept.0 {
                return false;
            }
            add_stats(&mut kept.1, &later.1);
            true
        });
    }

    /// Games that reached the position (0 when none did).
    pub fn position_games(&self) -> u64 {
        self.position.map_or(0, |p| p.games())
    }

    /// The key as a [`PositionKey`] (its low 56 bits zero).
    pub fn position_key(&self) -> PositionKey {
        PositionKey(self.key)
    }
}

/// Adds the statistics `b` to `a`.
pub fn add_stats(a: &mut MoveStats, b: &MoveStats) {
    a.outcomes.add(&b.outcomes);
    a.rating_sum += b.rating_sum;
    a.rated_games += b.rated_games;
    a.opponent_rating_sum += b.opponent_rating_sum;
    a.opponent_rated_games += b.opponent_rated_games;
}

/// Bytes that are not a well-formed state (a truncated or corrupt shard).
#[derive(Debug, thiserror::Error)]
#[error("malformed counts state at byte {at}: {what}")]
pub struct Malformed {
    /// Where the bad group starts.
    pub at: usize,
    /// What is wrong.
    pub what: &'static str,
}

/// A group starting at `at` that ends before its bytes do, or holds a value out of range.
fn cut_short(at: usize) -> Malformed {
    Malformed { at, what: "a group is cut short or out of range" }
}

/// Writes groups in order, each after the previous one's key.
#[derive(Default)]
pub struct Encoder {
    prev_hi: u64,
    /// Groups written.
    pub groups: u64,
    /// Moves written.
    pub moves: u64,
}

const MULTI: u8 = 0x80;

impl Encoder {
    /// The key's top 64 bits of the last group written (0 before the first).
    pub fn prev_hi(&self) -> u64 {
        self.prev_hi
    }

    /// Appends `group` (whose key is not below the previous group's) to `out`.
    pub fn put(&mut self, group: &Group, out: &mut Vec<u8>) {
        self.put_key(group.key, out);
        let derived = group.position.is_some_and(|p| p == moves_total(&group.moves));
        let mode = match group.position {
            None => 0,
            Some(_) if derived => 1,
            Some(_) => 2,
        };
        put_varint(out, ((group.moves.len() as u64) << 2) | mode);
        if let (Some(p), 2) = (group.position, mode) {
            for v in [p.white, p.draws, p.black] {
                put_varint(out, v);
            }
        }
        for (mv, stats) in &group.moves {
            out.extend_from_slice(&mv.0.to_le_bytes());
            put_stats(out, stats);
        }
        self.groups += 1;
        self.moves += group.moves.len() as u64;
    }
    /// Appends a group copied from another shard's bytes: its key, then its `body` (see
    /// [`Span`]) as it was, with `moves` moves. Why: most groups of a merge are in one
    /// shard only, and copying their bytes is several times faster than decoding and
    /// encoding them (the bytes after the key do not depend on the group before).
    pub fn put_raw(&mut self, key: u128, body: &[u8], moves: u64, out: &mut Vec<u8>) {
        self.put_key(key, out);
        out.extend_from_slice(body);
        self.groups += 1;
        self.moves += moves;
    }

    fn put_key(&mut self, key: u128, out: &mut Vec<u8>) {
        let hi = (key >> 64) as u64;
        debug_assert!(hi >= self.prev_hi, "groups are written in key order");
        put_varint(out, hi - self.prev_hi);
        out.push((key >> 56) as u8);
        self.prev_hi = hi;
    }
}

/// Where one group lies in its bytes, and what a merge needs of it, read without
/// decoding its moves ([`Decoder::skip_into`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    /// Its state key.
    pub key: u128,
    /// Where the group starts.
    pub start: usize,
    /// Where its body (the header and everything after it) starts.
    pub body: usize,
    /// Where it ends.
    pub end: usize,
    /// Its moves.
    pub moves: u64,
    /// The most games of its position or of any of its moves (whether it is hot).
    pub reach: u64,
}

fn moves_total(moves: &[(MoveKey, MoveStats)]) -> Outcomes {
    let mut total = Outcomes::default();
    for (_, s) in moves {
        total.add(&s.outcomes);
    }
    total
}

/// A move seen in exactly one game, with each rating at most once: a tag and the ratings.
fn single_tag(s: &MoveStats) -> Option<u8> {
    let o = &s.outcomes;
    let result = match (o.white, o.draws, o.black) {
        (1, 0, 0) => 0,
        (0, 1, 0) => 1,
        (0, 0, 1) => 2,
        _ => return None,
    };
    let known = |games: u64, sum: u64| match games {
        0 if sum == 0 => Some(0u8),
        1 => Some(1),
        _ => None,
    };
    Some(
        result
            | known(s.rated_games, s.rating_sum)? << 2
            | known(s.opponent_rated_games, s.opponent_rating_sum)? << 3,
    )
}

fn put_stats(out: &mut Vec<u8>, s: &MoveStats) {
    match single_tag(s) {
        Some(tag) => {
            out.push(tag);
            if s.rated_games == 1 {
                put_varint(out, s.rating_sum);
            }
            if s.opponent_rated_games == 1 {
                put_varint(out, s.opponent_rating_sum);
            }
        }
        None => {
            out.push(MULTI);
            let o = &s.outcomes;
            for v in [
                o.white,
                o.draws,
                o.black,
                s.rating_sum,
                s.rated_games,
                s.opponent_rating_sum,
                s.opponent_rated_games,
            ] {
                put_varint(out, v);
            }
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads groups back from bytes an [`Encoder`] wrote.
pub struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
    prev_hi: u64,
}

impl<'a> Decoder<'a> {
    /// A decoder of `bytes` from their start.
    pub fn new(bytes: &'a [u8]) -> Decoder<'a> {
        Decoder { bytes, at: 0, prev_hi: 0 }
    }

    /// A decoder of groups cut out of a shard, the one before them of key top `prev_hi`.
    pub fn resume(bytes: &'a [u8], prev_hi: u64) -> Decoder<'a> {
        Decoder { bytes, at: 0, prev_hi }
    }

    /// Where the next group starts.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// The key's top 64 bits of the last group read.
    pub fn prev_hi(&self) -> u64 {
        self.prev_hi
    }

    /// Reads the next group into `group`; `false` at the end.
    pub fn next_into(&mut self, group: &mut Group) -> Result<bool, Malformed> {
        self.next_with(|d| d.read(group))
    }

    /// Reads the next group's extent into `span` without decoding its moves; `false` at
    /// the end. The bytes are checked as [`Decoder::next_into`] checks them.
    pub fn skip_into(&mut self, span: &mut Span) -> Result<bool, Malformed> {
        self.next_with(|d| d.skip(span))
    }

    /// Runs `read` on the next group, if any: `false` at the end, and a group `read`
    /// cannot finish is malformed where it starts.
    fn next_with(&mut self, read: impl FnOnce(&mut Self) -> Option<()>) -> Result<bool, Malformed> {
        if self.at == self.bytes.len() {
            return Ok(false);
        }
        let start = self.at;
        read(self).ok_or_else(|| cut_short(start))?;
        Ok(true)
    }

    /// Decodes the group of `span` (read from these bytes by [`Decoder::skip_into`]).
    pub fn decode_span(bytes: &[u8], span: &Span, group: &mut Group) -> Result<(), Malformed> {
        let mut body =
            Decoder { bytes: bytes.get(..span.end).unwrap_or(bytes), at: span.body, prev_hi: 0 };
        group.clear();
        group.key = span.key;
        body.read_body(group).ok_or_else(|| cut_short(span.start))
    }

    fn read_key(&mut self) -> Option<u128> {
        let hi = self.prev_hi.checked_add(self.varint()?)?;
        let check = *self.bytes.get(self.at)?;
        self.at += 1;
        self.prev_hi = hi;
        Some((u128::from(hi) << 64) | (u128::from(check) << 56))
    }

    /// A group's header: its moves, and its position's counts when written out
    /// (`Some(None)`: the sum of its moves'; `None`: no position record).
    fn read_header(&mut self) -> Option<(usize, Option<Option<Outcomes>>)> {
        let header = self.varint()?;
        let moves = usize::try_from(header >> 2).ok().filter(|&n| n <= 4096)?;
        let position = match header & 3 {
            0 => None,
            1 => Some(None),
            2 => Some(Some(Outcomes {
                white: self.varint()?,
                draws: self.varint()?,
                black: self.varint()?,
            })),
            _ => return None,
        };
        Some((moves, position))
    }

    fn skip(&mut self, span: &mut Span) -> Option<()> {
        span.start = self.at;
        span.key = self.read_key()?;
        span.body = self.at;
        let (moves, position) = self.read_header()?;
        let (mut sum, mut most) = (0u64, 0u64);
        for _ in 0..moves {
            self.at = self.at.checked_add(2).filter(|&at| at <= self.bytes.len())?;
            let games = self.skip_stats()?;
            sum += games;
            most = most.max(games);
        }
        span.reach = match position {
            None => most,
            Some(None) => sum,
            Some(Some(p)) => p.games().max(most),
        };
        span.moves = moves as u64;
        span.end = self.at;
        Some(())
    }

    /// Skips one move's statistics; their games.
    fn skip_stats(&mut self) -> Option<u64> {
        let tag = *self.bytes.get(self.at)?;
        self.at += 1;
        if tag == MULTI {
            let games = self.varint()? + self.varint()? + self.varint()?;
            for _ in 0..4 {
                self.varint()?;
            }
            return Some(games);
        }
        if tag & !0x0f != 0 || tag & 3 == 3 {
            return None;
        }
        for bit in [4, 8] {
            if tag & bit != 0 {
                self.varint()?;
            }
        }
        Some(1)
    }

    fn read(&mut self, group: &mut Group) -> Option<()> {
        group.clear();
        group.key = self.read_key()?;
        self.read_body(group)
    }

    fn read_body(&mut self, group: &mut Group) -> Option<()> {
        let (moves, position) = self.read_header()?;
        for _ in 0..moves {
            let mv =
                MoveKey(u16::from_le_bytes(self.bytes.get(self.at..self.at + 2)?.try_into().ok()?));
            self.at += 2;
            let stats = self.stats()?;
            group.moves.push((mv, stats));
        }
        group.position = position.map(|p| p.unwrap_or_else(|| moves_total(&group.moves)));
        Some(())
    }

    fn stats(&mut self) -> Option<MoveStats> {
        let tag = *self.bytes.get(self.at)?;
        self.at += 1;
        if tag == MULTI {
            let mut v = || self.varint();
            let outcomes = Outcomes { white: v()?, draws: v()?, black: v()? };
            return Some(MoveStats {
                outcomes,
                rating_sum: v()?,
                rated_games: v()?,
                opponent_rating_sum: v()?,
                opponent_rated_games: v()?,
            });
        }
        if tag & !0x0f != 0 {
            return None;
        }
        let outcomes = match tag & 3 {
            0 => Outcomes { white: 1, draws: 0, black: 0 },
            1 => Outcomes { white: 0, draws: 1, black: 0 },
            2 => Outcomes { white: 0, draws: 0, black: 1 },
            _ => return None,
        };
        let mut stats = MoveStats { outcomes, ..Default::default() };
        if tag & 4 != 0 {
            stats.rating_sum = self.varint()?;
            stats.rated_games = 1;
        }
        if tag & 8 != 0 {
            stats.opponent_rating_sum = self.varint()?;
            stats.opponent_rated_games = 1;
        }
        Some(stats)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.bytes.get(self.at)?;
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(white: u64, draws: u64, black: u64, rated: u64, rating_sum: u64) -> MoveStats {
        MoveStats {
            outcomes: Outcomes { white, draws, black },
            rating_sum,
            rated_games: rated,
            opponent_rating_sum: rating_sum / 2,
            opponent_rated_games: rated,
        }
    }

    fn sample() -> Vec<Group> {
        let k = |hi: u64, check: u8| (u128::from(hi) << 64) | (u128::from(check) << 56);
        vec![
            Group {
                key: k(5, 0),
                position: Some(Outcomes { white: 1, draws: 0, black: 0 }),
                moves: vec![(MoveKey(7), stats(1, 0, 0, 1, 1500))],
            },
            // Told apart from the next by the check byte alone.
            Group {
                key: k(9, 1),
                position: Some(Outcomes { white: 3, draws: 1, black: 0 }),
                moves: vec![
                    (MoveKey(1), stats(1, 1, 0, 2, 3000)),
                    (MoveKey(2), stats(1, 0, 0, 0, 0)),
                ],
            },
            Group {
                key: k(9, 2),
                position: Some(Outcomes { white: 0, draws: 0, black: 4 }),
                moves: vec![],
            },
            Group {
                key: k(u64::MAX, 255),
                position: None,
                moves: vec![(MoveKey(u16::MAX), stats(0, 0, 1, 1, 2900))],
            },
        ]
    }

    fn encoded() -> (Encoder, Vec<u8>) {
        let (mut encoder, mut bytes) = (Encoder::default(), Vec::new());
        for g in sample() {
            encoder.put(&g, &mut bytes);
        }
        (encoder, bytes)
    }

    #[test]
    fn groups_read_back_as_written() {
        let (encoder, bytes) = encoded();
        let mut decoder = Decoder::new(&bytes);
        let mut read = Vec::new();
        let mut g = Group::default();
        while decoder.next_into(&mut g).unwrap() {
            read.push(g.clone());
        }
        assert_eq!(read, sample());
        assert_eq!((encoder.groups, encoder.moves), (4, 4));
    }

    #[test]
    fn skipping_finds_each_group_where_decoding_does_with_its_reach() {
        let (_, bytes) = encoded();
        let (mut skipper, mut decoder) = (Decoder::new(&bytes), Decoder::new(&bytes));
        let (mut span, mut group, mut again) =
            (Span::default(), Group::default(), Group::default());
        let mut reaches = Vec::new();
        while skipper.skip_into(&mut span).unwrap() {
            assert!(decoder.next_into(&mut group).unwrap());
            assert_eq!((span.key, span.end), (group.key, decoder.offset()));
            Decoder::decode_span(&bytes, &span, &mut again).unwrap();
            assert_eq!(again, group);
            reaches.push(span.reach);
        }
        assert!(!decoder.next_into(&mut group).unwrap());
        // Positions of 1, 4 and 4 games (one given explicitly); the last has only a move.
        assert_eq!(reaches, vec![1, 4, 4, 1]);
    }

    #[test]
    fn a_cut_shard_is_malformed_not_short() {
        let (_, mut bytes) = encoded();
        bytes.pop();
        let mut decoder = Decoder::new(&bytes);
        let mut g = Group::default();
        let mut result = Ok(true);
        while let Ok(true) = result {
            result = decoder.next_into(&mut g);
        }
        assert!(result.is_err(), "{result:?}");
    }

    #[test]
    fn adding_a_group_sums_positions_and_merges_moves_in_key_order() {
        let mut a = sample()[1].clone();
        let mut b = a.clone();
        b.moves.insert(0, (MoveKey(0), stats(0, 1, 0, 0, 0)));
        b.position = Some(Outcomes { white: 3, draws: 2, black: 0 });
        a.add(&b);
        assert_eq!(a.moves.iter().map(|m| m.0.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(a.moves[1].1.outcomes, Outcomes { white: 2, draws: 2, black: 0 });
        assert_eq!(a.position, Some(Outcomes { white: 6, draws: 3, black: 0 }));
    }
}
