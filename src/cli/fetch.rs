//! `okb fetch`: get and verify every pinned source.

use std::path::PathBuf;

use miette::{IntoDiagnostic, miette};

use crate::dataflow::filestate::FileStates;
use crate::pipeline::Loaded;
use crate::sources::{Origin, Resolver, Wanted};

/// Arguments of `okb fetch`.
#[derive(Debug, Clone, clap::Args)]
pub struct FetchArgs {
    /// Mirror folders, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Never download.
    #[arg(long)]
    pub offline: bool,
}

/// What the resolver needs to find the pinned file source `name` (a taxonomy, counts or structure labels) (game sources: `None`).
pub(crate) fn wanted<'a>(loaded: &'a Loaded, name: &'a str) -> Option<Wanted<'a>> {
    let spec = &loaded.pipeline.sources[name];
    spec.kind.is_pinned_file().then(|| Wanted {
        name,
        blake3: spec.blake3.as_deref(),
        path: spec.path.as_deref().map(|p| loaded.path(p)),
        url: spec.url.as_deref(),
    })
}


/// `okb fetch`: makes every pinned source available in `sources/`, verified, and every
/// explorer crawl complete (a pinned one's missing answers, an unpinned one walked).
pub fn run(loaded: &Loaded, args: &FetchArgs) -> miette::Result<()> {
    let resolver = Resolver { store: loaded.path("sources"), mirrors: crate::sources::mirrors(&args.mirror), offline: args.offline };
    let mut files = FileStates::load(loaded.path("cache").join("file-states.json"));
    let mut failures = 0;
    let archive = crate::crawl::archive::Archive::new(&loaded.path("sources"), &resolver.mirrors);
    for source in super::crawl::crawl_sources(loaded, &[])? {
        let how = crate::crawl::source::How { offline: args.offline, refresh: false };
        match source.make_available(&archive, how) {
            Ok(a) => eprintln!(
                "{:>12} {} ({} positions, {} answers fetched now, manifest blake3 {}…)",
                "Verified",
                source.name,
                a.manifest.positions.len(),
                a.counters.answered,
                &a.hash[..16]
            ),
            Err(e) => {
                eprintln!("{:?}", miette::Report::new(e));
                failures += 1;
            }
        }
    }
    for name in loaded.pipeline.sources.keys() {
        let Some(w) = wanted(loaded, name) else { continue };
        match resolver.resolve(&w, &mut files) {
            Ok(r) => {
                let from = match r.origin {
                    Origin::Store => "already in sources/".to_string(),
                    Origin::Local => format!("local file {}", r.path.display()),
                    Origin::Mirror(p) => format!("copied from {}", p.display()),
                    Origin::Download(u) => format!("downloaded from {u}"),
                };
                eprintln!("{:>12} {name} ({from}, blake3 {}…)", "Verified", &r.hash[..16]);
            }
            Err(e) => {
                eprintln!("{:>12} {e}", "error");
                failures += 1;
            }
        }
    }
    files.save().into_diagnostic()?;
    if failures > 0 {
        return Err(miette!("{failures} sources could not be fetched"));
    }
    Ok(())
}

