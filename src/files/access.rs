//! Telling the kernel how a file opened by a library will be read: `okb serve`'s lookups
//! read random 16 KiB pages of a store far larger than memory, through SQLite, which opens
//! its own descriptors and offers no way to advise them.
//!
//! Why it matters: a read that misses the page cache next to pages it holds is taken by
//! Linux for a sequential stream and read ahead up to the device's window (8 MiB here);
//! random lookups over a cold 32 GiB store then read about 9 GB to warm 200,000
//! positions, evicting the pages they need. `POSIX_FADV_RANDOM` on the descriptor turns
//! that read-ahead off for it alone; a full pass over the same file (another descriptor)
//! keeps its read-ahead.

use std::collections::BTreeSet;
use std::path::Path;

/// Runs `open`, then advises random access on every descriptor of this process that
/// `open` opened on `path` (found by their links in `/proc/self/fd`). Where that folder
/// does not exist (not Linux), or `path` does not resolve, `open` runs alone: the advice
/// only saves reads.
pub fn opened_for_random_reads<T>(path: &Path, open: impl FnOnce() -> T) -> T {
    let Ok(target) = path.canonicalize() else { return open() };
    let before = descriptors_of(&target);
    let opened = open();
    for fd in descriptors_of(&target).difference(&before) {
        advise_random(*fd);
    }
    opened
}

/// The descriptors of this process open on `target` (a canonical path).
fn descriptors_of(target: &Path) -> BTreeSet<i32> {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return BTreeSet::new() };
    entries
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|link| link == target))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

#[cfg(target_os = "linux")]
fn advise_random(fd: i32) {
    // SAFETY: posix_fadvise only reads its integer arguments; a descriptor closed since
    // it was listed gives EBADF, which is ignored like any other failure of an advice.
    unsafe {
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_random(_fd: i32) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptor a file's opening makes is found and advised; one opened before is not
    /// touched (it is not among those the opening made).
    #[test]
    fn the_descriptors_an_opening_makes_are_the_ones_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        std::fs::write(&path, b"pages").unwrap();
        let target = path.canonicalize().unwrap();
        let earlier = std::fs::File::open(&path).unwrap();
        let before = descriptors_of(&target);
        assert_eq!(before.len(), 1, "{before:?}");
        let file = opened_for_random_reads(&path, || std::fs::File::open(&path).unwrap());
        let after = descriptors_of(&target);
        assert_eq!(after.len(), 2, "{after:?}");
        use std::os::fd::AsRawFd;
        assert!(after.contains(&file.as_raw_fd()) && after.contains(&earlier.as_raw_fd()));
        drop(file);
        assert_eq!(descriptors_of(&target), before);
    }
}
