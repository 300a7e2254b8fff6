//! `kind = "lichess-db"`: months of Lichess's database dumps, found by its published
//! layout (`<base>/<variant>/list.txt`, `sha256sums.txt`, and
//! `lichess_db_<variant>_rated_<YYYY-MM>.pgn.zst`), each verified by the published
//! SHA-256 as it arrives, then pinned like a collection: the source's `blake3` is the
//! BLAKE3 of its manifest (one `url<TAB>bytes<TAB>blake3` line per month, in order).
//!
//! What a fetch learned is kept in `sources/lichess-db/<file>.json` (a [`Record`]): the
//! month's hashes, when it was fetched, and upstream's Last-Modified and ETag. Those
//! times describe the source, never a build output.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::collection::Entry;
use super::{Resolver, SourceError};
use crate::files::FileStates;

/// Lichess's database server.
pub const DEFAULT_BASE: &str = "https://database.lichess.org";

/// One `[sources.X]` of kind lichess-db, months expanded.
#[derive(Clone, Debug)]
pub struct LichessDb {
    /// The source's name.
    pub name: String,
    /// The server (`url`, default [`DEFAULT_BASE`]), without a trailing slash.
    pub base: String,
    /// `standard`, `chess960`, …
    pub variant: String,
    /// `YYYY-MM`, in the order given, ranges expanded.
    pub months: Vec<String>,
}

/// What one month's fetch learned (kept beside the store).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Where it came from.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// The published SHA-256 it was verified against.
    pub sha256: String,
    /// Its BLAKE3 (its name in the store).
    pub blake3: String,
    /// When it was fetched: seconds since 1970 (UTC).
    pub fetched_at: u64,
    /// Upstream's `Last-Modified`, when sent.
    pub last_modified: Option<String>,
    /// Upstream's `ETag`, when sent.
    pub etag: Option<String>,
}

/// A month ready to read: its line of the manifest, its file and its record.
#[derive(Clone, Debug)]
pub struct Month {
    /// `lichess_db_standard_rated_2013-01.pgn.zst`.
    pub file_name: String,
    /// Its manifest line.
    pub entry: Entry,
    /// The verified file (`sources/<blake3>`).
    pub path: PathBuf,
    /// What its fetch learned.
    pub record: Record,
    /// Fetched in this run (not found in the store).
    pub fetched_now: bool,
}

/// Expands `["2013-01", "2024-03..2024-05"]` to every month, in order.
pub fn expand_months(specs: &[String]) -> Result<Vec<String>, String> {
    let mut months = Vec::new();
    for spec in specs {
        let (from, to) = spec.split_once("..").unwrap_or((spec, spec));
        let (mut year, mut month) = parse_month(from)?;
        let end = parse_month(to)?;
        if end < (year, month) {
            return Err(format!("months: {spec:?} ends before it starts"));
        }
        while (year, month) <= end {
            months.push(format!("{year:04}-{month:02}"));
            (year, month) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
        }
    }
    Ok(months)
}

fn parse_month(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("months: {text:?} is not YYYY-MM");
    let (year, month) = text.split_once('-').ok_or_else(bad)?;
    let (year, month): (u32, u32) =
        (year.parse().map_err(|_| bad())?, month.parse().map_err(|_| bad())?);
    if year.to_string().len() != 4 || !(1..=12).contains(&month) || text.len() != 7 {
        return Err(bad());
    }
    Ok((year, month))
}

impl LichessDb {
    /// The dump's file name for `month`.
    pub fn file_name(&self, month: &str) -> String {
        format!("lichess_db_{}_rated_{month}.pgn.zst", self.variant)
    }

    /// The URL of a file of the variant's folder.
    pub fn url(&self, file: &str) -> String {
        format!("{}/{}/{file}", self.base, self.variant)
    }

    /// The manifest text of `months` and its BLAKE3 (the source's pin).
    pub fn manifest(months: &[Month]) -> (String, String) {
        let mut text = String::from("url\tbytes\tblake3\n");
        for m in months {
            text.push_str(&format!("{}\t{}\t{}\n", m.entry.url, m.entry.size, m.entry.blake3));
        }
        let pin = blake3::hash(text.as_bytes()).to_hex().to_string();
        (text, pin)
    }
}

/// Where a month's record is kept.
pub fn record_path(store: &Path, file_name: &str) -> PathBuf {
    store.join("lichess-db").join(format!("{file_name}.json"))
}

/// The record of `file_name`, when its file is in the store with the recorded hash.
pub fn stored(store: &Path, file_name: &str, files: &mut FileStates) -> Option<(PathBuf, Record)> {
    let record: Record =
        serde_json::from_slice(&std::fs::read(record_path(store, file_name)).ok()?).ok()?;
    let path = store.join(&record.blake3);
    files.matches(&path, &record.blake3).then_some((path, record))
}

/// The published list and sums of a variant, fetched once per run.
struct Published {
    list: String,
    sums: String,
}

/// Freshness lines of `db`: one per month, when it was fetched and what upstream said.
pub fn freshness(db: &LichessDb, store: &Path) -> Vec<String> {
    let describe = |month: &String| {
        let file_name = db.file_name(month);
        let record: Option<Record> = std::fs::read(record_path(store, &file_name))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        match record.and_then(|r| super::fetched::read(store, &r.blake3)) {
            Some(fetched) => format!("{month}: {}", fetched.describe()),
            None => format!("{month}: not fetched (`okb fetch` gets it)"),
        }
    };
    db.months.iter().map(describe).collect()
}

