//! The smaller commands: `fetch`, `pin`, `clean` and `query`.

use std::process::ExitCode;

use miette::{IntoDiagnostic, miette};

use crate::build::filestate::FileStates;
use crate::pipeline::Loaded;
use crate::sources::{Origin, Resolver, Wanted};
use crate::store::read::{NodeJson, Store};

fn wanted<'a>(loaded: &'a Loaded, name: &'a str) -> Option<Wanted<'a>> {
    let spec = &loaded.pipeline.sources[name];
    spec.kind.is_taxonomy().then(|| Wanted {
        name,
        blake3: spec.blake3.as_deref(),
        path: spec.path.as_deref().map(|p| loaded.path(p)),
        url: spec.url.as_deref(),
    })
}

/// `okb fetch`: makes every pinned source available in `sources/`, verified.
pub fn fetch(loaded: &Loaded, mirrors: &[std::path::PathBuf], offline: bool) -> miette::Result<()> {
    let resolver = Resolver { store: loaded.path("sources"), mirrors: mirrors.to_vec(), offline };
    let mut files = FileStates::load(loaded.path("cache").join("file-states.json"));
    let mut failures = 0;
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

/// `okb pin`: computes the blake3 of each source without a pin and writes it into the
/// pipeline file, right under the source's table header.
pub fn pin(loaded: &Loaded) -> miette::Result<()> {
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
        crate::build::cache::write_atomic(&loaded.file, text.as_bytes()).into_diagnostic()?;
    } else {
        eprintln!("{:>12} every source already has a pin", "Fresh");
    }
    Ok(())
}

/// `okb clean`: removes the store and the exports (and the cache with `--cache`).
pub fn clean(loaded: &Loaded, cache: bool) -> miette::Result<()> {
    let mut removed = Vec::new();
    let store = loaded.path(&loaded.pipeline.store.path);
    let mut targets = vec![store];
    targets.extend(loaded.pipeline.exports.values().map(|e| loaded.path(&e.output)));
    if cache {
        targets.push(loaded.path("cache"));
    }
    for target in targets {
        let result =
            if target.is_dir() { std::fs::remove_dir_all(&target) } else { std::fs::remove_file(&target) };
        match result {
            Ok(()) => removed.push(target.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(miette!("removing {}: {e}", target.display())),
        }
    }
    eprintln!("{:>12} {} ({})", "Removed", removed.len(), removed.join(", "));
    Ok(())
}

/// Which `okb query` form.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// By FEN.
    Fen,
    /// By ECO or SCID code.
    Eco,
    /// By name.
    Name,
    /// By a line of moves.
    Moves,
}

/// Arguments of `okb query`.
#[derive(Clone, Debug)]
pub struct QueryArgs {
    /// Which form.
    pub kind: QueryKind,
    /// The FEN, code, name or moves.
    pub text: String,
    /// Print JSON.
    pub json: bool,
}

/// `okb query`: prints the matching nodes. Exit status 1 when nothing matches.
pub fn query(store: &Store, args: QueryArgs) -> miette::Result<ExitCode> {
    let err = |e: crate::store::StoreError| miette!("{e}");
    let nodes: Vec<NodeJson> = match args.kind {
        QueryKind::Fen => {
            let pos = crate::position::parse_fen(&args.text).map_err(|e| miette!("{e}"))?;
            store.node_by_position(&crate::position::epd(&pos)).map_err(err)?.into_iter().collect()
        }
        QueryKind::Moves => {
            let pos = crate::eco::line::position_after(&args.text).map_err(|e| miette!("{e}"))?;
            store.node_by_position(&crate::position::epd(&pos)).map_err(err)?.into_iter().collect()
        }
        QueryKind::Eco => store.nodes_by_eco(&args.text).map_err(err)?,
        QueryKind::Name => store.nodes_by_name(&args.text).map_err(err)?,
    };
    let single = matches!(args.kind, QueryKind::Fen | QueryKind::Moves);
    if args.json {
        let text = if single {
            match nodes.first() {
                Some(n) => serde_json::to_string_pretty(n),
                None => Ok("null".to_string()),
            }
        } else {
            serde_json::to_string_pretty(&nodes)
        }
        .into_diagnostic()?;
        println!("{text}");
    } else {
        for n in &nodes {
            let name = match (&n.opening_name, &n.variation_name) {
                (Some(o), Some(v)) => format!("{o}: {v}"),
                (Some(o), None) => o.clone(),
                _ => "(unnamed)".into(),
            };
            println!("{} {name}  [{}]", n.eco_code.as_deref().unwrap_or("---"), n.moves);
            println!("    {}", n.fen);
            let kids: Vec<String> = n.children.iter().map(|c| c.pgn_move.clone()).collect();
            if !kids.is_empty() {
                println!("    next: {}", kids.join(" "));
            }
        }
    }
    if nodes.is_empty() {
        eprintln!("no node matches {:?}", args.text);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
