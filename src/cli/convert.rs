//! `okb convert`: PGN ⇄ BGN, and games → packed move records.

use std::path::PathBuf;

use miette::{IntoDiagnostic, WrapErr};

use crate::classify::Classifier;
use crate::convert::{
    FromKnowledgeBase, FromTags, SplitWriter, bgn_to_pgn, games_to_packed, names_bz2, pgn_to_bgn,
};
use crate::games::input::expand_paths;

/// Output formats of `okb convert`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConvertFormat {
    /// BGN: one JSON game per line (from PGN).
    Bgn,
    /// PGN (from BGN).
    Pgn,
    /// Packed 64-bit move records of the games' moves (from PGN).
    Packed,
}

/// Arguments of `okb convert`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConvertArgs {
    /// Output file. With --split-size, numbered files beside it (games-0001.bgn, …).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Output format (default: from the output's name: .bgn or .bgn.bz2, .pgn, .okbm).
    #[arg(long, value_enum)]
    pub format: Option<ConvertFormat>,
    /// Compress BGN output with bzip2 (also implied by an output name ending in .bz2).
    #[arg(long)]
    pub bz2: bool,
    /// Split BGN output into files of about this much BGN text each (bytes; K, M, G
    /// suffixes), never cutting a game.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub split_size: Option<u64>,
    /// Packed records: count moves up to this ply.
    #[arg(long, default_value_t = 15)]
    pub max_ply: usize,
    /// Packed records: leave out moves played in fewer games.
    #[arg(long, default_value_t = 1)]
    pub min_games: u64,
    /// BGN: name each game's opening from this okb store (`okb make`'s output) by the
    /// deepest known position it reaches, transpositions included, instead of from the
    /// game's own tags (still used for games the store cannot name).
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// Exit with status 3 when any game was skipped.
    #[arg(long)]
    pub strict: bool,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// Input files or glob patterns (PGN for bgn and packed, BGN for pgn; plain,
    /// .zst, .bz2 or .gz).
    #[arg(required = true)]
    pub inputs: Vec<String>,
}

fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits.parse().map_err(|_| format!("{text:?} is not a size (e.g. 100M)"))?;
    let scale = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" => 1 << 10,
        "M" | "MB" => 1 << 20,
        "G" | "GB" => 1 << 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use K, M or G)")),
    };
    if n == 0 {
        return Err("the split size must be positive".into());
    }
    Ok(n * scale)
}

/// Runs `okb convert` and prints a summary on stderr; returns the exit status.
pub fn run(args: &ConvertArgs) -> miette::Result<std::process::ExitCode> {
    let started = std::time::Instant::now();
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(j) = args.jobs {
        builder = builder.num_threads(j.max(1));
    }
    let pool = builder.build().into_diagnostic().wrap_err("cannot start worker threads")?;
    let inputs = expand_paths(&args.inputs).into_diagnostic()?;
    let format = output_format(args)?;
    check_inputs(&inputs, format)?;
    if args.store.is_some() && format != ConvertFormat::Bgn {
        return Err(miette::miette!(
            "--store names openings in BGN output; this conversion writes {format:?}"
        ));
    }
    let classifier = match &args.store {
        Some(store) => Some(Classifier::from_store(store).map_err(|e| miette::miette!("{e}"))?),
        None => None,
    };
    let knowledge_base = classifier.as_ref().map(FromKnowledgeBase::new);
    let summary = pool.install(|| match format {
        ConvertFormat::Bgn => {
            let sink = SplitWriter::new(
                &args.output,
                args.bz2 || names_bz2(&args.output),
                args.split_size,
            );
            match &knowledge_base {
                Some(lookup) => pgn_to_bgn(&inputs, lookup, sink),
                None => pgn_to_bgn(&inputs, &FromTags, sink),
            }
        }
        ConvertFormat::Pgn => bgn_to_pgn(&inputs, &args.output),
        ConvertFormat::Packed => {
            games_to_packed(&inputs, &args.output, args.max_ply, args.min_games)
        }
    })?;
    let bad = summary.bad.skipped();
    if !summary.bad.is_empty() {
        eprintln!("{}", summary.bad.render_table().trim_end());
    }
    if let Some(lookup) = &knowledge_base {
        let (named, from_tags) = lookup.counts();
        eprintln!(
            "{:>12} {named} games from the knowledge base, {from_tags} from their own tags",
            "Named"
        );
    }
    let files: Vec<String> = summary.files.iter().map(|f| f.display().to_string()).collect();
    let dropped = if summary.variations > 0 {
        format!(", {} variations dropped", summary.variations)
    } else {
        String::new()
    };
    eprintln!(
        "{:>12} {} of {} games to {} ({bad} skipped{dropped}) in {:.2}s",
        "Converted",
        summary.written,
        summary.games,
        files.join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(if args.strict && bad > 0 {
        std::process::ExitCode::from(3)
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// The output format: `--format`, else the output's name (`.bgn`, `.bgn.bz2`, `.pgn`,
/// `.okbm`); any other name is an error before any work.
fn output_format(args: &ConvertArgs) -> miette::Result<ConvertFormat> {
    let name = args.output.to_string_lossy().to_ascii_lowercase();
    let by_name = if name.ends_with(".pgn") {
        Some(ConvertFormat::Pgn)
    } else if name.ends_with(".bgn") || name.ends_with(".bgn.bz2") {
        Some(ConvertFormat::Bgn)
    } else if name.ends_with(".okbm") {
        Some(ConvertFormat::Packed)
    } else {
        None
    };
    args.format.or(by_name).ok_or_else(|| {
        miette::miette!(
            help = "name the output .bgn, .bgn.bz2 (BGN), .pgn (PGN) or .okbm (packed move records), or pass --format bgn|pgn|packed",
            "cannot tell what to write to {}",
            args.output.display()
        )
    })
}

/// Whether a game file is BGN (by name: `.bgn`, `.bgn.bz2`…) rather than PGN.
fn is_bgn(path: &std::path::Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().contains(".bgn"))
}

/// The directions okb converts: PGN → BGN, BGN → PGN, PGN → packed. Anything else is an
/// error naming the first input of the wrong kind, before any work.
fn check_inputs(inputs: &[PathBuf], format: ConvertFormat) -> miette::Result<()> {
    let wrong = match format {
        ConvertFormat::Bgn | ConvertFormat::Packed => inputs.iter().find(|p| is_bgn(p)),
        ConvertFormat::Pgn => inputs.iter().find(|p| !is_bgn(p)),
    };
    let Some(path) = wrong else { return Ok(()) };
    let (writes, reads, kind) = match format {
        ConvertFormat::Bgn => ("BGN", "PGN", "BGN"),
        ConvertFormat::Packed => ("packed move records", "PGN", "BGN"),
        ConvertFormat::Pgn => ("PGN", "BGN", "not BGN"),
    };
    Err(miette::miette!(
        help = "okb convert turns PGN into BGN or packed records, and BGN back into PGN",
        "{} is {kind}: writing {writes} reads {reads} files",
        path.display()
    ))
}
