//! `okb pin`: write the BLAKE3 of sources into pipeline.toml, edited as TOML so that
//! comments, order and layout stay as the user wrote them.

use miette::{IntoDiagnostic, miette};
use toml_edit::DocumentMut;

use super::fetch::wanted;
use crate::files::FileStates;
use crate::pipeline::{Loaded, SourceKind};
use crate::sources::{Resolver, Wanted};

/// Arguments of `okb pin`.
#[derive(Debug, Clone, clap::Args)]
pub struct PinArgs {
    /// Only these sources (default: every source and repertoire: taxonomies, counts,
    /// structure labels, explorer crawls, collections' manifests, and each file of a game
    /// source given by `path` or `paths`).
    #[arg(value_name = "SOURCE")]
    pub sources: Vec<String>,
    /// Re-pin sources that already have a pin: fetch their bytes again (download or local
    /// file) and write the new hash when they changed, showing old and new.
    #[arg(long)]
    pub force: bool,
}

/// What happened to one source.
enum Outcome {
    Pinned(String),
    Repinned { old: String, new: String },
    Unchanged,
    AlreadyPinned,
}

/// `okb pin`: pins the sources that have no pin; with `--force`, re-pins those whose
/// bytes changed. Writes pipeline.toml once, atomically, and only when a pin changed.
pub fn run(loaded: &Loaded, args: &PinArgs) -> miette::Result<()> {
    let names = chosen_sources(loaded, &args.sources)?;
    let resolver = crate::make::resolver(loaded, &[], false);
    let mut files = FileStates::load(loaded.layout().file_states);
    let mut doc: DocumentMut = loaded.text.parse().map_err(|e| {
        miette!("{}: not valid TOML, cannot write pins: {e}", loaded.file.display())
    })?;
    let mut changed = 0;
    for name in &names {
        if is_file_list(loaded, name) {
            changed += pin_game_files(loaded, name, args.force, &mut files, &mut doc)?;
            continue;
        }
        let outcome = if loaded.pipeline.sources[name].kind() == SourceKind::LichessExplorer {
            pin_crawl(loaded, name, args.force)?
        } else if loaded.pipeline.sources[name].kind() == SourceKind::LichessDb {
            pin_lichess_db(loaded, &resolver, name, args.force, &mut files)?
        } else {
            let Some(w) = wanted(loaded, name) else { continue };
            pin_one(&resolver, &w, args.force, &mut files)?
        };
        report(name, &outcome);
        match outcome {
            Outcome::Pinned(new) | Outcome::Repinned { new, .. } => {
                set_pin(&mut doc, name, &new)
                    .map_err(|why| miette!("{}: {why}", loaded.file.display()))?;
                changed += 1;
            }
            Outcome::Unchanged | Outcome::AlreadyPinned => {}
        }
    }
    // Repertoires are pinned with the sources when no source is named.
    for (name, spec) in loaded.pipeline.repertoires.iter().filter(|_| args.sources.is_empty()) {
        let w = Wanted {
            name,
            blake3: spec.blake3.as_deref(),
            path: spec.path.as_deref().map(|p| loaded.path(p)),
            url: spec.url.as_deref(),
        };
        let outcome = pin_one(&resolver, &w, args.force, &mut files)?;
        report(&format!("repertoires.{name}"), &outcome);
        if let Outcome::Pinned(new) | Outcome::Repinned { new, .. } = outcome {
            set_pin_in(&mut doc, "repertoires", name, &new)
                .map_err(|why| miette!("{}: {why}", loaded.file.display()))?;
            changed += 1;
        }
    }
    files.save().into_diagnostic()?;
    if changed > 0 {
        crate::files::write_atomic(&loaded.file, doc.to_string().as_bytes()).into_diagnostic()?;
    }
    Ok(())
}

