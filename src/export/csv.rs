//! CSV of all nodes, one row per node, a header naming every field (RFC 4180 quoting,
//! CRLF line ends), written by the `csv` crate from [`NodeRecord`]'s `Serialize`
//! implementation, so the columns always follow the record's fields (names and order).

use rayon::prelude::*;

use crate::engine::Annotations;
use crate::record::NodeRecord;
use crate::tree::Tree;

/// Renders every node of `tree` (with engine annotations and structure tags, if any) as
/// CSV with `delimiter`.
pub fn render(
    tree: &Tree,
    annotations: Option<&Annotations>,
    structures: Option<&crate::structure::StructureTags>,
    delimiter: u8,
) -> Vec<u8> {
    render_records(&NodeRecord::tagged(tree, annotations, structures), delimiter)
}

/// The delimiter `text` names: one ASCII character (one byte).
pub fn delimiter(text: &str) -> Result<u8, &'static str> {
    match text.as_bytes() {
        [byte] if byte.is_ascii() => Ok(*byte),
        _ => Err("delimiter must be one ASCII character"),
    }
}

/// Renders `records` (see [`NodeRecord::tagged`]) as CSV with `delimiter`.
pub fn render_records(records: &[NodeRecord], delimiter: u8) -> Vec<u8> {
    // Rows are written in chunks on all cores (the first chunk with the header), then
    // joined into one buffer of the exact size.
    let chunks: Vec<Vec<u8>> = records
        .par_chunks(1024)
        .enumerate()
        .map(|(n, chunk)| {
            let mut writer = csv::WriterBuilder::new()
                .delimiter(delimiter)
                .terminator(csv::Terminator::CRLF)
                .has_headers(n == 0)
                // Rows run to about 350 bytes on a deep tree: room for them without a
                // regrowth.
                .from_writer(Vec::with_capacity(chunk.len() * 400));
            for record in chunk {
                writer.serialize(record).expect("a node record is a flat struct");
            }
            writer.into_inner().expect("writing to memory cannot fail")
        })
        .collect();
    let mut out = Vec::with_capacity(chunks.iter().map(Vec::len).sum());
    for chunk in chunks {
        out.extend_from_slice(&chunk);
    }
    out
}

/// Writes CSV rows one record at a time, as [`render_records`] does for all of them at
/// once: the same header, quoting and line ends, so a file streamed from a store equals
/// the export step's (no header without a row, as there).
pub struct RowWriter<W: std::io::Write> {
    writer: csv::Writer<W>,
    /// Rows written.
    pub rows: u64,
}

impl<W: std::io::Write> RowWriter<W> {
    /// Starts a table on `out` with `delimiter`.
    pub fn new(out: W, delimiter: u8) -> RowWriter<W> {
        let writer = csv::WriterBuilder::new()
            .delimiter(delimiter)
            .terminator(csv::Terminator::CRLF)
            .has_headers(true)
            .from_writer(out);
        RowWriter { writer, rows: 0 }
    }

    /// Writes `record`'s row (after the header, before the first).
    pub fn row(&mut self, record: &NodeRecord) -> std::io::Result<()> {
        self.rows += 1;
        self.writer.serialize(record).map_err(std::io::Error::from)
    }

    /// Flushes the rows and hands back the output.
    pub fn finish(self) -> std::io::Result<W> {
        self.writer.into_inner().map_err(|e| e.into_error())
    }
}
