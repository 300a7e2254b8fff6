//! okb's integration tests, in one binary (as cargo's own are): each module is a feature,
//! run against the built `okb` (`CARGO_BIN_EXE_okb`) and the real components
//! `tests/setup.sh` installs. One binary links the crate once instead of once a file.
//! Run one feature with `cargo test --release --locked --test it <module>::`.

// First: its macros (`snapshot!`) are in scope for the modules after it.
#[macro_use]
mod common;

mod architecture;
mod bad_input;
mod check;
mod cloud_eval;
mod collections;
mod convert;
mod counts;
mod counts_state;
mod crawl;
mod dedup;
mod diff;
mod eco_facts;
mod engine_faults;
mod engine_queue;
mod engine_stockfish;
mod evals;
mod explorer_browser;
mod export_cli;
mod exports;
mod first_contact;
mod fixtures_pipeline;
mod freshness;
mod games_aggregate;
mod games_bad;
mod games_filters;
mod games_polyglot;
mod games_snapshots;
mod games_state;
mod lichess_compat;
mod lichess_db;
mod make_engine;
mod make_games;
mod make_incremental;
mod make_scale;
mod messages;
mod pgn_lenient;
mod phase5_make;
mod readme;
mod release;
mod repertoire;
mod repertoire_engine;
mod repertoire_repeats;
mod serve_api;
mod serve_disk_trees;
mod serve_explorer;
mod serve_limits;
mod serve_named;
mod serve_swap;
mod sources_download;
mod spark;
mod store_postgres;
mod structures;
