//! Temporary files, and sweeping up the ones a killed okb left behind.
//!
//! Every file okb writes goes to a temporary name in its final folder ([`path`]) and is
//! renamed when complete, so a killed process never leaves a torn file, but it does leave
//! its temporary one. The name carries the writer's process id, so that [`sweep`] removes
//! the files of processes that have ended and keeps those of an okb still running (an
//! `okb fetch` beside a make, another project sharing an output folder).
//!
//! Scratch folders in the system's temporary folder (the local copy of a PostgreSQL
//! store, `okb verify --fresh`'s cache) are named the same way ([`scratch_dir`]), and the
//! ones of ended processes are swept when a new one is made ([`sweep_scratch`]).

use std::path::{Path, PathBuf};

/// The ending of every temporary file name.
pub const SUFFIX: &str = ".okb-tmp";

/// A temporary name in `dir` for a file about to be renamed to `name`:
/// `.{name}.{process id}.{serial}.okb-tmp`. Unique per process and per call, so two
/// threads writing the same file (two steps storing identical bytes) never write into
/// one temporary file; naming the process lets [`sweep`] tell an abandoned file from one
/// being written.
pub fn path(dir: &Path, name: &str) -> PathBuf {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".{name}.{}.{serial}{SUFFIX}", std::process::id()))
}

/// A temporary name beside `target`, for the file about to be renamed to it ([`path`]).
pub fn for_file(target: &Path) -> PathBuf {
    let dir = target.parent().unwrap_or(Path::new(""));
    path(dir, target.file_name().and_then(|n| n.to_str()).unwrap_or("out"))
}

/// The process writing the temporary file `file_name`, if the name is one of [`path`]'s.
fn writer(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_prefix('.')?.strip_suffix(SUFFIX)?;
    let mut parts = stem.rsplitn(3, '.');
    let serial = parts.next()?;
    let pid = parts.next()?;
    parts.next()?;
    serial.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether process `pid` may still be running. Without `/proc` there is no telling, and
/// every process is taken to be running (nothing is swept).
fn may_be_running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Removes from `dir`, and from its subfolders when `recursive`, the temporary files
/// ([`path`]'s names) of processes that have ended. Returns the files removed. A missing
/// or unreadable folder has nothing to sweep.
pub fn sweep(dir: &Path, recursive: bool) -> Vec<PathBuf> {
    remove_where(dir, recursive, |pid| !may_be_running(pid))
}

/// Removes from `dir` (and its subfolders when `recursive`) the temporary files this
/// process wrote: what a failed make left on its error path, removed at once rather
/// than by the next make (on a full disk, they hold the space the user needs back).
/// Only for when nothing else in this process is writing. Returns the files removed.
pub fn sweep_own(dir: &Path, recursive: bool) -> Vec<PathBuf> {
    remove_where(dir, recursive, |pid| pid == std::process::id())
}

/// A new scratch folder `.{what}.{process id}.{serial}.okb-tmp` in the system's temporary
/// folder (created); the caller removes it when done, and [`sweep_scratch`] removes it
/// after the process ended without doing so (killed).
pub fn scratch_dir(what: &str) -> std::io::Result<PathBuf> {
    let root = std::env::temp_dir();
    sweep_scratch(&root);
    let dir = path(&root, what);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Removes from `root` the scratch folders ([`scratch_dir`]) of processes that have
/// ended. Returns the folders removed, sorted.
pub fn sweep_scratch(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else { return Vec::new() };
    let mut removed: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .filter(|dir| {
            let pid = dir.file_name().and_then(|name| name.to_str()).and_then(writer);
            pid.is_some_and(|pid| !may_be_running(pid)) && std::fs::remove_dir_all(dir).is_ok()
        })
        .collect();
    removed.sort();
    removed
}

/// Removes the temporary files under `dir` whose writer `remove` accepts, sorted.
fn remove_where(dir: &Path, recursive: bool, remove: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let mut removed: Vec<PathBuf> = super::list::files_in(dir, recursive)
        .into_iter()
        .filter(|file| {
            let pid = file.file_name().and_then(|name| name.to_str()).and_then(writer);
            pid.is_some_and(&remove) && std::fs::remove_file(file).is_ok()
        })
        .collect();
    removed.sort();
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process id that has just ended.
    fn ended_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn names_carry_their_writer() {
        let dir = Path::new("/x");
        let a = path(dir, "okb.sqlite");
        let b = path(dir, "okb.sqlite");
        assert_ne!(a, b);
        for p in [&a, &b] {
            assert_eq!(writer(p.file_name().unwrap().to_str().unwrap()), Some(std::process::id()));
        }
        for other in [
            "okb.sqlite",
            ".okb.sqlite.okb-tmp",
            ".a.12.x.okb-tmp",
            ".a.x.12.okb-tmp",
            "a.12.3.okb-tmp",
            ".12.3.okb-tmp",
        ] {
            assert_eq!(writer(other), None, "{other}");
        }
        assert_eq!(writer(".download.77.0.okb-tmp"), Some(77));
        assert_eq!(writer(".a.b.c.77.5.okb-tmp"), Some(77));
    }

    #[test]
    fn sweep_removes_only_the_temporaries_of_ended_processes() {
        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("objects/ab");
        std::fs::create_dir_all(&sub).unwrap();
        let dead = ended_pid();
        assert!(!may_be_running(dead));
        let abandoned = [
            root.path().join(format!(".value.{dead}.3{SUFFIX}")),
            sub.join(format!(".ab12.{dead}.0{SUFFIX}")),
        ];
        let live = [path(root.path(), "value"), path(&sub, "ab12")];
        let other = [
            root.path().join("ab12"),
            root.path().join(format!("value.{dead}.3{SUFFIX}")),
            root.path().join("okb.sqlite.okb-tmp"),
        ];
        for file in abandoned.iter().chain(&live).chain(&other) {
            std::fs::write(file, b"x").unwrap();
        }
        // Not recursive: only the top folder's abandoned file goes.
        assert_eq!(sweep(root.path(), false), vec![abandoned[0].clone()]);
        assert!(abandoned[1].exists());
        assert_eq!(sweep(root.path(), true), vec![abandoned[1].clone()]);
        assert!(live.iter().chain(&other).all(|f| f.exists()));
        assert!(sweep(&root.path().join("missing"), true).is_empty());
        // This process's own are removed only when asked for.
        let mut own = live.to_vec();
        own.sort();
        assert_eq!(sweep_own(root.path(), true), own);
        assert!(other.iter().all(|f| f.exists()));
    }

    #[test]
    fn sweep_scratch_removes_only_the_folders_of_ended_processes() {
        let root = tempfile::tempdir().unwrap();
        let dead = ended_pid();
        let abandoned = root.path().join(format!(".okb-pg.{dead}.0{SUFFIX}"));
        let live = path(root.path(), "okb-pg");
        let other = root.path().join("okb-pg-12-34");
        for dir in [&abandoned, &live, &other] {
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            std::fs::write(dir.join("sub/okb.sqlite"), b"x").unwrap();
        }
        assert_eq!(sweep_scratch(root.path()), vec![abandoned.clone()]);
        assert!(!abandoned.exists() && live.exists() && other.exists());
    }
}
