//! Adds the node answers (`node_answers`, one row per position) and the named summary
//! (`named_summary`) to a store whose rows a tool wrote itself, as the store step adds
//! them to a store over `[store] answers_above` nodes: `bench/large_store.py` runs it on
//! its synthetic stores. With `--summary`, adds the named summary alone, to a store whose
//! node answers an earlier okb added.
//!
//!     cargo run --release --example store_answers -- [--summary] STORE.sqlite

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let (summary_only, path) = match &args[..] {
        [path] if path != "--summary" => (false, path),
        [flag, path] if flag == "--summary" => (true, path),
        _ => {
            eprintln!("usage: store_answers [--summary] STORE.sqlite");
            return ExitCode::from(2);
        }
    };
    let started = std::time::Instant::now();
    let path = Path::new(path);
    let done = match summary_only {
        true => okb::store::write::add_named_summary(path).map(|()| "the named summary".into()),
        false => okb::store::write::add_answers(path)
            .map(|rows| format!("{rows} node answers and the named summary")),
    };
    match done {
        Ok(what) => {
            eprintln!("{what} in {:.1} s", started.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
