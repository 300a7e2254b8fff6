//! Packed 64-bit move records: every move games played in the tree, with its results,
//! players' strength and a weight, in eight bytes.
//!
//! # The file
//!
//! A 16-byte header — the magic `OKBPACK1` and the number of entries as a big-endian
//! u64 — then 16-byte entries, big-endian, sorted by key then record: the position's
//! Polyglot key (u64, the same key [`crate::export::polyglot`] books use, so lookups work
//! like a Polyglot book's) and the packed record (u64). It is a Polyglot book whose
//! 8-byte payload (move, weight, learn) is replaced by the record below.
//!
//! # The record, most significant bit first
//!
//! | bits  | width | field |
//! |-------|------:|-------|
//! | 63–58 | 6  | from square, A1 = 0 … H8 = 63 (castling: the king's move, e1g1) |
//! | 57–52 | 6  | to square |
//! | 51–49 | 3  | promotion: 0 none, 1 N, 2 B, 3 R, 4 Q |
//! | 48–38 | 11 | White's average Elo − 1000, clamped to 0…2047 (0 also when unrated) |
//! | 37–30 | 8  | \|White − Black average Elo\| / 2, rounded, saturating at 255 (= 510+) |
//! | 29    | 1  | sign of the difference: 1 when Black is the stronger side |
//! | 28–20 | 9  | %WDL: the most frequent result with its share, from White's side |
//! | 19–8  | 12 | games, saturating at 4095 |
//! | 7–0   | 8  | weight (see below) |
//!
//! # How the loose parts of the design are read, and why
//!
//! * **%WDL.** The design gives one 9-bit field the ranges 0–99 win %, 100–199 draw %,
//!   200–299 loss %. Nine bits cannot hold three percentages (that takes 3 × 7 = 21), so
//!   the field holds *one*: the most frequent result of White's three and its rounded
//!   share (capped at 99), offset by 0, 100 or 200 — "White wins 54%" is 54, "drawn
//!   61%" is 161. Ties go to win, then draw. This keeps every value inside the design's
//!   ranges, answers the question a book needs most (what usually happens after this
//!   move), and leaves 300–511 unused, so a decoder can reject them as corrupt.
//!   Percentages use every game even after the count saturates.
//! * **Elo difference.** The design gives it 8 bits but describes a 0–511 range, which
//!   needs 9. Halving the magnitude (2-Elo steps) covers 0–510 in 8 bits, so the range
//!   the design wants is kept at a resolution far below the noise of average ratings;
//!   the separate sign bit says which side is stronger.
//! * **Averages.** White's and Black's averages are over the games that played the move
//!   and had the rating (the mover's and the opponent's from Phase 2).
//! * **Weight.** The Elo-expectation formula: the mover's expected score
//!   E = 1 / (1 + 10^((R_opponent − R_mover) / 400)) against their actual score
//!   S = (wins + draws / 2) / games, and weight = round(255 × (1 + S − E) / 2): 128 for a
//!   move that scores as its players' ratings predict, more for one that outperforms.
//!   Without ratings E = 0.5.

use serde::Serialize;
use shakmaty::{Chess, Color, Position};

use super::ExportFile;
use crate::games::stats::MoveStats;
use crate::position::{self, MoveKey};
use crate::tree::Tree;

/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"OKBPACK1";

/// Bytes of the header and of each entry.
const HEADER_BYTES: usize = 16;
const ENTRY_BYTES: usize = 16;

/// One move record, unpacked.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MoveRecord {
    /// From square, A1 = 0 … H8 = 63.
    pub from: u8,
    /// To square.
    pub to: u8,
    /// Promotion: 0 none, 1 knight, 2 bishop, 3 rook, 4 queen.
    pub promotion: u8,
    /// White's average Elo − 1000 (0…2047).
    pub white_elo: u16,
    /// |White − Black| average Elo / 2 (0…255).
    pub elo_diff_half: u8,
    /// Whether Black is the stronger side.
    pub black_stronger: bool,
    /// %WDL as described in the module docs (0…299).
    pub wdl: u16,
    /// Games (0…4095).
    pub count: u16,
    /// Weight (0…255).
    pub weight: u8,
}

