//! Adds the node answers (`node_answers`, one row per position) to a store whose rows a
//! tool wrote itself, as the store step adds them to a store over `[store] answers_above`
//! nodes: `bench/large_store.py` runs it on its synthetic stores.
//!
//!     cargo run --release --example store_answers -- STORE.sqlite

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: store_answers STORE.sqlite");
        return std::process::ExitCode::from(2);
    };
    let started = std::time::Instant::now();
    match okb::store::write::add_answers(std::path::Path::new(&path)) {
        Ok(rows) => {
            eprintln!("{rows} node answers in {:.1} s", started.elapsed().as_secs_f64());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
