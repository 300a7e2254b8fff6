//! Which games count: the `GameFilter` of a source and the few tags it needs.
//!
//! Fixed rules (not configurable, because the tree is a standard-chess opening tree):
//! only standard chess from the standard start position, no games with a player titled
//! BOT, and no games without a result (`*`). Configurable rules: ratings, speed
//! and date range. Every rejection is counted by [`FilterReason`].

use serde::{Deserialize, Serialize};

use super::report::FilterReason;

/// Lichess speed categories, from the estimated game duration.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Speed {
    /// Estimated duration below 30 s.
    UltraBullet,
    /// Below 3 minutes.
    Bullet,
    /// Below 8 minutes.
    Blitz,
    /// Below 25 minutes.
    Rapid,
    /// Below 6 hours.
    Classical,
    /// 6 hours or more, or a TimeControl of `-`.
    Correspondence,
}

impl Speed {
    /// Buckets a PGN TimeControl value the way Lichess does: estimated = base + 40 ×
    /// increment. `None` for missing or unparseable values (`?`, `40/7200`, ...).
    pub fn from_time_control(tc: &[u8]) -> Option<Speed> {
        let tc = tc.trim_ascii();
        if tc == b"-" {
            return Some(Speed::Correspondence);
        }
        let (base, inc) = match tc.iter().position(|&b| b == b'+') {
            Some(i) => (parse_u64(&tc[..i])?, parse_u64(&tc[i + 1..])?),
            None => (parse_u64(tc)?, 0),
        };
        let estimated = base.saturating_add(inc.saturating_mul(40));
        Some(match estimated {
            0..30 => Speed::UltraBullet,
            30..180 => Speed::Bullet,
            180..480 => Speed::Blitz,
            480..1500 => Speed::Rapid,
            1500..21600 => Speed::Classical,
            _ => Speed::Correspondence,
        })
    }
}

fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 18 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0')))
}

/// A PGN date with possibly unknown parts, as the range of days it may denote.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DateRange {
    /// Earliest possible day as `yyyymmdd`.
    pub earliest: u32,
    /// Latest possible day as `yyyymmdd`.
    pub latest: u32,
}

impl DateRange {
    /// Parses `YYYY.MM.DD` (also `-` or `/` separated); `??` parts widen the range.
    /// `None` when the year is unknown or the text is not a date.
    pub fn parse(text: &[u8]) -> Option<DateRange> {
        let text = text.trim_ascii();
        let mut parts = text.split(|&b| b == b'.' || b == b'-' || b == b'/');
        let year = parts.next().and_then(parse_u64).filter(|y| *y <= 9999)? as u32;
        let part = |p: Option<&[u8]>, max: u64| -> Result<Option<u32>, ()> {
            match p {
                None => Ok(None),
                Some(p) if p.iter().all(|&b| b == b'?') => Ok(None),
                Some(p) => match parse_u64(p) {
                    Some(v) if (1..=max).contains(&v) => Ok(Some(v as u32)),
                    _ => Err(()),
                },
            }
        };
        let month = part(parts.next(), 12).ok()?;
        let day = part(parts.next(), 31).ok()?;
        let (m0, m1) = month.map_or((1, 12), |m| (m, m));
        let (d0, d1) = match (month, day) {
            (Some(_), Some(d)) => (d, d),
            _ => (1, 31),
        };
        Some(DateRange {
            earliest: year * 10000 + m0 * 100 + d0,
            latest: year * 10000 + m1 * 100 + d1,
        })
    }
}

/// Game selection rules of one source (`[sources.filter]` in pipeline.toml).
///
/// Unknown fields are rejected so that a typo is an error, not a silently ignored rule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GameFilter {
    /// Minimum average of both ratings; games without both ratings are rejected when set.
    pub min_avg_rating: Option<u32>,
    /// Minimum rating of each player; games without both ratings are rejected when set.
    pub min_rating: Option<u32>,
    /// Wanted speed categories; empty means all (including games without TimeControl).
    pub speeds: Vec<Speed>,
    /// First day, `YYYY.MM.DD` (`??` parts allowed: `1990.??.??` = from 1990.01.01).
    pub date_from: Option<String>,
    /// Last day, `YYYY.MM.DD` (`??` parts allowed: `1999.??.??` = up to 1999.12.31).
    pub date_to: Option<String>,
}

/// Error in a filter's own values (not in a game).
#[derive(Debug, thiserror::Error)]
#[error(
    "invalid {field} {value:?}: expected a date like 2013.01.31 (?? allowed for unknown parts)"
)]
pub struct FilterError {
    /// The field name.
    pub field: &'static str,
    /// The value given.
    pub value: String,
}

