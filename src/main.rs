//! The `okb` command line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use miette::{IntoDiagnostic, WrapErr, miette};

use okb::build::{Status, StepReport};
use okb::make::{self, MakeOptions};
use okb::pipeline;

// okb's phases allocate many small strings and maps; mimalloc halves the time the ECO
// build spends in the allocator compared with glibc's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_malloc(size: usize) -> *mut std::ffi::c_void;
    fn mi_realloc(p: *mut std::ffi::c_void, size: usize) -> *mut std::ffi::c_void;
    fn mi_free(p: *mut std::ffi::c_void);
    fn mi_usable_size(p: *const std::ffi::c_void) -> usize;
    fn mi_good_size(size: usize) -> usize;
}

/// `mi_option_purge_delay` in mimalloc v2's `mi_option_t` (not in the Rust bindings).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Keeps freed memory in the process instead of returning it to the OS. A build frees
/// one step's values and allocates the next step's moments later; returned memory must
/// be faulted in and zeroed again, which costs a cold ECO build half its page faults.
/// For one-shot commands only: a server would keep its startup peak.
fn keep_freed_memory() {
    // SAFETY: plain C calls on mimalloc's option table, valid at any time.
    unsafe {
        // Only where the option is the one meant: purge_delay defaults to 10 (ms).
        if mi_option_get(MI_OPTION_PURGE_DELAY) == 10 {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

/// Gives SQLite the process's allocator (mimalloc) instead of glibc's malloc. SQLite's
/// page caches come and go with every store connection; glibc maps and unmaps their large
/// blocks each time, so every page of them is faulted in and zeroed again, while
/// mimalloc reuses what the previous connection (or step) freed. Must run before any
/// SQLite use; a later call is refused by SQLite and changes nothing.
fn sqlite_uses_mimalloc() {
    use rusqlite::ffi;
    use std::ffi::{c_int, c_void};
    unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
        // SAFETY: mimalloc's malloc accepts any size.
        unsafe { mi_malloc(n.max(0) as usize) }
    }
    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: SQLite frees only what these methods allocated.
        unsafe { mi_free(p) }
    }
    unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
        // SAFETY: as for `free`; mimalloc reallocates its own blocks.
        unsafe { mi_realloc(p, n.max(0) as usize) }
    }
    unsafe extern "C" fn size(p: *mut c_void) -> c_int {
        // SAFETY: as for `free`.
        unsafe { mi_usable_size(p) as c_int }
    }
    unsafe extern "C" fn roundup(n: c_int) -> c_int {
        // SAFETY: a pure function of its argument.
        unsafe { mi_good_size(n.max(0) as usize) as c_int }
    }
    unsafe extern "C" fn init(_: *mut c_void) -> c_int {
        ffi::SQLITE_OK
    }
    unsafe extern "C" fn shutdown(_: *mut c_void) {}
    let methods = ffi::sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: SQLITE_CONFIG_MALLOC takes a pointer to methods that SQLite copies before
    // it returns; called before SQLite initializes (otherwise SQLite returns
    // SQLITE_MISUSE and keeps its own).
    unsafe {
        ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &raw const methods);
    }
}