impl MoveRecord {
    /// The record of a move (`key`, played from a position with `turn` to move) with
    /// the statistics of the games that played it.
    pub fn from_stats(key: MoveKey, turn: Color, stats: &MoveStats) -> MoveRecord {
        let o = stats.outcomes;
        let games = o.games();
        let avg = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64);
        let mover = avg(stats.rating_sum, stats.rated_games);
        let opponent = avg(stats.opponent_rating_sum, stats.opponent_rated_games);
        let (white, black) =
            if turn == Color::White { (mover, opponent) } else { (opponent, mover) };
        let (diff_half, black_stronger) = match (white, black) {
            (Some(w), Some(b)) => (((w - b).abs() / 2.0).round().min(255.0) as u8, b > w),
            _ => (0, false),
        };
        let expected = match (mover, opponent) {
            (Some(m), Some(r)) => 1.0 / (1.0 + 10f64.powf((r - m) / 400.0)),
            _ => 0.5,
        };
        let mover_wins = if turn == Color::White { o.white } else { o.black };
        let score = if games == 0 {
            0.5
        } else {
            (mover_wins as f64 + o.draws as f64 / 2.0) / games as f64
        };
        let weight = (255.0 * (1.0 + score - expected) / 2.0).round().clamp(0.0, 255.0) as u8;
        MoveRecord {
            from: (key.0 & 63) as u8,
            to: ((key.0 >> 6) & 63) as u8,
            // MoveKey stores shakmaty's role (knight 2 … queen 5); the record counts from 1.
            promotion: match key.0 >> 12 {
                0 => 0,
                role => (role - 1) as u8,
            },
            white_elo: white.map_or(0, |w| (w - 1000.0).round().clamp(0.0, 2047.0) as u16),
            elo_diff_half: diff_half,
            black_stronger,
            wdl: wdl(o.white, o.draws, o.black),
            count: games.min(4095) as u16,
            weight,
        }
    }

    /// The 64 bits.
    pub fn pack(&self) -> u64 {
        (u64::from(self.from) << 58)
            | (u64::from(self.to) << 52)
            | (u64::from(self.promotion) << 49)
            | (u64::from(self.white_elo) << 38)
            | (u64::from(self.elo_diff_half) << 30)
            | (u64::from(self.black_stronger) << 29)
            | (u64::from(self.wdl) << 20)
            | (u64::from(self.count) << 8)
            | u64::from(self.weight)
    }

    /// Unpacks 64 bits; fails on values no writer produces (a promotion above 4, %WDL
    /// above 299, from = to).
    pub fn unpack(bits: u64) -> Result<MoveRecord, String> {
        let field = |shift: u32, width: u32| (bits >> shift) & ((1u64 << width) - 1);
        let record = MoveRecord {
            from: field(58, 6) as u8,
            to: field(52, 6) as u8,
            promotion: field(49, 3) as u8,
            white_elo: field(38, 11) as u16,
            elo_diff_half: field(30, 8) as u8,
            black_stronger: field(29, 1) == 1,
            wdl: field(20, 9) as u16,
            count: field(8, 12) as u16,
            weight: field(0, 8) as u8,
        };
        if record.promotion > 4 {
            return Err(format!("promotion field {} (0–4 allowed)", record.promotion));
        }
        if record.wdl > 299 {
            return Err(format!("%WDL field {} (0–299 allowed)", record.wdl));
        }
        if record.from == record.to {
            return Err(format!("from and to are the same square ({})", square_name(record.from)));
        }
        Ok(record)
    }

    /// The move in UCI notation (`e2e4`, `e7e8q`).
    pub fn uci(&self) -> String {
        let promo = ["", "n", "b", "r", "q"][usize::from(self.promotion)];
        format!("{}{}{promo}", square_name(self.from), square_name(self.to))
    }

    /// White's average Elo, if the games were rated.
    pub fn white_elo(&self) -> Option<u16> {
        (self.white_elo > 0).then_some(self.white_elo + 1000)
    }

    /// Black's average Elo as the record gives it (to ±1 from the halved difference).
    pub fn black_elo(&self) -> Option<i32> {
        let diff = 2 * i32::from(self.elo_diff_half);
        self.white_elo().map(|w| i32::from(w) + if self.black_stronger { diff } else { -diff })
    }

    /// %WDL in words: `("win", 54)`, `("draw", 61)` or `("loss", 70)`, from White's side.
    pub fn wdl_parts(&self) -> (&'static str, u16) {
        match self.wdl {
            0..=99 => ("win", self.wdl),
            100..=199 => ("draw", self.wdl - 100),
            _ => ("loss", self.wdl - 200),
        }
    }
}

