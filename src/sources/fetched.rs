//! Freshness: when a source's bytes entered the store, from where, and what upstream said
//! about them (Last-Modified, ETag). Kept as `sources/fetched/<blake3>.json`, beside the
//! bytes and never in a build output, so builds stay byte-identical; `okb status` shows it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How one stored file was fetched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchRecord {
    /// The URL downloaded, or the mirror file copied.
    pub from: String,
    /// When: seconds since 1970 (UTC).
    pub fetched_at: u64,
    /// Upstream's `Last-Modified`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Upstream's `ETag`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

impl FetchRecord {
    /// A record of a fetch from `from` now.
    pub fn now(
        from: impl Into<String>,
        last_modified: Option<String>,
        etag: Option<String>,
    ) -> FetchRecord {
        let fetched_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        FetchRecord { from: from.into(), fetched_at, last_modified, etag }
    }

    /// `fetched 2026-11-25 22:40 UTC from <from>; Last-Modified …; ETag …`.
    pub fn describe(&self) -> String {
        let mut text = format!("fetched {} from {}", utc(self.fetched_at), self.from);
        if let Some(lm) = &self.last_modified {
            text.push_str(&format!("; Last-Modified {lm}"));
        }
        if let Some(etag) = &self.etag {
            text.push_str(&format!("; ETag {etag}"));
        }
        text
    }
}

fn path(store: &Path, blake3: &str) -> PathBuf {
    store.join("fetched").join(format!("{blake3}.json"))
}

/// Keeps `record` for the stored file `blake3` (a failure to keep it costs only the
/// freshness line of `okb status`, so it is not an error).
pub fn write(store: &Path, blake3: &str, record: &FetchRecord) {
    if let Ok(json) = serde_json::to_vec_pretty(record) {
        let _ = crate::files::write_atomic(&path(store, blake3), &json);
    }
}

/// Drops the record of `blake3` (a file fetched only to be read once, as a list).
pub fn forget(store: &Path, blake3: &str) {
    let _ = std::fs::remove_file(path(store, blake3));
}

/// The record of the stored file `blake3`, if one was kept.
pub fn read(store: &Path, blake3: &str) -> Option<FetchRecord> {
    serde_json::from_slice(&std::fs::read(path(store, blake3)).ok()?).ok()
}

/// `YYYY-MM-DD HH:MM UTC` of seconds since 1970 (the civil calendar, from days).
pub fn utc(secs: u64) -> String {
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's days_from_civil, inverted.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rest / 3600, rest % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_795_564_800 + 3_660), "2026-11-25 01:01 UTC");
    }
}
