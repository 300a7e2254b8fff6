//! The mark of a make under way, which tells the next make that this one was interrupted
//! (so that it sweeps the temporary files a killed make left: [`crate::files::temp`]).
//! The mark keeps an ordinary make from listing every cache folder.

use std::path::Path;

/// The mark of a make under way: the file `make-state` in the cache folder is not empty
/// (the project lock is held meanwhile, so the mark is never a concurrent make's). The
/// file stays between makes, empty: clearing it is a truncation, where creating and
/// removing a file would cost every make, no-op ones included, a new inode.
pub struct UnfinishedMark {
    file: std::fs::File,
}

impl UnfinishedMark {
    /// Sets the mark. Also returns whether it was set already: the previous make in this
    /// cache did not finish.
    pub fn set(cache_dir: &Path) -> std::io::Result<(UnfinishedMark, bool)> {
        use std::io::Write;
        std::fs::create_dir_all(cache_dir)?;
        let mut file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(cache_dir.join("make-state"))?;
        let interrupted = file.metadata()?.len() > 0;
        if !interrupted {
            file.write_all(b"unfinished\n")?;
        }
        Ok((UnfinishedMark { file }, interrupted))
    }

    /// Whether the mark is set in `cache_dir`, without setting it: the last make there
    /// did not finish (it failed, or was killed), or one is under way.
    pub fn is_set(cache_dir: &Path) -> bool {
        std::fs::metadata(cache_dir.join("make-state")).is_ok_and(|m| m.len() > 0)
    }

    /// Clears the mark: the make finished. A make that fails keeps it, so that the next
    /// one sweeps whatever the failure left.
    pub fn clear(self) -> std::io::Result<()> {
        self.file.set_len(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_tells_an_interrupted_make() {
        let root = tempfile::tempdir().unwrap();
        let cache = root.path().join("cache");
        assert!(!UnfinishedMark::is_set(&cache));
        let (mark, interrupted) = UnfinishedMark::set(&cache).unwrap();
        assert!(!interrupted);
        assert!(UnfinishedMark::is_set(&cache));
        mark.clear().unwrap();
        assert!(!UnfinishedMark::is_set(&cache));
        let (_left_set, interrupted) = UnfinishedMark::set(&cache).unwrap();
        assert!(!interrupted);
        let (mark, interrupted) = UnfinishedMark::set(&cache).unwrap();
        assert!(interrupted);
        mark.clear().unwrap();
        assert_eq!(std::fs::metadata(cache.join("make-state")).unwrap().len(), 0);
        let (_mark, interrupted) = UnfinishedMark::set(&cache).unwrap();
        assert!(!interrupted);
    }
}
