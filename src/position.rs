//! Position identity: the one place in okb that decides when two positions are the same.
//!
//! A position is identified by piece placement, side to move, castling rights and the
//! en-passant square *only when an en-passant capture is legal*. Move counters never
//! split a position. Everything else in okb (the ECO merge, the move tree, the store,
//! the engine cache) goes through [`PositionKey`] and [`epd`], so the rule cannot drift.
//!
//! Polyglot books use a different, pseudo-legal en-passant rule; that hash lives in
//! [`polyglot_key`] and is never used as an identity.

use serde::{Deserialize, Serialize};
use shakmaty::fen::{Epd, Fen};
use shakmaty::uci::UciMove;
use shakmaty::zobrist::{Zobrist64, Zobrist128};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position, Role, Square};

/// Compact identity of a position (128-bit Zobrist hash with the legal en-passant rule).
///
/// Two positions get the same key exactly when they agree on placement, side to move,
/// castling rights and legal en-passant square (up to a 2^-128 collision chance).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PositionKey(pub u128);

/// Hashes a [`PositionKey`] by its low 64 bits: the key is already a uniform Zobrist
/// hash, so hashing it again (SipHash) only costs time in okb's hot maps.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for composite keys; FNV-1a keeps them well spread.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u128(&mut self, value: u128) {
        self.0 ^= value as u64;
    }

    fn write_u16(&mut self, value: u16) {
        self.0 = (self.0 ^ u64::from(value)).wrapping_mul(0x0100_0000_01b3);
    }

    fn write_u32(&mut self, value: u32) {
        self.0 = (self.0 ^ u64::from(value)).wrapping_mul(0x0100_0000_01b3);
    }
}

/// A hash map keyed by positions (or tuples with one), hashed by [`KeyHasher`].
pub type KeyMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<KeyHasher>>;

/// A hash set of positions, hashed by [`KeyHasher`].
pub type KeySet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<KeyHasher>>;

/// The identity key of `pos`.
pub fn key(pos: &Chess) -> PositionKey {
    PositionKey(pos.zobrist_hash::<Zobrist128>(EnPassantMode::Legal).0)
}

/// The key of the position reached by playing legal move `m` from `pos`, whose key is
/// `current`; incremental where shakmaty can do it, which saves playing the move.
pub fn child_key(pos: &Chess, current: PositionKey, m: &Move) -> PositionKey {
    match pos.update_zobrist_hash(Zobrist128(current.0), *m, EnPassantMode::Legal) {
        Some(z) => PositionKey(z.0),
        None => {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            key(&child)
        }
    }
}

/// The canonical text form of a position's identity: placement, side to move, castling
/// rights and legal en-passant square (`-` when none), without move counters.
///
/// This is the unique key of `opening_nodes` in the store and the input to stable node ids.
pub fn epd(pos: &Chess) -> String {
    // `append_to_string` writes bytes directly; `to_string` would go through the
    // formatter one character at a time, which showed in profiles of the ECO build.
    let mut text = String::with_capacity(80);
    Epd::from_position(pos, EnPassantMode::Legal).append_to_string(&mut text);
    text
}

/// A full FEN of `pos` (legal en-passant rule, with move counters) for display and exports.
pub fn fen(pos: &Chess) -> String {
    let mut text = String::with_capacity(88);
    Fen::from_position(pos, EnPassantMode::Legal).append_to_string(&mut text);
    text
}

/// The Polyglot book key of `pos` (Polyglot's own pseudo-legal en-passant rule).
pub fn polyglot_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal).0
}

/// The stable id of the node on position `epd`: a UUIDv5 of the identity text, so ids
/// that consumers stored keep working across rebuilds.
pub fn node_id(epd: &str) -> String {
    const OKB_NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x6f6b_6200_5f70_6f73_6974_696f_6e5f_6964);
    uuid::Uuid::new_v5(&OKB_NAMESPACE, epd.as_bytes()).to_string()
}

/// Error returned by [`parse_fen`].
#[derive(Debug, thiserror::Error)]
#[error("invalid FEN {text:?}: {reason}")]
pub struct FenError {
    /// The text that was given.
    pub text: String,
    /// Why it was rejected.
    pub reason: String,
}

/// Parses a FEN or EPD leniently: move counters may be missing, and the en-passant field
/// may follow any convention (always, pseudo-legal or legal); identity is recomputed.
pub fn parse_fen(text: &str) -> Result<Chess, FenError> {
    let trimmed = text.trim();
    let err = |reason: String| FenError { text: trimmed.to_string(), reason };
    let fields = trimmed.split_whitespace().count();
    let parsed = if fields >= 5 {
        Fen::from_ascii(trimmed.as_bytes()).map_err(|e| err(e.to_string()))?
    } else {
        Epd::from_ascii(trimmed.as_bytes()).map_err(|e| err(e.to_string()))?.into()
    };
    // A position whose check is impossible (e.g. a FEN typed by hand) is still a position.
    match parsed.into_position(CastlingMode::Standard) {
        Ok(pos) => Ok(pos),
        Err(e) => e.ignore_impossible_check().map_err(|e| err(e.to_string())),
    }
}

