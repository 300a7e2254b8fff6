//! `okb openingiq`: the OpeningIQ files from the built store, without a pipeline step
//! (the same as `okb export openingiq`, kept under its first name).

use super::output::paint;

pub use super::export::OpeningiqArgs;

/// Writes the files of every named opening into `--output`.
pub fn run(args: &OpeningiqArgs, store: std::path::PathBuf) -> miette::Result<()> {
    let written = super::export::write_openingiq(args, &store)?;
    eprintln!("{} {written} files in {}", paint("Wrote", "32"), args.target.output.display());
    Ok(())
}
