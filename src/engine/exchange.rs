//! The framing of the files okb exchanges with other machines for engine work (queue
//! files `.okbq`, results files `.okbr`), the same style as the `.okbc` counts files:
//!
//! | bytes | content |
//! |---|---|
//! | 0–7 | the magic: `OKBQUEUE` or `OKBRSLTS` |
//! | 8–11 | the format version, u32 little-endian |
//! | 12– | one zstd frame with a content checksum, of the postcard encoding of the value ([`super::queue::Queue`], [`super::results::Results`]) |
//!
//! A damaged or truncated file fails the checksum, the frame or the decoding, and the
//! error names the file; nothing of it is used.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A queue or results file that cannot be used, or that does not belong here.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ExchangeError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Not a file of this kind, another version, or damaged.
    #[error("{path}: {message}")]
    #[diagnostic(code(okb::engine::file))]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Results made by an engine or settings other than the pipeline's `[engine]`.
    #[error(
        "{path}: made with {field} = {found}, but the pipeline's [engine] has {field} = {expected}; these results are not the ones `okb make` would compute, so they are not imported"
    )]
    #[diagnostic(
        code(okb::engine::identity),
        help(
            "annotate with the same engine binary and [engine] settings as the pipeline (a queue from `okb engine queue` carries them)"
        )
    )]
    Mismatch {
        /// The file.
        path: String,
        /// The differing field (`binary_blake3`, `multipv`, …).
        field: &'static str,
        /// The file's value.
        found: String,
        /// The pipeline's value.
        expected: String,
    },
}

/// A kind of exchanged file: its magic, version and names for messages.
pub type Kind = crate::files::framing::Frame;

/// The bytes of a file of `kind` holding `value`.
pub fn encode<T: Serialize>(kind: Kind, value: &T) -> Vec<u8> {
    let body = postcard::to_allocvec(value).expect("serializing to memory does not fail");
    let out = kind.header().to_vec();
    let mut encoder = zstd::stream::Encoder::new(out, 3).expect("a zstd encoder in memory");
    encoder.include_checksum(true).expect("setting the zstd checksum flag");
    encoder.write_all(&body).expect("compressing to memory does not fail");
    encoder.finish().expect("compressing to memory does not fail")
}

/// The value in `bytes`, a file of `kind` read from `path` (for messages).
pub fn decode<T: DeserializeOwned>(
    kind: Kind,
    path: &str,
    bytes: &[u8],
) -> Result<T, ExchangeError> {
    let bad = |message: String| ExchangeError::Format { path: path.to_string(), message };
    kind.check(bytes).map_err(bad)?;
    let body = zstd::stream::decode_all(&bytes[crate::files::framing::Frame::LEN..])
        .map_err(|e| bad(format!("damaged or truncated: {e}")))?;
    let (value, rest) =
        postcard::take_from_bytes(&body).map_err(|e| bad(format!("damaged: {e}")))?;
    if !rest.is_empty() {
        return Err(bad(format!("damaged: {} bytes after the end of the data", rest.len())));
    }
    Ok(value)
}

/// Reads the file of `kind` at `path`.
pub fn read<T: DeserializeOwned>(kind: Kind, path: &Path) -> Result<T, ExchangeError> {
    let shown = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|source| ExchangeError::Io { path: shown.clone(), source })?;
    decode(kind, &shown, &bytes)
}

/// Writes `value` as a file of `kind` to `path` (complete or not at all), creating the
/// parent folder.
pub fn write<T: Serialize>(kind: Kind, path: &Path, value: &T) -> Result<(), ExchangeError> {
    let io = |source| ExchangeError::Io { path: path.display().to_string(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    crate::files::write_atomic(path, &encode(kind, value)).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: Kind =
        Kind { magic: b"OKBTESTS", version: 1, what: "a test file", made_by: "a test" };

    #[test]
    fn values_round_trip_and_every_cut_or_flip_is_caught() {
        let value: Vec<(String, u32)> = (0..200).map(|i| (format!("position {i}"), i)).collect();
        let bytes = encode(KIND, &value);
        assert_eq!(decode::<Vec<(String, u32)>>(KIND, "f", &bytes).unwrap(), value);
        for cut in [0, 5, 12, 13, bytes.len() / 2, bytes.len() - 1] {
            let err = decode::<Vec<(String, u32)>>(KIND, "part.okbr", &bytes[..cut])
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("part.okbr: "), "{err}");
        }
        // A flip is an error, or lands in the frame header where it changes nothing read
        // (the window size): never other data.
        for at in 12..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x10;
            if let Ok(read) = decode::<Vec<(String, u32)>>(KIND, "f", &flipped) {
                assert_eq!(read, value, "a flip at byte {at} changed the data unnoticed");
            }
        }
        let mut other = bytes.clone();
        other[8] = 2;
        assert!(
            decode::<Vec<(String, u32)>>(KIND, "f", &other)
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
    }
}
