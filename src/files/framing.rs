//! The header of okb's binary files — counts files (`.okbc`), engine queue files
//! (`.okbq`) and results files (`.okbr`):
//!
//! | bytes | content |
//! |---|---|
//! | 0–7 | the magic, eight ASCII letters naming the kind |
//! | 8–11 | the format version, u32 little-endian |
//! | 12– | the body: a zstd frame of the postcard encoding of the kind's value |
//!
//! A file of another kind, or of another version, is refused before its body is read,
//! with a message that says what it is not and which command makes one.

/// A kind of okb binary file.
#[derive(Copy, Clone, Debug)]
pub struct Frame {
    /// The first eight bytes.
    pub magic: &'static [u8; 8],
    /// The format version written, and the only one read.
    pub version: u32,
    /// What it is, in words (`an okb counts file`).
    pub what: &'static str,
    /// The command that makes it (`okb count`).
    pub made_by: &'static str,
}

impl Frame {
    /// Bytes of the header; the body starts after them.
    pub const LEN: usize = 12;

    /// The header of a file of this kind.
    pub fn header(&self) -> [u8; Frame::LEN] {
        let mut header = [0; Frame::LEN];
        header[..8].copy_from_slice(self.magic);
        header[8..].copy_from_slice(&self.version.to_le_bytes());
        header
    }

    /// Checks that `bytes` start with this kind's header; the error says what is wrong.
    pub fn check(&self, bytes: &[u8]) -> Result<(), String> {
        if bytes.len() < Frame::LEN || &bytes[..8] != self.magic {
            let magic = String::from_utf8_lossy(self.magic);
            return Err(format!(
                "not {} (it does not start with {magic}); make one with `{}`",
                self.what, self.made_by
            ));
        }
        let version = u32::from_le_bytes(bytes[8..Frame::LEN].try_into().expect("four bytes"));
        if version != self.version {
            return Err(format!(
                "format version {version}; this okb reads version {} of {}",
                self.version, self.what
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: Frame =
        Frame { magic: b"OKBTESTS", version: 2, what: "a test file", made_by: "a test" };

    #[test]
    fn a_header_is_checked_for_kind_and_version() {
        let mut bytes = KIND.header().to_vec();
        bytes.extend_from_slice(b"body");
        assert_eq!(KIND.check(&bytes), Ok(()));
        assert!(
            KIND.check(b"OKBTEST").unwrap_err().contains(
                "not a test file (it does not start with OKBTESTS); make one with `a test`"
            )
        );
        let old = Frame { version: 1, ..KIND }.header();
        assert_eq!(
            KIND.check(&old).unwrap_err(),
            "format version 1; this okb reads version 2 of a test file"
        );
    }
}
