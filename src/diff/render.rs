//! A diff as text: a summary line per section, then each section's entries, most
//! important first, at most `limit` per section.

use std::fmt::Write;

use super::{Change, Diff, Eval, Presence, Stats};

/// The diff as readable text (empty when the builds are the same).
pub fn text(d: &Diff, limit: usize) -> String {
    let mut out = String::new();
    if d.is_empty() {
        return out;
    }
    let counts: Vec<String> =
        d.counts().into_iter().filter(|(_, n)| *n > 0).map(|(s, n)| format!("{n} {s}")).collect();
    let _ = writeln!(out, "{}", counts.join(", "));
    section(&mut out, "Positions added", &d.added, limit, presence);
    section(&mut out, "Positions removed", &d.removed, limit, presence);
    section(&mut out, "Names changed", &d.names, limit, |c| {
        let show = |(eco, name): &(Option<String>, Option<String>)| {
            format!(
                "{} {}",
                eco.as_deref().unwrap_or("---"),
                name.as_deref().unwrap_or("(unnamed)")
            )
        };
        format!("{}  {} → {}", c.moves, show(&c.old), show(&c.new))
    });
    section(&mut out, "Aliases changed", &d.aliases, limit, |c| {
        format!("{}  [{}] → [{}]", c.moves, c.old.join("; "), c.new.join("; "))
    });
    section(&mut out, "Transpositions added", &d.transpositions_added, limit, String::clone);
    section(&mut out, "Transpositions removed", &d.transpositions_removed, limit, String::clone);
    section(&mut out, "Game statistics changed", &d.stats, limit, stats);
    section(&mut out, "Engine evaluations changed", &d.evals, limit, eval);
    section(&mut out, "Structure tags changed", &d.structures, limit, |c| {
        format!(
            "{}  {} → {}",
            c.moves,
            c.old.as_deref().unwrap_or("-"),
            c.new.as_deref().unwrap_or("-")
        )
    });
    section(&mut out, "Export files changed", &d.files, limit, |f| {
        let size = |b: Option<u64>| b.map_or("-".to_string(), |b| format!("{b} B"));
        format!("{:<8} {}  {} → {}", f.change, f.path, size(f.old_bytes), size(f.new_bytes))
    });
    out
}

fn section<T>(
    out: &mut String,
    title: &str,
    items: &[T],
    limit: usize,
    line: impl Fn(&T) -> String,
) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title} ({})", items.len());
    for item in items.iter().take(limit) {
        let _ = writeln!(out, "  {}", line(item));
    }
    if items.len() > limit {
        let _ = writeln!(out, "  … {} more (--limit)", items.len() - limit);
    }
}

fn presence(p: &Presence) -> String {
    format!("{}  {}  {} games", p.moves, p.name.as_deref().unwrap_or("(unnamed)"), p.games)
}

fn stats(c: &Change<Stats>) -> String {
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
    format!(
        "{}  games {} → {}, white {} → {}, draws {} → {}",
        c.moves,
        c.old.games,
        c.new.games,
        pct(c.old.white_pct),
        pct(c.new.white_pct),
        pct(c.old.draw_pct),
        pct(c.new.draw_pct)
    )
}

fn eval(c: &Change<Eval>) -> String {
    let show = |e: &Eval| {
        let score = match (e.mate, e.cp) {
            (Some(m), _) => format!("#{m}"),
            (None, Some(cp)) => format!("{cp:+} cp"),
            (None, None) => "-".into(),
        };
        let origin = match (e.depth, &e.source) {
            (Some(d), Some(s)) => format!(" (depth {d}, {s})"),
            (Some(d), None) => format!(" (depth {d})"),
            _ => String::new(),
        };
        format!("{score} {}{origin}", e.best_move.as_deref().unwrap_or("-"))
    };
    let delta = match (c.old.cp, c.new.cp) {
        (Some(a), Some(b)) => format!(" ({:+} cp)", b - a),
        _ => String::new(),
    };
    format!("{}  {} → {}{delta}", c.moves, show(&c.old), show(&c.new))
}
