//! The files of `[repertoires.*]`, each resolved like a pinned source (store, mirrors,
//! download; its BLAKE3 checked) for the steps: read by `repertoire:<name>`, and
//! reported on by `repertoire-report:<name>` into `build/repertoire-<name>/`, with the
//! games of its player collections judged by `repertoire-games:<name>`, and exported by
//! `repertoire-export:<name>`.

use super::MakeError;
use crate::dataflow::Build;
use crate::pipeline::Loaded;
use crate::release::{self, Manifest};
use crate::sources::{Origin, Wanted};
use crate::steps::planning::{RepertoireFile, repertoire_id};

/// Every repertoire's file, resolved like a pinned source (its facts recorded).
pub(super) fn files(
    loaded: &Loaded,
    options: &super::MakeOptions,
    build: &Build,
    fetched: &mut Vec<String>,
    facts: &mut Manifest,
) -> Result<Vec<RepertoireFile>, MakeError> {
    let resolver = super::resolver(loaded, &options.mirrors, options.offline);
    let mut out = Vec::new();
    for (name, spec) in &loaded.pipeline.repertoires {
        let source = repertoire_id(name);
        let wanted = Wanted {
            name: &source,
            blake3: spec.blake3.as_deref(),
            path: spec.path.as_deref().map(|p| loaded.path(p)),
            url: spec.url.as_deref(),
        };
        let resolved =
            resolver.resolve(&wanted, &mut build.files.lock().expect("file states poisoned"))?;
        if let Origin::Mirror(_) | Origin::Download(_) = &resolved.origin {
            let note = format!("{source} from {}", spec.url.as_deref().unwrap_or("a mirror"));
            crate::progress::note("Fetched", &note);
            fetched.push(note);
        }
        let shown = spec.path.clone().or_else(|| spec.url.clone()).unwrap_or_default();
        let kind = "repertoire".to_string();
        facts.sources.insert(
            source,
            release::manifest::SourceFacts {
                kind,
                url: spec.url.clone(),
                path: spec.path.clone(),
                blake3: resolved.hash.clone(),
            },
        );
        out.push(RepertoireFile {
            name: name.clone(),
            path: resolved.path,
            shown,
            hash: resolved.hash,
        });
    }
    Ok(out)
}
