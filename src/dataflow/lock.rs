//! One `okb make` per project at a time: an advisory lock on `cache/lock`.

use std::fs::{File, TryLockError};
use std::path::Path;

/// Holds the project lock until dropped.
pub struct ProjectLock {
    _file: File,
}

impl ProjectLock {
    /// Takes the lock, waiting (and saying so on stderr) if another okb holds it.
    pub fn acquire(cache_dir: &Path) -> std::io::Result<ProjectLock> {
        std::fs::create_dir_all(cache_dir)?;
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(cache_dir.join("lock"))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                eprintln!(
                    "{:>12} waiting for the project lock ({}): another okb is building here",
                    "Blocking",
                    cache_dir.join("lock").display()
                );
                file.lock()?;
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
        Ok(ProjectLock { _file: file })
    }
}
