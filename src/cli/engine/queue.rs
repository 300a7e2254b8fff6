//! `okb engine queue`: build up to the tree, then write the searches the engine cache
//! cannot serve as a queue file.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use miette::miette;

use crate::cli::make::{Sources, build_adapted};
use crate::cli::output::{paint, print_step};
use crate::engine::queue::{self, Planned};
use crate::make;
use crate::pipeline::Loaded;

/// Arguments of `okb engine queue`.
#[derive(Debug, Clone, clap::Args)]
pub struct QueueArgs {
    /// The queue file to write (.okbq).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Mirror folders for pinned sources, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Never download sources.
    #[arg(long)]
    pub offline: bool,
}

/// Runs `okb engine queue`.
pub fn run(args: &QueueArgs, loaded: &Loaded) -> miette::Result<()> {
    if loaded.pipeline.engine.is_none() {
        return Err(super::no_engine(loaded));
    }
    let out: Arc<Mutex<Option<Planned>>> = Arc::default();
    let found = out.clone();
    let adapt = move |planning: &crate::steps::planning::Planning<'_>, plan| {
        // The engine step's inputs (the tree and the evaluation sources), not the step.
        let engine = crate::steps::ids::ENGINE.name();
        let mut plan = make::upstream_of(plan, engine);
        plan.steps.retain(|d| d.id != engine);
        plan.steps.extend(crate::steps::engine::plan_queue(planning, found.clone()));
        Ok(plan)
    };
    let sources = Sources { mirror: &args.mirror, offline: args.offline, locked: false };
    let _lock = build_adapted(loaded, &sources, false, |r| print_step(r, false), &adapt)?;
    let planned = out
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .ok_or_else(|| miette!("the engine-queue step did not run"))?;
    queue::write(&args.output, &planned.queue).map_err(miette::Report::new)?;
    let q = &planned.queue;
    eprintln!(
        "{} {} ({} positions to search of {}, {} cached; {}, multipv {}, depths {})",
        paint("Wrote", "32"),
        args.output.display(),
        q.entries.len(),
        planned.total,
        planned.cached,
        q.identity.id_name,
        q.identity.multipv,
        depths(q)
    );
    Ok(())
}

/// The depths of a queue's entries, in words: `8`, `8–10`, or `-` when empty.
fn depths(queue: &queue::Queue) -> String {
    let min = queue.entries.iter().map(|e| e.depth).min();
    let max = queue.entries.iter().map(|e| e.depth).max();
    match (min, max) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "-".into(),
    }
}
