//! `okb crawl`: walk a pipeline's explorer crawls now (resuming from their journals), or
//! with `--refresh` from nothing, and show what changed against the pinned crawl.

use std::path::PathBuf;

use miette::miette;

use super::output::paint;
use crate::crawl::archive::Archive;
use crate::crawl::manifest::{CrawlDiff, Manifest, diff};
use crate::crawl::source::{CrawlSource, How};
use crate::pipeline::{Loaded, SourceKind};

/// Arguments of `okb crawl`.
#[derive(Debug, Clone, clap::Args)]
pub struct CrawlArgs {
    /// Only these sources (default: every explorer crawl of the pipeline).
    #[arg(value_name = "SOURCE")]
    pub sources: Vec<String>,
    /// Crawl again from nothing (new answers, new manifest); then `okb pin --force SOURCE`
    /// records it. A killed refresh resumes where it stopped.
    #[arg(long)]
    pub refresh: bool,
    /// Never ask the server: replay the journal (fails when an answer is missing).
    #[arg(long)]
    pub offline: bool,
    /// Mirror folders holding `explorer/` answers, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Print one JSON object per source on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The explorer crawls named in `asked` (all of them when empty).
pub(crate) fn crawl_sources(loaded: &Loaded, asked: &[String]) -> miette::Result<Vec<CrawlSource>> {
    let sources = &loaded.pipeline.sources;
    for name in asked {
        match sources.get(name) {
            None => return Err(miette!("no source named {name} in {}", loaded.file.display())),
            Some(s) if s.kind() != SourceKind::LichessExplorer => {
                return Err(miette!(
                    "source {name} is not an explorer crawl (kind = \"lichess-explorer\")"
                ));
            }
            Some(_) => {}
        }
    }
    let chosen = sources.iter().filter(|(n, s)| {
        s.kind() == SourceKind::LichessExplorer && (asked.is_empty() || asked.contains(n))
    });
    chosen
        .map(|(name, spec)| {
            spec.crawl(name, &loaded.pipeline.tree).map_err(|why| miette!("source {name}: {why}"))
        })
        .collect()
}

/// The games of the answer `hash`, for diffs.
fn answer_games(archive: &Archive, hash: &str) -> Option<u64> {
    let body = archive.get(hash).ok()??;
    let answer: crate::crawl::explorer::Answer = serde_json::from_slice(&body).ok()?;
    Some(answer.outcomes().games())
}

/// What changed from the crawl pinned as `pin` (when its manifest is at hand) to `new`.
pub(crate) fn diff_from_pin(archive: &Archive, pin: &str, new: &Manifest) -> Option<CrawlDiff> {
    let old = Manifest::parse(&archive.get_manifest(pin).ok()??).ok()?;
    Some(diff(&old, new, |h| answer_games(archive, h)))
}

/// Runs `okb crawl`.
pub fn run(loaded: &Loaded, args: &CrawlArgs) -> miette::Result<()> {
    let chosen = crawl_sources(loaded, &args.sources)?;
    if chosen.is_empty() {
        return Err(miette!(
            "{} declares no explorer crawl (a source with kind = \"lichess-explorer\")",
            loaded.file.display()
        ));
    }
    let archive = Archive::new(&loaded.layout().sources, &crate::sources::mirrors(&args.mirror));
    let _lock = crate::dataflow::lock::ProjectLock::acquire(&loaded.layout().cache)
        .map_err(|e| miette!("taking the project lock: {e}"))?;
    for source in chosen {
        let started = std::time::Instant::now();
        let available = source
            .make_available(&archive, How { offline: args.offline, refresh: args.refresh })?;
        let changes = source
            .pin
            .as_deref()
            .filter(|pin| *pin != available.hash)
            .and_then(|pin| diff_from_pin(&archive, pin, &available.manifest));
        let c = &available.counters;
        if args.json {
            let value = serde_json::json!({
                "source": source.name,
                "positions": available.manifest.positions.len(),
                "asked": c.answered,
                "retried": c.retried,
                "rate_limited": c.rate_limited,
                "blake3": available.hash,
                "pinned": source.pin.as_deref() == Some(available.hash.as_str()),
                "diff": changes,
            });
            println!("{value}");
            continue;
        }
        eprintln!(
            "{:>12} {}: {} positions ({} asked of {}, {} retries) in {:.2}s, manifest blake3 {}",
            paint("Crawled", "32"),
            source.name,
            available.manifest.positions.len(),
            c.answered,
            source.server,
            c.retried,
            started.elapsed().as_secs_f64(),
            available.hash
        );
        match (&source.pin, changes) {
            (Some(pin), _) if *pin == available.hash => {
                eprintln!("{:>12} {} matches its pin", paint("Fresh", "32"), source.name)
            }
            (_, Some(changes)) => {
                eprint!("{}", changes.render(10));
                eprintln!("{:>12} `okb pin --force {}` records this crawl", "Note", source.name);
            }
            (_, None) => eprintln!(
                "{:>12} `okb pin {}{}` records this crawl",
                "Note",
                if source.pin.is_some() { "--force " } else { "" },
                source.name
            ),
        }
    }
    Ok(())
}
