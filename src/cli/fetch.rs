//! `okb fetch`: get and verify every pinned source.

use std::path::PathBuf;

use miette::{IntoDiagnostic, miette};

use crate::files::FileStates;
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

/// What the resolver needs to find the pinned file source `name` (a taxonomy, counts or
/// structure labels), or a collection's manifest (other game sources: `None`).
pub(crate) fn wanted<'a>(loaded: &'a Loaded, name: &'a str) -> Option<Wanted<'a>> {
    let spec = &loaded.pipeline.sources[name];
    let mut path = spec.manifest().or(spec.path()).map(|p| loaded.path(p));
    if spec.kind() == crate::pipeline::SourceKind::CountsState {
        // A state folder is pinned by its manifest.
        path = path.map(|folder| folder.join(crate::games::state::folder::MANIFEST));
    }
    (spec.kind().is_pinned_file() || spec.manifest().is_some()).then(|| Wanted {
        name,
        blake3: spec.blake3(),
        path,
        url: spec.url(),
    })
}

/// Fetches and verifies every file of collection `name` (its manifest is `manifest`);
/// the number of files that failed.
fn fetch_collection(
    resolver: &Resolver,
    name: &str,
    manifest: &crate::sources::Resolved,
    files: &mut FileStates,
) -> usize {
    let fetched = crate::sources::collection::read(name, &manifest.path, &manifest.hash, files)
        .and_then(|entries| resolver.resolve_collection(name, &entries, files));
    match fetched {
        Ok(all) => {
            let copied = all.iter().filter(|(_, r)| !matches!(r.origin, Origin::Store)).count();
            eprintln!("{:>12} {name}: {} files ({copied} fetched now)", "Verified", all.len());
            0
        }
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            1
        }
    }
}

/// Fetches (resuming) and verifies every month of Lichess database source `name`; the
/// number of sources that failed (0 or 1).
fn fetch_lichess_db(
    resolver: &Resolver,
    name: &str,
    spec: &crate::pipeline::SourceSpec,
    files: &mut FileStates,
) -> usize {
    let months =
        spec.lichess_db(name).map_err(|why| miette!("source {name}: {why}")).and_then(|db| {
            resolver.resolve_lichess_db(&db, spec.blake3(), files).map_err(miette::Report::new)
        });
    match months {
        Ok(months) => {
            let now = months.iter().filter(|m| m.fetched_now).count();
            let (_, hash) = crate::sources::lichess_db::LichessDb::manifest(&months);
            eprintln!(
                "{:>12} {name}: {} months ({now} fetched now), manifest blake3 {}…",
                "Verified",
                months.len(),
                &hash[..16]
            );
            0
        }
        Err(e) => {
            eprintln!("{e:?}");
            1
        }
    }
}

/// `okb fetch`: makes every pinned source available in `sources/`, verified, and every
/// explorer crawl complete (a pinned one's missing answers, an unpinned one walked).
pub fn run(loaded: &Loaded, args: &FetchArgs) -> miette::Result<()> {
    let resolver =
        crate::make::resolver(loaded, &crate::sources::mirrors(&args.mirror), args.offline);
    let mut files = FileStates::load(loaded.layout().file_states);
    let mut failures = 0;
    let archive = crate::crawl::archive::Archive::new(&loaded.layout().sources, &resolver.mirrors);
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
    for (name, spec) in loaded
        .pipeline
        .sources
        .iter()
        .filter(|(_, s)| s.kind() == crate::pipeline::SourceKind::LichessDb)
    {
        failures += fetch_lichess_db(&resolver, name, spec, &mut files);
    }
    for name in loaded.pipeline.sources.keys() {
        let Some(w) = wanted(loaded, name) else { continue };
        match resolver.resolve(&w, &mut files) {
            Ok(r) => {
                let from = match &r.origin {
                    Origin::Store => "already in sources/".to_string(),
                    Origin::Local => format!("local file {}", r.path.display()),
                    Origin::Mirror(p) => format!("copied from {}", p.display()),
                    Origin::Download(u) => format!("downloaded from {u}"),
                };
                eprintln!("{:>12} {name} ({from}, blake3 {}…)", "Verified", &r.hash[..16]);
                if loaded.pipeline.sources[name].manifest().is_some() {
                    failures += fetch_collection(&resolver, name, &r, &mut files);
                }
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
