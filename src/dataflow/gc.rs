//! Removing what the current build no longer uses from the cache (`okb clean --unused`).
//!
//! Every change of an input or a parameter leaves the old step records and objects
//! behind, so that changing it back is instant; over months they add up (a threshold
//! changed on a Lichess month leaves a tree's worth of gigabytes). A dry run of the plan
//! with every step fresh finds, read or names everything the build needs
//! ([`super::cache::Used`]); [`sweep`] removes the other step records and objects.
//! Everything else in the cache folder stays: the engine's results, the stat cache, the
//! store entries, and temporary files (those of ended processes go with the next make).

use std::path::Path;

use super::cache::Used;

/// What a sweep removed (or, in a dry run, would remove) and kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Swept {
    /// Step records removed.
    pub records_removed: u64,
    /// Objects removed.
    pub objects_removed: u64,
    /// Their bytes.
    pub bytes_removed: u64,
    /// Step records kept.
    pub records_kept: u64,
    /// Objects kept.
    pub objects_kept: u64,
    /// Their bytes.
    pub bytes_kept: u64,
}

/// Removes from the cache in `root` every step record and object not in `used`
/// (nothing when `dry_run`), objects of the earlier sharded layout included.
pub fn sweep(root: &Path, used: &Used, dry_run: bool) -> std::io::Result<Swept> {
    let mut swept = Swept::default();
    for entry in entries(&root.join("steps"))? {
        let keep = used.records.contains(&entry.name);
        *if keep { &mut swept.records_kept } else { &mut swept.records_removed } += 1;
        if !keep && !dry_run {
            remove(&entry.path)?;
        }
    }
    let objects = root.join("objects");
    let mut all = entries(&objects)?;
    for shard in all
        .iter()
        .filter(|e| e.is_dir && e.name.len() == 2)
        .map(|e| e.path.clone())
        .collect::<Vec<_>>()
    {
        all.extend(entries(&shard)?);
    }
    for entry in all.iter().filter(|e| !e.is_dir) {
        swept.object(used.objects.contains(&entry.name), entry, dry_run)?;
    }
    sweep_sides(root, used, dry_run, &mut swept)?;
    Ok(swept)
}

/// Side files (`sides/<kind>/<object>-<suffix>`, see [`super::cache::Cache::side_path`])
/// go with their object.
fn sweep_sides(root: &Path, used: &Used, dry_run: bool, swept: &mut Swept) -> std::io::Result<()> {
    for kind in entries(&root.join("sides"))?.into_iter().filter(|e| e.is_dir) {
        for entry in entries(&kind.path)?.into_iter().filter(|e| !e.is_dir) {
            let object = entry.name.rsplit_once('-').map_or(entry.name.as_str(), |(o, _)| o);
            swept.object(used.objects.contains(object), &entry, dry_run)?;
        }
    }
    Ok(())
}

impl Swept {
    /// Counts `entry` as kept or removed, and removes it unless kept or `dry_run`.
    fn object(&mut self, keep: bool, entry: &Entry, dry_run: bool) -> std::io::Result<()> {
        let (count, bytes) = if keep {
            (&mut self.objects_kept, &mut self.bytes_kept)
        } else {
            (&mut self.objects_removed, &mut self.bytes_removed)
        };
        *count += 1;
        *bytes += entry.len;
        if !keep && !dry_run {
            remove(&entry.path)?;
        }
        Ok(())
    }
}

/// A file or folder of the cache, temporary files left out.
struct Entry {
    name: String,
    path: std::path::PathBuf,
    is_dir: bool,
    len: u64,
}

/// The entries of `dir` (none when it does not exist), without temporary files.
fn entries(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for entry in listing {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(crate::files::temp::SUFFIX) {
            continue;
        }
        let meta = entry.metadata()?;
        found.push(Entry { name, path: entry.path(), is_dir: meta.is_dir(), len: meta.len() });
    }
    Ok(found)
}

/// Removes a file another okb may have removed already.
fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_used_stays_and_a_dry_run_removes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let cache = super::super::cache::Cache::new(root.path().to_path_buf());
        let kept = cache.put_blob(b"kept").unwrap();
        let old = cache.put_blob(b"old tree").unwrap();
        let record = |output: &str| super::super::cache::StepRecord {
            output: output.into(),
            summary: String::new(),
            warnings: 0,
            warning_list: None,
        };
        cache.put_step("live", &record(&kept)).unwrap();
        cache.put_step("dead", &record(&old)).unwrap();
        let shard = root.path().join("objects").join("ab");
        std::fs::create_dir_all(&shard).unwrap();
        std::fs::write(shard.join("ab12"), b"sharded").unwrap();
        std::fs::write(root.path().join("objects").join(".value.1.2.okb-tmp"), b"being written")
            .unwrap();
        // Side files go with their object.
        for (object, bytes) in [(&kept, &b"cut"[..]), (&old, &b"old cut"[..])] {
            let side = cache.side_path("hot", object, "50");
            std::fs::create_dir_all(side.parent().unwrap()).unwrap();
            std::fs::write(side, bytes).unwrap();
        }

        let fresh = super::super::cache::Cache::new(root.path().to_path_buf());
        assert!(fresh.step("live").is_some());
        let used = fresh.used();
        let expected = Swept {
            records_removed: 1,
            objects_removed: 3,
            bytes_removed: 22,
            records_kept: 1,
            objects_kept: 2,
            bytes_kept: 7,
        };
        assert_eq!(sweep(root.path(), &used, true).unwrap(), expected);
        assert!(root.path().join("steps").join("dead").exists(), "a dry run removes nothing");
        assert_eq!(sweep(root.path(), &used, false).unwrap(), expected);
        assert!(fresh.get_blob(&kept).is_some() && fresh.step("live").is_some());
        assert!(!root.path().join("steps").join("dead").exists());
        assert!(!cache.has_blob(&old) && !shard.join("ab12").exists());
        assert!(cache.side_path("hot", &kept, "50").exists());
        assert!(!cache.side_path("hot", &old, "50").exists());
        assert!(
            root.path().join("objects").join(".value.1.2.okb-tmp").exists(),
            "temporary files are left to the make's sweep"
        );
        let again = Swept { records_kept: 1, objects_kept: 2, bytes_kept: 7, ..Swept::default() };
        assert_eq!(sweep(root.path(), &used, false).unwrap(), again);
    }
}