/// The named sources (each must exist), or every source.
fn chosen_sources(loaded: &Loaded, asked: &[String]) -> miette::Result<Vec<String>> {
    let sources = &loaded.pipeline.sources;
    if asked.is_empty() {
        return Ok(sources.keys().cloned().collect());
    }
    if let Some(name) = asked.iter().find(|name| !sources.contains_key(*name)) {
        let known: Vec<_> = sources.keys().map(String::as_str).collect();
        return Err(miette!(
            "no source named {name} in {} (sources: {})",
            loaded.file.display(),
            known.join(", ")
        ));
    }
    Ok(asked.to_vec())
}

fn pin_one(
    resolver: &Resolver,
    w: &Wanted<'_>,
    force: bool,
    files: &mut FileStates,
) -> miette::Result<Outcome> {
    let mut current = || {
        let unpinned = Wanted { blake3: None, ..w.clone() };
        resolver.resolve(&unpinned, files).map(|r| r.hash).into_diagnostic()
    };
    Ok(match (w.blake3, force) {
        (None, _) => Outcome::Pinned(current()?),
        (Some(_), false) => Outcome::AlreadyPinned,
        (Some(old), true) => {
            let new = current()?;
            if new == old {
                Outcome::Unchanged
            } else {
                Outcome::Repinned { old: old.to_string(), new }
            }
        }
    })
}

/// The pin of a Lichess database source: the hash of its months' manifest (each month
/// fetched first if it is not in the store, verified by the published SHA-256).
fn pin_lichess_db(
    loaded: &Loaded,
    resolver: &Resolver,
    name: &str,
    force: bool,
    files: &mut FileStates,
) -> miette::Result<Outcome> {
    let spec = &loaded.pipeline.sources[name];
    if spec.blake3().is_some() && !force {
        return Ok(Outcome::AlreadyPinned);
    }
    let db = spec.lichess_db(name).map_err(|why| miette!("source {name}: {why}"))?;
    let months = resolver.resolve_lichess_db(&db, None, files)?;
    let (_, new) = crate::sources::lichess_db::LichessDb::manifest(&months);
    Ok(match spec.blake3().map(str::to_string) {
        None => Outcome::Pinned(new),
        Some(old) if old == new => Outcome::Unchanged,
        Some(old) => Outcome::Repinned { old, new },
    })
}

/// The pin of an explorer crawl: the hash of the manifest its journal gives (walked to
/// the end first, asking the server for what is missing); with `force`, also when it
/// has a pin, showing what changed.
fn pin_crawl(loaded: &Loaded, name: &str, force: bool) -> miette::Result<Outcome> {
    let mut source = super::crawl::crawl_sources(loaded, &[name.to_string()])?.remove(0);
    let archive = crate::crawl::archive::Archive::new(&loaded.layout().sources, &[]);
    let Some(old) = source.pin.take() else {
        return Ok(Outcome::Pinned(walk_journal(&archive, &source)?.0));
    };
    if !force {
        return Ok(Outcome::AlreadyPinned);
    }
    let (new, manifest) = walk_journal(&archive, &source)?;
    if new == old {
        return Ok(Outcome::Unchanged);
    }
    if let Some(changes) = super::crawl::diff_from_pin(&archive, &old, &manifest) {
        eprint!("{}", changes.render(10));
    }
    Ok(Outcome::Repinned { old, new })
}

/// The crawl `source` as its journal has it (the pin ignored), finished over the network.
fn walk_journal(
    archive: &crate::crawl::archive::Archive,
    source: &crate::crawl::source::CrawlSource,
) -> miette::Result<(String, crate::crawl::manifest::Manifest)> {
    let available = source.make_available(archive, crate::crawl::source::How::default())?;
    Ok((available.hash, available.manifest))
}

/// Whether source `name` is a game source given by `path` or `paths`: pinned file by file.
fn is_file_list(loaded: &Loaded, name: &str) -> bool {
    let spec = &loaded.pipeline.sources[name];
    spec.kind().is_games() && spec.manifest().is_none()
}

