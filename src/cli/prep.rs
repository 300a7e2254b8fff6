//! `okb prep --player NAME --side white|black [--since YEAR]` (`--side`: `--color` is
//! every command's colour-output flag): an opponent's games from
//! the pipeline's player collections (game sources with `players`), their moves with that
//! colour, and where they leave my repertoires for the other colour. A game the files
//! hold more than once counts once, unless the pipeline says `[games] deduplicate = false`.

use miette::{IntoDiagnostic, miette};
use rayon::prelude::*;

use crate::pipeline::Loaded;
use crate::repertoire::players::{Matcher, PlayerSpec};
use crate::repertoire::{Side, games, parse, prep};

/// Arguments of `okb prep`.
#[derive(clap::Args, Debug)]
pub struct PrepArgs {
    /// The opponent, as game files name them (`Kasparov, Gary`; initials and a listed
    /// player's aliases match too).
    #[arg(long)]
    pub player: String,
    /// The colour the opponent will have.
    #[arg(long, value_parser = ["white", "black"])]
    pub side: String,
    /// Only games of this year and later.
    #[arg(long)]
    pub since: Option<u32>,
    /// Positions and leaving lines shown.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The game files of player collection `name`: its paths, or the files of its pinned
/// manifest, from the store or a mirror as `okb make` found them (never downloaded: that
/// is `okb make`'s and `okb fetch`'s work).
fn collection_files(
    loaded: &Loaded,
    name: &str,
    spec: &crate::pipeline::SourceSpec,
) -> miette::Result<Vec<std::path::PathBuf>> {
    let Some(manifest) = spec.manifest() else {
        let patterns: Vec<String> =
            spec.game_paths().iter().map(|p| loaded.path(p).display().to_string()).collect();
        return crate::games::input::expand_paths(&patterns)
            .map_err(|e| miette!("player collection {name}: {e}"));
    };
    let manifest = loaded.path(manifest);
    let mut states = crate::files::FileStates::load(loaded.layout().file_states);
    let pin = match spec.blake3() {
        Some(pin) => pin.to_string(),
        None => states
            .hash(&manifest)
            .map_err(|e| miette!("player collection {name}: {}: {e}", manifest.display()))?,
    };
    let resolver = crate::make::resolver(loaded, &crate::sources::mirrors(&[]), true);
    let entries = crate::sources::collection::read(name, &manifest, &pin, &mut states)
        .map_err(miette::Report::new)?;
    let resolved = resolver.resolve_collection(name, &entries, &mut states).map_err(|e| {
        miette!(
            help = "`okb fetch` (or `okb make`) gets the collection's files",
            "player collection {name}: {e}"
        )
    })?;
    Ok(resolved.into_iter().map(|(_, r)| r.path).collect())
}

/// Reads the collections and repertoires and prints the preparation.
pub fn run(loaded: &Loaded, args: &PrepArgs) -> miette::Result<()> {
    let side = if args.side == "white" { Side::White } else { Side::Black };
    let wanted = Matcher::new(&[PlayerSpec::Name(args.player.clone())]);
    let mut files = Vec::new();
    for (name, spec) in loaded.pipeline.sources.iter().filter(|(_, s)| s.players().is_some()) {
        let players = spec.players().unwrap_or_default().to_vec();
        // A listed player the name matches brings their aliases along.
        let spec_of =
            players.iter().find(|p| p.spellings().iter().any(|s| wanted.find(s).is_some()));
        let matcher = Matcher::new(&[spec_of
            .cloned()
            .unwrap_or_else(|| PlayerSpec::Name(args.player.clone()))]);
        files.extend(
            collection_files(loaded, name, spec)?.into_iter().map(|p| (p, matcher.clone())),
        );
    }
    if files.is_empty() {
        return Err(miette!(
            help = "add `players = [\"Name, First\"]` to a [sources.NAME] game source",
            "the pipeline has no player collection"
        ));
    }
    let mut repertoires = Vec::new();
    for (name, spec) in &loaded.pipeline.repertoires {
        let Some(path) = &spec.path else { continue };
        let text = std::fs::read(loaded.path(path)).into_diagnostic()?;
        repertoires.push(
            parse::parse(name, spec.color, path, &String::from_utf8_lossy(&text))
                .map_err(miette::Report::new)?,
        );
    }
    let depth = repertoires.iter().map(|r| usize::from(r.depth()) + 1).max().unwrap_or(0).max(16);
    let read: Vec<Vec<games::PlayerGame>> = files
        .par_iter()
        .map(|(path, matcher)| {
            games::read_file(path, &path.display().to_string(), matcher, depth, None)
        })
        .collect::<Result<_, _>>()
        .map_err(|e| miette!("{e}"))?;
    let theirs: Vec<games::PlayerGame> = read
        .into_iter()
        .flatten()
        .filter(|g| g.side == side && args.since.is_none_or(|y| g.year().is_some_and(|gy| gy >= y)))
        .collect();
    // As the build's player collections do: a game two files hold counts once.
    let (theirs, repeats) = games::first_copies(theirs, loaded.pipeline.games.deduplicate);
    if theirs.is_empty() {
        return Err(miette!(
            "no game of {:?} with {} in the player collections",
            args.player,
            args.side
        ));
    }
    let prep = prep::prepare(&args.player, side, (&theirs, repeats), &repertoires, args.limit);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&prep).into_diagnostic()?);
    } else {
        print!("{}", prep.to_text());
    }
    Ok(())
}