/// A move packed into 16 bits: from square, to square and promotion role.
///
/// Castling is stored king-to-destination (e1g1), as UCI writes it in standard chess.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MoveKey(pub u16);

impl MoveKey {
    /// Packs `m`.
    pub fn new(m: &Move) -> MoveKey {
        let (from, to, promotion) = match m.to_uci(CastlingMode::Standard) {
            UciMove::Normal { from, to, promotion } => (from, to, promotion),
            // Drops and null moves do not occur in standard chess games.
            _ => (Square::A1, Square::A1, None),
        };
        let promo = promotion.map_or(0u16, |r| r as u16);
        MoveKey((from as u16) | ((to as u16) << 6) | (promo << 12))
    }

    /// The legal move of `pos` this key denotes, if any.
    pub fn to_move(self, pos: &Chess) -> Option<Move> {
        let from = Square::new(u32::from(self.0 & 63));
        let to = Square::new(u32::from((self.0 >> 6) & 63));
        let promotion = match self.0 >> 12 {
            0 => None,
            r => Role::try_from(r as u8).ok(),
        };
        UciMove::Normal { from, to, promotion }.to_move(pos).ok()
    }
}

/// The UCI text of `m` in standard chess (castling as e1g1).
pub fn uci(m: &Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// The SAN text of `m` played from `pos`, with check or mate suffix.
pub fn san(pos: &Chess, m: &Move) -> String {
    shakmaty::san::SanPlus::from_move(pos.clone(), *m).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(line: &[&str]) -> Chess {
        let mut pos = Chess::default();
        for s in line {
            let san: shakmaty::san::San = s.parse().unwrap();
            let m = san.to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
        pos
    }

    #[test]
    fn move_counters_do_not_split_positions() {
        let a = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").unwrap();
        let b = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 7 40").unwrap();
        assert_eq!(key(&a), key(&b));
        assert_eq!(epd(&a), epd(&b));
    }

    #[test]
    fn en_passant_square_counts_only_when_capture_is_legal() {
        // After 1. e4 no black pawn can capture: all three conventions are one position.
        let always = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
        let none = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -").unwrap();
        assert_eq!(key(&always), key(&none));
        assert_eq!(epd(&always), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -");
        // A legal en-passant capture splits the position.
        let with_ep = play(&["e4", "Nf6", "e5", "d5"]);
        assert!(epd(&with_ep).ends_with(" d6"));
        let without = parse_fen(&epd(&with_ep).replace(" d6", " -")).unwrap();
        assert_ne!(key(&with_ep), key(&without));
    }

    #[test]
    fn pseudo_legal_en_passant_is_not_identity() {
        // The c6 capture is pseudo-legal but pins make it illegal: one position for okb.
        let a = parse_fen("8/8/8/KPp4r/8/8/8/7k w - c6 0 1").unwrap();
        let b = parse_fen("8/8/8/KPp4r/8/8/8/7k w - - 0 1").unwrap();
        assert_eq!(key(&a), key(&b));
        assert_eq!(polyglot_key(&a), 0xf008b0d4b67d65ee);
        assert_ne!(polyglot_key(&a), polyglot_key(&b));
    }

    #[test]
    fn polyglot_test_vectors() {
        assert_eq!(polyglot_key(&Chess::default()), 0x463b96181691fc9c);
        assert_eq!(polyglot_key(&play(&["e4"])), 0x823c9b50fd114196);
    }

    #[test]
    fn incremental_keys_equal_full_keys() {
        let mut pos = Chess::default();
        let line = ["e4", "d5", "e5", "f5", "exf6", "Nxf6", "Nf3", "Bg4", "Be2", "Nc6", "O-O", "Qd6", "d4", "O-O-O"];
        for s in line {
            for m in pos.legal_moves() {
                let mut child = pos.clone();
                child.play_unchecked(m);
                assert_eq!(child_key(&pos, key(&pos), &m), key(&child), "{m:?} in {}", fen(&pos));
            }
            let san: shakmaty::san::San = s.parse().unwrap();
            let m = san.to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
    }

    #[test]
    fn move_keys_round_trip() {
        let pos = play(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5"]);
        for m in pos.legal_moves() {
            assert_eq!(MoveKey::new(&m).to_move(&pos), Some(m));
        }
    }
}