/// okb compiles chess opening knowledge bases.
///
/// It reads a declarative pipeline.toml (opening taxonomies pinned by content hash,
/// game collections, thresholds, exports) and builds an embedded SQLite store plus the
/// exports it names. Every step is memoized over content hashes: a second `okb make`
/// with nothing changed does nothing, and changing one input rebuilds only what depends
/// on it.
///
/// Typical session:
///
///   OKB_MIRROR=../shared/sources okb make     # build everything
///   okb query moves "1. e4 c5 2. Nf3 d6" --json
///   okb status                                # what is stale, and why
///
/// Exit status: 0 success, 1 failure, 2 bad command line, 3 warnings under --strict.
#[derive(Parser, Debug)]
#[command(name = "okb", version, verbatim_doc_comment)]
struct Cli {
    /// The pipeline file.
    #[arg(long, global = true, default_value = "pipeline.toml", value_name = "FILE")]
    pipeline: PathBuf,
    /// Apply the overrides of [profile.NAME] in the pipeline file.
    #[arg(long, global = true, value_name = "NAME")]
    profile: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build the knowledge base: store and exports (only what changed).
    Make {
        /// A folder holding source files (matched by content hash); repeatable.
        /// Also read from OKB_MIRROR (colon-separated).
        #[arg(long, value_name = "DIR")]
        mirror: Vec<PathBuf>,
        /// Never download sources.
        #[arg(long)]
        offline: bool,
        /// Worker threads (default: one per core).
        #[arg(short = 'j', long, value_name = "N")]
        jobs: Option<usize>,
        /// Say for every step why it ran.
        #[arg(long)]
        explain: bool,
        /// Treat warnings (skipped rows, orphans, duplicates) as failure (exit status 3).
        #[arg(long)]
        strict: bool,
    },
    /// Show which steps are stale and why, without building anything.
    Status {
        /// Mirror folders, as for make.
        #[arg(long, value_name = "DIR")]
        mirror: Vec<PathBuf>,
    },
    /// Download (or copy from a mirror) and verify every pinned source.
    Fetch {
        /// Mirror folders, as for make.
        #[arg(long, value_name = "DIR")]
        mirror: Vec<PathBuf>,
        /// Never download.
        #[arg(long)]
        offline: bool,
    },
    /// Compute and write the blake3 pin of every source that has none yet.
    Pin,
    /// Remove build outputs (the store and exports).
    Clean {
        /// Remove the cache as well.
        #[arg(long)]
        cache: bool,
    },
    /// Build a Polyglot opening book straight from PGN files (no pipeline needed).
    ///
    /// With --weights polyglot (the default) the book equals `polyglot make-book`'s
    /// for the same --max-ply and --min-game, entry for entry.
    Book(okb::cli_book::BookArgs),
    /// Give each game of PGN files its opening from the knowledge base
    ///
    /// Every game gets the ECO code and name of the deepest known position it reaches,
    /// whatever the move order (transpositions count). Output: the same PGN with the ECO,
    /// Opening and Variation tags rewritten; games without a known position or with
    /// illegal moves are copied unchanged and counted on stderr. With an output named
    /// *.bgn (or *.bgn.bz2): BGN, the classification in each game's `opening`.
    ///
    ///   okb classify -o classified.pgn games/*.pgn.zst
    ///   okb classify -o classified.bgn games.pgn
    #[command(verbatim_doc_comment)]
    Classify(okb::cli_classify::ClassifyArgs),
    /// Name the pawn structure of a position (Isolated Queen's Pawn, Carlsbad, ...)
    ///
    /// Prints the structure's name, or with --json the rule that matched (its conditions
    /// on each side), the description and typical plans. "Unknown" when no rule fits.
    ///
    ///   okb structure "r1bqkb1r/pp3ppp/2n2n2/3p4/3P4/2N2N2/PP3PPP/R1BQKB1R w KQkq - 0 7"
    #[command(verbatim_doc_comment)]
    Structure(okb::cli_structure::StructureArgs),
    /// Serve the built store over HTTP (read-only JSON API; see GET /openapi.json).
    ///
    /// Loads the store into memory, then answers /node/fen/{fen}, POST /node/pgn,
    /// /opening/search?q=, /opening/eco/{code}, /opening/{id}/tree and /masters until
    /// Ctrl-C. Restart it after `okb make` to serve the new build.
    Serve {
        /// Address to listen on (port 0 picks a free port; the bound address goes to stderr).
        #[arg(long, default_value = "127.0.0.1:8000", value_name = "IP:PORT")]
        addr: std::net::SocketAddr,
        /// Serve this store file instead of the pipeline's [store] path.
        #[arg(long, value_name = "FILE")]
        store: Option<PathBuf>,
    },
    /// Write OpeningIQ JSON trees (one file per named opening) from the built store
    ///
    /// The same files as an `[exports.X] format = "openingiq"` step, without a rebuild:
    ///
    ///   okb openingiq -o bundles --max-depth 12
    #[command(verbatim_doc_comment)]
    Openingiq {
        /// Output directory.
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Plies kept below each named opening.
        #[arg(long, default_value_t = okb::export::openingiq::DEFAULT_MAX_DEPTH, value_name = "N")]
        max_depth: u32,
        /// Compact JSON instead of indented.
        #[arg(long)]
        compact: bool,
        /// Read this store file instead of the pipeline's [store] path.
        #[arg(long, value_name = "FILE")]
        store: Option<PathBuf>,
    },
    /// Decode a packed move-record file into a table (or --json).
    ///
    /// Each entry is a position's Polyglot key and a 64-bit record: the move, White's
    /// average Elo, the Elo difference, the most frequent result with its share, the game
    /// count and the weight (README: "Packed move records").
    Inspect(okb::cli_inspect::InspectArgs),
    /// Convert games between PGN and BGN, or into packed move records
    ///
    /// PGN → BGN (JSON lines, optionally bz2 and split), BGN → PGN, games → packed:
    ///
    ///   okb convert -o games.bgn.bz2 --split-size 100M twic0920.pgn
    ///   okb convert -o back.pgn games-0001.bgn.bz2
    ///   okb convert --format packed -o moves.okbm --max-ply 15 --min-games 5 games.pgn
    ///   okb convert --store build/okb.sqlite -o named.bgn games.pgn
    ///
    /// A game's BGN `opening` comes from its own ECO/Opening tags, or with --store from
    /// the knowledge base (the deepest known position it reaches, transpositions count).
    /// BGN keeps the main line, every tag, comments ([%eval]/[%clk] parsed) and NAGs, so
    /// BGN → PGN gives the same game back. Unreadable games are skipped and reported with
    /// file:line; --strict makes that exit status 3.
    #[command(verbatim_doc_comment)]
    Convert(okb::convert::ConvertArgs),
    /// Read the built store.
    Query {
        #[command(subcommand)]
        query: Query,
    },
}

