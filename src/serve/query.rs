//! Parsing what a request asks, shared by the handlers: FENs in URLs, ECO codes, and the
//! explorer's parameters (flags, limits, years, months, ranges, speeds, modes), each
//! refused with a 400 that names the parameter and what it accepts.

use super::error::ApiError;
use super::openapi;

/// Parses a FEN from a URL: `_` and `+` stand for spaces, as in Lichess URLs. Text the
/// document's `Fen` pattern refuses is a 400; a well-formed FEN that is no legal position
/// names nothing, a 404 (so a client that honours the pattern never sees a 400).
pub(super) fn parse_url_fen(text: &str) -> Result<shakmaty::Chess, ApiError> {
    // The hand check first: the pattern (regex_lite's PikeVM) took a fifth of the time of a
    // GET /node/fen answered from the cache. The hand check accepts only what the pattern
    // accepts (its unit test holds it to that); what it refuses, the pattern judges again.
    if !has_fen_form(text) && !openapi::PATTERNS.fen.is_match(text) {
        let shown = crate::diagnostics::shorten(text, 100);
        return Err(ApiError::bad_request(format!(
            "invalid FEN {shown:?}: not of the form the Fen pattern of /openapi.json describes"
        )));
    }
    // URLs written with %20 (most clients) need no copy.
    let text = match text.contains(['_', '+']) {
        true => std::borrow::Cow::Owned(text.replace(['_', '+'], " ")),
        false => std::borrow::Cow::Borrowed(text),
    };
    crate::position::parse_fen(&text)
        .map_err(|e| ApiError::not_found(format!("no such position: {e}")))
}

/// Whether `text` has the form of the document's `Fen` pattern,
/// `^[1-8pnbrqkPNBRQK]{1,8}(/[1-8pnbrqkPNBRQK]{1,8}){7}[ _+][wb][ _+](-|KQ?k?q?|Qk?q?|kq?|q)[ _+](-|[a-h][36])([ _+][0-9]{1,4}[ _+][0-9]{1,4})?$`,
/// read field by field (each field ends at a byte its own class does not hold, so no
/// backtracking is needed). Accepts exactly what the pattern accepts (unit test
/// `the_hand_check_of_a_fen_agrees_with_the_pattern`).
fn has_fen_form(text: &str) -> bool {
    let mut rest = Cursor(text.as_bytes());
    let square = |b: u8| {
        matches!(b, b'1'..=b'8' | b'p' | b'n' | b'b' | b'r' | b'q' | b'k')
            || matches!(b, b'P' | b'N' | b'B' | b'R' | b'Q' | b'K')
    };
    let space = |b: u8| matches!(b, b' ' | b'_' | b'+');
    let board = (0..8).all(|rank| {
        (rank == 0 || rest.take(|b| b == b'/')) && (1..=8).contains(&rest.run(square, 8))
    });
    board
        && rest.take(space)
        && rest.take(|b| matches!(b, b'w' | b'b'))
        && rest.take(space)
        && castling(&mut rest)
        && rest.take(space)
        && (rest.take(|b| b == b'-')
            || (rest.take(|b| matches!(b, b'a'..=b'h')) && rest.take(|b| matches!(b, b'3' | b'6'))))
        && (rest.0.is_empty() || counters(&mut rest, space))
        && rest.0.is_empty()
}

/// Whether `text` has the form of the document's `UciLine` pattern,
/// `^([a-h][1-8][a-h][1-8][qrbn]?(,[a-h][1-8][a-h][1-8][qrbn]?)*)?$`: nothing, or moves
/// of two squares and an optional promotion, each after a comma but the first. Like
/// [`has_fen_form`], it spares the pattern's matcher the texts it accepts, and accepts
/// exactly what the pattern accepts (unit test
/// `the_hand_check_of_a_uci_line_agrees_with_the_pattern`).
pub(super) fn has_uci_line_form(text: &str) -> bool {
    let square = |file: u8, rank: u8| matches!(file, b'a'..=b'h') && matches!(rank, b'1'..=b'8');
    text.is_empty()
        || text.split(',').all(|m| match *m.as_bytes() {
            [a, b, c, d] => square(a, b) && square(c, d),
            [a, b, c, d, p] => {
                square(a, b) && square(c, d) && matches!(p, b'q' | b'r' | b'b' | b'n')
            }
            _ => false,
        })
}

