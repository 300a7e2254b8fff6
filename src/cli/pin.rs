//! `okb pin`: write the BLAKE3 of unpinned sources into pipeline.toml.

use miette::{IntoDiagnostic, miette};

use crate::dataflow::filestate::FileStates;
use crate::pipeline::Loaded;
use super::fetch::wanted;
use crate::sources::Resolver;

/// `okb pin`: computes the blake3 of each source without a pin and writes it into the
/// pipeline file, right under the source's table header.
pub fn run(loaded: &Loaded) -> miette::Result<()> {
    let resolver = Resolver { store: loaded.path("sources"), mirrors: Vec::new(), offline: false };
    let mut files = FileStates::load(loaded.path("cache").join("file-states.json"));
    let mut text = loaded.text.clone();
    let mut pinned = 0;
    for (name, spec) in &loaded.pipeline.sources {
        if spec.blake3.is_some() {
            continue;
        }
        let Some(w) = wanted(loaded, name) else { continue };
        let r = resolver.resolve(&w, &mut files).into_diagnostic()?;
        let header = format!("[sources.{name}]");
        let Some(at) = text.find(&header) else {
            return Err(miette!("cannot find {header} in {} to write the pin", loaded.file.display()));
        };
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
        let insert = format!("blake3 = \"{}\"\n", r.hash);
        if line_end == text.len() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.insert_str(line_end.min(text.len()), &insert);
        eprintln!("{:>12} {name} blake3 {}", "Pinned", r.hash);
        pinned += 1;
    }
    files.save().into_diagnostic()?;
    if pinned > 0 {
        crate::dataflow::cache::write_atomic(&loaded.file, text.as_bytes()).into_diagnostic()?;
    } else {
        eprintln!("{:>12} every source already has a pin", "Fresh");
    }
    Ok(())
}