/// Pins each file game source `name` matches in `[sources.<name>.pins]`: the files
/// without a pin, and with `force` every file (dropping the pins of files it no longer
/// matches). Returns how many pins changed.
fn pin_game_files(
    loaded: &Loaded,
    name: &str,
    force: bool,
    files: &mut FileStates,
    doc: &mut DocumentMut,
) -> miette::Result<usize> {
    let spec = &loaded.pipeline.sources[name];
    let old = spec.file_pins().cloned().unwrap_or_default();
    let mut pins = if force { Default::default() } else { old.clone() };
    let mut changed = 0;
    let mut kept = 0;
    for (path, shown) in crate::make::pinnable_game_files(loaded, spec) {
        if pins.contains_key(&shown) {
            kept += 1;
            continue;
        }
        let new = files
            .hash(&path)
            .map_err(|e| miette!("source {name}: reading {}: {e}", path.display()))?;
        let outcome = match old.get(&shown) {
            None => Outcome::Pinned(new.clone()),
            Some(o) if *o == new => Outcome::Unchanged,
            Some(o) => Outcome::Repinned { old: o.clone(), new: new.clone() },
        };
        report(&format!("{name} {shown}"), &outcome);
        changed += usize::from(!matches!(outcome, Outcome::Unchanged));
        pins.insert(shown, new);
    }
    if kept > 0 {
        let text =
            format!("{name}: {kept} files already pinned (`okb pin --force {name}` re-pins them)");
        eprintln!("{} {text}", super::output::paint("Fresh", "32"));
    }
    // With `force`, the pins of files no longer matched go.
    changed += old.keys().filter(|file| !pins.contains_key(*file)).count();
    if changed > 0 {
        set_file_pins(doc, name, &pins)
            .map_err(|why| miette!("{}: {why}", loaded.file.display()))?;
    }
    Ok(changed)
}

/// Writes `[sources.<name>.pins]`, one line per file, in path order.
fn set_file_pins(
    doc: &mut DocumentMut,
    name: &str,
    pins: &std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    let source = doc
        .get_mut("sources")
        .and_then(|s| s.as_table_like_mut())
        .and_then(|s| s.get_mut(name))
        .ok_or_else(|| format!("cannot find the table [sources.{name}] to write its pins"))?;
    let mut written = toml_edit::InlineTable::new();
    for (file, hash) in pins {
        written.insert(file, hash.as_str().into());
    }
    // A section of its own under a table; inline in an inline table.
    match source {
        toml_edit::Item::Table(t) => {
            t.insert("pins", toml_edit::Item::Table(written.into_table()));
        }
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => {
            t.insert("pins", written.into());
        }
        _ => return Err(format!("[sources.{name}] is not a table: cannot write its pins")),
    }
    Ok(())
}

fn report(name: &str, outcome: &Outcome) {
    let (status, text) = match outcome {
        Outcome::Pinned(new) => ("Pinned", format!("{name} blake3 {new}")),
        Outcome::Repinned { old, new } => ("Repinned", format!("{name} blake3 {old} → {new}")),
        Outcome::Unchanged => ("Fresh", format!("{name}: its bytes still match the pin")),
        Outcome::AlreadyPinned => {
            ("Fresh", format!("{name} is already pinned (`okb pin --force {name}` re-pins it)"))
        }
    };
    eprintln!("{} {text}", super::output::paint(status, "32"));
}

/// Sets `sources.<name>.blake3`, keeping the comment after an old value.
fn set_pin(doc: &mut DocumentMut, name: &str, hash: &str) -> Result<(), String> {
    set_pin_in(doc, "sources", name, hash)
}

/// Sets `<group>.<name>.blake3` (`sources`, `repertoires`), keeping its comment.
fn set_pin_in(doc: &mut DocumentMut, group: &str, name: &str, hash: &str) -> Result<(), String> {
    let table = doc
        .get_mut(group)
        .and_then(|s| s.as_table_like_mut())
        .and_then(|s| s.get_mut(name))
        .and_then(|t| t.as_table_like_mut())
        .ok_or_else(|| format!("cannot find the table [{group}.{name}] to write its pin"))?;
    match table.get_mut("blake3").and_then(|item| item.as_value_mut()) {
        Some(value) => {
            let decor = value.decor().clone();
            *value = hash.into();
            *value.decor_mut() = decor;
        }
        None => {
            table.insert("blake3", toml_edit::value(hash));
        }
    }
    Ok(())
}
