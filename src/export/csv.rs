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