#[derive(Subcommand, Debug)]
enum Query {
    /// The node of a position. Move counters are optional; any en-passant convention works.
    Fen {
        /// FEN or EPD, quoted.
        fen: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Named openings with an ECO code (B03) or SCID code (B03a).
    Eco {
        /// The code.
        code: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Named openings whose name or alias contains TEXT (case-insensitive).
    Name {
        /// Part of a name.
        text: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The node reached by a line of SAN moves, e.g. "1. e4 e5 2. Nf3".
    Moves {
        /// The moves, quoted.
        moves: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    sqlite_uses_mimalloc();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::FAILURE
        }
    }
}

fn paint(status: &str, color: &str) -> String {
    if std::io::stderr().is_terminal() {
        format!("\x1b[1;{color}m{status:>12}\x1b[0m")
    } else {
        format!("{status:>12}")
    }
}

/// Whether a step is one game file's parse: many of them, so fresh ones are counted
/// instead of listed.
fn is_file_step(id: &str) -> bool {
    id.starts_with("games:") && id.matches(':').count() >= 2
}

fn print_step(report: &StepReport, explain: bool) {
    if report.status == Status::Fresh && is_file_step(&report.id) && !explain {
        return;
    }
    let (word, color) = match report.status {
        Status::Fresh => ("Fresh", "32"),
        Status::Built => ("Building", "32"),
        Status::Restored => ("Restored", "36"),
        Status::Stale => ("Stale", "33"),
    };
    let mut line = format!("{} {}", paint(word, color), report.id);
    if !report.summary.is_empty() {
        line.push_str(&format!(" ({})", report.summary));
    }
    if report.warnings > 0 {
        line.push_str(&format!(", {} warnings", report.warnings));
    }
    if report.status == Status::Built {
        line.push_str(&format!(" in {:.2}s", report.elapsed.as_secs_f64()));
    }
    okb::progress::println(&line);
    if let Some(reason) = &report.reason
        && (explain || report.status == Status::Stale) {
            okb::progress::println(&format!("{:>12} because {reason}", ""));
        }
}

fn run(cli: Cli) -> miette::Result<ExitCode> {
    let load = || pipeline::load(&cli.pipeline, cli.profile.as_deref()).map_err(|e| miette::Report::new(*e));
    match cli.command {
        Command::Make { mirror, offline, jobs, explain, strict } => {
            keep_freed_memory();
            if let Some(n) = jobs {
                rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global().into_diagnostic()?;
            }
            let loaded = load()?;
            let _lock = okb::build::lock::ProjectLock::acquire(&make::cache_dir(&loaded))
                .into_diagnostic()
                .wrap_err("taking the project lock")?;
            let options = MakeOptions { mirrors: okb::sources::mirrors(&mirror), offline, dry_run: false };
            let summary = make::make(&loaded, &options, move |r| print_step(r, explain))?;
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
            if strict && warnings > 0 {
                eprintln!("error: {warnings} warnings and --strict was given");
                return Ok(ExitCode::from(3));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Status { mirror } => {
            let loaded = load()?;
            let options = MakeOptions { mirrors: okb::sources::mirrors(&mirror), offline: true, dry_run: true };
            let summary = make::make(&loaded, &options, |r| print_step(r, true))?;
            let stale = summary.steps.iter().filter(|s| s.status == Status::Stale).count();
            if stale == 0 {
                eprintln!("{} everything is up to date", paint("Fresh", "32"));
            } else {
                eprintln!("{} {stale} of {} steps would run", paint("Stale", "33"), summary.steps.len());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Fetch { mirror, offline } => {
            let loaded = load()?;
            okb::commands::fetch(&loaded, &okb::sources::mirrors(&mirror), offline)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Pin => {
            let loaded = load()?;
            okb::commands::pin(&loaded)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Clean { cache } => {
            let loaded = load()?;
            okb::commands::clean(&loaded, cache)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Book(args) => {
            okb::cli_book::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Classify(args) => {
            let store = store_path(args.store.clone(), load)?;
            okb::cli_classify::run(&args, store)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Structure(args) => {
            okb::cli_structure::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve { addr, store } => {
            let store = store_path(store, load)?;
            okb::serve::run(&store, addr)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Openingiq { output, max_depth, compact, store } => {
            let store = store_path(store, load)?;
            let written = okb::export::openingiq::write_from_store(&store, &output, max_depth, !compact).map_err(|e| miette!("{e}"))?;
            eprintln!("{} {written} files in {}", paint("Wrote", "32"), output.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Convert(args) => okb::convert::run(&args),
        Command::Inspect(args) => {
            okb::cli_inspect::run(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Query { query } => {
            let loaded = load()?;
            let store = okb::store::read::Store::open(&loaded.path(&loaded.pipeline.store.path)).map_err(|e| miette!("{e}"))?;
            okb::commands::query(&store, query_args(query))
        }
    }
}

/// The store to read: `--store FILE` if given, else the pipeline's `[store] path`.
fn store_path(
    given: Option<PathBuf>,
    load: impl Fn() -> miette::Result<pipeline::Loaded>,
) -> miette::Result<PathBuf> {
    match given {
        Some(path) => Ok(path),
        None => {
            let loaded = load()?;
            Ok(loaded.path(&loaded.pipeline.store.path))
        }
    }
}

fn query_args(q: Query) -> okb::commands::QueryArgs {
    use okb::commands::{QueryArgs, QueryKind};
    match q {
        Query::Fen { fen, json } => QueryArgs { kind: QueryKind::Fen, text: fen, json },
        Query::Eco { code, json } => QueryArgs { kind: QueryKind::Eco, text: code, json },
        Query::Name { text, json } => QueryArgs { kind: QueryKind::Name, text, json },
        Query::Moves { moves, json } => QueryArgs { kind: QueryKind::Moves, text: moves, json },
    }
}

/// Prints warnings grouped by kind: the first few of each in full, then a count.
fn print_warnings(warnings: &[okb::diagnostics::Warning]) {
    const SHOWN: usize = 5;
    let mut kinds: Vec<&str> = warnings.iter().map(|w| w.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let of_kind: Vec<_> = warnings.iter().filter(|w| w.kind == kind).collect();
        if of_kind[0].is_note() {
            eprintln!("{} [{kind}] {} lines (first: {})", paint("note", "36"), of_kind.len(), of_kind[0]);
            continue;
        }
        for w in of_kind.iter().take(SHOWN) {
            eprintln!("{} [{kind}] {w}", paint("warning", "33"));
        }
        if of_kind.len() > SHOWN {
            eprintln!("{} [{kind}] … and {} more", paint("warning", "33"), of_kind.len() - SHOWN);
        }
    }
}
