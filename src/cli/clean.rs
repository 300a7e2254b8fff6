//! `okb clean`: remove the store and exports (and the cache).

use miette::miette;

use crate::pipeline::Loaded;

/// Arguments of `okb clean`.
#[derive(Debug, Clone, clap::Args)]
pub struct CleanArgs {
    /// Remove the cache as well.
    #[arg(long)]
    pub cache: bool,
}

/// `okb clean`: removes the store and the exports (and the cache with `--cache`).
pub fn run(loaded: &Loaded, args: &CleanArgs) -> miette::Result<()> {
    let mut removed = Vec::new();
    let store = loaded.path(&loaded.pipeline.store.path);
    let mut targets = vec![store];
    targets.extend(loaded.pipeline.exports.values().map(|e| loaded.path(&e.output)));
    if args.cache {
        targets.push(loaded.path("cache"));
    }
    for target in targets {
        let result =
            if target.is_dir() { std::fs::remove_dir_all(&target) } else { std::fs::remove_file(&target) };
        match result {
            Ok(()) => removed.push(target.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(miette!("removing {}: {e}", target.display())),
        }
    }
    eprintln!("{:>12} {} ({})", "Removed", removed.len(), removed.join(", "));
    Ok(())
}