/// The castling field of [`has_fen_form`]: `-`, or some of `KQkq` in that order (the
/// pattern's `KQ?k?q?|Qk?q?|kq?|q`).
fn castling(rest: &mut Cursor<'_>) -> bool {
    if rest.take(|b| b == b'-') {
        return true;
    }
    let mut rights = 0;
    for right in *b"KQkq" {
        if rest.take(|b| b == right) {
            rights += 1;
        }
    }
    rights > 0
}

/// The move counters of [`has_fen_form`]: two numbers of 1 to 4 digits, each after a space.
fn counters(rest: &mut Cursor<'_>, space: impl Fn(u8) -> bool + Copy) -> bool {
    (0..2).all(|_| rest.take(space) && (1..=4).contains(&rest.run(|b| b.is_ascii_digit(), 4)))
}

/// What is left of a text being read byte by byte.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    /// Takes the next byte if `allowed`.
    fn take(&mut self, allowed: impl Fn(u8) -> bool) -> bool {
        match self.0.split_first() {
            Some((&b, rest)) if allowed(b) => {
                self.0 = rest;
                true
            }
            _ => false,
        }
    }

    /// Takes up to `most` bytes while `allowed`, and says how many.
    fn run(&mut self, allowed: impl Fn(u8) -> bool + Copy, most: usize) -> usize {
        let mut taken = 0;
        while taken < most && self.take(allowed) {
            taken += 1;
        }
        taken
    }
}

/// An ECO code (`B90`) or a SCID code (`B03a`, `A00a1`).
pub(super) fn is_code(code: &str) -> bool {
    code.is_ascii()
        && (3..=6).contains(&code.len())
        && crate::eco::is_eco_code(&code[..3])
        && code[3..].bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The spellings of a yes and a no that Lichess's explorer accepts for a boolean
/// parameter: clients write Python's `True` (berserk) or a form's `on` as well as `true`.
const FLAG_SPELLINGS: ([&str; 5], [&str; 5]) =
    (["true", "True", "on", "1", "yes"], ["false", "False", "off", "0", "no"]);

/// A boolean parameter `name` written `text`, in any of the [`FLAG_SPELLINGS`]; else a
/// 400 naming them.
pub(super) fn flag(name: &str, text: &str) -> Result<bool, ApiError> {
    let (yes, no) = FLAG_SPELLINGS;
    if yes.contains(&text) {
        return Ok(true);
    }
    if no.contains(&text) {
        return Ok(false);
    }
    let shown = crate::diagnostics::shorten(text, 100);
    Err(ApiError::bad_request(format!(
        "{name} must be one of {} (yes) or {} (no), not {shown:?}",
        yes.join(", "),
        no.join(", ")
    )))
}

/// `value` if within `max`, else a 400 naming `name`.
pub(super) fn at_most(
    name: &str,
    value: Option<usize>,
    default: usize,
    max: usize,
) -> Result<usize, ApiError> {
    let value = value.unwrap_or(default);
    if value > max {
        return Err(ApiError::bad_request(format!("{name} must be at most {max}")));
    }
    Ok(value)
}

/// A `since`/`until` year.
pub(super) fn year(name: &str, text: &str) -> Result<u16, ApiError> {
    text.trim().parse::<u16>().ok().filter(|y| *y <= 9999).ok_or_else(|| {
        ApiError::bad_request(format!("{name} must be a year such as 1990, not {text:?}"))
    })
}

/// A `since`/`until` month (`YYYY-MM`) as `year * 12 + month - 1`.
pub(super) fn month(name: &str, text: &str) -> Result<u32, ApiError> {
    let bad = || {
        ApiError::bad_request(format!(
            "{name} must be a month such as 2013-01 (YYYY-MM), not {text:?}"
        ))
    };
    let (year, m) = text.trim().split_once('-').ok_or_else(bad)?;
    // Four digits, as the OpenAPI document's pattern says (0000-01 included).
    if year.len() != 4 || !year.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (y, m) = (year.parse::<u32>().map_err(|_| bad())?, m.parse::<u32>().map_err(|_| bad())?);
    if !(1..=12).contains(&m) {
        return Err(bad());
    }
    Ok(y * 12 + m - 1)
}

/// The inclusive range `since..=until` (`None`: neither given). A `since` after `until`
/// is an empty range that admits no game, as on Lichess (whose ranges bound a key scan),
/// not an error: both are well-formed values.
pub(super) fn range<T: Copy>(
    since: Option<T>,
    until: Option<T>,
    lowest: T,
    highest: T,
) -> Option<(T, T)> {
    (since.is_some() || until.is_some())
        .then(|| (since.unwrap_or(lowest), until.unwrap_or(highest)))
}

/// `speeds` (comma-separated Lichess speed names) as a mask of `1 << code`; `None`:
/// not given.
pub(super) fn speeds(text: Option<&str>) -> Result<Option<u16>, ApiError> {
    let mut speeds = None;
    for name in text.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let code = crate::explorer_index::speed_code(name).ok_or_else(|| {
            ApiError::bad_request(format!(
                "speeds: unknown speed {name:?} (one of {})",
                crate::explorer_index::SPEEDS.join(", ")
            ))
        })?;
        speeds = Some(speeds.unwrap_or(0u16) | 1 << code);
    }
    Ok(speeds)
}

