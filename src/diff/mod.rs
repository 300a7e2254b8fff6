//! `okb diff`: what changed in the knowledge base between two builds, by position
//! identity: positions added and removed, names and ECO codes, aliases, transpositions,
//! game counts and win rates beyond a threshold, engine evaluations, pawn-structure tags,
//! and (given both builds' manifests) the export files.
//!
//! [`load`] reads a store into a [`Snapshot`]; [`compare`] makes a [`Diff`];
//! [`render`] prints it as tables, most important first.

pub mod load;
pub mod render;

use std::collections::BTreeSet;

use serde::Serialize;

pub use load::Snapshot;

/// One position of a build, as far as a diff looks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeFacts {
    /// Canonical line.
    pub moves: String,
    /// ECO code of its name (own or inherited).
    pub eco: Option<String>,
    /// Full name (`Opening: Variation`).
    pub name: Option<String>,
    /// Whether the name is the node's own entry (not inherited).
    pub named_here: bool,
    /// Aliases of its own entry, `source: name`.
    pub aliases: Vec<String>,
    /// Games through it.
    pub games: u64,
    /// White's win rate, percent.
    pub white_pct: Option<f64>,
    /// Draw rate, percent.
    pub draw_pct: Option<f64>,
    /// Engine evaluation, centipawns from White's side.
    pub eval_cp: Option<i64>,
    /// Mate distance, when the engine saw one.
    pub mate: Option<i64>,
    /// Engine's best move (SAN).
    pub best_move: Option<String>,
    /// Depth of the evaluation.
    pub eval_depth: Option<i64>,
    /// Where the evaluation came from (the engine, or an evaluation source and its pin).
    pub eval_source: Option<String>,
    /// Pawn-structure tag.
    pub structure: Option<String>,
}

/// How to compare.
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    /// A count changed by at least this fraction (0.05: 5 %), or a rate by at least this
    /// many hundredths (0.05: 5 percentage points), is reported.
    pub min_delta: f64,
}

/// A position present in one build only.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Presence {
    /// Its line.
    pub moves: String,
    /// Its name.
    pub name: Option<String>,
    /// Its games.
    pub games: u64,
}

/// A field that changed on one position.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change<T> {
    /// The position's line (in the new build).
    pub moves: String,
    /// Games through it (new build): what the lists are sorted by.
    pub games: u64,
    /// Before.
    pub old: T,
    /// After.
    pub new: T,
}

/// Game statistics before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Games.
    pub games: u64,
    /// White wins, percent.
    pub white_pct: Option<f64>,
    /// Draws, percent.
    pub draw_pct: Option<f64>,
}

/// Engine verdict before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Eval {
    /// Centipawns.
    pub cp: Option<i64>,
    /// Mate in.
    pub mate: Option<i64>,
    /// Best move.
    pub best_move: Option<String>,
    /// Depth.
    pub depth: Option<i64>,
    /// Where it came from.
    pub source: Option<String>,
}

/// An export file that changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileChange {
    /// Relative path.
    pub path: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// Size before (when it existed).
    pub old_bytes: Option<u64>,
    /// Size after (when it exists).
    pub new_bytes: Option<u64>,
}

/// Everything that differs between two builds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Diff {
    /// Positions only the new build has.
    pub added: Vec<Presence>,
    /// Positions only the old build has.
    pub removed: Vec<Presence>,
    /// Names (or ECO codes) that changed.
    pub names: Vec<Change<(Option<String>, Option<String>)>>,
    /// Alias lists that changed.
    pub aliases: Vec<Change<Vec<String>>>,
    /// Transposition links (`line = line`) only the new build has.
    pub transpositions_added: Vec<String>,
    /// Transposition links only the old build has.
    pub transpositions_removed: Vec<String>,
    /// Game statistics that changed beyond the threshold.
    pub stats: Vec<Change<Stats>>,
    /// Engine evaluations or best moves that changed.
    pub evals: Vec<Change<Eval>>,
    /// Pawn-structure tags that changed.
    pub structures: Vec<Change<Option<String>>>,
    /// Export files that changed (when both manifests are known).
    pub files: Vec<FileChange>,
}

impl Diff {
    /// Whether the builds are the same for every section.
    pub fn is_empty(&self) -> bool {
        self.counts().iter().all(|&(_, n)| n == 0)
    }

