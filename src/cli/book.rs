//! `okb book`: PGN files → Polyglot book, a drop-in for `polyglot make-book`.
//!
//! Defaults follow Polyglot (`-max-ply 1024`, `-min-game 3`, weights 2 × wins + draws),
//! so `okb book -o b.bin --max-ply 15 --min-games 50 games.pgn` and
//! `polyglot make-book -pgn games.pgn -bin b.bin -max-ply 15 -min-game 50` write the same
//! file.

use std::path::PathBuf;
use std::time::Instant;

use miette::{IntoDiagnostic, WrapErr};

use crate::export::book::{BookOptions, DEFAULT_BOOK_MAX_PLY, DEFAULT_MIN_GAME, build_book};
use crate::export::polyglot::{WeightMode, write_book};
use crate::games::input::expand_paths;

/// Arguments of `okb book`.
#[derive(Debug, Clone, clap::Args)]
pub struct BookArgs {
    /// Output book file (.bin).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Count moves played before this ply (Polyglot's -max-ply).
    #[arg(long = "max-ply", default_value_t = DEFAULT_BOOK_MAX_PLY)]
    pub max_ply: usize,
    /// Leave out moves played in fewer games (Polyglot's -min-game).
    #[arg(long = "min-games", alias = "min-game", default_value_t = DEFAULT_MIN_GAME)]
    pub min_game: u64,
    /// Weights: `polyglot` (2 × wins + draws, exactly as make-book) or `games` (game
    /// counts scaled so each position's most played move weighs 65535).
    #[arg(long = "weights", value_enum, default_value_t = WeightMode::Polyglot)]
    pub weights: WeightMode,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// PGN files or glob patterns (.pgn, .pgn.zst, .pgn.bz2, .pgn.gz), read in order.
    #[arg(required = true)]
    pub pgn: Vec<String>,
}

/// Runs `okb book` and prints a short summary.
pub fn run(args: &BookArgs) -> miette::Result<()> {
    let started = Instant::now();
    let paths = expand_paths(&args.pgn).into_diagnostic()?;
    let opts = BookOptions {
        max_ply: args.max_ply,
        min_game: args.min_game,
        weights: args.weights,
        ..Default::default()
    };
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(j) = args.jobs {
        builder = builder.num_threads(j.max(1));
    }
    let pool = builder.build().into_diagnostic().wrap_err("cannot start worker threads")?;
    let result = pool.install(|| build_book(&paths, &opts)).into_diagnostic()?;
    write_book(&args.output, &result.entries).into_diagnostic()?;
    let c = &result.counters;
    println!(
        "{}: {} entries from {} games ({} counted, {} bad, {} filtered) in {} file(s), {:.2} s",
        args.output.display(),
        result.entries.len(),
        c.games_read,
        c.games_counted,
        c.games_bad,
        c.games_filtered(),
        paths.len(),
        started.elapsed().as_secs_f64()
    );
    if !result.bad.is_empty() {
        print!("{}", result.bad.render_table());
    }
    if c.games_filtered() > 0 {
        print!("{}", c.render_filtered());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        book: BookArgs,
    }

    #[test]
    fn parses_polyglot_like_options_and_writes_a_book() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("twic.bin");
        let pgn = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/twic/twic0920.pgn");
        let cli = Cli::parse_from([
            "okb",
            "-o",
            out.to_str().unwrap(),
            "--max-ply",
            "12",
            "--min-game",
            "2",
            "-j",
            "1",
            pgn,
        ]);
        assert_eq!(
            (cli.book.max_ply, cli.book.min_game, cli.book.weights),
            (12, 2, WeightMode::Polyglot)
        );
        run(&cli.book).unwrap();
        let entries = crate::export::polyglot::from_bytes(&std::fs::read(&out).unwrap());
        assert!(entries.len() > 100);
        assert!(entries.windows(2).all(|w| w[0].key <= w[1].key));
        let defaults = Cli::parse_from(["okb", "-o", "b.bin", "x.pgn"]);
        assert_eq!((defaults.book.max_ply, defaults.book.min_game), (1024, 3));
        assert!(Cli::try_parse_from(["okb", "-o", "b.bin"]).is_err(), "PGN files are required");
    }
}
