//! The temporary files of a make: an interrupted make's swept by the next one, a failed
//! make's by itself on its error path.

use std::path::{Path, PathBuf};

use crate::files::temp;
use crate::pipeline::Loaded;

/// Removes the temporary files of an interrupted okb from the folders okb writes: the
/// cache, the source store and the output folders.
pub(super) fn sweep_temporaries(loaded: &Loaded) {
    let removed = sweep_written_folders(loaded, temp::sweep);
    if !removed.is_empty() {
        let first = removed[0].display();
        let more = if removed.len() > 1 {
            format!(" and {} more", removed.len() - 1)
        } else {
            String::new()
        };
        crate::progress::note(
            "Removed",
            &format!("temporary files of an interrupted make: {first}{more}"),
        );
    }
}

/// Removes the temporary files this make wrote, on its error path (the steps have ended):
/// a make that fails part-way, on a full disk say, gives the space back at once. The
/// outputs it finished stay (see `okb verify`).
pub(super) fn sweep_own_temporaries(loaded: &Loaded) {
    sweep_written_folders(loaded, temp::sweep_own);
}

/// Runs `sweep` over the folders okb writes: the cache (with its subfolders), the source
/// store and the output folders. Returns what it removed.
fn sweep_written_folders(loaded: &Loaded, sweep: fn(&Path, bool) -> Vec<PathBuf>) -> Vec<PathBuf> {
    let mut removed = sweep(&loaded.layout().cache, true);
    let mut folders = vec![loaded.layout().sources];
    let outputs = std::iter::once(&loaded.pipeline.store.path)
        .chain(loaded.pipeline.exports.values().map(|e| &e.output));
    for output in outputs.map(|o| loaded.path(o)) {
        // An export may be a folder of files (eco.json) or one file.
        folders.extend(output.parent().map(Path::to_path_buf));
        folders.push(output);
    }
    folders.sort();
    folders.dedup();
    for folder in folders {
        removed.extend(sweep(&folder, false));
    }
    removed
}
