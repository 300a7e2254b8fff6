//! Parsing what a request asks, shared by the handlers: FENs in URLs, ECO codes, and the
//! explorer's parameters (flags, limits, years, months, ranges, speeds, modes), each
//! refused with a 400 that names the parameter and what it accepts.

use super::error::ApiError;
use super::openapi;

/// Parses a FEN from a URL: `_` and `+` stand for spaces, as in Lichess URLs. Text the
/// document's `Fen` pattern refuses is a 400; a well-formed FEN that is no legal position
/// names nothing, a 404 (so a client that honours the pattern never sees a 400).
pub(super) fn parse_url_fen(text: &str) -> Result<shakmaty::Chess, ApiError> {
    if !openapi::PATTERNS.fen.is_match(text) {
        let shown = crate::diagnostics::shorten(text, 100);
        return Err(ApiError::bad_request(format!(
            "invalid FEN {shown:?}: not of the form the Fen pattern of /openapi.json describes"
        )));
    }
    let text = text.replace(['_', '+'], " ");
    crate::position::parse_fen(&text)
        .map_err(|e| ApiError::not_found(format!("no such position: {e}")))
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