    /// The number of entries per section, in display order.
    pub fn counts(&self) -> [(&'static str, usize); 10] {
        [
            ("positions added", self.added.len()),
            ("positions removed", self.removed.len()),
            ("names changed", self.names.len()),
            ("aliases changed", self.aliases.len()),
            ("transpositions added", self.transpositions_added.len()),
            ("transpositions removed", self.transpositions_removed.len()),
            ("game statistics changed", self.stats.len()),
            ("engine evaluations changed", self.evals.len()),
            ("structure tags changed", self.structures.len()),
            ("export files changed", self.files.len()),
        ]
    }
}

/// Compares two snapshots.
pub fn compare(old: &Snapshot, new: &Snapshot, t: Thresholds) -> Diff {
    let mut d = Diff::default();
    for (key, n) in &new.nodes {
        match old.nodes.get(key) {
            None => d.added.push(presence(n)),
            Some(o) => compare_node(o, n, t, &mut d),
        }
    }
    d.removed = old
        .nodes
        .iter()
        .filter(|(k, _)| !new.nodes.contains_key(*k))
        .map(|(_, o)| presence(o))
        .collect();
    let links = |s: &Snapshot| -> BTreeSet<String> {
        s.transpositions.iter().map(|(a, b)| format!("{a} = {b}")).collect()
    };
    let (lo, ln) = (links(old), links(new));
    d.transpositions_added = ln.difference(&lo).cloned().collect();
    d.transpositions_removed = lo.difference(&ln).cloned().collect();
    d.files = compare_files(old, new);
    sort_by_importance(&mut d);
    d
}

fn presence(n: &NodeFacts) -> Presence {
    Presence { moves: n.moves.clone(), name: n.name.clone(), games: n.games }
}

fn compare_node(o: &NodeFacts, n: &NodeFacts, t: Thresholds, d: &mut Diff) {
    let change = |old, new| Change { moves: n.moves.clone(), games: n.games, old, new };
    if (&o.name, &o.eco) != (&n.name, &n.eco) && (o.named_here || n.named_here) {
        d.names.push(change((o.eco.clone(), o.name.clone()), (n.eco.clone(), n.name.clone())));
    }
    if o.aliases != n.aliases {
        d.aliases.push(Change {
            moves: n.moves.clone(),
            games: n.games,
            old: o.aliases.clone(),
            new: n.aliases.clone(),
        });
    }
    if stats_moved(o, n, t.min_delta) {
        let stats =
            |x: &NodeFacts| Stats { games: x.games, white_pct: x.white_pct, draw_pct: x.draw_pct };
        d.stats.push(Change {
            moves: n.moves.clone(),
            games: n.games,
            old: stats(o),
            new: stats(n),
        });
    }
    let key = |x: &NodeFacts| {
        (x.eval_cp, x.mate, x.best_move.clone(), x.eval_depth, x.eval_source.clone())
    };
    if key(o) != key(n) {
        let eval = |x: &NodeFacts| Eval {
            cp: x.eval_cp,
            mate: x.mate,
            best_move: x.best_move.clone(),
            depth: x.eval_depth,
            source: x.eval_source.clone(),
        };
        d.evals.push(Change { moves: n.moves.clone(), games: n.games, old: eval(o), new: eval(n) });
    }
    if o.structure != n.structure {
        d.structures.push(Change {
            moves: n.moves.clone(),
            games: n.games,
            old: o.structure.clone(),
            new: n.structure.clone(),
        });
    }
}

/// A count moved by at least `min_delta` of itself, or a rate by `min_delta` × 100 points.
fn stats_moved(o: &NodeFacts, n: &NodeFacts, min_delta: f64) -> bool {
    let base = o.games.max(n.games).max(1) as f64;
    let count = (o.games as f64 - n.games as f64).abs() / base >= min_delta && o.games != n.games;
    let rate = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() >= min_delta * 100.0,
        (a, b) => a.is_some() != b.is_some(),
    };
    count || rate(o.white_pct, n.white_pct) || rate(o.draw_pct, n.draw_pct)
}

fn compare_files(old: &Snapshot, new: &Snapshot) -> Vec<FileChange> {
    let (Some(o), Some(n)) = (&old.files, &new.files) else { return Vec::new() };
    let mut out = Vec::new();
    for (path, (hash, bytes)) in n {
        match o.get(path) {
            None => out.push(FileChange {
                path: path.clone(),
                change: "added",
                old_bytes: None,
                new_bytes: Some(*bytes),
            }),
            Some((h, b)) if h != hash => out.push(FileChange {
                path: path.clone(),
                change: "changed",
                old_bytes: Some(*b),
                new_bytes: Some(*bytes),
            }),
            Some(_) => {}
        }
    }
    for (path, (_, bytes)) in o.iter().filter(|(p, _)| !n.contains_key(*p)) {
        out.push(FileChange {
            path: path.clone(),
            change: "removed",
            old_bytes: Some(*bytes),
            new_bytes: None,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Most-played positions first, then by line; evals by the size of the swing.
fn sort_by_importance(d: &mut Diff) {
    let by_games =
        |a: &Presence, b: &Presence| b.games.cmp(&a.games).then_with(|| a.moves.cmp(&b.moves));
    d.added.sort_by(by_games);
    d.removed.sort_by(by_games);
    fn by<T>(list: &mut [Change<T>]) {
        list.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| a.moves.cmp(&b.moves)));
    }
    by(&mut d.names);
    by(&mut d.aliases);
    by(&mut d.structures);
    d.stats.sort_by(|a, b| {
        let swing = |c: &Change<Stats>| (c.new.games as i64 - c.old.games as i64).unsigned_abs();
        swing(b).cmp(&swing(a)).then_with(|| a.moves.cmp(&b.moves))
    });
    d.evals.sort_by(|a, b| {
        let swing =
            |c: &Change<Eval>| (c.new.cp.unwrap_or(0) - c.old.cp.unwrap_or(0)).unsigned_abs();
        swing(b)
            .cmp(&swing(a))
            .then_with(|| b.games.cmp(&a.games))
            .then_with(|| a.moves.cmp(&b.moves))
    });
}
