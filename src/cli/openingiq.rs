//! `okb openingiq`: the OpeningIQ files from the built store, without a pipeline step.

use std::path::PathBuf;

use miette::miette;

use super::output::paint;

/// Arguments of `okb openingiq`.
#[derive(Debug, Clone, clap::Args)]
pub struct OpeningiqArgs {
    /// Output directory.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Plies kept below each named opening.
    #[arg(long, default_value_t = crate::export::openingiq::DEFAULT_MAX_DEPTH, value_name = "N")]
    pub max_depth: u32,
    /// Compact JSON instead of indented.
    #[arg(long)]
    pub compact: bool,
    /// Read this store file (or a PostgreSQL knowledge base: postgres://user@host:port/db?schema=okb,
    /// password from PGPASSWORD or ~/.pgpass) instead of the pipeline's [store] path.
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
}

/// Writes the files of every named opening into `--output`.
pub fn run(args: &OpeningiqArgs, store: PathBuf) -> miette::Result<()> {
    let written = write_from_store(&store, &args.output, args.max_depth, !args.compact)
        .map_err(|e| miette!("{e}"))?;
    eprintln!("{} {written} files in {}", paint("Wrote", "32"), args.output.display());
    Ok(())
}

/// Writes the files of every named opening of the store at `store` into `dir` (created
/// if missing), exactly as the `openingiq` export step would.
fn write_from_store(
    store: &std::path::Path,
    dir: &std::path::Path,
    max_depth: u32,
    pretty: bool,
) -> Result<usize, String> {
    let graph = crate::store::read::Store::open(store)
        .and_then(|s| s.graph())
        .map_err(|e| e.to_string())?;
    let named = crate::export::named::of_graph(&graph);
    let files = crate::export::openingiq::render_all(&graph, &named, max_depth, pretty);
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for file in &files {
        let path = dir.join(&file.name);
        crate::files::write_atomic(&path, &file.bytes)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(files.len())
}
