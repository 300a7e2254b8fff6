//! `okb serve`: the read-only HTTP API over the built store.

use std::path::PathBuf;

/// Arguments of `okb serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the bound address goes to stderr).
    #[arg(long, default_value = "127.0.0.1:8000", value_name = "IP:PORT")]
    pub addr: std::net::SocketAddr,
    /// Serve this store file (or a PostgreSQL knowledge base: postgres://user@host:port/db?schema=okb,
    /// password from PGPASSWORD or ~/.pgpass) instead of the pipeline's [store] path.
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// Allow pages on ORIGIN (e.g. https://example.org, or *) to call the API from a
    /// browser: Access-Control-Allow-Origin on every answer, preflight requests answered.
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Option<String>,
    /// Seconds a client has to send a request's headers, and again its body, before its
    /// connection is closed (a client sending a byte now and then holds nothing for long).
    #[arg(long, default_value_t = 10.0, value_name = "SECS", value_parser = positive_secs)]
    pub header_timeout: f64,
    /// Seconds a connection may move no byte either way before it is closed (a kept-alive
    /// connection waiting for its next request too).
    #[arg(long, default_value_t = 60.0, value_name = "SECS", value_parser = positive_secs)]
    pub idle_timeout: f64,
    /// Connections open at once; at the limit a new one replaces the open connection that
    /// has waited longest without a request being answered. Default: 512, or fewer when
    /// the descriptor limit (ulimit -n) is lower: 64 descriptors below it, at least half.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: Option<u32>,
    /// MiB of answers held for clients still reading them; past it, the connections whose
    /// answers have waited longest on their reader are closed.
    #[arg(long, default_value_t = crate::serve::limits::DEFAULT_SEND_MB as u32, value_name = "MIB", value_parser = clap::value_parser!(u32).range(1..))]
    pub send_buffer_mb: u32,
    /// MiB of node answers kept in memory (the answers of the positions asked most
    /// recently; a store with node answers keeps them compressed, about 220 bytes each);
    /// the rest are read from the store file per request.
    #[arg(long, default_value_t = crate::serve::disk::DEFAULT_CACHE_MB, value_name = "MIB")]
    pub cache_mb: usize,
    /// The most nodes a store may have for its whole graph to be held in memory (about
    /// 1.3 KB a node). Above it the trees and the explorer read the store file per
    /// request and search, structures and players keep only the named positions; an
    /// explorer index (the `[explorer]` games) is served only in memory.
    #[arg(long, default_value_t = crate::serve::MAX_WALKED_NODES, value_name = "N")]
    pub in_memory_nodes: u64,
}

fn positive_secs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs.is_finite() => Ok(secs),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

/// Serves `store` until Ctrl-C, and each new build of it a make writes; `project` is the pipeline whose store it is, when it is
/// (what it says of its sources joins the API's metadata).
pub fn run(
    args: &ServeArgs,
    store: PathBuf,
    project: Option<crate::pipeline::Loaded>,
) -> miette::Result<()> {
    let limits = crate::serve::limits::Limits {
        header_timeout: std::time::Duration::from_secs_f64(args.header_timeout),
        idle_timeout: std::time::Duration::from_secs_f64(args.idle_timeout),
        max_connections: args
            .max_connections
            .map_or_else(crate::serve::limits::default_max_connections, |n| n as usize),
        send_bytes: (args.send_buffer_mb as usize).saturating_mul(1 << 20),
    };
    let options = crate::serve::Options {
        addr: args.addr,
        cors: args.cors.as_deref(),
        limits,
        cache_bytes: args.cache_mb.saturating_mul(1 << 20),
        in_memory_nodes: args.in_memory_nodes,
        answering_code: &crate::dataflow::code::of("src/serve/mod.rs"),
    };
    crate::serve::run(&store, project.as_ref(), options)?;
    Ok(())
}
