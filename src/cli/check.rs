//! `okb check`: build, then compare the answers `[check]` names with their snapshot
//! files; `--accept` rewrites the files.

use std::path::PathBuf;
use std::process::ExitCode;

use miette::{IntoDiagnostic, miette};

use super::output::paint;
use crate::pipeline::Loaded;
use crate::release::check::{Outcome, compare, line_diff};

/// Arguments of `okb check`.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// Write the snapshots as they are now (new, changed, and remove orphans).
    #[arg(long)]
    pub accept: bool,
    /// Compare with the store as it is; do not build first.
    #[arg(long)]
    pub no_build: bool,
    /// Release builds: pins required, nothing downloaded (as `okb make --locked`).
    #[arg(long)]
    pub locked: bool,
    /// Mirror folders for pinned sources, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Never download sources.
    #[arg(long)]
    pub offline: bool,
}

/// Runs `okb check`: 0 when every snapshot matches (or was accepted), 1 otherwise.
pub fn run(
    args: &CheckArgs,
    load: impl Fn() -> miette::Result<Loaded>,
) -> miette::Result<ExitCode> {
    let loaded = load()?;
    let spec = &loaded.pipeline.check;
    if spec.lines.is_empty() && spec.fens.is_empty() && spec.openings.is_empty() {
        return Err(miette!(
            help = "add a [check] table: lines = [\"1. e4 c5\"], fens = [...], openings = [\"Sicilian Defense\"]",
            "{} names nothing to check",
            loaded.file.display()
        ));
    }
    if !args.no_build {
        build(&loaded, args)?;
    }
    let store =
        crate::store::read::Store::open(&loaded.layout().store).map_err(|e| miette!("{e}"))?;
    let folder = loaded.path(&spec.snapshots);
    let results = compare(&store, spec, &folder);
    let mut failing = 0;
    for (name, (text, outcome)) in &results {
        let shown = folder.join(name);
        let shown = crate::release::manifest::relative(&loaded.root, &shown);
        match outcome {
            Outcome::Same => {}
            Outcome::New if args.accept => write(&folder, name, text, "Added", &shown)?,
            Outcome::Changed { .. } if args.accept => {
                write(&folder, name, text, "Updated", &shown)?
            }
            Outcome::Orphan if args.accept => {
                std::fs::remove_file(folder.join(name)).into_diagnostic()?;
                eprintln!("{} {shown} (no question asks for it)", paint("Removed", "32"));
            }
            Outcome::New => {
                failing += 1;
                eprintln!(
                    "{} {shown}: no snapshot yet; it would say:\n{}",
                    paint("New", "33"),
                    indent(text)
                );
            }
            Outcome::Changed { old } => {
                failing += 1;
                eprintln!("{} {shown}:\n{}", paint("Changed", "31"), indent(&line_diff(old, text)));
            }
            Outcome::Orphan => {
                failing += 1;
                eprintln!("{} {shown}: no question in [check] asks for it", paint("Orphan", "33"));
            }
        }
    }
    let total = results.values().filter(|(_, o)| *o != Outcome::Orphan).count();
    if failing == 0 {
        eprintln!("{} {total} snapshots match", paint("Checked", "32"));
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{} {failing} of {total} snapshots differ; `okb check --accept` takes the new answers",
        paint("error", "31")
    );
    Ok(ExitCode::FAILURE)
}

fn build(loaded: &Loaded, args: &CheckArgs) -> miette::Result<()> {
    super::make::build_and_report(
        loaded,
        &super::make::Sources { mirror: &args.mirror, offline: args.offline, locked: args.locked },
    )
}

fn write(
    folder: &std::path::Path,
    name: &str,
    text: &str,
    status: &str,
    shown: &str,
) -> miette::Result<()> {
    std::fs::create_dir_all(folder).into_diagnostic()?;
    crate::files::write_atomic(&folder.join(name), text.as_bytes()).into_diagnostic()?;
    eprintln!("{} {shown}", paint(status, "32"));
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}
