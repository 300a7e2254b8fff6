//! Writing files whole or not at all.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// A file that replaces `path` whole or not at all, written as a stream: the bytes go to
/// a temporary file beside it (named by [`super::temp`], so an interrupted okb's is swept),
/// renamed over `path` by [`AtomicFile::commit`]. Dropped uncommitted (an error on the
/// way, a full disk), it removes its temporary file at once, giving the space back.
pub struct AtomicFile {
    target: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts replacing `path`, creating its folder if needed.
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("")))?;
        let tmp = super::temp::for_file(path);
        let file = File::create(&tmp)?;
        let out = Some(BufWriter::with_capacity(1 << 20, file));
        Ok(AtomicFile { target: path.to_path_buf(), tmp, out })
    }

    /// The temporary file being written (for messages).
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Flushes the bytes written so far and syncs them to disk, for a file whose loss after
    /// a power cut costs more than writing it again would.
    pub fn sync_data(&mut self) -> std::io::Result<()> {
        let out = self.out.as_mut().expect("an uncommitted file has its writer");
        out.flush()?;
        out.get_ref().sync_data()
    }

    /// Finishes the file and renames it over the target.
    pub fn commit(mut self) -> std::io::Result<()> {
        let out = self.out.take().expect("an uncommitted file has its writer");
        // No fsync: rename is atomic against a killed process, and every reader verifies
        // (blobs by hash, records by parsing), so a torn file after a power loss is only
        // a cache miss.
        out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        std::fs::rename(&self.tmp, &self.target)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.as_mut().expect("an uncommitted file has its writer").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.as_mut().expect("an uncommitted file has its writer").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Committed: the temporary file was renamed (or the rename failed: remove it too).
        drop(self.out.take());
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Keeps `file` (if it exists) as `kept` before a make replaces it, so `okb diff` can
/// compare against it: a hard link, as okb replaces files by renaming a new one over
/// them (a copy where links are not possible).
pub fn keep_previous(file: &Path, kept: &Path) -> std::io::Result<()> {
    if !file.exists() {
        return Ok(());
    }
    if let Some(folder) = kept.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let _ = std::fs::remove_file(kept);
    std::fs::hard_link(file, kept).or_else(|_| std::fs::copy(file, kept).map(|_| ()))
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

    #[test]
    fn a_stream_abandoned_part_way_keeps_the_old_file_and_leaves_no_temporary_one() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out.pgn");
        std::fs::write(&target, b"old").unwrap();
        let mut file = AtomicFile::create(&target).unwrap();
        file.write_all(b"half of the new").unwrap();
        assert!(file.temp_path().exists());
        drop(file);
        let left: Vec<_> =
            std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("out.pgn")]);
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        let mut file = AtomicFile::create(&target).unwrap();
        file.write_all(b"new").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
    }
}
