//! `okb engine import`: results files into the project's engine cache, after checking
//! that each comes from the pipeline's engine and settings and is undamaged.

use std::path::PathBuf;

use crate::cli::output::paint;
use crate::engine::results::{self, Results};
use crate::engine::{EngineCache, Identity};
use crate::make;
use crate::pipeline::Loaded;

/// Arguments of `okb engine import`.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// Results files (from `okb engine annotate`).
    #[arg(required = true, value_name = "RESULTS")]
    pub files: Vec<PathBuf>,
}

/// Runs `okb engine import`: every file is read and checked before any is imported.
pub fn run(args: &ImportArgs, loaded: &Loaded) -> miette::Result<()> {
    let config = make::engine_config(loaded)?.ok_or_else(|| super::no_engine(loaded))?;
    let cache = EngineCache::open(&loaded.layout().engine_cache).map_err(miette::Report::new)?;
    let path = config.path.clone().expect("engine_config resolves the path");
    let (expected, _) = Identity::of(&path, &config, &cache).map_err(miette::Report::new)?;
    let mut all: Vec<(PathBuf, Results)> = Vec::new();
    for file in &args.files {
        let results = results::read(file).map_err(miette::Report::new)?;
        results.check(&file.display().to_string(), &expected).map_err(miette::Report::new)?;
        all.push((file.clone(), results));
    }
    let (mut imported, mut failed) = (0, 0);
    for (file, results) in &all {
        let written = results.import(&cache).map_err(miette::Report::new)?;
        imported += written;
        failed += results.failures.len();
        let failures = if results.failures.is_empty() {
            String::new()
        } else {
            format!(", {} failed positions left for `okb make`", results.failures.len())
        };
        eprintln!("{} {} ({written} results{failures})", paint("Imported", "32"), file.display());
    }
    eprintln!(
        "{} {imported} results from {} files into {}{}",
        paint("Finished", "32"),
        all.len(),
        cache.path().display(),
        if failed > 0 {
            format!("; {failed} positions failed and are searched by the next `okb make`")
        } else {
            String::new()
        }
    );
    Ok(())
}
