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
}

/// Serves `store` until Ctrl-C.
pub fn run(args: &ServeArgs, store: PathBuf) -> miette::Result<()> {
    crate::serve::run(&store, args.addr, args.cors.as_deref())?;
    Ok(())
}
