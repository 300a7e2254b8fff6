//! What defines a crawl, and the request for one position.
//!
//! [`CrawlParams`] is everything that decides which answers a crawl holds; it is written
//! into the manifest, so changing any of it changes the pin. The server's address and the
//! [`Politeness`] settings are not: a crawl fetched from a mirror server, or slowly, is
//! the same crawl.

use serde::{Deserialize, Serialize};
use shakmaty::Chess;

/// Which explorer database a crawl asks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Database {
    /// `/masters`: over-the-board games of titled players.
    Masters,
    /// `/lichess`: rated games played on Lichess.
    Lichess,
}

/// The explorer's speed names (`/lichess?speeds=`).
pub const SPEEDS: [&str; 6] =
    ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence"];
/// The explorer's rating groups (`/lichess?ratings=`): each is the lower bound of a group.
pub const RATINGS: [u32; 9] = [0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500];

/// Everything that decides what a crawl holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlParams {
    /// The database asked.
    pub database: Database,
    /// The moves from the start position to the crawl's root (SAN, numbered or not).
    pub root: String,
    /// The deepest ply asked about (the start position is ply 0); positions at this ply
    /// are asked about but not expanded.
    pub max_ply: u16,
    /// A move leads to a position asked about when at least this many games played it.
    pub min_games: u64,
    /// Moves listed per answer (`moves=`).
    pub moves: u32,
    /// `/lichess` only: the speeds counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speeds: Vec<String>,
    /// `/lichess` only: the rating groups counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratings: Vec<u32>,
    /// First year (masters, `YYYY`) or month (lichess, `YYYY-MM`) counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Last year or month counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

/// How a crawl treats the server: never more than one request in flight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Politeness {
    /// Requests per second at most (a token bucket of one token); 0: no limit (only for
    /// your own servers; lichess.org refuses it).
    pub rate: f64,
    /// Seconds to wait after a 429 (or the server's `Retry-After`, if longer). Lichess asks
    /// for a full minute, and okb never waits less when asking lichess.org.
    pub wait_after_429: f64,
    /// First wait after a 5xx answer or a network error, doubled after each failure.
    pub backoff: f64,
    /// The longest wait between two attempts.
    pub backoff_cap: f64,
    /// Attempts per request before the crawl stops (everything fetched is kept).
    pub max_attempts: u32,
    /// Seconds one request may take, body included.
    pub timeout: f64,
}

impl Default for Politeness {
    fn default() -> Self {
        Politeness {
            rate: 1.0,
            wait_after_429: 60.0,
            backoff: 2.0,
            backoff_cap: 120.0,
            max_attempts: 8,
            timeout: 30.0,
        }
    }
}

/// Whether `url` is one of Lichess's own servers, whose rules a crawl may not bend.
pub fn is_lichess(url: &str) -> bool {
    let host = url.split("://").nth(1).unwrap_or(url).split(['/', ':', '?']).next().unwrap_or("");
    ["lichess.org", "lichess.ovh"].iter().any(|d| host == *d || host.ends_with(&format!(".{d}")))
}

impl Politeness {
    /// These settings as allowed for `url`: Lichess's servers get at least a minute after a
    /// 429 and a rate limit.
    pub fn for_server(&self, url: &str) -> Result<Politeness, String> {
        let mut p = self.clone();
        if p.rate < 0.0
            || p.backoff < 0.0
            || p.wait_after_429 < 0.0
            || p.timeout <= 0.0
            || p.max_attempts == 0
        {
            return Err(
                "politeness: rate, waits and timeout must be positive, max_attempts at least 1"
                    .into(),
            );
        }
        if is_lichess(url) {
            if p.rate == 0.0 {
                return Err(format!(
                    "politeness: rate = 0 (no limit) is not allowed for {url}: Lichess allows one request at a time, at a modest rate"
                ));
            }
            p.wait_after_429 = p.wait_after_429.max(60.0);
        }
        Ok(p)
    }
}

impl CrawlParams {
    /// Checks the filters against the database and the explorer's vocabularies, and the
    /// root against the rules; returns the root position and its ply.
    pub fn check(&self) -> Result<(Chess, u16), String> {
        let lichess = self.database == Database::Lichess;
        let filtered = !(self.speeds.is_empty() && self.ratings.is_empty());
        if filtered && !lichess {
            return Err("speeds and ratings are filters of database = \"lichess\"".into());
        }
        if let Some(bad) = self.speeds.iter().find(|s| !SPEEDS.contains(&s.as_str())) {
            return Err(format!(
                "speeds: {bad:?} is not an explorer speed ({})",
                SPEEDS.join(", ")
            ));
        }
        if let Some(bad) = self.ratings.iter().find(|r| !RATINGS.contains(r)) {
            return Err(format!(
                "ratings: {bad} is not an explorer rating group ({})",
                RATINGS.map(|r| r.to_string()).join(", ")
            ));
        }
        let (format, shape) = if lichess { ("YYYY-MM", 7) } else { ("YYYY", 4) };
        for (name, value) in [("since", &self.since), ("until", &self.until)] {
            if let Some(v) = value
                && !(v.len() == shape
                    && v.bytes()
                        .enumerate()
                        .all(|(i, b)| if i == 4 { b == b'-' } else { b.is_ascii_digit() }))
            {
                return Err(format!(
                    "{name}: {v:?} is not {format} (the {:?} database's format)",
                    self.database
                ));
            }
        }
        if let (Some(a), Some(b)) = (&self.since, &self.until)
            && a > b
        {
            return Err(format!("since ({a}) is after until ({b})"));
        }
        if self.moves == 0 {
            return Err("moves must be at least 1".into());
        }
        let root =
            crate::eco::line::position_after(&self.root).map_err(|e| format!("root: {e}"))?;
        let ply = crate::eco::line::move_tokens(&self.root).len() as u16;
        if ply > self.max_ply {
            return Err(format!("root is {ply} plies deep, beyond max_ply = {}", self.max_ply));
        }
        Ok((root, ply))
    }

