//! `okb make`: build what is stale.

use std::path::PathBuf;
use std::process::ExitCode;

use miette::{IntoDiagnostic, WrapErr};

use super::output::{is_file_step, paint, print_step, print_warnings};
use crate::dataflow::Status;
use crate::make::{self, MakeOptions, MakeSummary};
use crate::pipeline::Loaded;

/// Arguments of `okb make`.
#[derive(Debug, Clone, clap::Args)]
pub struct MakeArgs {
    /// A folder holding source files (matched by content hash); repeatable.
    /// Also read from OKB_MIRROR (colon-separated).
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Never download sources.
    #[arg(long)]
    pub offline: bool,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Say for every step why it ran.
    #[arg(long)]
    pub explain: bool,
    /// Treat warnings (skipped rows, duplicates) as failure (exit status 3).
    #[arg(long)]
    pub strict: bool,
}

/// Runs `okb make`: 0 when built, 3 when `--strict` and warnings were reported.
pub fn run(args: &MakeArgs, load: impl Fn() -> miette::Result<Loaded>) -> miette::Result<ExitCode> {
    super::alloc::keep_freed_memory();
    if let Some(n) = args.jobs {
        rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global().into_diagnostic()?;
    }
    let loaded = load()?;
    let _lock = crate::dataflow::lock::ProjectLock::acquire(&make::cache_dir(&loaded))
        .into_diagnostic()
        .wrap_err("taking the project lock")?;
    let options = MakeOptions { mirrors: crate::sources::mirrors(&args.mirror), offline: args.offline, dry_run: false };
    let explain = args.explain;
    let summary = make::make(&loaded, &options, move |r| print_step(r, explain))?;
    let warnings = print_summary(&summary, explain);
    if args.strict && warnings > 0 {
        eprintln!("error: {warnings} warnings and --strict was given");
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the fresh game files' count, the warnings and the `Finished` line; returns
/// the number of warnings.
fn print_summary(summary: &MakeSummary, explain: bool) -> usize {
    let fresh_files = summary.steps.iter().filter(|s| s.status == Status::Fresh && is_file_step(&s.id)).count();
    if fresh_files > 0 && !explain {
        eprintln!("{} {fresh_files} game files", paint("Fresh", "32"));
    }
    let warnings: usize = summary.steps.iter().map(|s| s.warnings).sum();
    print_warnings(&summary.warnings);
    let built = summary.steps.iter().filter(|s| s.status != Status::Fresh).count();
    let secs = summary.elapsed.as_secs_f64();
    let timing = if secs < 1.0 { format!("{:.0}ms", secs * 1000.0) } else { format!("{secs:.2}s") };
    let plural = |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    let warned = if warnings > 0 { format!(", {}", plural(warnings, "warning")) } else { String::new() };
    let fresh = summary.steps.len() - built;
    if built == 0 {
        eprintln!("{} nothing to do, {} fresh{warned} in {timing}", paint("Finished", "32"), plural(fresh, "step"));
    } else {
        eprintln!("{} {} built, {fresh} fresh{warned} in {timing}", paint("Finished", "32"), plural(built, "step"));
    }
    warnings
}