/// The %WDL field: the most frequent of White's results and its rounded share.
fn wdl(white: u64, draws: u64, black: u64) -> u16 {
    let games = white + draws + black;
    if games == 0 {
        return 0;
    }
    let (base, n) = [(0u16, white), (100, draws), (200, black)]
        .into_iter()
        .fold((0, 0), |best, (base, n)| if n > best.1 { (base, n) } else { best });
    let pct = ((n as f64 * 100.0 / games as f64).round() as u16).min(99);
    base + pct
}

fn square_name(index: u8) -> String {
    let file = char::from(b'a' + index % 8);
    let rank = char::from(b'1' + index / 8);
    format!("{file}{rank}")
}

/// One entry of a packed file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PackedEntry {
    /// Polyglot key of the position.
    pub key: u64,
    /// The packed record.
    pub record: u64,
}

/// Entries for every tree edge games played, sorted.
pub fn entries(tree: &Tree) -> Vec<PackedEntry> {
    use rayon::prelude::*;
    let mut out: Vec<PackedEntry> = tree
        .nodes
        .par_iter()
        .flat_map_iter(|node| {
            let with_games: Vec<_> =
                node.children.iter().filter_map(|e| e.stats.map(|s| (e.key, s))).collect();
            let pos: Option<Chess> = (!with_games.is_empty())
                .then(|| position::parse_fen(&node.fen).expect("node FENs are written by okb"));
            with_games.into_iter().map(move |(key, stats)| {
                let pos = pos.as_ref().expect("set when there are moves");
                PackedEntry {
                    key: position::polyglot_key(pos),
                    record: MoveRecord::from_stats(key, pos.turn(), &stats).pack(),
                }
            })
        })
        .collect();
    out.par_sort_unstable();
    out
}

/// The bytes of a packed file.
pub fn to_bytes(entries: &[PackedEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + entries.len() * ENTRY_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_be_bytes());
    for e in entries {
        out.extend_from_slice(&e.key.to_be_bytes());
        out.extend_from_slice(&e.record.to_be_bytes());
    }
    out
}

/// The tree as a packed file (the `packed` export).
pub fn render(tree: &Tree) -> (ExportFile, usize) {
    let entries = entries(tree);
    (ExportFile { name: String::new(), bytes: to_bytes(&entries) }, entries.len())
}

