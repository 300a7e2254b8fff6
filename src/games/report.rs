//! What happened to the games that did not simply count: bad games (skipped because they
//! cannot be read) and, separately, games rejected by filters.
//!
//! Reports are plain data (Serialize/Deserialize) so that they can be cached with a
//! file's aggregate, and merging them is order-independent: counts add up and only the
//! first few locations per reason (in file, line order) are kept.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// How many example locations are kept per reason.
pub const EXAMPLES_PER_KIND: usize = 5;

/// Longest supported comment; longer ones make the game bad (a runaway `{` usually
/// swallows following games, so counting the game would be wrong).
pub const MAX_COMMENT_BYTES: usize = 16 * 1024;

/// Longest supported tag line.
pub const MAX_TAG_LINE_BYTES: usize = 4 * 1024;

/// Why a game could not be used (or, for [`BadKind::NonUtf8Tag`], was used with a caveat).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BadKind {
    /// A SAN move that is not legal in the position.
    IllegalSan,
    /// A SAN move that matches several legal moves.
    AmbiguousSan,
    /// The file ends in the middle of a game (no termination marker).
    Truncated,
    /// Text between games that is neither tags nor moves.
    Garbage,
    /// A tag line that is unterminated or longer than the supported length.
    BadTag,
    /// A comment longer than the supported length.
    OverlongComment,
    /// A tag value that is not UTF-8; decoded as Latin-1 and the game is kept.
    NonUtf8Tag,
    /// A BGN line that is not a JSON game object.
    BadJson,
    /// A BGN move whose piece letter does not match the piece on its from-square.
    PieceMismatch,
    /// A BGN move that is malformed or not legal.
    IllegalMove,
    /// A tag value with unescaped inner quotes, read up to the last quote before `]` as
    /// python-chess reads it; the game is kept. Located at the tag line.
    RepairedTag,
    /// A capture written without `x` (`Bc4` for Bxc4), read as the one capture it can
    /// be, as python-chess and polyglot read it; the game is kept.
    LenientSan,
}

impl BadKind {
    /// Whether games of this kind are left out of the statistics.
    pub fn skipped(self) -> bool {
        !matches!(self, BadKind::NonUtf8Tag | BadKind::RepairedTag | BadKind::LenientSan)
    }

    /// For a kept game whose input was read leniently, what was done (a warning's text).
    pub fn repair(self) -> Option<&'static str> {
        match self {
            BadKind::RepairedTag => Some(
                "tag value with unescaped inner quotes read up to the last quote before ] (as python-chess reads it)",
            ),
            BadKind::LenientSan => Some(
                "game kept: a capture written without x read as the one capture it can be (as python-chess reads it)",
            ),
            _ => None,
        }
    }

    /// Why a game of this kind was skipped, when the name alone does not say (the limit).
    pub fn why(self) -> Option<String> {
        match self {
            BadKind::BadTag => Some(format!(
                "a tag line that is unterminated or longer than {MAX_TAG_LINE_BYTES} bytes"
            )),
            BadKind::OverlongComment => {
                Some(format!("a comment longer than {MAX_COMMENT_BYTES} bytes"))
            }
            _ => None,
        }
    }

    /// Stable snake_case name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            BadKind::IllegalSan => "illegal_san",
            BadKind::AmbiguousSan => "ambiguous_san",
            BadKind::Truncated => "truncated",
            BadKind::Garbage => "garbage",
            BadKind::BadTag => "bad_tag",
            BadKind::OverlongComment => "overlong_comment",
            BadKind::NonUtf8Tag => "non_utf8_tag",
            BadKind::BadJson => "bad_json",
            BadKind::PieceMismatch => "piece_mismatch",
            BadKind::IllegalMove => "illegal_move",
            BadKind::RepairedTag => "repaired_tag",
            BadKind::LenientSan => "lenient_san",
        }
    }
}

/// Where a bad game starts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Location {
    /// The file, as given.
    pub file: String,
    /// 1-based line of the game's first line (its first tag, or its first move).
    pub line: u64,
}

/// Count and first locations of one [`BadKind`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindReport {
    /// Number of games of this kind.
    pub count: u64,
    /// The first [`EXAMPLES_PER_KIND`] locations in (file, line) order.
    pub examples: Vec<Location>,
}

/// Bad games by reason, mergeable across chunks and files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadGames {
    /// Per reason; a BTreeMap so serialization is deterministic.
    pub kinds: BTreeMap<BadKind, KindReport>,
}

impl BadGames {
    /// Records one game of `kind` at `location`.
    pub fn record(&mut self, kind: BadKind, location: Location) {
        let r = self.kinds.entry(kind).or_default();
        r.count += 1;
        insert_example(&mut r.examples, location);
    }

    /// Whether an example at a later location than everything kept could still be kept,
    /// so callers can skip computing line numbers that would be dropped anyway.
    pub fn wants_example(&self, kind: BadKind) -> bool {
        self.kinds.get(&kind).is_none_or(|r| r.examples.len() < EXAMPLES_PER_KIND)
    }

    /// Counts a game of `kind` without a location (when [`BadGames::wants_example`] said no).
    pub fn count_only(&mut self, kind: BadKind) {
        self.kinds.entry(kind).or_default().count += 1;
    }

    /// Adds `other` into `self`; the result does not depend on merge order.
    pub fn merge(&mut self, other: &BadGames) {
        for (kind, theirs) in &other.kinds {
            let ours = self.kinds.entry(*kind).or_default();
            ours.count += theirs.count;
            for loc in &theirs.examples {
                insert_example(&mut ours.examples, loc.clone());
            }
        }
    }

