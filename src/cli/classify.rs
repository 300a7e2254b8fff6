//! `okb classify`: give each game of PGN files its opening from a built knowledge base.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use miette::{IntoDiagnostic, WrapErr, miette};

use crate::classify::Classifier;
use crate::classify::files::{ClassifyReport, classify_files};

/// Arguments of `okb classify`.
#[derive(clap::Args, Debug)]
pub struct ClassifyArgs {
    /// PGN files (plain, .zst, .bz2 or .gz), read in the order given.
    #[arg(required = true, value_name = "PGN")]
    pub paths: Vec<String>,
    /// Write the classified games here instead of stdout. A name ending in `.bgn` (or
    /// `.bgn.bz2`) writes BGN, each game's `opening` filled from the knowledge base.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The knowledge base (default: the store of pipeline.toml).
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// Runs `okb classify` with the store at `store` (the `--store` flag wins).
pub fn run(args: &ClassifyArgs, store: PathBuf) -> miette::Result<()> {
    let start = Instant::now();
    let store = args.store.clone().unwrap_or(store);
    let classifier = Classifier::from_store(&store).map_err(|e| miette!("{e}"))?;
    if classifier.is_empty() {
        return Err(miette!(
            "the store {} names no position: build it with `okb make`",
            store.display()
        ));
    }
    let paths = crate::games::input::expand_paths(&args.paths).map_err(|e| miette!("{e}"))?;
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.jobs {
        builder = builder.num_threads(n.max(1));
    }
    let pool = builder.build().into_diagnostic()?;
    let report = match &args.output {
        Some(path) if is_bgn(path) => return to_bgn(&classifier, &paths, path, &pool, start),
        Some(path) => {
            // Written beside the target and renamed: an interrupted run leaves no torn file.
            let mut out = crate::files::write::AtomicFile::create(path)
                .into_diagnostic()
                .wrap_err_with(|| format!("creating {}", path.display()))?;
            let report = pool
                .install(|| classify_files(&classifier, &paths, &mut out))
                .map_err(|e| miette!("{e}"))?;
            out.commit()
                .into_diagnostic()
                .wrap_err_with(|| format!("writing {}", path.display()))?;
            report
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout());
            let report = pool
                .install(|| classify_files(&classifier, &paths, &mut out))
                .map_err(|e| miette!("{e}"))?;
            out.flush().into_diagnostic()?;
            report
        }
    };
    eprintln!("{}", summary(&report, start.elapsed().as_secs_f64()));
    if !report.bad.is_empty() {
        eprintln!("{}", report.bad.render_table().trim_end());
    }
    Ok(())
}

fn is_bgn(path: &std::path::Path) -> bool {
    let name =
        path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    name.ends_with(".bgn") || name.ends_with(".bgn.bz2")
}

/// `okb classify -o games.bgn`: the conversion of `okb convert --store`.
fn to_bgn(
    classifier: &Classifier,
    paths: &[PathBuf],
    path: &std::path::Path,
    pool: &rayon::ThreadPool,
    start: Instant,
) -> miette::Result<()> {
    use crate::convert::{FromKnowledgeBase, SplitWriter, pgn_to_bgn};
    let lookup = FromKnowledgeBase::new(classifier);
    let converted = pool.install(|| pgn_to_bgn(paths, &lookup, SplitWriter::single(path)))?;
    let (named, from_tags) = lookup.counts();
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{:>12} {} games: {named} classified, {from_tags} named by their own tags, {} unreadable (skipped) in {secs:.2}s ({:.0} games/s)",
        "Classified",
        converted.games,
        converted.bad.skipped(),
        converted.games as f64 / secs.max(1e-9)
    );
    if !converted.bad.is_empty() {
        eprintln!("{}", converted.bad.render_table().trim_end());
    }
    Ok(())
}

/// The one-line summary printed on stderr.
pub fn summary(report: &ClassifyReport, secs: f64) -> String {
    format!(
        "{:>12} {} games: {} classified, {} without a known position, {} unreadable (copied unchanged) in {secs:.2}s ({:.0} games/s)",
        "Classified",
        report.games,
        report.classified,
        report.unclassified,
        report.bad.skipped(),
        report.games as f64 / secs.max(1e-9)
    )
}