/// `modes` (comma-separated `rated`, `casual`) as (rated, casual); `None`: not given.
pub(super) fn modes(text: Option<&str>) -> Result<Option<(bool, bool)>, ApiError> {
    let mut modes = None;
    for name in text.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()) {
        let (rated, casual) = modes.unwrap_or((false, false));
        modes = Some(match name {
            "rated" => (true, casual),
            "casual" => (rated, true),
            _ => {
                return Err(ApiError::bad_request(format!(
                    "modes: unknown mode {name:?} (rated, casual)"
                )));
            }
        });
    }
    Ok(modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FENs and EPDs of the forms the pattern takes, with every separator.
    const FORMS: [&str; 6] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR_w_KQkq_c6_0_2",
        "r3k2r/8/8/8/8/8/8/R3K2R+b+Kq+-+12+9999",
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6",
        "8/8/8/8/8/8/8/K6k b Qk e3 100 1000",
        "rnbq1rk1/pp3pb1/3p3p/2pP2pn/4P3/2N2NB1/PP2BPPP/R2QK2R w k -",
    ];

    /// Bytes a mutation puts in: every class of the pattern, and some it has none of.
    const BYTES: &[u8] = b"/ _+-wbKQkqpnrPNRB0123456789a3h6i9x.\t\n";

    #[test]
    fn the_hand_check_of_a_uci_line_agrees_with_the_pattern() {
        let forms = ["e2e4", "e2e4,c7c5", "a7a8q,h2h1n,b7b8r,g2g1b", "g1f3,g8f6,c2c4"];
        let mut texts = mutations(&forms, b",abh0189qrbnkpx e2");
        texts.extend(["", ",", "e2e4,"].map(String::from));
        let (accepted, refused) = agreeing(&texts, has_uci_line_form, &openapi::PATTERNS.uci_line);
        assert!(accepted > 100 && refused > 500, "{accepted} accepted, {refused} refused");
    }

    /// Each form, and each with one byte removed, or one or two of `bytes` put in or in
    /// place of a byte, at every place.
    fn mutations(forms: &[&str], bytes: &[u8]) -> Vec<String> {
        let mut texts = Vec::new();
        for form in forms {
            let form = form.as_bytes();
            texts.push(String::from_utf8(form.to_vec()).expect("ASCII"));
            for at in 0..=form.len() {
                let (head, tail) = form.split_at(at);
                let after = tail.split_first().map(|(_, after)| after);
                let text = |middle: &[u8], tail: &[u8]| {
                    String::from_utf8([head, middle, tail].concat()).expect("ASCII")
                };
                texts.extend(after.map(|after| text(b"", after)));
                for &b in bytes {
                    texts.push(text(&[b], tail));
                    texts.push(text(&[b, b], tail));
                    texts.extend(after.map(|after| text(&[b], after)));
                }
            }
        }
        texts
    }

    /// Asserts that `hand` and `pattern` agree on every text; returns how many texts the
    /// pattern accepts and refuses (the mutations should reach both sides of it).
    fn agreeing(
        texts: &[String],
        hand: fn(&str) -> bool,
        pattern: &regex_lite::Regex,
    ) -> (usize, usize) {
        let accepted = texts.iter().filter(|text| {
            let by_pattern = pattern.is_match(text);
            assert_eq!(hand(text), by_pattern, "{text:?}");
            by_pattern
        });
        let accepted = accepted.count();
        (accepted, texts.len() - accepted)
    }

    #[test]
    fn the_hand_check_of_a_fen_agrees_with_the_pattern() {
        let mut texts = mutations(&FORMS, BYTES);
        texts.extend(["", "8", "é", "8/8/8/8/8/8/8/8 w - - 0 1\u{e9}"].map(String::from));
        let (accepted, refused) = agreeing(&texts, has_fen_form, &openapi::PATTERNS.fen);
        assert!(accepted > 1000 && refused > 1000, "{accepted} accepted, {refused} refused");
    }
}
