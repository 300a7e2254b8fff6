//! One record per position for the server's node answers on a large store:
//! `node_answers` holds each node's `GET /node/fen` answer, its JSON as [`read`] makes it,
//! zstd-compressed with the store's [`Dictionary`] (`node_answers_dictionary`), under
//! the node's 128-bit position key (two integer columns, indexed).
//!
//! Why: on a store far larger than the page cache, an answer built from the relational
//! tables reads the position index (text keys), the node row, its entry, its edges, each
//! child's row and the index of its parents: five to eight random pages. Here a lookup
//! descends one integer index, small enough to stay cached, and reads one row. The table
//! is written only for stores over a node count (`[store] answers_above`, by default the
//! size above which `okb serve` no longer holds the graph in memory); smaller stores keep
//! it empty and are answered from the tables (or from memory) as before.
//!
//! The answers are made by [`Store::nodes_by_id`] from the finished store, so they are the
//! bytes the tables give, whatever wrote the tables.

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, sql};
use crate::position::PositionKey;

/// The node count above which a store is large: `okb serve` answers it from the file
/// rather than holding its graph in memory (`--in-memory-nodes`), so the store step
/// writes its node answers (`[store] answers_above`).
pub const LARGE_STORE_NODES: u64 = 500_000;

/// The zstd level of the answers: a node answer is about 1–3 KB of JSON, compressed in a
/// few microseconds at this level.
pub(super) const LEVEL: i32 = 3;

/// The two integer columns of a position key: its high and low 64 bits.
pub(super) fn columns(key: PositionKey) -> (i64, i64) {
    ((key.0 >> 64) as u64 as i64, key.0 as u64 as i64)
}

/// The zstd dictionary every answer of a store is compressed with, trained on the first
/// nodes' answers: the JSON keys and the common values repeat in every answer, so a
/// dictionary shrinks an answer about threefold more than zstd alone (a smaller store,
/// and fewer pages for the page cache to hold).
pub struct Dictionary {
    /// Empty: the answers are plain zstd frames (a store too small to train on).
    prepared: Option<zstd::dict::DecoderDictionary<'static>>,
}

impl Dictionary {
    /// The dictionary of `bytes` (empty: none).
    pub fn new(bytes: &[u8]) -> Dictionary {
        let prepared = (!bytes.is_empty()).then(|| zstd::dict::DecoderDictionary::copy(bytes));
        Dictionary { prepared }
    }

    /// The JSON of compressed answer `blob` ([`lookup`]) of the store at `path`.
    pub fn answer(&self, blob: &[u8], path: &str) -> Result<Vec<u8>, StoreError> {
        self.decompress(blob).map_err(|e| {
            StoreError::Corrupt(format!("{path}: a node answer does not decompress: {e}"))
        })
    }

    /// The JSON of compressed answer `blob`, decompressed by this thread's context: a
    /// context made per answer cost a tenth of a large store's lookup time.
    fn decompress(&self, blob: &[u8]) -> std::io::Result<Vec<u8>> {
        thread_local! {
            static CONTEXT: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> =
                std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
        }
        let size = zstd::zstd_safe::get_frame_content_size(blob)
            .ok()
            .flatten()
            .ok_or_else(|| std::io::Error::other("no content size in the frame"))?;
        let mut json = Vec::with_capacity(size as usize);
        let done = CONTEXT.with_borrow_mut(|context| match &self.prepared {
            Some(dict) => context.decompress_using_ddict(&mut json, blob, dict.as_ddict()),
            None => context.decompress(&mut json, blob),
        });
        match done {
            Ok(n) if n as u64 == size => Ok(json),
            Ok(n) => Err(std::io::Error::other(format!("{n} bytes where the frame says {size}"))),
            Err(code) => Err(std::io::Error::other(zstd::zstd_safe::get_error_name(code))),
        }
    }
}

/// The dictionary of the store on `conn` if it has node answers; `None` for a store of an
/// older schema (no table) or a small one (an empty table). The table is written whole or
/// not at all.
pub fn dictionary(conn: &Connection, path: &str) -> Result<Option<Dictionary>, StoreError> {
    let bytes = super::single_blob(conn, path, "node_answers_dictionary", "dictionary")?;
    Ok(bytes.map(|b| Dictionary::new(&b)))
}

/// The compressed `GET /node/fen` answer of the position keyed `key`, if the store has
/// it ([`Dictionary::answer`] gives its JSON): a cache keeps answers in this form, about
/// a tenth of their JSON's size, so that it holds ten times more of them.
pub fn lookup(
    conn: &Connection,
    path: &str,
    key: PositionKey,
) -> Result<Option<Vec<u8>>, StoreError> {
    let (high, low) = columns(key);
    let mut stmt = conn
        .prepare_cached("SELECT answer FROM node_answers WHERE key = ?1 AND check_key = ?2")
        .map_err(sql(path))?;
    stmt.query_row(params![high, low], |r| r.get(0)).optional().map_err(sql(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_splits_into_its_high_and_low_halves() {
        let key = PositionKey(0x8000_0000_0000_0001_FFFF_FFFF_FFFF_FFFE);
        assert_eq!(columns(key), (i64::MIN + 1, -2));
        assert_eq!(columns(PositionKey(7)), (0, 7));
    }

    /// Answers compressed with a trained dictionary, or with none (a store too small to
    /// train on), read back as they were written.
    #[test]
    fn answers_read_back_with_and_without_a_dictionary() {
        let answers: Vec<Vec<u8>> = (0..2000)
            .map(|i| {
                format!(r#"{{"node_id":"n{i}","game_count":{},"children":[]}}"#, i * 7).into_bytes()
            })
            .collect();
        let trained = zstd::dict::from_samples(&answers, 4096).unwrap();
        for dictionary in [Vec::new(), trained] {
            let mut compressor =
                zstd::bulk::Compressor::with_dictionary(LEVEL, &dictionary).unwrap();
            let reader = Dictionary::new(&dictionary);
            for answer in answers.iter().step_by(97) {
                let blob = compressor.compress(answer).unwrap();
                assert_eq!(&reader.decompress(&blob).unwrap(), answer);
            }
        }
        assert!(Dictionary::new(&[]).decompress(b"not zstd").is_err());
    }
}
