//! CSV of all nodes, one row per node, a header naming every field (RFC 4180 quoting).

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
    let mut records = NodeRecord::all(tree, annotations);
    if let Some(tags) = structures {
        tags.apply(&mut records);
    }
    let mut out = Vec::with_capacity(records.len() * 200);
    let mut first = true;
    for record in &records {
        let value = serde_json::to_value(record).expect("records serialize");
        let map = value.as_object().expect("a record is an object");
        if first {
            let header: Vec<&str> = map.keys().map(String::as_str).collect();
            write_row(&mut out, header.iter().map(|h| h.to_string()), delimiter);
            first = false;
        }
        write_row(
            &mut out,
            map.values().map(|v| match v {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            delimiter,
        );
    }
    out
}

fn write_row(out: &mut Vec<u8>, fields: impl Iterator<Item = String>, delimiter: u8) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(delimiter);
        }
        let needs_quotes = field.bytes().any(|b| b == delimiter || b == b'"' || b == b'\n' || b == b'\r');
        if needs_quotes {
            out.push(b'"');
            out.extend_from_slice(field.replace('"', "\"\"").as_bytes());
            out.push(b'"');
        } else {
            out.extend_from_slice(field.as_bytes());
        }
    }
    out.extend_from_slice(b"\r\n");
}
