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
use shakmaty::{
    Bitboard, CastlingMode, Chess, EnPassantMode, FromSetup, Move, Position, Role, Square,
};

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
    let mut text = String::with_capacity(80);
    push_epd(pos, &mut text);
    text
}

/// A full FEN of `pos` (legal en-passant rule, with move counters) for display and exports.
pub fn fen(pos: &Chess) -> String {
    let mut text = String::with_capacity(88);
    push_epd(pos, &mut text);
    text.push(' ');
    text.push_str(itoa(pos.halfmoves(), &mut [0; 10]));
    text.push(' ');
    text.push_str(itoa(pos.fullmoves().get(), &mut [0; 10]));
    text
}

/// Writes the four EPD fields of `pos`, byte for byte what shakmaty's `Epd` writes with
/// the legal en-passant rule (tested). The ECO build writes two of these per position;
/// shakmaty's general writer (variants, pockets, promoted pieces, Chess960 castling)
/// costs several times more, so the standard-chess case is written here directly.
fn push_epd(pos: &Chess, out: &mut String) {
    let rights = pos.castles().castling_rights();
    let standard_rooks = Bitboard::from(Square::A1) | Square::H1 | Square::A8 | Square::H8;
    if !(rights & !standard_rooks).is_empty() {
        // Castling with a rook elsewhere (a position set up by hand): the general writer.
        Epd::from_position(pos, EnPassantMode::Legal).append_to_string(out);
        return;
    }
    let board = pos.board();
    let mut squares = [0u8; 64];
    for color in [shakmaty::Color::White, shakmaty::Color::Black] {
        for role in Role::ALL {
            let piece = shakmaty::Piece { color, role };
            for square in board.by_piece(piece) {
                squares[square as usize] = piece.char() as u8;
            }
        }
    }
    // At most 64 placement characters, 7 slashes and 11 for the other fields.
    let mut bytes = [0u8; 88];
    let mut n = 0;
    let mut put = |c: u8| {
        bytes[n] = c;
        n += 1;
    };
    for rank in (0..8).rev() {
        let mut empty = 0u8;
        for &c in &squares[rank * 8..rank * 8 + 8] {
            if c == 0 {
                empty += 1;
            } else {
                if empty > 0 {
                    put(b'0' + empty);
                    empty = 0;
                }
                put(c);
            }
        }
        if empty > 0 {
            put(b'0' + empty);
        }
        if rank > 0 {
            put(b'/');
        }
    }
    put(b' ');
    put(if pos.turn().is_white() { b'w' } else { b'b' });
    put(b' ');
    if rights.is_empty() {
        put(b'-');
    }
    for (square, c) in
        [(Square::H1, b'K'), (Square::A1, b'Q'), (Square::H8, b'k'), (Square::A8, b'q')]
    {
        if rights.contains(square) {
            put(c);
        }
    }
    put(b' ');
    match pos.ep_square(EnPassantMode::Legal) {
        Some(square) => {
            put(square.file().char() as u8);
            put(square.rank().char() as u8);
        }
        None => put(b'-'),
    }
    out.push_str(std::str::from_utf8(&bytes[..n]).expect("FEN characters are ASCII"));
}

/// `n` in decimal, written into `buf`.
fn itoa(mut n: u32, buf: &mut [u8; 10]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("digits are ASCII")
}

/// The Polyglot book key of `pos` (Polyglot's own pseudo-legal en-passant rule).
pub fn polyglot_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::PseudoLegal).0
}

/// The stable id of the node on position `epd`: a UUIDv5 of the identity text, so ids
/// that consumers stored keep working across rebuilds.
pub fn node_id(epd: &str) -> String {
    use sha1::Digest;
    const OKB_NAMESPACE: uuid::Uuid =
        uuid::Uuid::from_u128(0x6f6b_6200_5f70_6f73_6974_696f_6e5f_6964);
    // UUIDv5 (RFC 9562) by hand: the `sha1` crate hashes with the CPU's SHA extensions
    // where present, several times faster than the portable SHA-1 of uuid's `v5`, and
    // every node of every export gets an id.
    let digest = sha1::Sha1::new()
        .chain_update(OKB_NAMESPACE.as_bytes())
        .chain_update(epd.as_bytes())
        .finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    uuid::Builder::from_sha1_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .encode_lower(&mut text)
        .to_string()
}

