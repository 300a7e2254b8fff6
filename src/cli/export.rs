//! `okb export`: an export written from the built store rather than by a pipeline step,
//! read as a stream so that memory does not follow the store's size: a CSV row per node
//! (one pass over the nodes, sorted by identity unless `--order id`), a Polyglot book
//! (one pass over the edges, sorted in runs of `--memory-mb`), OpeningIQ files (each
//! named opening's subtree read on its own from a large store), and a PostgreSQL schema
//! (every table copied). The files' bytes are the export steps' for the same build.

use std::path::{Path, PathBuf};
use std::time::Instant;

use miette::miette;
use rayon::prelude::*;

use super::output::paint;
use crate::export::polyglot::WeightMode;
use crate::store::StoreError;
use crate::store::read::Store;
use crate::store::scan::RecordOrder;

/// Arguments of `okb export`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The format.
    #[command(subcommand)]
    pub format: ExportFormat,
}

/// The formats `okb export` writes.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ExportFormat {
    /// One CSV row per node, in the order of the build's tree (as `format = "csv"`)
    ///
    ///   okb export csv -o nodes.csv
    ///   okb export csv -o nodes.tsv --delimiter $'\t' --store big/okb.sqlite
    #[command(verbatim_doc_comment)]
    Csv(CsvArgs),
    /// A Polyglot book of every edge games played (as `format = "polyglot"`)
    ///
    /// The book's entries are sorted in runs of --memory-mb, spilled to unnamed temporary
    /// files beside the output and merged, so a book of any size takes that much memory.
    ///
    ///   okb export polyglot -o book.bin
    ///   okb export polyglot -o book.bin --weights games --memory-mb 1024
    #[command(verbatim_doc_comment)]
    Polyglot(PolyglotArgs),
    /// One OpeningIQ JSON tree per named opening (as `format = "openingiq"`)
    ///
    /// A store of more than --in-memory-nodes nodes is read one opening's subtree at a
    /// time; a smaller one is loaded whole once (faster).
    ///
    ///   okb export openingiq -o bundles --max-depth 12
    #[command(verbatim_doc_comment)]
    Openingiq(OpeningiqArgs),
    /// The store copied into a PostgreSQL schema (as `[store] url`), swapped in at once
    ///
    /// -o is the database's URL, its schema named by `schema=` (`okb` by default); the
    /// password comes from PGPASSWORD or ~/.pgpass. Every table is streamed with binary
    /// COPY into a new schema, keyed and indexed, then swapped in under the name in one
    /// transaction: readers never see half a knowledge base, and an interrupted copy
    /// leaves the previous one in place.
    ///
    ///   okb export postgres -o 'postgres://okb@db.example:5432/kb?schema=okb'
    #[command(verbatim_doc_comment)]
    Postgres(PostgresArgs),
}

/// What every format takes: where to write, and which store to read.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// The file to write (the folder, for openingiq; the database's URL, for postgres).
    #[arg(short, long, value_name = "PATH")]
    pub output: PathBuf,
    /// Read this store file (or a PostgreSQL knowledge base: postgres://user@host:port/db?schema=okb,
    /// password from PGPASSWORD or ~/.pgpass) instead of the pipeline's [store] path.
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
}

/// Arguments of `okb export csv`.
#[derive(Debug, Clone, clap::Args)]
pub struct CsvArgs {
    #[command(flatten)]
    pub target: Target,
    /// Field delimiter, one ASCII character.
    #[arg(long, default_value = ",", value_parser = one_byte)]
    pub delimiter: u8,
    /// Row order: identity (the export step's bytes; a large store's rows are sorted
    /// first, in SQLite's temporary folder) or id (the store's own order, written as read).
    #[arg(long, value_enum, default_value_t = RecordOrder::Identity)]
    pub order: RecordOrder,
}

/// Arguments of `okb export polyglot`.
#[derive(Debug, Clone, clap::Args)]
pub struct PolyglotArgs {
    #[command(flatten)]
    pub target: Target,
    /// Book weights: polyglot (2 × wins + draws of the mover) or games (game counts).
    #[arg(long, value_enum, default_value_t = WeightMode::Polyglot)]
    pub weights: WeightMode,
    /// Memory for the book's entries being sorted, in MiB (more is spilled to disk).
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    pub memory_mb: usize,
}

