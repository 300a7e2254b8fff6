//! The `okb` command line: parses the arguments and hands them to the command's module
//! in [`okb::cli`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use okb::cli;
use okb::pipeline;

// okb's phases allocate many small strings and maps; mimalloc halves the time the ECO
// build spends in the allocator compared with glibc's (tuning: `cli::alloc`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// okb compiles chess opening knowledge bases.
///
/// It reads a declarative pipeline.toml (opening taxonomies pinned by content hash,
/// game collections, thresholds, exports) and builds an embedded SQLite store (copied
/// into PostgreSQL with `[store] url`) plus the exports it names. Every step is memoized
/// over content hashes: a second `okb make` with nothing changed does nothing, and
/// changing one input rebuilds only what depends on it.
///
/// Typical session:
///
///   OKB_MIRROR=../shared/sources:../shared/corpus okb make   # build everything
///   okb query moves "1. e4 c5 2. Nf3 d6" --json
///   okb status                                              # what is stale, and why
///
/// Exit status: 0 success, 1 failure (for `okb diff` and `okb check`: a difference),
/// 2 bad command line (and trouble in `okb diff`), 3 warnings under --strict.
#[derive(Parser, Debug)]
#[command(name = "okb", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("OKB_COMMIT"), ")"), verbatim_doc_comment)]
struct Cli {
    /// The pipeline file [default: pipeline.toml].
    #[arg(long, global = true, value_name = "FILE")]
    pipeline: Option<PathBuf>,
    /// Apply the overrides of [profile.NAME] in the pipeline file.
    #[arg(long, global = true, value_name = "NAME")]
    profile: Option<String>,
    /// Colour status words: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value = "auto", value_name = "WHEN")]
    color: cli::output::ColorWhen,
    /// Print only warnings, errors and what was asked for.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print every step, fresh ones included, with the reason it ran.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build the knowledge base: store and exports (only what changed).
    Make(cli::make::MakeArgs),
    /// Show which steps are stale and why, without building anything.
    Status(cli::status::StatusArgs),
    /// Print the pipeline's step graph with each step's state (fresh, or stale and why)
    ///
    ///   okb graph                          # one line per step
    ///   okb graph --format dot | dot -Tsvg > graph.svg
    ///   okb graph --rules --format mermaid # the shape of the pipeline, for docs
    ///   okb graph --format json            # reads, files, parameters, outputs
    #[command(verbatim_doc_comment)]
    Graph(cli::graph::GraphArgs),
    /// Build, then compare the answers [check] names with their snapshot files
    ///
    /// Each line, FEN or opening in [check] has a text file in the snapshots folder
    /// (`checks/` by default): name, ECO, games, rates, engine, structure, moves played.
    /// Commit them; in CI, `okb check` fails (exit 1) and prints the changed lines when an
    /// answer changes.
    ///
    ///   okb check              # build and compare
    ///   okb check --accept     # take the new answers (write, update, remove orphans)
    ///   okb check --locked     # as in a release build
    #[command(verbatim_doc_comment)]
    Check(cli::check::CheckArgs),
    /// What changed in the knowledge base between two builds (exit 1 when different)
    ///
    /// Positions added and removed, names and ECO codes, aliases, transpositions, game
    /// counts and win rates that moved beyond --min-delta, engine evaluations, structure
    /// tags, and export files (from the builds' manifests). Most important first.
    ///
    ///   okb diff                       # the store before the last make that changed it → now
    ///   okb diff old.sqlite new.sqlite # two stores
    ///   okb diff old.sqlite            # a store → this project's
    ///   okb diff --json | jq .diff.added
    #[command(verbatim_doc_comment)]
    Diff(cli::diff::DiffArgs),
    /// Check a build against a release manifest (build/manifest.json by default)
    ///
    /// Compares every output file on disk with the BLAKE3 and size the manifest records,
    /// then runs `okb make --locked` (offline) and compares the manifest that build writes:
    /// sources, game files, engine, parameters, okb version and every output.
    ///
    ///   okb verify                          # this project's last build
    ///   okb verify release/manifest.json    # a published release
    ///   okb verify --fresh                  # rebuild everything with an empty cache
    ///   okb verify --no-build               # only the files on disk
    #[command(verbatim_doc_comment)]
    Verify(cli::verify::VerifyArgs),
    /// Build, then list what okb could not decide, most played first, as a form to fill in
    ///
    ///   okb review structures -o structures/labels.tsv
    #[command(verbatim_doc_comment)]
    Review(cli::review::ReviewArgs),
    /// Download (or copy from a mirror) and verify every pinned source; finish every
    /// explorer crawl (a pinned crawl's missing answers, an unpinned crawl walked).
    Fetch(cli::fetch::FetchArgs),
    /// Crawl the pipeline's Lichess opening explorer sources now
    ///
    /// One request per position, breadth first from the root, politely (one request in
    /// flight, `rate` per second, a minute after a 429). Every answer is kept in
    /// sources/explorer/, so a killed crawl resumes without asking again and a pinned
    /// crawl replays offline. `okb make` crawls what it needs by itself; this command
    /// shows the crawl, and with --refresh fetches it anew and shows what changed.
    ///
    ///   okb crawl                     # finish every crawl, print its manifest hash
    ///   okb crawl --refresh explorer  # crawl again from nothing; diff against the pin
    ///   okb pin --force explorer      # then record the new crawl
    #[command(verbatim_doc_comment)]
    Crawl(cli::crawl::CrawlArgs),
    /// Write the blake3 pin of sources into pipeline.toml (comments and layout kept)
    ///
    ///   okb pin                      # pin every source that has no pin yet
    ///   okb pin --force lichess-a    # fetch lichess-a again; re-pin it if its bytes changed
    ///   okb pin --force              # the same for every source
    #[command(verbatim_doc_comment)]
    Pin(cli::pin::PinArgs),
    /// Remove build outputs (the store, exports, manifest and reports), or the cache's unused entries
    ///
    ///   okb clean                    # the store, the exports, the manifest and reports
    ///   okb clean --cache            # and the whole cache (the next make starts over)
    ///   okb clean --unused           # only what the current build no longer uses
    #[command(verbatim_doc_comment)]
    Clean(cli::clean::CleanArgs),
    /// Build a Polyglot opening book straight from PGN files (no pipeline needed).
    ///
    /// With --weights polyglot (the default) the book equals `polyglot make-book`'s
    /// for the same --max-ply and --min-game, entry for entry.
    Book(cli::book::BookArgs),
    /// Count game files into a portable counts file, or merge counts files
    ///
    /// A counts file (.okbc) holds the per-position and per-move counts of some games, to
    /// the tree's depth. Count parts anywhere (one per machine or cluster worker), merge
    /// them, and declare the result as a source: the tree is the same as from the games.
    ///
    ///   okb count -o part1.okbc games/2024-*.pgn.zst
    ///   okb count --merge -o all.okbc part*.okbc
    ///   # pipeline.toml: [sources.lichess] kind = "counts", path = "all.okbc"
    #[command(verbatim_doc_comment)]
    Count(cli::count::CountArgs),
    /// Grow a counts state folder a month at a time, on several machines (Spark)
    ///
    /// The counts state of a large game source (all of Lichess) kept as a folder every
    /// machine can read and write: each machine counts some of a month's files into
    /// slices by shard, each shard is merged with its slices on its own (one task per
    /// shard), and the month is committed. spark/okb_state.py runs these on Spark; a
    /// pipeline reads the folder as a source, and builds the tree a `state = true` game
    /// source over the same months builds.
    ///
    ///   okb state init --state st --shards 64 --max-ply 15
    ///   okb state count --state st -o staging/part-0 2024-01.pgn.zst
    ///   okb state merge --state st --shard 0 --min-games 5 staging/part-*
    ///   okb state commit --state st --month 2024-01 staging/part-*
    ///   # pipeline.toml: [sources.lichess] kind = "counts-state", path = "st"
    #[command(verbatim_doc_comment)]
    State(cli::state::StateArgs),
    /// Engine annotation on other machines: queue the searches, annotate, import results
    ///
    /// The engine step of a large pipeline can run elsewhere (other machines, a Spark
    /// cluster: spark/okb_engine.py). `queue` lists the positions the engine cache lacks
    /// with the engine they need, `annotate` searches a queue (or part K/N of it) with
    /// Stockfish, and `import` checks the results against [engine] and caches them; the
    /// next `okb make` finds them there and starts no engine for them.
    ///
    ///   okb engine queue -o queue.okbq
    ///   okb engine annotate --part 1/2 -o part-1.okbr queue.okbq   # on machine 1
    ///   okb engine annotate --part 2/2 -o part-2.okbr queue.okbq   # on machine 2
    ///   okb engine import part-*.okbr && okb make
    #[command(verbatim_doc_comment)]
    Engine(cli::engine::EngineArgs),
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
    Classify(cli::classify::ClassifyArgs),
    /// Name the pawn structure of a position (Isolated Queen's Pawn, Carlsbad, ...)
    ///
    /// Prints the structure's name, or with --json how it was found (exact or near pawn
    /// skeleton, rule), the rule that fits (its conditions on each side), the description
    /// and typical plans. "Unknown" when nothing fits, and before both sides have moved a
    /// centre pawn.
    ///
    ///   okb structure "r1bqkb1r/pp3ppp/2n2n2/3p4/3P4/2N2N2/PP3PPP/R1BQKB1R w KQkq - 0 7"
    ///   okb structure --list            # the 78 structures okb names
    #[command(verbatim_doc_comment)]
    Structure(cli::structure::StructureArgs),
    /// Prepare for an opponent: their games from the pipeline's player collections
    ///
    /// The positions they reach most with that colour, their moves there and their
    /// score, and where their games leave each of your repertoires for the other colour.
    ///
    ///   okb prep --player "Kasparov, Gary" --side black --since 1990
    #[command(verbatim_doc_comment)]
    Prep(cli::prep::PrepArgs),
    /// Serve the built store over HTTP: the opening explorer at / and the JSON API
    ///
    /// Answers from the store file until Ctrl-C (a store of at most --in-memory-nodes is
    /// also held in memory): the explorer page (a board over the knowledge base, open
    /// http://127.0.0.1:8000/), /node/fen/{fen}, POST /node/pgn, /opening/search?q=,
    /// /opening/eco/{code}, /opening/{id}/tree, /masters, /lichess, /masters/pgn/{id},
    /// /player, /repertoire/{name}, /api/cloud-eval, /structure/{name}/openings and
    /// /openapi.json (every endpoint with its parameters: docs/store-and-api.md#endpoints).
    /// A new build that `okb make` writes is served without a restart. --cors ORIGIN lets
    /// pages on another origin call the API.
    Serve(cli::serve::ServeArgs),
    /// Write an export from the built store in bounded memory: CSV, Polyglot, OpeningIQ, PostgreSQL
    ///
    /// The same bytes as the pipeline's [exports] of that format for the build, without a
    /// rebuild, and from a store of any size (50 M nodes: the rows and edges are read as a
    /// stream, the book sorted in runs of --memory-mb spilled to disk); `postgres` copies
    /// the store into a schema as `[store] url` does.
    ///
    ///   okb export csv -o nodes.csv
    ///   okb export polyglot -o book.bin --weights games
    ///   okb export openingiq -o bundles --store big/okb.sqlite
    #[command(verbatim_doc_comment)]
    Export(cli::export::ExportArgs),
    /// Write OpeningIQ JSON trees (one file per named opening) from the built store
    ///
    /// The same files as an `[exports.X] format = "openingiq"` step, without a rebuild:
    ///
    ///   okb openingiq -o bundles --max-depth 12
    #[command(verbatim_doc_comment)]
    Openingiq(cli::openingiq::OpeningiqArgs),
    /// Decode a packed move-record file into a table (or --json).
    ///
    /// Each entry is a position's Polyglot key and a 64-bit record: the move, White's
    /// average Elo, the Elo difference, the most frequent result with its share, the game
    /// count and the weight (docs/exports.md: "Packed move records").
    Inspect(cli::inspect::InspectArgs),
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
    Convert(cli::convert::ConvertArgs),
    /// Read the built store.
    Query(cli::query::QueryCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(cli::completions::CompletionsArgs),
    /// Print okb's man page (roff): `okb man > okb.1 && man ./okb.1`
    Man,
}

fn main() -> ExitCode {
    okb::release::manifest::Tool::record_commit(env!("OKB_COMMIT"));
    cli::alloc::sqlite_uses_mimalloc();
    cli::output::end_quietly_on_closed_stdout();
    let Cli { pipeline: file, profile, color, quiet, verbose, command } = parse();
    cli::output::configure(color, quiet, verbose);
    let row = Row::of(command);
    if !row.reads_pipeline
        && let Some(flag) = [("--pipeline", file.is_some()), ("--profile", profile.is_some())]
            .iter()
            .find(|(_, given)| *given)
            .map(|(f, _)| f)
    {
        eprintln!("error: {flag} has no effect on `okb {}`, which reads no pipeline", row.name);
        return ExitCode::from(2);
    }
    let file = file.unwrap_or_else(|| PathBuf::from("pipeline.toml"));
    let load = || pipeline::load(&file, profile.as_deref()).map_err(|e| miette::Report::new(*e));
    match (row.run)(&load) {
        Ok(code) => code,
        Err(report) if row.prints && cli::output::is_closed_stdout(&report) => ExitCode::SUCCESS,
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::FAILURE
        }
    }
}