impl Resolver {
    /// Every month of `db`, from the store or downloaded (resuming, verified by the
    /// published SHA-256); `pin`, when given, must be the months' manifest hash.
    pub fn resolve_lichess_db(
        &self,
        db: &LichessDb,
        pin: Option<&str>,
        files: &mut FileStates,
    ) -> Result<Vec<Month>, SourceError> {
        let mut published: Option<Published> = None;
        let mut months = Vec::with_capacity(db.months.len());
        for month in &db.months {
            let file_name = db.file_name(month);
            let (path, record, fetched_now) = match stored(&self.store, &file_name, files) {
                Some((path, record)) => (path, record, false),
                None => {
                    let (path, record) = self.fetch_month(db, &file_name, &mut published)?;
                    files.record(&path, &record.blake3);
                    (path, record, true)
                }
            };
            let entry =
                Entry { url: record.url.clone(), size: record.size, blake3: record.blake3.clone() };
            months.push(Month { file_name, entry, path, record, fetched_now });
        }
        let (_, actual) = LichessDb::manifest(&months);
        if let Some(pin) = pin
            && pin != actual
        {
            let location = format!(
                "the manifest of months {} from {}",
                db.months.join(", "),
                db.url("list.txt")
            );
            return Err(SourceError::Mismatch {
                name: db.name.clone(),
                location,
                expected: pin.into(),
                actual,
            });
        }
        Ok(months)
    }

    /// Downloads one month (listed and summed by `published`, fetched first if needed).
    fn fetch_month(
        &self,
        db: &LichessDb,
        file_name: &str,
        published: &mut Option<Published>,
    ) -> Result<(PathBuf, Record), SourceError> {
        let url = db.url(file_name);
        let fail = |reason: String| SourceError::Download {
            name: db.name.clone(),
            url: url.clone(),
            reason,
        };
        if self.offline {
            let why = format!(
                "{file_name} was never fetched, and --offline (or --locked) forbids downloading (`okb fetch` without --offline gets it)"
            );
            return Err(SourceError::NotFound {
                name: db.name.clone(),
                mirrors: self.describe_mirrors(),
                why,
            });
        }
        if published.is_none() {
            *published = Some(self.published(db)?);
        }
        let listed = published.as_ref().expect("fetched above");
        if !listed.list.lines().any(|l| l.trim().rsplit('/').next() == Some(file_name)) {
            return Err(fail(format!(
                "{file_name} is not in {} (not published yet, or no such month)",
                db.url("list.txt")
            )));
        }
        let sha256 = listed
            .sums
            .lines()
            .find_map(|l| {
                l.split_once(char::is_whitespace)
                    .filter(|(_, f)| f.trim().trim_start_matches('*') == file_name)
                    .map(|(s, _)| s.to_lowercase())
            })
            .ok_or_else(|| {
                fail(format!("{file_name} has no line in {}", db.url("sha256sums.txt")))
            })?;
        let fetched =
            super::resume::download(&self.store, &url, file_name, &sha256).map_err(&fail)?;
        let resumed = if fetched.resumed_from > 0 {
            format!(", resumed at byte {}", fetched.resumed_from)
        } else {
            String::new()
        };
        crate::progress::println(&format!(
            "{:>12} {file_name}: {} bytes received{resumed}, sha256 verified",
            "Downloaded", fetched.received
        ));
        let fetched_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let record = Record {
            url: url.clone(),
            size: fetched.size,
            sha256,
            blake3: fetched.blake3,
            fetched_at,
            last_modified: fetched.last_modified,
            etag: fetched.etag,
        };
        let json = serde_json::to_vec_pretty(&record).map_err(|e| fail(e.to_string()))?;
        let upstream = super::fetched::FetchRecord {
            from: url.clone(),
            fetched_at,
            last_modified: record.last_modified.clone(),
            etag: record.etag.clone(),
        };
        super::fetched::write(&self.store, &record.blake3, &upstream);
        let at = record_path(&self.store, file_name);
        crate::files::write_atomic(&at, &json)
            .map_err(|e| fail(format!("{}: {e}", at.display())))?;
        Ok((fetched.path, record))
    }

    /// The variant's `list.txt` and `sha256sums.txt`.
    fn published(&self, db: &LichessDb) -> Result<Published, SourceError> {
        let get = |file: &str| {
            let url = db.url(file);
            let (path, hash) = self.download(&db.name, &url, None)?;
            let text = std::fs::read_to_string(&path).map_err(|source| SourceError::Io {
                name: db.name.clone(),
                path: path.display().to_string(),
                source,
            });
            // Lists change every month: not kept in the store.
            let _ = std::fs::remove_file(&path);
            super::fetched::forget(&self.store, &hash);
            text
        };
        Ok(Published { list: get("list.txt")?, sums: get("sha256sums.txt")? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_and_ranges_expand_in_order() {
        let months = expand_months(&["2013-01".into(), "2023-11..2024-02".into()]).unwrap();
        assert_eq!(months, ["2013-01", "2023-11", "2023-12", "2024-01", "2024-02"]);
        assert!(
            expand_months(&["2024-13".into()]).unwrap_err().contains("\"2024-13\" is not YYYY-MM")
        );
        assert!(
            expand_months(&["2024-03..2024-01".into()])
                .unwrap_err()
                .contains("ends before it starts")
        );
    }
}
