//! The state's bytes: groups of a position and its moves, keyed by 72 bits.
//!
//! A shard (and a month's slice of one) is a sequence of groups sorted by key. A group is
//! one position's counts and the counts of the moves played from it, written as:
//! - a header byte: the position mode (bits 0–1: 0 no position record, 1 the position's
//!   counts are the sum of its moves' (the usual case, nothing written), 2 three varints
//!   follow: White wins, draws, Black wins), its moves (bits 2–3: 0–2, or 3 when a varint
//!   count follows the key) and the length of the key's delta (bits 4–7: 0–9 bytes);
//! - the key's top 72 bits as a delta from the previous group's, little-endian, in as few
//!   bytes as it takes (keys are sorted, so a shard of n uniform keys, one of 256,
//!   spends about (64 − log2 n) / 8 bytes, rounded up: 5 to 7);
//! - per move, in move-key order, two bytes: its squares (12 bits) and a code (4 bits).
//!   Codes 0–11 are a move seen in one game (most of a month's): the result (code mod 3)
//!   and which ratings are known (code / 3: the mover's, the opponent's, both), the known
//!   ratings following in two bytes, or both in three (12 bits each). Code 12 is any
//!   other move: seven varints. Code 13 is a promotion: a byte follows with the role
//!   (high 4 bits) and the move's own code (low 4 bits).
//!
//! A one-game position and move, the state's usual group, so takes 11 to 13 bytes: 1 of
//! header, 5 to 7 of key, 2 of move, 3 of ratings (16 before this layout: LEB128 key
//! deltas, a separate check byte, header and tag bytes).
//!
//! Why 72 bits: a 128-bit key costs about 15 bytes a group as a delta, 72 bits 5 to 7.
//! Two positions that agree on all 72 bits would be counted as one: about 0.008 such
//! pairs are expected among the ~10^10 positions of all Lichess. The tree reports any two
//! of its own positions that do (`tree::Built::shared_keys`).

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

/// The header's position modes.
const NO_POSITION: u8 = 0;
const DERIVED: u8 = 1;
const EXPLICIT: u8 = 2;
/// The header's move-count code that says a varint count follows the key.
const MANY_MOVES: u8 = 3;
/// The longest key delta: 72 bits.
const KEY_BYTES: usize = 9;
/// A move's code (its top 4 bits): the seven varints of a move seen in more games.
const MULTI: u16 = 12;
/// A move's code: a promotion, whose role and own code follow in a byte.
const PROMOTION: u16 = 13;
/// The bits of a [`MoveKey`] that are its squares.
const SQUARES: u16 = 0x0fff;
/// The largest ratings packed 12 bits each, when both are known.
const PACKED_RATING: u64 = 1 << 12;

/// Writes groups in order, each after the previous one's key.
#[derive(Default)]
pub struct Encoder {
    prev: u128,
    /// Groups written.
    pub groups: u64,
    /// Moves written.
    pub moves: u64,
}

impl Encoder {
    /// The key of the last group written (0 before the first): what the next group's key
    /// delta is from.
    pub fn prev(&self) -> u128 {
        self.prev
    }

    /// Appends `group` (whose key is not below the previous group's) to `out`.
    pub fn put(&mut self, group: &Group, out: &mut Vec<u8>) {
        let derived = group.position.is_some_and(|p| p == moves_total(&group.moves));
        let mode = match group.position {
            None => NO_POSITION,
            Some(_) if derived => DERIVED,
            Some(_) => EXPLICIT,
        };
        let count = group.moves.len();
        let head = mode | (count.min(MANY_MOVES as usize) as u8) << 2;
        self.put_key(group.key, head, out);
        if count >= MANY_MOVES as usize {
            put_varint(out, count as u64);
        }
        if let (Some(p), EXPLICIT) = (group.position, mode) {
            for v in [p.white, p.draws, p.black] {
                put_varint(out, v);
            }
        }
        for (mv, stats) in &group.moves {
            put_move(out, *mv, stats);
        }
        self.groups += 1;
        self.moves += count as u64;
    }

