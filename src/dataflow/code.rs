//! Code fingerprints: a step rule's key includes the hash of the code that computes it,
//! so editing a phase's source reruns exactly the steps whose code changed. Nobody bumps
//! a version number by hand.
//!
//! `fingerprints.rs` (the library's build script) hashes every file under `src/` and records which files each one uses
//! ([`super::scan`]). A rule names the file that declares it (`file!()`); its code is
//! that file and everything it uses, transitively: the declaration of `tree` in
//! `src/steps/tree.rs` uses `src/tree.rs`, which uses `src/position.rs`, and so on.
//! The build engine itself (`src/dataflow/`) is left out: it moves values between steps
//! and does not compute them, and its cache format has its own checks. So is the step
//! modules' shared planning (`src/steps/planning.rs`, and the list of modules in
//! `src/steps/mod.rs`): it decides which steps exist and hands them inputs, files and
//! parameters that their keys cover. `Cargo.lock` is
//! in every fingerprint: a new version of shakmaty may play a move differently.

use std::collections::BTreeSet;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/code_files.rs"));
}

pub use generated::{CARGO_LOCK, FILES};

/// The files (as indices into a table like [`FILES`]) that `entry` uses transitively,
/// itself included, leaving out the build engine's and the planning's files.
pub fn closure(files: &[(&str, &str, &[u16])], entry: &str) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let Some(start) = files.iter().position(|f| f.0 == entry) else { return seen };
    let mut stack = vec![start];
    while let Some(i) = stack.pop() {
        if is_planning(files[i].0) || !seen.insert(i) {
            continue;
        }
        stack.extend(files[i].2.iter().map(|&d| usize::from(d)));
    }
    seen
}

/// Whether `path` is code that moves or plans steps rather than computing their values:
/// the build engine (`src/dataflow/`, whose cache format has its own checks), the
/// planning shared by the step modules (`src/steps/planning.rs`, whose every output is a
/// declared input, file hash or parameter path, all of them keyed), the ids of the steps
/// they read (`src/steps/ids.rs`: an id is in every key that names it) and the list of step
/// modules (`src/steps/mod.rs`: a step module naming its sibling `planning` names its
/// parent, which names every module).
fn is_planning(path: &str) -> bool {
    path.starts_with("src/dataflow/")
        || path == "src/steps/planning.rs"
        || path == "src/steps/ids.rs"
        || path == "src/steps/mod.rs"
}

/// The code of a rule: each file in its closure with a short hash, in path order.
pub fn code_files(files: &[(&str, &str, &[u16])], entry: &str) -> Vec<(String, String)> {
    closure(files, entry)
        .into_iter()
        .map(|i| (files[i].0.to_string(), files[i].1[..16].to_string()))
        .collect()
}

/// The fingerprint of the rule declared in `entry`: BLAKE3 of its code files' hashes
/// and `Cargo.lock`'s.
pub fn fingerprint(files: &[(&str, &str, &[u16])], lock: &str, entry: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(lock.as_bytes());
    for i in closure(files, entry) {
        h.update(files[i].0.as_bytes());
        h.update(&[0]);
        h.update(files[i].1.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// [`fingerprint`] over this build's own sources.
pub fn of(entry: &str) -> String {
    static CACHE: std::sync::Mutex<Vec<(&'static str, String)>> = std::sync::Mutex::new(Vec::new());
    let mut cache = CACHE.lock().expect("fingerprint cache poisoned");
    if let Some((_, hash)) = cache.iter().find(|(e, _)| *e == entry) {
        return hash.clone();
    }
    let hash = fingerprint(FILES, CARGO_LOCK, entry);
    if let Some(i) = FILES.iter().position(|f| f.0 == entry) {
        cache.push((FILES[i].0, hash.clone()));
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_file_is_in_the_table_and_uses_what_it_names() {
        let path =
            |p: &str| FILES.iter().position(|f| f.0 == p).unwrap_or_else(|| panic!("{p} missing"));
        let uses = |a: &str, b: &str| FILES[path(a)].2.contains(&(path(b) as u16));
        assert!(uses("src/tree.rs", "src/position.rs"));
        assert!(!uses("src/position.rs", "src/tree.rs"));
        // Children named from their parent module, and a schema included as text.
        assert!(uses("src/eco/mod.rs", "src/eco/merge.rs"));
        assert!(
            FILES.iter().any(|f| f.0.starts_with("schemas/")),
            "included schemas are inputs too"
        );
        assert!(closure(FILES, "src/tree.rs").contains(&path("src/position.rs")));
        assert!(closure(FILES, "nonexistent.rs").is_empty());
    }

    #[test]
    fn the_engine_is_not_part_of_any_fingerprint() {
        for (file, _, _) in FILES {
            let closure = closure(FILES, file);
            assert!(closure.iter().all(|&i| !FILES[i].0.starts_with("src/dataflow/")), "{file}");
        }
    }
}
