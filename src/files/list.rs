//! Listing a folder's files.

use std::path::{Path, PathBuf};

/// The regular files in `dir`, and in its subfolders when `recursive`, in no particular
/// order. Symbolic links are not followed; a missing or unreadable folder has none.
pub fn files_in(dir: &Path, recursive: bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && recursive => folders.push(entry.path()),
                Ok(kind) if kind.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files
}
