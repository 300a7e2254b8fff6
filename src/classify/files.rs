//! Classifying PGN files: chunks of whole games are read on all cores, each game's tags
//! rewritten, and the chunks written out in input order, so the output is the same
//! whatever the thread count. Games that cannot be classified (no known position, a
//! non-standard start, an illegal move) are copied through unchanged and counted.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::Serialize;

use super::Classifier;
use crate::games::GamesError;
use crate::games::input::{Chunk, ChunkBatches, DEFAULT_CHUNK_BYTES};
use crate::games::pgn::{ChunkOrigin, GameEnd, GameVisitor, IdentityKeys, read_chunk_at};
use crate::games::report::BadGames;

/// What a classification run did.
#[derive(Debug, Default, Serialize)]
pub struct ClassifyReport {
    /// Games seen (bad ones included).
    pub games: u64,
    /// Games given an opening.
    pub classified: u64,
    /// Readable games that reach no known position (or start from a set-up position).
    pub unclassified: u64,
    /// Games copied through unchanged because they could not be read, by reason.
    pub bad: BadGames,
    /// Classified games per ECO letter.
    pub by_volume: BTreeMap<char, u64>,
}

impl ClassifyReport {
    fn merge(&mut self, other: &ClassifyReport) {
        self.games += other.games;
        self.classified += other.classified;
        self.unclassified += other.unclassified;
        self.bad.merge(&other.bad);
        for (k, v) in &other.by_volume {
            *self.by_volume.entry(*k).or_default() += v;
        }
    }
}

/// Classifies the games of one chunk; returns the rewritten text and the counts.
fn classify_chunk(classifier: &Classifier, file: &str, chunk: &Chunk) -> (Vec<u8>, ClassifyReport) {
    let mut report = ClassifyReport::default();
    let origin = ChunkOrigin::of(file, chunk);
    let mut visitor = GameVisitor::<IdentityKeys>::new(classifier.depth(), None);
    // (start offset, known index and ply) of every readable or filtered game.
    let mut games: Vec<(usize, Option<(u32, usize)>)> = Vec::new();
    report.games =
        read_chunk_at(&chunk.data, origin, &mut visitor, &mut report.bad, |v, end, offset| {
            let hit = match end {
                GameEnd::Done => classifier.lookup(&v.keys),
                _ => None,
            };
            games.push((offset, hit));
        });
    let data = &chunk.data;
    let mut out = Vec::with_capacity(data.len() + data.len() / 16);
    // Bytes before the first readable game (stray text, bad games) pass through.
    out.extend_from_slice(&data[..games.first().map_or(data.len(), |g| g.0)]);
    for (i, (start, hit)) in games.iter().enumerate() {
        let end = games.get(i + 1).map_or(data.len(), |g| g.0);
        let text = &data[*start..end];
        match hit.map(|(index, ply)| classifier.classification(index, ply)) {
            Some(c) => {
                report.classified += 1;
                *report.by_volume.entry(c.eco.chars().next().unwrap_or('?')).or_default() += 1;
                super::tags::rewrite(text, [Some(c.eco), Some(c.opening), c.variation], &mut out);
            }
            None => {
                report.unclassified += 1;
                out.extend_from_slice(text);
            }
        }
    }
    (out, report)
}

/// Classifies every game of `paths` (plain or compressed PGN, in the order given) and
/// writes them to `out` with ECO/Opening/Variation tags rewritten.
pub fn classify_files(
    classifier: &Classifier,
    paths: &[PathBuf],
    out: &mut dyn Write,
) -> Result<ClassifyReport, GamesError> {
    let mut report = ClassifyReport::default();
    let window = 2 * rayon::current_num_threads().max(1);
    let write_err = |source| GamesError::Write { path: PathBuf::from("<output>"), source };
    let mut batches = ChunkBatches::new(paths, DEFAULT_CHUNK_BYTES, window);
    while let Some(batch) = batches.next_batch()? {
        let outputs: Vec<(Vec<u8>, ClassifyReport)> =
            batch.par_iter().map(|(file, chunk)| classify_chunk(classifier, file, chunk)).collect();
        for (bytes, part) in outputs {
            out.write_all(&bytes).map_err(write_err)?;
            report.merge(&part);
        }
    }
    out.flush().map_err(write_err)?;
    Ok(report)
}
