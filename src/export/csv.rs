//! CSV of all nodes, one row per node, a header naming every field (RFC 4180 quoting).
//!
//! Rows come from [`NodeRecord`]'s `Serialize` implementation through a small serializer
//! that writes fields straight into the output, so the columns always follow the record's
//! fields (names and order) without building a JSON value per row.

use serde::Serialize;
use serde::ser::{self, Impossible};

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
    let mut header = Vec::new();
    if let Some(first) = records.first() {
        let mut ignored = Vec::new();
        let writer = RowWriter { out: &mut ignored, delimiter, names: Some(&mut header), fields: 0 };
        first.serialize(writer).expect("records serialize");
    }
    // Rows are written in chunks on all cores, then joined into one buffer of the exact
    // size (a single growing buffer copied and faulted in megabytes twice).
    use rayon::prelude::*;
    let chunks: Vec<Vec<u8>> = records
        .par_chunks(1024)
        .map(|chunk| {
            let mut out = Vec::with_capacity(chunk.len() * 320);
            for record in chunk {
                record.serialize(RowWriter { out: &mut out, delimiter, names: None, fields: 0 }).expect("records serialize");
                out.extend_from_slice(b"\r\n");
            }
            out
        })
        .collect();
    let mut out = Vec::with_capacity(chunks.iter().map(Vec::len).sum::<usize>() + header.len() * 24);
    if !records.is_empty() {
        for (n, name) in header.iter().enumerate() {
            if n > 0 {
                out.push(delimiter);
            }
            push_field(&mut out, name.as_bytes(), delimiter);
        }
        out.extend_from_slice(b"\r\n");
    }
    for chunk in chunks {
        out.extend_from_slice(&chunk);
    }
    out
}

/// Appends `field`, quoted when it holds the delimiter, a quote or a line break.
fn push_field(out: &mut Vec<u8>, field: &[u8], delimiter: u8) {
    if field.iter().any(|&b| b == delimiter || b == b'"' || b == b'\n' || b == b'\r') {
        out.push(b'"');
        for &b in field {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(field);
    }
}

/// Scalar methods of [`FieldWriter`] that write the number as JSON does.
macro_rules! numbers_as_json {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<(), RowError> {
            self.json(v)
        })*
    };
}

/// Scalar methods of [`RowWriter`]: a row must be a struct.
macro_rules! scalars_are_not_rows {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, _: $t) -> Result<(), RowError> {
            Err(not_a_row())
        })*
    };
}

/// Why a value could not be written as a CSV row (only nested structures, which a flat
/// record does not have).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RowError(String);

impl ser::Error for RowError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        RowError(msg.to_string())
    }
}

/// Serializes one flat struct as one CSV row (without the line end), collecting the
/// field names when asked.
struct RowWriter<'a> {
    out: &'a mut Vec<u8>,
    delimiter: u8,
    names: Option<&'a mut Vec<&'static str>>,
    fields: usize,
}

impl<'a> ser::SerializeStruct for RowWriter<'a> {
    type Ok = ();
    type Error = RowError;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), RowError> {
        if self.fields > 0 {
            self.out.push(self.delimiter);
        }
        self.fields += 1;
        if let Some(names) = self.names.as_deref_mut() {
            names.push(key);
        }
        value.serialize(FieldWriter { out: self.out, delimiter: self.delimiter })
    }

    fn end(self) -> Result<(), RowError> {
        Ok(())
    }
}

/// Writes one scalar field: text as is (quoted when needed), numbers and booleans as
/// JSON writes them, `None` as an empty field.
struct FieldWriter<'a> {
    out: &'a mut Vec<u8>,
    delimiter: u8,
}

impl FieldWriter<'_> {
    fn json<T: Serialize>(self, value: T) -> Result<(), RowError> {
        serde_json::to_writer(&mut *self.out, &value).map_err(|e| RowError(e.to_string()))
    }

    fn nested(what: &str) -> RowError {
        RowError(format!("a CSV field cannot hold a {what}"))
    }
}

impl<'a> ser::Serializer for FieldWriter<'a> {
    type Ok = ();
    type Error = RowError;
    type SerializeSeq = Impossible<(), RowError>;
    type SerializeTuple = Impossible<(), RowError>;
    type SerializeTupleStruct = Impossible<(), RowError>;
    type SerializeTupleVariant = Impossible<(), RowError>;
    type SerializeMap = Impossible<(), RowError>;
    type SerializeStruct = Impossible<(), RowError>;
    type SerializeStructVariant = Impossible<(), RowError>;

    fn serialize_bool(self, v: bool) -> Result<(), RowError> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    numbers_as_json!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64, serialize_u8: u8,
        serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_f32: f32, serialize_f64: f64);
    fn serialize_char(self, v: char) -> Result<(), RowError> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), RowError> {
        push_field(self.out, v.as_bytes(), self.delimiter);
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), RowError> {
        Err(Self::nested("byte string"))
    }
    fn serialize_none(self) -> Result<(), RowError> {
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), RowError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), RowError> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), RowError> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), RowError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<(), RowError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), RowError> {
        Err(Self::nested("enum with data"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, RowError> {
        Err(Self::nested("list"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, RowError> {
        Err(Self::nested("tuple"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, RowError> {
        Err(Self::nested("tuple"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, RowError> {
        Err(Self::nested("tuple"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, RowError> {
        Err(Self::nested("map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, RowError> {
        Err(Self::nested("struct"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, RowError> {
        Err(Self::nested("struct"))
    }
}

/// The row-level serializer: only a struct is a row.
impl<'a> ser::Serializer for RowWriter<'a> {
    type Ok = ();
    type Error = RowError;
    type SerializeSeq = Impossible<(), RowError>;
    type SerializeTuple = Impossible<(), RowError>;
    type SerializeTupleStruct = Impossible<(), RowError>;
    type SerializeTupleVariant = Impossible<(), RowError>;
    type SerializeMap = Impossible<(), RowError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), RowError>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, RowError> {
        Ok(self)
    }

    scalars_are_not_rows!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_f32: f32, serialize_f64: f64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8]);
    fn serialize_none(self) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_unit(self) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), RowError> {
        Err(not_a_row())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, RowError> {
        Err(not_a_row())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, RowError> {
        Err(not_a_row())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, RowError> {
        Err(not_a_row())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, RowError> {
        Err(not_a_row())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, RowError> {
        Err(not_a_row())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, RowError> {
        Err(not_a_row())
    }
}

fn not_a_row() -> RowError {
    RowError("a CSV row is a struct".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Sample {
        text: String,
        missing: Option<String>,
        count: u64,
        pct: Option<f64>,
        flag: bool,
    }

    #[test]
    fn fields_are_written_and_quoted_like_rfc_4180() {
        let sample = Sample { text: "Ruy \"Lopez\", Open".into(), missing: None, count: 7, pct: Some(50.0), flag: true };
        let mut row = Vec::new();
        let mut names = Vec::new();
        sample.serialize(RowWriter { out: &mut row, delimiter: b',', names: Some(&mut names), fields: 0 }).unwrap();
        assert_eq!(String::from_utf8(row).unwrap(), "\"Ruy \"\"Lopez\"\", Open\",,7,50.0,true");
        assert_eq!(names, ["text", "missing", "count", "pct", "flag"]);
    }

    #[test]
    fn a_non_struct_is_not_a_row() {
        let mut row = Vec::new();
        assert!(vec![1, 2].serialize(RowWriter { out: &mut row, delimiter: b',', names: None, fields: 0 }).is_err());
    }
}