    /// Appends a group copied from another shard's bytes: its header's `head` (see
    /// [`Span`]) and key, then its `body` as it was, with `moves` moves. Why: most groups
    /// of a merge are in one shard only, and copying their bytes is several times faster
    /// than decoding and encoding them (the bytes after the key do not depend on the
    /// group before).
    pub fn put_raw(&mut self, key: u128, head: u8, body: &[u8], moves: u64, out: &mut Vec<u8>) {
        self.put_key(key, head, out);
        out.extend_from_slice(body);
        self.groups += 1;
        self.moves += moves;
    }

    /// The header byte (`head` and the delta's length) and the key's delta.
    fn put_key(&mut self, key: u128, head: u8, out: &mut Vec<u8>) {
        debug_assert!(key >= self.prev, "groups are written in key order");
        let delta = (key - self.prev) >> 56;
        let len = (128 - delta.leading_zeros() as usize).div_ceil(8);
        out.push(head | (len as u8) << 4);
        out.extend_from_slice(&delta.to_le_bytes()[..len]);
        self.prev = key;
    }
}

/// Where one group lies in its bytes, and what a merge needs of it, read without
/// decoding its moves ([`Decoder::skip_into`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    /// Its state key.
    pub key: u128,
    /// Its header's bits other than the key delta's length.
    pub head: u8,
    /// Where the group starts.
    pub start: usize,
    /// Where its body (everything after the key) starts.
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

/// The code of a move seen in exactly one game whose ratings fit their short forms:
/// result (0–2) + 3 × (bit 0: the mover's rating known, bit 1: the opponent's).
fn single_code(s: &MoveStats) -> Option<u16> {
    let o = &s.outcomes;
    let result = match (o.white, o.draws, o.black) {
        (1, 0, 0) => 0,
        (0, 1, 0) => 1,
        (0, 0, 1) => 2,
        _ => return None,
    };
    let known = |games: u64, sum: u64| match games {
        0 if sum == 0 => Some(0u16),
        1 => Some(1),
        _ => None,
    };
    let flags = known(s.rated_games, s.rating_sum)?
        | known(s.opponent_rated_games, s.opponent_rating_sum)? << 1;
    let fits = match flags {
        3 => s.rating_sum < PACKED_RATING && s.opponent_rating_sum < PACKED_RATING,
        1 => s.rating_sum <= u64::from(u16::MAX),
        2 => s.opponent_rating_sum <= u64::from(u16::MAX),
        _ => true,
    };
    fits.then_some(result + 3 * flags)
}

