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
    let written = std::fs::File::create(&tmp).and_then(|mut file| {
        // No fsync: rename is atomic against a killed process, and every reader verifies
        // (blobs by hash, records by parsing), so a torn file after a power loss is only
        // a cache miss.
        file.write_all(bytes)
    });
    let result = written.and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        // A full disk, or a folder where the file should go: the partial copy must not
        // keep the space (or wait for the next make to sweep it).
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_fails_leaves_no_temporary_file() {
        let root = tempfile::tempdir().unwrap();
        // A folder holding a file where the output should go: the rename fails.
        let target = root.path().join("nodes.csv");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        assert!(write_atomic(&target, b"bytes").is_err());
        let left: Vec<_> =
            std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("nodes.csv")], "only the folder is left");
        write_atomic(&root.path().join("ok.csv"), b"bytes").unwrap();
        assert_eq!(std::fs::read(root.path().join("ok.csv")).unwrap(), b"bytes");
    }
}