impl GameFilter {
    /// Stable bytes identifying this filter, for cache keys.
    pub fn cache_key_bytes(&self) -> Vec<u8> {
        // postcard of a struct of options/vectors is canonical: same filter, same bytes.
        postcard::to_stdvec(self).unwrap_or_default()
    }

    /// Checks the date fields and pre-parses them for fast per-game checks.
    pub fn compile(&self) -> Result<CompiledFilter, FilterError> {
        let date = |field: &'static str,
                    v: &Option<String>|
         -> Result<Option<DateRange>, FilterError> {
            v.as_ref()
                .map(|s| {
                    DateRange::parse(s.as_bytes()).ok_or(FilterError { field, value: s.clone() })
                })
                .transpose()
        };
        let mut speeds = 0u8;
        for s in &self.speeds {
            speeds |= 1 << (*s as u8);
        }
        Ok(CompiledFilter {
            min_avg_rating: self.min_avg_rating,
            min_rating: self.min_rating,
            speeds,
            date_from: date("date_from", &self.date_from)?.map(|d| d.earliest),
            date_to: date("date_to", &self.date_to)?.map(|d| d.latest),
        })
    }
}

/// A [`GameFilter`] ready for per-game checks.
#[derive(Clone, Debug, Default)]
pub struct CompiledFilter {
    min_avg_rating: Option<u32>,
    min_rating: Option<u32>,
    speeds: u8,
    date_from: Option<u32>,
    date_to: Option<u32>,
}

/// Game result as written in the Result tag or the movetext.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// 1-0.
    WhiteWins,
    /// 1/2-1/2.
    Draw,
    /// 0-1.
    BlackWins,
    /// `*` (unknown, ongoing, abandoned).
    Unknown,
}

impl GameResult {
    /// Parses a Result tag value.
    pub fn from_tag(v: &[u8]) -> Option<GameResult> {
        match v.trim_ascii() {
            b"1-0" => Some(GameResult::WhiteWins),
            b"0-1" => Some(GameResult::BlackWins),
            b"1/2-1/2" | b"1/2" | b"=" | b"\xc2\xbd-\xc2\xbd" => Some(GameResult::Draw),
            b"*" => Some(GameResult::Unknown),
            _ => None,
        }
    }
}

/// The tags of one game that filters and aggregation need, parsed without allocation.
#[derive(Clone, Debug, Default)]
pub struct GameTags {
    /// Number of tags seen (0 for a tagless fragment).
    pub count: u32,
    /// White's rating, when a plausible number.
    pub white_elo: Option<u32>,
    /// Black's rating, when a plausible number.
    pub black_elo: Option<u32>,
    /// Speed category from TimeControl.
    pub speed: Option<Speed>,
    /// Date range from Date (or UTCDate when Date is unknown).
    pub date: Option<DateRange>,
    /// Whether a Variant tag names something other than standard chess.
    pub non_standard_variant: bool,
    /// The FEN tag, if any, when it is not the standard start position.
    pub non_standard_fen: bool,
    /// Result tag.
    pub result: Option<GameResult>,
    /// Whether WhiteTitle or BlackTitle is BOT.
    pub bot: bool,
    /// Whether some tag value was not UTF-8 (read as Latin-1).
    pub non_utf8: bool,
}

const START_FEN_PREFIX: &[u8] = b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";

impl GameTags {
    /// Takes one tag into account. Unknown tags are ignored.
    #[inline]
    pub fn add(&mut self, name: &[u8], value: &[u8]) {
        self.count += 1;
        if !value.is_ascii() && std::str::from_utf8(value).is_err() {
            self.non_utf8 = true;
        }
        match name {
            b"WhiteElo" => self.white_elo = parse_elo(value),
            b"BlackElo" => self.black_elo = parse_elo(value),
            b"TimeControl" => self.speed = Speed::from_time_control(value),
            b"Date" => {
                if let Some(d) = DateRange::parse(value) {
                    self.date = Some(d);
                }
            }
            b"UTCDate" if self.date.is_none() => self.date = DateRange::parse(value),
            b"Variant" => {
                let v = value.trim_ascii();
                self.non_standard_variant = !(v.is_empty()
                    || v.eq_ignore_ascii_case(b"standard")
                    || v.eq_ignore_ascii_case(b"chess")
                    // Lichess tags set-up games "From Position"; the FEN rule judges them.
                    || v.eq_ignore_ascii_case(b"from position"));
            }
            b"FEN" => self.non_standard_fen = !value.trim_ascii().starts_with(START_FEN_PREFIX),
            b"Result" => self.result = GameResult::from_tag(value),
            b"WhiteTitle" | b"BlackTitle" if value.trim_ascii().eq_ignore_ascii_case(b"BOT") => {
                self.bot = true
            }
            _ => {}
        }
    }
}

