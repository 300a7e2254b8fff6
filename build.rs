//! The commit stamp, `OKB_COMMIT`, for `okb --version` and the build manifest: the commit
//! of the source tree (with `-dirty` when it has changes), or "unknown" outside a git
//! checkout. It lives in this package (the binary and its tests) and not in the library's
//! (src/Cargo.toml), so that a commit recompiles `src/main.rs` and nothing of the library.

fn main() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=OKB_COMMIT={commit}{suffix}");
    // A new commit moves HEAD or the branch it names (not the index: staging files must
    // not rebuild okb); an edited source makes the tree dirty (and rebuilds the library
    // anyway, so rerunning this script then costs nothing more).
    println!("cargo:rerun-if-changed=src");
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/refs/heads");
    }
}