/// Arguments of `okb export postgres`.
#[derive(Debug, Clone, clap::Args)]
pub struct PostgresArgs {
    #[command(flatten)]
    pub target: Target,
}

/// Arguments of `okb export openingiq` (and of `okb openingiq`).
#[derive(Debug, Clone, clap::Args)]
pub struct OpeningiqArgs {
    #[command(flatten)]
    pub target: Target,
    /// Plies kept below each named opening.
    #[arg(long, default_value_t = crate::export::openingiq::DEFAULT_MAX_DEPTH, value_name = "N")]
    pub max_depth: u32,
    /// Compact JSON instead of indented.
    #[arg(long)]
    pub compact: bool,
    /// The most nodes a store may have to be loaded whole; above it, each opening's
    /// subtree is read on its own.
    #[arg(long, default_value_t = crate::serve::MAX_WALKED_NODES, value_name = "N")]
    pub in_memory_nodes: u64,
    /// The most nodes of one opening's subtree read on its own (about 1.3 KB of memory a
    /// node, on each core); an opening with more is not written, and named.
    #[arg(long, default_value_t = MAX_FILE_NODES, value_name = "N")]
    pub max_file_nodes: usize,
}

impl ExportArgs {
    /// The store given on the command line, if any.
    pub fn store(&self) -> Option<&PathBuf> {
        self.target().store.as_ref()
    }

    fn target(&self) -> &Target {
        match &self.format {
            ExportFormat::Csv(a) => &a.target,
            ExportFormat::Polyglot(a) => &a.target,
            ExportFormat::Openingiq(a) => &a.target,
            ExportFormat::Postgres(a) => &a.target,
        }
    }
}

fn one_byte(text: &str) -> Result<u8, String> {
    crate::export::csv::delimiter(text).map_err(String::from)
}

/// Writes the export `args` asks for from the store at `store`.
pub fn run(args: &ExportArgs, store: &Path) -> miette::Result<()> {
    let started = Instant::now();
    sweep_beside(args);
    let (output, text) = match &args.format {
        ExportFormat::Csv(a) => (&a.target.output, csv(a, store)?),
        ExportFormat::Polyglot(a) => (&a.target.output, polyglot(a, store)?),
        ExportFormat::Openingiq(a) => (&a.target.output, openingiq(a, store)?),
        ExportFormat::Postgres(a) => (&a.target.output, postgres(a, store)?),
    };
    let output = crate::store::postgres::redact(&output.to_string_lossy());
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("{} {output} ({text}) in {seconds:.2} s", paint("Finished", "32"));
    Ok(())
}

/// Removes what an earlier, killed `okb export` left beside the output: its temporary
/// file (a CSV's can be gigabytes), or those in the OpeningIQ folder.
fn sweep_beside(args: &ExportArgs) {
    let output = &args.target().output;
    let folder = match &args.format {
        ExportFormat::Postgres(_) => return,
        ExportFormat::Openingiq(_) => output.as_path(),
        _ => output.parent().unwrap_or(Path::new("")),
    };
    let folder = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
    crate::files::temp::sweep(folder, false);
}

/// An error reading the store, as the command reports it.
fn store_error(e: StoreError) -> miette::Report {
    miette!("{e}")
}

/// The failure to write `path`.
fn write_error(path: &Path) -> impl Fn(std::io::Error) -> miette::Report + '_ {
    move |e| miette!("writing {}: {e}", path.display())
}

/// What a scan's visitor fails with: the store, or the output.
enum Failed {
    Store(StoreError),
    Write(std::io::Error),
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Failed {
        Failed::Store(e)
    }
}

impl Failed {
    fn report(self, output: &Path) -> miette::Report {
        match self {
            Failed::Store(e) => store_error(e),
            Failed::Write(e) => write_error(output)(e),
        }
    }
}