fn parse_elo(v: &[u8]) -> Option<u32> {
    // Ratings of 0 mean "unknown" in several databases.
    parse_u64(v.trim_ascii()).filter(|r| (1..=4000).contains(r)).map(|r| r as u32)
}

impl CompiledFilter {
    /// The first rule `tags` break, checked before the moves are read.
    ///
    /// `result` is checked separately (it may come from the movetext).
    pub fn check_tags(&self, tags: &GameTags) -> Option<FilterReason> {
        if tags.non_standard_variant {
            return Some(FilterReason::Variant);
        }
        if tags.non_standard_fen {
            return Some(FilterReason::NonStandardStart);
        }
        if tags.bot {
            return Some(FilterReason::Bot);
        }
        if tags.result == Some(GameResult::Unknown) {
            return Some(FilterReason::NoResult);
        }
        if self.min_rating.is_some() || self.min_avg_rating.is_some() {
            let (Some(w), Some(b)) = (tags.white_elo, tags.black_elo) else {
                return Some(FilterReason::Rating);
            };
            if self.min_rating.is_some_and(|m| w.min(b) < m)
                || self.min_avg_rating.is_some_and(|m| w + b < 2 * m)
            {
                return Some(FilterReason::Rating);
            }
        }
        if self.speeds != 0 && tags.speed.is_none_or(|s| self.speeds & (1 << s as u8) == 0) {
            return Some(FilterReason::Speed);
        }
        if self.date_from.is_some() || self.date_to.is_some() {
            let Some(d) = tags.date else {
                return Some(FilterReason::Date);
            };
            if self.date_from.is_some_and(|f| d.latest < f)
                || self.date_to.is_some_and(|t| d.earliest > t)
            {
                return Some(FilterReason::Date);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_buckets_follow_lichess() {
        let s = |t: &str| Speed::from_time_control(t.as_bytes());
        assert_eq!(s("15+0"), Some(Speed::UltraBullet));
        assert_eq!(s("0+1"), Some(Speed::Bullet)); // 40 s
        assert_eq!(s("60+0"), Some(Speed::Bullet));
        assert_eq!(s("120+1"), Some(Speed::Bullet)); // 160 s
        assert_eq!(s("180+0"), Some(Speed::Blitz));
        assert_eq!(s("300+3"), Some(Speed::Blitz)); // 420
        assert_eq!(s("300+5"), Some(Speed::Rapid)); // 500
        assert_eq!(s("900+10"), Some(Speed::Rapid)); // 1300
        assert_eq!(s("1800+0"), Some(Speed::Classical));
        assert_eq!(s("21600+0"), Some(Speed::Correspondence));
        assert_eq!(s("-"), Some(Speed::Correspondence));
        assert_eq!(s("?"), None);
        assert_eq!(s("40/7200"), None);
    }

    #[test]
    fn dates_with_unknown_parts() {
        let d = |t: &str| DateRange::parse(t.as_bytes());
        assert_eq!(d("2013.01.31"), Some(DateRange { earliest: 20130131, latest: 20130131 }));
        assert_eq!(d("1990.??.??"), Some(DateRange { earliest: 19900101, latest: 19901231 }));
        assert_eq!(d("1990.05.??"), Some(DateRange { earliest: 19900501, latest: 19900531 }));
        assert_eq!(d("????.??.??"), None);
        assert_eq!(d("2013-01-31").map(|r| r.earliest), Some(20130131));
        assert_eq!(d("2013.13.01"), None);
    }

    #[test]
    fn filter_deserializes_strictly() {
        let f: GameFilter =
            serde_json::from_str(r#"{"min_rating": 2000, "speeds": ["blitz", "ultraBullet"]}"#)
                .unwrap();
        assert_eq!(f.min_rating, Some(2000));
        assert_eq!(f.speeds, vec![Speed::Blitz, Speed::UltraBullet]);
        assert!(serde_json::from_str::<GameFilter>(r#"{"min_ratin": 2000}"#).is_err());
        assert_ne!(f.cache_key_bytes(), GameFilter::default().cache_key_bytes());
        assert!(
            GameFilter { date_from: Some("soon".into()), ..Default::default() }.compile().is_err()
        );
    }
}