/// Error returned by [`parse_fen`].
#[derive(Debug, thiserror::Error)]
#[error("invalid FEN {:?}: {reason}", crate::diagnostics::shorten(text, 100))]
pub struct FenError {
    /// The text that was given (shown cut to 100 characters: a client may send 10 KB).
    pub text: String,
    /// Why it was rejected.
    pub reason: String,
}

/// Parses a FEN or EPD leniently: move counters may be missing, and the en-passant field
/// may follow any convention (always, pseudo-legal or legal); identity is recomputed.
pub fn parse_fen(text: &str) -> Result<Chess, FenError> {
    if let Some(pos) = parse_plain_fen(text.trim()) {
        return Ok(pos);
    }
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

/// The fast path of [`parse_fen`]: a plain standard-chess FEN (six fields) or EPD (four),
/// as okb writes them and as the store holds hundreds of thousands of them. Anything
/// unusual (Chess960 castling, pockets, a position `from_setup` rejects) returns `None`
/// and goes through shakmaty's general parser, so both paths accept and build the same
/// positions (tested).
fn parse_plain_fen(text: &str) -> Option<Chess> {
    use shakmaty::{ByColor, ByRole, Color, Setup};
    let mut fields = text.split(' ');
    let (placement, turn, castling, ep) =
        (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
    let counters = (fields.next(), fields.next(), fields.next());
    let (halfmoves, fullmoves) = match counters {
        (None, None, None) => (0, 1),
        (Some(h), Some(f), None) => (h.parse().ok()?, f.parse().ok()?),
        _ => return None,
    };
    let mut by_role = ByRole::<Bitboard>::default();
    let mut by_color = ByColor::<Bitboard>::default();
    let (mut rank, mut file) = (7u32, 0u32);
    for &c in placement.as_bytes() {
        match c {
            b'/' if file == 8 && rank > 0 => (rank, file) = (rank - 1, 0),
            b'1'..=b'8' => file += u32::from(c - b'0'),
            _ => {
                let role = Role::from_char(char::from(c).to_ascii_lowercase())?;
                if file > 7 {
                    return None;
                }
                let square =
                    Square::from_coords(shakmaty::File::new(file), shakmaty::Rank::new(rank));
                *by_role.get_mut(role) |= Bitboard::from(square);
                *by_color.get_mut(Color::from_white(c.is_ascii_uppercase())) |=
                    Bitboard::from(square);
                file += 1;
            }
        }
        if file > 8 {
            return None;
        }
    }
    if rank != 0 || file != 8 {
        return None;
    }
    let board = shakmaty::Board::try_from_bitboards(by_role, by_color).ok()?;
    let turn = match turn {
        "w" => Color::White,
        "b" => Color::Black,
        _ => return None,
    };
    let mut castling_rights = Bitboard::EMPTY;
    if castling != "-" {
        for c in castling.bytes() {
            let (king, rook, color) = match c {
                b'K' => (Square::E1, Square::H1, Color::White),
                b'Q' => (Square::E1, Square::A1, Color::White),
                b'k' => (Square::E8, Square::H8, Color::Black),
                b'q' => (Square::E8, Square::A8, Color::Black),
                _ => return None,
            };
            // Letters that do not name a standard rook are left to the general parser.
            if board.piece_at(king) != Some(color.king())
                || board.piece_at(rook) != Some(color.rook())
            {
                return None;
            }
            castling_rights |= Bitboard::from(rook);
        }
    }
    let ep_square = match ep {
        "-" => None,
        square => Some(square.parse::<Square>().ok()?),
    };
    let setup = Setup {
        board,
        promoted: Bitboard::EMPTY,
        pockets: None,
        turn,
        castling_rights,
        ep_square,
        remaining_checks: None,
        halfmoves,
        fullmoves: std::num::NonZeroU32::new(fullmoves)?,
    };
    Chess::from_setup(setup, CastlingMode::Standard).ok()
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

/// The SAN text of legal move `m` played from `pos`, with check or mate suffix.
pub fn san(pos: &Chess, m: &Move) -> String {
    // shakmaty's `SanPlus` asks for the game's outcome after every move, which generates
    // all legal moves; only a check can be a mate, so that is asked only after a check.
    let mut text = shakmaty::san::San::from_move(pos, *m).to_string();
    let mut after = pos.clone();
    after.play_unchecked(*m);
    if after.is_check() {
        text.push(if after.is_checkmate() { '#' } else { '+' });
    }
    text
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
    fn node_ids_are_rfc_uuid_v5_in_okb_namespace() {
        // Reference values from Python's uuid.uuid5 with okb's namespace.
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
        assert_eq!(node_id(start), "8eb3b90f-4d5d-5081-94e1-bc03ae10cc04");
        assert_eq!(node_id(""), "29da27a7-bef8-5867-9e6c-d9fbdd323290");
        assert_eq!(node_id(&"x".repeat(200)), "5a0c5888-2554-5bfb-801c-d1e4080b9079");
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
        let always =
            parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
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
        let line = [
            "e4", "d5", "e5", "f5", "exf6", "Nxf6", "Nf3", "Bg4", "Be2", "Nc6", "O-O", "Qd6", "d4",
            "O-O-O",
        ];
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

    /// Visits every position of `games` random games of up to `plies` plies (xorshift
    /// from `seed`, so every run checks the same positions).
    fn random_positions(games: usize, plies: usize, mut seed: u64, mut visit: impl FnMut(&Chess)) {
        for _ in 0..games {
            let mut pos = Chess::default();
            for _ in 0..plies {
                visit(&pos);
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                pos.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
            }
        }
    }

    /// okb's EPD and FEN writers agree with shakmaty's on every position of a few
    /// thousand random games (captures, castling rights lost one by one, promotions,
    /// en passant legal or not, long move counters) and on positions set up by hand.
    #[test]
    fn fast_writers_equal_shakmaty() {
        let shakmaty_fen = |pos: &Chess| Fen::from_position(pos, EnPassantMode::Legal).to_string();
        let shakmaty_epd = |pos: &Chess| Epd::from_position(pos, EnPassantMode::Legal).to_string();
        let mut positions = 0;
        random_positions(2000, 120, 0x9e37_79b9_7f4a_7c15, |pos| {
            assert_eq!(fen(pos), shakmaty_fen(pos));
            assert_eq!(epd(pos), shakmaty_epd(pos));
            positions += 1;
        });
        assert!(positions > 100_000, "{positions}");
        for text in [
            "8/8/8/KPp4r/8/8/8/7k w - c6 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 99 250",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w - - 0 1",
        ] {
            let pos = parse_fen(text).unwrap();
            assert_eq!(fen(&pos), shakmaty_fen(&pos), "{text}");
            assert_eq!(epd(&pos), shakmaty_epd(&pos), "{text}");
        }
    }

    #[test]
    fn san_equals_shakmaty_san_plus() {
        random_positions(300, 150, 0x2545_f491_4f6c_dd1d, |pos| {
            for m in &pos.legal_moves() {
                assert_eq!(
                    san(pos, m),
                    shakmaty::san::SanPlus::from_move(pos.clone(), *m).to_string()
                );
            }
        });
    }

    /// The fast FEN parser builds exactly what shakmaty's parser builds, and declines
    /// (leaving it to the general parser) whatever it does not handle.
    #[test]
    fn fast_fen_parser_equals_shakmaty() {
        let general = |text: &str| -> Option<Chess> {
            let fields = text.split_whitespace().count();
            let setup = if fields >= 5 {
                Fen::from_ascii(text.as_bytes()).ok()?.into_setup()
            } else {
                Epd::from_ascii(text.as_bytes()).ok()?.into_setup()
            };
            Chess::from_setup(setup, CastlingMode::Standard).ok()
        };
        let mut checked = 0;
        random_positions(500, 100, 0x1234_5678_9abc_def1, |pos| {
            for text in
                [fen(pos), epd(pos), Fen::from_position(pos, EnPassantMode::Always).to_string()]
            {
                let fast = parse_plain_fen(&text).expect("plain FENs take the fast path");
                assert_eq!(Some(&fast), general(&text).as_ref(), "{text}");
                assert_eq!(epd(&fast), epd(pos), "{text}");
                checked += 1;
            }
        });
        assert!(checked > 50_000);
        for declined in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
            "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR  w KQkq - 0 1",
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "4k3/8/8/8/8/8/8/4K2R w - e6 0 1",
        ] {
            assert!(parse_plain_fen(declined).is_none(), "{declined}");
        }
        // Declined texts still parse where the general parser accepts them.
        assert!(parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w Qkq - 0 1").is_ok());
    }

    #[test]
    fn move_keys_round_trip() {
        let pos = play(&["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5"]);
        for m in pos.legal_moves() {
            assert_eq!(MoveKey::new(&m).to_move(&pos), Some(m));
        }
    }
}