/// `okb export csv`: the rows streamed into the output as the scan reads them.
fn csv(args: &CsvArgs, store: &Path) -> miette::Result<String> {
    let output = &args.target.output;
    let store = Store::open_for_scans(store).map_err(store_error)?;
    let nodes = store.node_count().map_err(store_error)?;
    if args.order == RecordOrder::Identity && nodes > crate::serve::MAX_WALKED_NODES {
        // The rows come out only once sorted: say why the count stays at 0 meanwhile.
        crate::progress::note(
            "Sorting",
            &format!(
                "{nodes} rows by position first, in SQLite's temporary folder (SQLITE_TMPDIR, else /var/tmp or /tmp; about the CSV's size); --order id writes them as read"
            ),
        );
    }
    let bar = crate::progress::start(nodes, "nodes");
    let file = crate::files::write::AtomicFile::create(output).map_err(write_error(output))?;
    let mut rows = crate::export::csv::RowWriter::new(file, args.delimiter);
    store
        .each_record(args.order, |record| {
            rows.row(&record).map_err(Failed::Write)?;
            bar.inc(1);
            Ok(())
        })
        .map_err(|e: Failed| e.report(output))?;
    let count = rows.rows;
    rows.finish().and_then(|f| f.commit()).map_err(write_error(output))?;
    Ok(format!("{count} rows"))
}

/// `okb export polyglot`: every edge's move into runs, then the merged book.
fn polyglot(args: &PolyglotArgs, path: &Path) -> miette::Result<String> {
    let output = &args.target.output;
    let store = Store::open_for_scans(path).map_err(store_error)?;
    let bar = crate::progress::start(store.node_count().map_err(store_error)?, "nodes");
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write_error(output))?;
    let mut runs =
        crate::export::polyglot_runs::BookRuns::new(args.weights, args.memory_mb << 20, dir);
    let mut parent: Option<(String, shakmaty::Chess)> = None;
    store
        .each_edge(|edge| {
            bar.set(edge.nodes_read);
            if parent.as_ref().is_none_or(|(fen, _)| fen != edge.parent_fen) {
                let pos = crate::position::parse_fen(edge.parent_fen).map_err(|e| {
                    let bad =
                        format!("{} (a node's FEN {:?}: {e})", path.display(), edge.parent_fen);
                    Failed::Store(StoreError::Corrupt(bad))
                })?;
                parent = Some((edge.parent_fen.to_string(), pos));
            }
            let (_, pos) = parent.as_ref().expect("set above");
            // A move the position does not allow is left out, as the export step does.
            let Some(m) = uci_move(pos, edge.uci) else { return Ok(()) };
            runs.add(pos, &m, &edge.games).map_err(Failed::Write)
        })
        .map_err(|e: Failed| e.report(output))?;
    drop(bar);
    let spilled = runs.spilled();
    let mut file = crate::files::write::AtomicFile::create(output).map_err(write_error(output))?;
    let entries = runs.finish(&mut file).map_err(write_error(output))?;
    file.commit().map_err(write_error(output))?;
    let runs = match spilled {
        0 => String::new(),
        n => format!(", sorted in {} runs", n + 1),
    };
    Ok(format!("{entries} entries{runs}"))
}

/// Move `uci` in `pos`, if it is one of its legal moves.
fn uci_move(pos: &shakmaty::Chess, uci: &str) -> Option<shakmaty::Move> {
    uci.parse::<shakmaty::uci::UciMove>().ok()?.to_move(pos).ok()
}

/// `okb export postgres`: every table copied into the schema the URL names.
fn postgres(args: &PostgresArgs, store: &Path) -> miette::Result<String> {
    use crate::store::postgres::{PgTarget, load};
    let url = args.target.output.to_string_lossy();
    let target = PgTarget::from_reader_url(&url).map_err(|e| miette!("{e}"))?;
    if !store.exists() {
        return Err(store_error(StoreError::Missing(store.display().to_string())));
    }
    let summary = load::load(store, &target).map_err(|e| miette!("{e}"))?;
    Ok(format!("{} rows in {} tables, schema {}", summary.rows, summary.tables, summary.schema))
}