/// The commands that never read the pipeline ([`Row::of`] says `false` for them whatever
/// their flags): their `--help` does not offer `--pipeline` and `--profile`, which they
/// refuse.
const NO_PIPELINE: &[&[&str]] = &[
    &["book"],
    &["count"],
    &["engine", "annotate"],
    &["structure"],
    &["inspect"],
    &["convert"],
    &["completions"],
    &["man"],
];

/// The command line, parsed with [`NO_PIPELINE`]'s commands' help cut down.
fn parse() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = Cli::command();
    for path in NO_PIPELINE {
        command = hide_pipeline_flags(command, path);
    }
    let matches = command.get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// `command` with `--pipeline` and `--profile` hidden from the subcommand at `path`: its
/// own hidden copies of the global flags, which clap then does not copy into it (their
/// values still reach the top level, where the entry point refuses them).
fn hide_pipeline_flags(command: clap::Command, path: &[&str]) -> clap::Command {
    use clap::{Arg, value_parser};
    match path {
        [] => command
            .arg(
                Arg::new("pipeline")
                    .long("pipeline")
                    .value_name("FILE")
                    .value_parser(value_parser!(PathBuf))
                    .hide(true),
            )
            .arg(
                Arg::new("profile")
                    .long("profile")
                    .value_name("NAME")
                    .value_parser(value_parser!(String))
                    .hide(true),
            ),
        [first, rest @ ..] => command.mut_subcommand(*first, |sub| hide_pipeline_flags(sub, rest)),
    }
}