/// Reads a packed file back; errors name the byte offset or entry that is wrong.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<(u64, MoveRecord)>, String> {
    if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
        return Err("not an okb packed move file (no OKBPACK1 header)".into());
    }
    let count = u64::from_be_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let body = bytes.len() - HEADER_BYTES;
    if !body.is_multiple_of(ENTRY_BYTES) || (body / ENTRY_BYTES) as u64 != count {
        return Err(format!(
            "the header announces {count} entries but the file holds {body} bytes after it ({} entries of {ENTRY_BYTES} bytes{})",
            body / ENTRY_BYTES,
            if !body.is_multiple_of(ENTRY_BYTES) { " and a torn one" } else { "" }
        ));
    }
    bytes[HEADER_BYTES..]
        .chunks_exact(ENTRY_BYTES)
        .enumerate()
        .map(|(i, chunk)| {
            let key = u64::from_be_bytes(chunk[..8].try_into().expect("8 bytes"));
            let bits = u64::from_be_bytes(chunk[8..].try_into().expect("8 bytes"));
            MoveRecord::unpack(bits).map(|r| (key, r)).map_err(|e| {
                format!("entry {i} (byte offset {}): {e}", HEADER_BYTES + i * ENTRY_BYTES)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::stats::Outcomes;

    fn stats(
        white: u64,
        draws: u64,
        black: u64,
        mover: (u64, u64),
        opponent: (u64, u64),
    ) -> MoveStats {
        MoveStats {
            outcomes: Outcomes { white, draws, black },
            rating_sum: mover.0,
            rated_games: mover.1,
            opponent_rating_sum: opponent.0,
            opponent_rated_games: opponent.1,
        }
    }

    fn key(pos: &Chess, uci: &str) -> MoveKey {
        let m = uci.parse::<shakmaty::uci::UciMove>().unwrap().to_move(pos).unwrap();
        MoveKey::new(&m)
    }

    #[test]
    fn every_field_round_trips_through_the_bits() {
        let record = MoveRecord {
            from: 63,
            to: 0,
            promotion: 4,
            white_elo: 2047,
            elo_diff_half: 255,
            black_stronger: true,
            wdl: 299,
            count: 4095,
            weight: 255,
        };
        assert_eq!(MoveRecord::unpack(record.pack()), Ok(record));
        let small = MoveRecord {
            from: 12,
            to: 28,
            promotion: 0,
            white_elo: 1,
            elo_diff_half: 0,
            black_stronger: false,
            wdl: 0,
            count: 1,
            weight: 0,
        };
        assert_eq!(MoveRecord::unpack(small.pack()), Ok(small));
        assert_eq!(small.uci(), "e2e4");
        assert!(MoveRecord::unpack(record.pack() | (7 << 49)).is_err(), "promotion 7");
        assert!(
            MoveRecord::unpack((record.pack() & !(511 << 20)) | (300 << 20)).is_err(),
            "%WDL 300"
        );
    }

    #[test]
    fn records_follow_the_documented_reading() {
        let start = Chess::default();
        // White 2400 vs Black 2200 on average, White scores 2.5/4 where 0.76 was expected.
        let r = MoveRecord::from_stats(
            key(&start, "e2e4"),
            Color::White,
            &stats(2, 1, 1, (9600, 4), (8800, 4)),
        );
        assert_eq!((r.from, r.to, r.promotion), (12, 28, 0));
        assert_eq!((r.white_elo(), r.black_elo()), (Some(2400), Some(2200)));
        assert_eq!((r.elo_diff_half, r.black_stronger), (100, false));
        assert_eq!(r.wdl_parts(), ("win", 50));
        assert_eq!(r.count, 4);
        let expected = 1.0 / (1.0 + 10f64.powf(-200.0 / 400.0));
        assert_eq!(r.weight, (255.0 * (1.0 + 0.625 - expected) / 2.0_f64).round() as u8);
        // A Black move: the mover's ratings are Black's. Draws dominate.
        let r = MoveRecord::from_stats(
            key(&start, "g1f3"),
            Color::Black,
            &stats(1, 6, 3, (25000, 10), (20000, 10)),
        );
        assert_eq!((r.white_elo(), r.black_elo()), (Some(2000), Some(2500)));
        assert!(r.black_stronger);
        assert_eq!(r.wdl_parts(), ("draw", 60));
        // Unrated games: Elo fields 0, weight from the score alone (E = 0.5).
        let r = MoveRecord::from_stats(
            key(&start, "d2d4"),
            Color::White,
            &stats(0, 0, 5000, (0, 0), (0, 0)),
        );
        assert_eq!((r.white_elo(), r.elo_diff_half), (None, 0));
        assert_eq!(r.wdl_parts(), ("loss", 99), "100% is written as 99");
        assert_eq!(r.count, 4095, "saturates");
        assert_eq!(r.weight, 64);
        // Promotions count N = 1 … Q = 4.
        let promo = position::parse_fen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1").unwrap();
        let r = MoveRecord::from_stats(
            key(&promo, "e7e8n"),
            Color::White,
            &stats(1, 0, 0, (0, 0), (0, 0)),
        );
        assert_eq!((r.promotion, r.uci().as_str()), (1, "e7e8n"));
    }

    #[test]
    fn files_round_trip_and_damage_is_reported() {
        let start = Chess::default();
        let record = |uci, white| {
            MoveRecord::from_stats(
                key(&start, uci),
                Color::White,
                &stats(white, 1, 1, (2000, 1), (2100, 1)),
            )
            .pack()
        };
        let entries = vec![
            PackedEntry { key: 1, record: record("e2e4", 3) },
            PackedEntry { key: 2, record: record("d2d4", 0) },
        ];
        let bytes = to_bytes(&entries);
        let read = from_bytes(&bytes).unwrap();
        assert_eq!(
            read.iter().map(|(k, r)| PackedEntry { key: *k, record: r.pack() }).collect::<Vec<_>>(),
            entries
        );
        assert!(from_bytes(&bytes[..bytes.len() - 3]).unwrap_err().contains("torn"));
        assert!(from_bytes(b"not a packed file").unwrap_err().contains("OKBPACK1"));
    }
}
