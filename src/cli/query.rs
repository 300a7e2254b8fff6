//! `okb query`: read the built store.

use std::path::PathBuf;
use std::process::ExitCode;

use miette::{IntoDiagnostic, miette};

use crate::store::read::{NodeJson, Store};

/// `okb query`'s forms.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Query {
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
    /// Named openings matching TEXT, best first (as the explorer's search box)
    ///
    /// Every word of TEXT must match a word of the name or of an alias: whole, as a prefix
    /// (`naj` → Najdorf), inside it, or with a typo (`sicillian`). The name equal to TEXT
    /// comes first, then names that start with TEXT's first word ("Sicilian Defense"
    /// before "Van Geet: Sicilian Variation"), then fewer words and shorter lines.
    Name {
        /// Words of a name.
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

/// Arguments of `okb query`.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryCommand {
    /// Read this store file (or a PostgreSQL knowledge base: postgres://user@host:port/db?schema=okb,
    /// password from PGPASSWORD or ~/.pgpass) instead of the pipeline's [store] path.
    #[arg(long, value_name = "FILE", global = true)]
    pub store: Option<PathBuf>,
    /// What to look up.
    #[command(subcommand)]
    pub query: Query,
}

/// Which `okb query` form.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// By FEN.
    Fen,
    /// By ECO or SCID code.
    Eco,
    /// By name.
    Name,
    /// By a line of moves.
    Moves,
}

/// Arguments of `okb query`.
#[derive(Clone, Debug)]
pub struct QueryArgs {
    /// Which form.
    pub kind: QueryKind,
    /// The FEN, code, name or moves.
    pub text: String,
    /// Print JSON.
    pub json: bool,
}

/// `okb query`: prints the matching nodes. Exit status 1 when nothing matches.
pub fn run(store: &Store, args: QueryArgs) -> miette::Result<ExitCode> {
    let err = |e: crate::store::StoreError| miette!("{e}");
    let nodes: Vec<NodeJson> = match args.kind {
        QueryKind::Fen => {
            let pos = crate::position::parse_fen(&args.text).map_err(|e| miette!("{e}"))?;
            store.node_by_position(&crate::position::epd(&pos)).map_err(err)?.into_iter().collect()
        }
        QueryKind::Moves => {
            let pos = crate::eco::line::position_after(&args.text).map_err(|e| miette!("{e}"))?;
            store.node_by_position(&crate::position::epd(&pos)).map_err(err)?.into_iter().collect()
        }
        QueryKind::Eco => store.nodes_by_eco(&args.text).map_err(err)?,
        QueryKind::Name => {
            let graph = store.graph().map_err(err)?;
            let hits =
                crate::search::SearchIndex::new(&graph).search(&graph, &args.text, usize::MAX);
            let ids: Vec<&str> = hits.iter().map(|h| h.node_id.as_str()).collect();
            store.nodes_by_id(&ids).map_err(err)?
        }
    };
    let single = matches!(args.kind, QueryKind::Fen | QueryKind::Moves);
    if args.json {
        let text = if single {
            match nodes.first() {
                Some(n) => serde_json::to_string_pretty(n),
                None => Ok("null".to_string()),
            }
        } else {
            serde_json::to_string_pretty(&nodes)
        }
        .into_diagnostic()?;
        println!("{text}");
    } else {
        for n in &nodes {
            let name = n.full_name().unwrap_or_else(|| "(unnamed)".into());
            println!("{} {name}  [{}]", n.node.eco_code.as_deref().unwrap_or("---"), n.node.moves);
            println!("    {}", n.node.fen);
            let kids: Vec<String> = n.children.iter().map(|c| c.pgn_move.clone()).collect();
            if !kids.is_empty() {
                println!("    next: {}", kids.join(" "));
            }
        }
    }
    if nodes.is_empty() {
        eprintln!("no node matches {:?}", args.text);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

impl Query {
    /// The form and its text.
    pub fn args(self) -> QueryArgs {
        match self {
            Query::Fen { fen, json } => QueryArgs { kind: QueryKind::Fen, text: fen, json },
            Query::Eco { code, json } => QueryArgs { kind: QueryKind::Eco, text: code, json },
            Query::Name { text, json } => QueryArgs { kind: QueryKind::Name, text, json },
            Query::Moves { moves, json } => QueryArgs { kind: QueryKind::Moves, text: moves, json },
        }
    }
}