/// `okb export openingiq`: the files of every named opening.
fn openingiq(args: &OpeningiqArgs, store: &Path) -> miette::Result<String> {
    let written = write_openingiq(args, store)?;
    Ok(format!("{written} files"))
}

/// The most nodes one OpeningIQ file read from a large store may hold by default (about
/// 1.3 KB of memory a node while it is written): with a file being written on each
/// core, the bound on `okb export openingiq`'s memory.
pub const MAX_FILE_NODES: usize = crate::store::answers::LARGE_STORE_NODES as usize;

/// Writes the OpeningIQ file of every named opening of the store at `store` into the
/// output folder, as the `openingiq` export step would. Returns the number of files.
pub fn write_openingiq(args: &OpeningiqArgs, store: &Path) -> miette::Result<usize> {
    let dir = &args.target.output;
    let pretty = !args.compact;
    let opened = Store::open_for_lookups(store).map_err(store_error)?;
    std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    if opened.node_count().map_err(store_error)? <= args.in_memory_nodes {
        let graph = Store::open(store).and_then(|s| s.graph()).map_err(store_error)?;
        let named = crate::export::named::of_graph(&graph);
        let files = crate::export::openingiq::render_all(&graph, &named, args.max_depth, pretty);
        for file in &files {
            write_file(&dir.join(&file.name), &file.bytes)?;
        }
        return Ok(files.len());
    }
    let named = crate::serve::disk::named_stems(&opened.entries_named().map_err(store_error)?);
    let bar = crate::progress::start(named.len() as u64, "openings");
    // On every core, each with its own connection (a connection is not shared between
    // threads): the subtrees' reads are random lookups, which wait on the disk apart.
    let too_large = std::sync::Mutex::new(Vec::new());
    named.par_iter().try_for_each_init(
        || Store::open_for_lookups(store),
        |opened, (stem, node_id)| -> miette::Result<()> {
            let opened = opened.as_ref().map_err(|e| miette!("{e}"))?;
            bar.inc(1);
            let Some(file) = opening_of(opened, store, (stem, node_id), args)? else {
                too_large.lock().expect("not poisoned").push(stem.clone());
                return Ok(());
            };
            let bytes = crate::export::openingiq::file_bytes(&file, pretty);
            write_file(&dir.join(format!("{stem}.json")), &bytes)
        },
    )?;
    let mut too_large = too_large.into_inner().expect("not poisoned");
    if !too_large.is_empty() {
        // The other files are written: say which are not, and fail.
        too_large.sort();
        for stem in &too_large {
            crate::progress::warn(&format!(
                "{stem}.json not written: its tree to depth {} holds more than {} nodes",
                args.max_depth, args.max_file_nodes
            ));
        }
        return Err(miette!(
            "{} of {} OpeningIQ files not written (named above); give a smaller --max-depth or a larger --max-file-nodes",
            too_large.len(),
            named.len(),
        ));
    }
    Ok(named.len())
}

/// The OpeningIQ file of named opening `stem` (node `node_id`) from its subtree alone;
/// `None` when the subtree holds more than `--max-file-nodes` nodes.
fn opening_of(
    opened: &Store,
    store: &Path,
    (stem, node_id): (&str, &str),
    args: &OpeningiqArgs,
) -> miette::Result<Option<crate::export::openingiq::OpeningFile>> {
    use crate::store::graph::{Cut, Piece};
    let max_depth = args.max_depth;
    let cut = Cut { root_id: node_id, max_depth, min_games: 0, limit: args.max_file_nodes };
    match opened.piece(cut).map_err(store_error)? {
        Piece::Read(graph) => {
            Ok(Some(crate::export::openingiq::opening_file(&graph, graph.root, max_depth)))
        }
        Piece::Missing => {
            Err(miette!("store {}: named opening {stem} has no node {node_id}", store.display()))
        }
        Piece::TooLarge => Ok(None),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> miette::Result<()> {
    crate::files::write_atomic(path, bytes).map_err(write_error(path))
}