/// A move: its squares and code in two bytes (a promotion's role and code in a third),
/// then its statistics.
fn put_move(out: &mut Vec<u8>, mv: MoveKey, s: &MoveStats) {
    let code = single_code(s).unwrap_or(MULTI);
    let promotion = mv.0 >> 12;
    if promotion == 0 {
        out.extend_from_slice(&(mv.0 | code << 12).to_le_bytes());
    } else {
        out.extend_from_slice(&((mv.0 & SQUARES) | PROMOTION << 12).to_le_bytes());
        out.push((promotion << 4 | code) as u8);
    }
    if code == MULTI {
        for v in s.fields() {
            put_varint(out, v);
        }
        return;
    }
    match code / 3 {
        3 => {
            out.extend_from_slice(&(s.rating_sum | s.opponent_rating_sum << 12).to_le_bytes()[..3])
        }
        1 => out.extend_from_slice(&(s.rating_sum as u16).to_le_bytes()),
        2 => out.extend_from_slice(&(s.opponent_rating_sum as u16).to_le_bytes()),
        _ => {}
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
    prev: u128,
}

impl<'a> Decoder<'a> {
    /// A decoder of `bytes` from their start.
    pub fn new(bytes: &'a [u8]) -> Decoder<'a> {
        Decoder { bytes, at: 0, prev: 0 }
    }

    /// A decoder of groups cut out of a shard, the one before them of key `prev`.
    pub fn resume(bytes: &'a [u8], prev: u128) -> Decoder<'a> {
        Decoder { bytes, at: 0, prev }
    }

    /// Where the next group starts.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// The key of the last group read (what the next one's delta is from).
    pub fn prev(&self) -> u128 {
        self.prev
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
            Decoder { bytes: bytes.get(..span.end).unwrap_or(bytes), at: span.body, prev: 0 };
        group.clear();
        group.key = span.key;
        body.read_body(span.head, group).ok_or_else(|| cut_short(span.start))
    }

    /// The header byte and the key after it; the header's bits other than the length.
    fn read_key(&mut self) -> Option<(u128, u8)> {
        let header = *self.bytes.get(self.at)?;
        let len = usize::from(header >> 4);
        let delta = self.bytes.get(self.at + 1..self.at + 1 + len).filter(|_| len <= KEY_BYTES)?;
        let mut le = [0u8; 16];
        le[..len].copy_from_slice(delta);
        self.at += 1 + len;
        let key = self.prev.checked_add(u128::from_le_bytes(le).checked_mul(1 << 56)?)?;
        self.prev = key;
        Some((key, header & 0x0f))
    }

    /// A group's moves, and its position's counts when written out (`Some(None)`: the
    /// sum of its moves'; `None`: no position record), from its header's `head`.
    fn read_header(&mut self, head: u8) -> Option<(usize, Option<Option<Outcomes>>)> {
        let moves = match head >> 2 {
            MANY_MOVES => usize::try_from(self.varint()?).ok().filter(|&n| n <= 4096)?,
            n => usize::from(n),
        };
        let position = match head & 3 {
            NO_POSITION => None,
            DERIVED => Some(None),
            EXPLICIT => Some(Some(Outcomes {
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
        (span.key, span.head) = self.read_key()?;
        span.body = self.at;
        let (moves, position) = self.read_header(span.head)?;
        let (mut sum, mut most) = (0u64, 0u64);
        for _ in 0..moves {
            let games = self.read_move(None)?;
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

    fn read(&mut self, group: &mut Group) -> Option<()> {
        group.clear();
        let head;
        (group.key, head) = self.read_key()?;
        self.read_body(head, group)
    }

    fn read_body(&mut self, head: u8, group: &mut Group) -> Option<()> {
        let (moves, position) = self.read_header(head)?;
        for _ in 0..moves {
            self.read_move(Some(&mut group.moves))?;
        }
        group.position = position.map(|p| p.unwrap_or_else(|| moves_total(&group.moves)));
        Some(())
    }

    /// Reads one move, pushing it onto `into` if given (else only skipping its
    /// statistics); its games.
    fn read_move(&mut self, into: Option<&mut Vec<(MoveKey, MoveStats)>>) -> Option<u64> {
        let word = u16::from_le_bytes(self.bytes.get(self.at..self.at + 2)?.try_into().ok()?);
        self.at += 2;
        let (mut mv, mut code) = (word & SQUARES, word >> 12);
        if code == PROMOTION {
            let byte = u16::from(*self.bytes.get(self.at)?);
            self.at += 1;
            (mv, code) = (mv | (byte >> 4) << 12, byte & 0x0f);
            if mv >> 12 == 0 {
                return None;
            }
        }
        let stats = match code {
            MULTI => MoveStats::from_fields(|| self.varint())?,
            0..MULTI => self.single(code)?,
            _ => return None,
        };
        let games = stats.outcomes.games();
        if let Some(into) = into {
            into.push((MoveKey(mv), stats));
        }
        Some(games)
    }

    /// The statistics of a move seen in one game, of code `code` (see [`single_code`]).
    fn single(&mut self, code: u16) -> Option<MoveStats> {
        let outcomes = match code % 3 {
            0 => Outcomes { white: 1, draws: 0, black: 0 },
            1 => Outcomes { white: 0, draws: 1, black: 0 },
            _ => Outcomes { white: 0, draws: 0, black: 1 },
        };
        let mut stats = MoveStats { outcomes, ..Default::default() };
        let flags = code / 3;
        let (rating, opponent) = match flags {
            3 => {
                let b = self.bytes.get(self.at..self.at + 3)?;
                let packed = u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16;
                self.at += 3;
                (Some(packed & (PACKED_RATING - 1)), Some(packed >> 12))
            }
            1 | 2 => {
                let b = self.bytes.get(self.at..self.at + 2)?;
                let value = Some(u64::from(u16::from_le_bytes([b[0], b[1]])));
                self.at += 2;
                if flags == 1 { (value, None) } else { (None, value) }
            }
            _ => (None, None),
        };
        if let Some(r) = rating {
            (stats.rating_sum, stats.rated_games) = (r, 1);
        }
        if let Some(r) = opponent {
            (stats.opponent_rating_sum, stats.opponent_rated_games) = (r, 1);
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

    /// Every short form and its edges (promotions, ratings just past the packed width,
    /// one rating known, three moves and more, keys far apart) reads back as written,
    /// and skipping finds the same extents.
    #[test]
    fn random_groups_read_back_as_written_in_every_form() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut groups = Vec::new();
        // The first key's delta takes all 9 bytes; the others 1 to 6.
        let mut key = 1u128 << 127;
        for _ in 0..5000 {
            key += (u128::from(next(1 << 20)) + 1) << (56 + next(26));
            let moves: Vec<_> = (0..next(6))
                .map(|i| {
                    let mv = MoveKey((i as u16) << 6 | (next(2) as u16 * next(7) as u16) << 12);
                    let rating = [0, 1, 4095, 4096, 65535, 65536, 1 << 40][next(7) as usize];
                    let games = [1, 1, 1, 2, 300][next(5) as usize];
                    let rated = next(3).min(games);
                    let s = MoveStats {
                        outcomes: Outcomes { white: games - next(games + 1), draws: 0, black: 0 },
                        rating_sum: rating * rated,
                        rated_games: rated,
                        opponent_rating_sum: if next(2) == 0 { 0 } else { 1500 },
                        opponent_rated_games: u64::from(next(2) == 1).min(games),
                    };
                    (mv, s)
                })
                .collect();
            let position = match next(3) {
                0 => None,
                1 => Some(moves_total(&moves)),
                _ => Some(Outcomes { white: next(1000), draws: next(3), black: 7 }),
            };
            groups.push(Group { key, position, moves });
        }
        let (mut encoder, mut bytes) = (Encoder::default(), Vec::new());
        for g in &groups {
            encoder.put(g, &mut bytes);
        }
        let (mut decoder, mut skipper) = (Decoder::new(&bytes), Decoder::new(&bytes));
        let (mut g, mut span) = (Group::default(), Span::default());
        for want in &groups {
            assert!(decoder.next_into(&mut g).unwrap());
            assert_eq!(&g, want);
            assert!(skipper.skip_into(&mut span).unwrap());
            assert_eq!(
                (span.key, span.end, span.moves),
                (want.key, decoder.offset(), want.moves.len() as u64)
            );
        }
        assert!(!decoder.next_into(&mut g).unwrap());
    }

    #[test]
    fn a_move_of_an_unknown_code_is_malformed() {
        let (_, mut bytes) = encoded();
        // The first group: its header, its key's delta, then its move's two bytes, the
        // code in the high bits of the second.
        let code_byte = 1 + usize::from(bytes[0] >> 4) + 1;
        bytes[code_byte] |= 0xe0;
        assert!(Decoder::new(&bytes).next_into(&mut Group::default()).is_err());
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