/// Reads the pipeline (`--pipeline`, `--profile`); a command calls it only if it needs it.
type Load<'a> = dyn Fn() -> miette::Result<pipeline::Loaded> + 'a;

/// What the entry point knows of a command, said once per command in [`Row::of`]: the
/// table of commands beside clap's parser ([`Command`]), so no second list has to agree.
struct Row {
    /// Its name as messages show it (with the flag that decides `reads_pipeline`).
    name: &'static str,
    /// Whether it reads the pipeline (else `--pipeline` and `--profile` are refused).
    reads_pipeline: bool,
    /// Whether its output is its stdout, so that a closed pipe (`| head`) is a normal end;
    /// elsewhere a broken pipe is a real failure (an engine that died, a download cut off).
    prints: bool,
    /// Runs it with its arguments, to its exit status.
    run: RunCommand,
}

/// What runs a command: its arguments (captured) and the loaded pipeline, to its exit
/// status.
type RunCommand = Box<dyn FnOnce(&Load<'_>) -> miette::Result<ExitCode>>;

/// A row of the table.
fn row(
    name: &'static str,
    reads_pipeline: bool,
    prints: bool,
    run: impl FnOnce(&Load<'_>) -> miette::Result<ExitCode> + 'static,
) -> Row {
    Row { name, reads_pipeline, prints, run: Box::new(run) }
}

/// The exit status of a command that succeeds or fails, nothing between.
fn done(result: miette::Result<()>) -> miette::Result<ExitCode> {
    result.map(|()| ExitCode::SUCCESS)
}

impl Row {
    /// The row of `command`, its arguments moved into the row's `run`.
    fn of(command: Command) -> Row {
        use cli::engine::EngineCommand;
        match command {
            Command::Make(args) => {
                row("make", true, false, move |load| cli::make::run(&args, load))
            }
            Command::Status(args) => {
                row("status", true, false, move |load| cli::status::run(&args, &load()?))
            }
            Command::Graph(args) => {
                row("graph", true, true, move |load| done(cli::graph::run(&args, &load()?)))
            }
            Command::Check(args) => {
                row("check", true, false, move |load| cli::check::run(&args, load))
            }
            Command::Diff(args) => {
                row("diff", true, true, move |load| Ok(cli::diff::run(&args, load)))
            }
            Command::Verify(args) => {
                row("verify", true, false, move |load| cli::verify::run(&args, load))
            }
            Command::Review(args) => {
                row("review", true, true, move |load| done(cli::review::run(&args, load)))
            }
            Command::Fetch(args) => {
                row("fetch", true, false, move |load| done(cli::fetch::run(&load()?, &args)))
            }
            Command::Crawl(args) => {
                row("crawl", true, false, move |load| done(cli::crawl::run(&load()?, &args)))
            }
            Command::Pin(args) => {
                row("pin", true, false, move |load| done(cli::pin::run(&load()?, &args)))
            }
            Command::Clean(args) => {
                row("clean", true, false, move |load| done(cli::clean::run(&load()?, &args)))
            }
            Command::Book(args) => row("book", false, false, move |_| done(cli::book::run(&args))),
            Command::Count(args) => {
                row("count", false, false, move |_| done(cli::count::run(&args)))
            }
            Command::State(args) => {
                row("state", false, false, move |_| done(cli::state::run(&args)))
            }
            Command::Engine(args) => {
                let reads_pipeline = !matches!(args.what, EngineCommand::Annotate(_));
                row("engine annotate", reads_pipeline, false, move |load| {
                    done(cli::engine::run(&args, load))
                })
            }
            Command::Classify(args) => {
                row("classify --store", args.store.is_none(), true, move |load| {
                    let store = cli::store_path(args.store.clone(), load)?;
                    done(cli::classify::run(&args, store.path.clone()))
                })
            }
            Command::Structure(args) => {
                row("structure", false, true, move |_| done(cli::structure::run(&args)))
            }
            Command::Prep(args) => {
                row("prep", true, true, move |load| done(cli::prep::run(&load()?, &args)))
            }
            Command::Serve(args) => {
                row("serve --store", args.store.is_none(), false, move |load| {
                    let file = cli::store_path(args.store.clone(), load)?;
                    let project = if args.store.is_none() { load().ok() } else { None };
                    done(cli::serve::run(&args, file.path.clone(), project))
                })
            }
            Command::Export(args) => {
                row("export --store", args.store().is_none(), false, move |load| {
                    let file = cli::store_path(args.store().cloned(), load)?;
                    done(cli::export::run(&args, &file.path))
                })
            }
            Command::Openingiq(args) => {
                row("openingiq --store", args.target.store.is_none(), false, move |load| {
                    let file = cli::store_path(args.target.store.clone(), load)?;
                    done(cli::openingiq::run(&args, file.path.clone()))
                })
            }
            Command::Inspect(args) => {
                row("inspect", false, true, move |_| done(cli::inspect::run(&args)))
            }
            Command::Convert(args) => {
                row("convert", false, false, move |_| cli::convert::run(&args))
            }
            Command::Query(args) => row("query --store", args.store.is_none(), true, move |load| {
                let file = cli::store_path(args.store, load)?;
                let store = okb::store::read::Store::open(&file.path)
                    .map_err(|e| miette::miette!("{e}"))?;
                cli::query::run(&store, args.query.args())
            }),
            Command::Completions(args) => row("completions", false, true, move |_| {
                done(cli::completions::completions(
                    &args,
                    &mut <Cli as clap::CommandFactory>::command(),
                ))
            }),
            Command::Man => row("man", false, true, |_| {
                done(cli::completions::man(<Cli as clap::CommandFactory>::command()))
            }),
        }
    }
}
