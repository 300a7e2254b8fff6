//! Code fingerprints: hashes every file under `src/` (and what it includes) and records
//! which files each one uses, so that a step's key changes exactly when the code that
//! computes it changes (see `src/dataflow/code.rs`). This is the library's build script
//! (src/Cargo.toml); the commit stamp is the root package's (`build.rs`), so that a commit
//! rebuilds no library.

#[path = "src/dataflow/scan.rs"]
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("src/ is readable").flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path);
        }
    }
}

fn main() {
    // Paths are cargo's (relative to this package); the files are named from the
    // repository's root, as they always were: `src/…`.
    println!("cargo:rerun-if-changed=.");
    println!("cargo:rerun-if-changed=../schemas");
    println!("cargo:rerun-if-changed=../Cargo.lock");
    std::env::set_current_dir("..").expect("the repository's root holds src/");
    let mut files = BTreeSet::new();
    rust_files(Path::new("src"), &mut files);
    let mut uses: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source files are UTF-8");
        uses.insert(file.clone(), scan::uses(file, &text, &files));
    }
    // Included files (schemas) are files too, with no uses of their own.
    let included: BTreeSet<PathBuf> =
        uses.values().flatten().filter(|f| !files.contains(*f)).cloned().collect();
    for file in included {
        uses.insert(file, BTreeSet::new());
    }
    let index: BTreeMap<&PathBuf, usize> = uses.keys().enumerate().map(|(i, f)| (f, i)).collect();
    let mut out = String::from(
        "/// Every source file: path, BLAKE3 of its bytes, indices of the files it uses.\n",
    );
    out.push_str("pub static FILES: &[(&str, &str, &[u16])] = &[\n");
    for (file, used) in &uses {
        let bytes = std::fs::read(file).unwrap_or_default();
        let hash = blake3::hash(&bytes).to_hex();
        let deps: Vec<String> =
            used.iter().filter_map(|u| index.get(u)).map(|i| i.to_string()).collect();
        let shown = file.to_string_lossy().replace('\\', "/");
        writeln!(out, "    ({shown:?}, \"{hash}\", &[{}]),", deps.join(", ")).unwrap();
    }
    out.push_str("];\n");
    let lock = blake3::hash(&std::fs::read("Cargo.lock").unwrap_or_default()).to_hex();
    writeln!(out, "/// BLAKE3 of Cargo.lock: the versions of every crate okb is built with.\npub static CARGO_LOCK: &str = \"{lock}\";").unwrap();
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("code_files.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