    /// The request for `pos`: path and query, without the server (the manifest's form).
    pub fn request(&self, pos: &Chess) -> String {
        let fen = request_fen(pos);
        let mut query = form_urlencoded(&[("fen", fen.as_str())]);
        let join = |values: Vec<String>| values.join(",");
        let mut add = |key: &str, value: String| {
            query.push('&');
            query.push_str(&form_urlencoded(&[(key, value.as_str())]));
        };
        let path = match self.database {
            Database::Masters => "/masters",
            Database::Lichess => {
                add("variant", "standard".into());
                if !self.speeds.is_empty() {
                    add("speeds", join(self.speeds.clone()));
                }
                if !self.ratings.is_empty() {
                    add("ratings", join(self.ratings.iter().map(u32::to_string).collect()));
                }
                "/lichess"
            }
        };
        if let Some(since) = &self.since {
            add("since", since.clone());
        }
        if let Some(until) = &self.until {
            add("until", until.clone());
        }
        add("moves", self.moves.to_string());
        add("topGames", "0".into());
        if self.database == Database::Lichess {
            add("recentGames", "0".into());
        }
        format!("{path}?{query}")
    }
}

/// The settings in which `a` and `b` differ, as `min_games 50 → 100`.
pub fn differences(a: &CrawlParams, b: &CrawlParams) -> String {
    let (a, b) =
        (serde_json::to_value(a).unwrap_or_default(), serde_json::to_value(b).unwrap_or_default());
    let keys: std::collections::BTreeSet<&String> =
        a.as_object().into_iter().chain(b.as_object()).flat_map(|o| o.keys()).collect();
    let shown = |v: Option<&serde_json::Value>| v.map_or("(none)".to_string(), |v| v.to_string());
    let changed = keys.into_iter().filter(|k| a.get(k.as_str()) != b.get(k.as_str()));
    changed
        .map(|k| format!("{k} {} → {}", shown(a.get(k.as_str())), shown(b.get(k.as_str()))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The FEN a crawl asks about `pos` by: its identity with counters `0 1`, so a position
/// is asked about once, whatever move counters the paths to it had.
pub fn request_fen(pos: &Chess) -> String {
    format!("{} 0 1", crate::position::epd(pos))
}

/// `key=value` pairs in `application/x-www-form-urlencoded` (what browsers and the
/// explorer's own front end send).
pub fn form_urlencoded(pairs: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse("http://x/").expect("static URL");
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masters() -> CrawlParams {
        CrawlParams {
            database: Database::Masters,
            root: String::new(),
            max_ply: 8,
            min_games: 50,
            moves: 50,
            speeds: vec![],
            ratings: vec![],
            since: None,
            until: None,
        }
    }

    #[test]
    fn requests_name_the_position_by_its_fen_and_ask_for_no_games() {
        let request = masters().request(&Chess::default());
        assert_eq!(
            request,
            "/masters?fen=rnbqkbnr%2Fpppppppp%2F8%2F8%2F8%2F8%2FPPPPPPPP%2FRNBQKBNR+w+KQkq+-+0+1&moves=50&topGames=0"
        );
        let lichess = CrawlParams {
            database: Database::Lichess,
            speeds: vec!["blitz".into(), "rapid".into()],
            ratings: vec![2000, 2200],
            since: Some("2020-01".into()),
            ..masters()
        };
        let request = lichess.request(&Chess::default());
        assert!(request.starts_with("/lichess?fen="), "{request}");
        assert!(request.ends_with("&variant=standard&speeds=blitz%2Crapid&ratings=2000%2C2200&since=2020-01&moves=50&topGames=0&recentGames=0"), "{request}");
    }

    #[test]
    fn settings_are_checked_against_the_explorer() {
        assert_eq!(masters().check().unwrap().1, 0);
        let root = CrawlParams { root: "1. e4 c5 2. Nf3".into(), ..masters() };
        assert_eq!(root.check().unwrap().1, 3);
        let bad = [
            CrawlParams { speeds: vec!["blitz".into()], ..masters() },
            CrawlParams { database: Database::Lichess, speeds: vec!["hyper".into()], ..masters() },
            CrawlParams { database: Database::Lichess, ratings: vec![1500], ..masters() },
            CrawlParams { since: Some("2020-01".into()), ..masters() },
            CrawlParams { since: Some("2020".into()), until: Some("2019".into()), ..masters() },
            CrawlParams { root: "1. e5".into(), ..masters() },
            CrawlParams {
                root: "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O".into(),
                ..masters()
            },
        ];
        for params in bad {
            assert!(params.check().is_err(), "{params:?}");
        }
    }

    #[test]
    fn lichess_servers_keep_their_rules() {
        let fast = Politeness { rate: 0.0, wait_after_429: 0.1, ..Default::default() };
        assert!(fast.for_server("https://explorer.lichess.org").is_err());
        let slow_429 = Politeness { wait_after_429: 0.1, ..Default::default() };
        assert_eq!(
            slow_429.for_server("https://explorer.lichess.ovh/masters").unwrap().wait_after_429,
            60.0
        );
        assert_eq!(fast.for_server("http://127.0.0.1:9000").unwrap().wait_after_429, 0.1);
        assert!(!is_lichess("http://notlichess.org.example"));
    }
}
