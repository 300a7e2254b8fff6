//! Writing files whole or not at all.

use std::io::Write;
use std::path::Path;

/// A file to write, relative to a target path (a step's export files, a command's output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportFile {
    /// Relative path (empty: the target path itself is the file).
    pub name: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("")))?;
    let tmp = super::temp::for_file(path);
    {
        let mut file = std::fs::File::create(&tmp)?;
        // No fsync: rename is atomic against a killed process, and every reader verifies
        // (blobs by hash, records by parsing), so a torn file after a power loss is only
        // a cache miss.
        file.write_all(bytes)?;
    }
    std::fs::rename(&tmp, path)
}