    /// Number of games left out of the statistics.
    pub fn skipped(&self) -> u64 {
        self.kinds.iter().filter(|(k, _)| k.skipped()).map(|(_, r)| r.count).sum()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// A plain-text table: reason, count, whether the games were skipped, first locations.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        if self.kinds.is_empty() {
            out.push_str("no bad games\n");
            return out;
        }
        let width = self.kinds.keys().map(|k| k.name().len()).max().unwrap_or(6).max(6);
        let _ =
            writeln!(out, "{:<width$}  {:>9}  {:<8}  first locations", "reason", "games", "effect");
        for (kind, r) in &self.kinds {
            let effect = if kind.skipped() { "skipped" } else { "kept" };
            let locs: Vec<String> =
                r.examples.iter().map(|l| format!("{}:{}", l.file, l.line)).collect();
            let _ = writeln!(
                out,
                "{:<width$}  {:>9}  {:<8}  {}",
                kind.name(),
                r.count,
                effect,
                locs.join(", ")
            );
        }
        out
    }
}

fn insert_example(examples: &mut Vec<Location>, loc: Location) {
    let at = examples.partition_point(|l| *l < loc);
    if at < EXAMPLES_PER_KIND && examples.get(at) != Some(&loc) {
        examples.insert(at, loc);
        examples.truncate(EXAMPLES_PER_KIND);
    }
}

/// Why a readable game was not counted (these are choices, not errors).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterReason {
    /// A `Variant` tag other than Standard.
    Variant,
    /// A `FEN`/`SetUp` start other than the standard position.
    NonStandardStart,
    /// A player titled BOT.
    Bot,
    /// No result (`*`, or no Result tag and no termination marker).
    NoResult,
    /// Below `min_rating` or `min_avg_rating` (or ratings unknown while one is required).
    Rating,
    /// Not one of the wanted `speeds` (or no usable TimeControl while speeds are required).
    Speed,
    /// Outside `date_from`..`date_to` (or no year while a date bound is set).
    Date,
}

impl FilterReason {
    /// Stable snake_case name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            FilterReason::Variant => "variant",
            FilterReason::NonStandardStart => "non_standard_start",
            FilterReason::Bot => "bot",
            FilterReason::NoResult => "no_result",
            FilterReason::Rating => "rating",
            FilterReason::Speed => "speed",
            FilterReason::Date => "date",
        }
    }
}

/// Game counters of one file (or of several, merged).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Games seen, whatever became of them (including bad ones).
    pub games_read: u64,
    /// Games that contributed to the statistics.
    pub games_counted: u64,
    /// Games left out as bad (sum of skipped kinds in [`BadGames`]).
    pub games_bad: u64,
    /// Games rejected by filters, by reason.
    pub filtered: BTreeMap<FilterReason, u64>,
    /// The dates the counted games span, as `yyyymmdd`: the earliest day the oldest
    /// dated game can be on, and the earliest day the newest one can be on (a game dated
    /// `2025.??.??` counts as 2025-01-01, so the span never claims more than the tags say).
    /// `None` when no counted game has a date.
    #[serde(default)]
    pub dated: Option<(u32, u32)>,
}

impl Counters {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Counters) {
        self.games_read += other.games_read;
        self.games_counted += other.games_counted;
        self.games_bad += other.games_bad;
        for (k, v) in &other.filtered {
            *self.filtered.entry(*k).or_default() += v;
        }
        if let Some((first, last)) = other.dated {
            self.add_dated(first);
            self.add_dated(last);
        }
    }

    /// Widens [`Counters::dated`] to take in a game on `day` (`yyyymmdd`).
    pub fn add_dated(&mut self, day: u32) {
        self.dated = Some(match self.dated {
            None => (day, day),
            Some((first, last)) => (first.min(day), last.max(day)),
        });
    }

    /// Total games rejected by filters.
    pub fn games_filtered(&self) -> u64 {
        self.filtered.values().sum()
    }

    /// A one-line-per-reason summary of the filter counts.
    pub fn render_filtered(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.filtered {
            let _ = writeln!(out, "{:<20} {:>9}", k.name(), v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(file: &str, line: u64) -> Location {
        Location { file: file.into(), line }
    }

    #[test]
    fn merge_is_order_independent_and_keeps_first_examples() {
        let mut a = BadGames::default();
        for l in [50, 10, 70] {
            a.record(BadKind::IllegalSan, loc("a.pgn", l));
        }
        let mut b = BadGames::default();
        for l in [1, 2, 3, 4] {
            b.record(BadKind::IllegalSan, loc("b.pgn", l));
        }
        b.record(BadKind::Garbage, loc("b.pgn", 9));
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab, ba);
        let ill = &ab.kinds[&BadKind::IllegalSan];
        assert_eq!(ill.count, 7);
        assert_eq!(
            ill.examples,
            vec![
                loc("a.pgn", 10),
                loc("a.pgn", 50),
                loc("a.pgn", 70),
                loc("b.pgn", 1),
                loc("b.pgn", 2)
            ]
        );
        assert_eq!(ab.skipped(), 8);
        let table = ab.render_table();
        assert!(table.contains("illegal_san"), "{table}");
        assert!(table.contains("a.pgn:10, a.pgn:50"), "{table}");
    }

    #[test]
    fn non_utf8_tags_are_kept() {
        let mut r = BadGames::default();
        r.record(BadKind::NonUtf8Tag, loc("k.pgn", 1));
        assert_eq!(r.skipped(), 0);
        assert!(r.render_table().contains("kept"));
    }
}
