//! `okb review structures`: build, then list the terminal positions whose pawn structure
//! is Unknown or only nearly matched, most played first, and write the form a reviewer
//! fills in; declared as a `structure-labels` source, the form names them in the next
//! make.

use std::path::{Path, PathBuf};

use miette::{IntoDiagnostic, WrapErr, miette};

use super::output::paint;
use crate::pipeline::Loaded;

/// Arguments of `okb review`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReviewArgs {
    /// What to review.
    #[command(subcommand)]
    pub what: ReviewWhat,
}

/// The reviews okb offers.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ReviewWhat {
    /// Pawn structures: Unknown and near-matched terminal positions, most played first
    ///
    ///   okb review structures                      # the 25 most played
    ///   okb review structures -o structures/labels.tsv
    ///   okb review structures --json | jq '.unknown[0]'
    ///
    /// Fill in the `label` column of the form (a structure name from `okb structure
    /// --list`, or Unknown), declare it in pipeline.toml and make again:
    ///
    ///   [sources.my-labels]
    ///   kind = "structure-labels"
    ///   path = "structures/labels.tsv"
    ///
    /// Writing the form again keeps every row already labelled.
    #[command(verbatim_doc_comment)]
    Structures(StructuresReview),
}

/// Arguments of `okb review structures`.
#[derive(Debug, Clone, clap::Args)]
pub struct StructuresReview {
    /// Positions to print.
    #[arg(long, default_value_t = 25)]
    pub limit: usize,
    /// Write the form (tab-separated, every position to review) to this file.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the whole review as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Review the last build as it is; do not build first.
    #[arg(long)]
    pub no_build: bool,
    /// Mirror folders for pinned sources, as for make.
    #[arg(long, value_name = "DIR")]
    pub mirror: Vec<PathBuf>,
    /// Never download sources.
    #[arg(long)]
    pub offline: bool,
}

/// Runs `okb review`.
pub fn run(args: &ReviewArgs, load: impl Fn() -> miette::Result<Loaded>) -> miette::Result<()> {
    let ReviewWhat::Structures(args) = &args.what;
    let loaded = load()?;
    if !args.no_build {
        super::make::build_and_report(
            &loaded,
            &super::make::Sources { mirror: &args.mirror, offline: args.offline, locked: false },
        )?;
    }
    let store = loaded.layout().store;
    let dir = store.parent().map(Path::to_path_buf).unwrap_or_default();
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path)
            .into_diagnostic()
            .wrap_err_with(|| format!("reading {} (run `okb make` first)", path.display()))
    };
    if args.json {
        print!("{}", String::from_utf8_lossy(&read("structures-review.json")?));
    } else {
        let review: serde_json::Value =
            serde_json::from_slice(&read("structures-review.json")?).into_diagnostic()?;
        print!("{}", table(&review, args.limit));
    }
    if let Some(out) = &args.output {
        let kept = write_form(out, &read("structures-review.tsv")?)?;
        let kept = if kept > 0 { format!(", kept {kept} labelled rows") } else { String::new() };
        eprintln!(
            "{} {}{kept}; fill in its label column and declare it as a `structure-labels` source",
            paint("Wrote", "32"),
            out.display()
        );
    }
    Ok(())
}

/// The summary and the first `limit` positions of a review.
fn table(review: &serde_json::Value, limit: usize) -> String {
    let entries = review["unknown"].as_array().map_or(&[][..], Vec::as_slice);
    // A review of an older okb has no total: its list is whole.
    let total = review["to_review"].as_u64().map_or(entries.len(), |n| n as usize);
    let terminal = review["terminal_nodes"].as_u64().unwrap_or(0);
    let how: Vec<String> = review["by_confidence"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| format!("{} {}", p[0].as_str().unwrap_or("?"), p[1]))
        .collect();
    let mut out =
        format!("{terminal} terminal nodes, found by: {}\n{} to review", how.join(", "), total);
    out.push_str(&format!(
        "{}\n\n",
        match limit.min(entries.len()) {
            shown if shown < total => format!(", the {shown} most played:"),
            _ => ":".into(),
        }
    ));
    out.push_str(&format!(
        "{:>7}  {:<24} {:<24} {:>4}  {}\n",
        "games", "structure", "nearest", "dist", "moves"
    ));
    for e in entries.iter().take(limit) {
        let text = |key: &str| e[key].as_str().unwrap_or("-").chars().take(24).collect::<String>();
        let number = |key: &str| e[key].as_u64().map_or("-".to_string(), |n| n.to_string());
        // Numbers as strings: a JSON value's Display ignores width, which skewed the table.
        out.push_str(&format!(
            "{:>7}  {:<24} {:<24} {:>4}  {}\n",
            number("game_count"),
            text("structure"),
            text("nearest"),
            number("distance"),
            e["moves"].as_str().unwrap_or("-")
        ));
    }
    out
}

/// Writes the form to `out`. When `out` is already a form, its labelled rows are kept
/// (first, as they were) and the new rows for the same positions are left out, so a
/// form declared as a source never loses its labels. Returns how many were kept.
fn write_form(out: &Path, form: &[u8]) -> miette::Result<usize> {
    let text = String::from_utf8_lossy(form);
    let (header, rows) = text.split_once('\n').unwrap_or((&text, ""));
    let mut kept: Vec<String> = Vec::new();
    if let Ok(existing) = std::fs::read_to_string(out) {
        let mut lines = existing.lines();
        if lines.next() != Some(header) {
            return Err(miette!(
                help = "choose another file with -o, or remove it",
                "{} exists and is not an okb review form (its first line differs)",
                out.display()
            ));
        }
        kept = lines
            .filter(|l| l.split('\t').next().is_some_and(|label| !label.trim().is_empty()))
            .map(str::to_string)
            .collect();
    }
    let fen_of = |line: &str| line.rsplit('\t').next().unwrap_or("").to_string();
    let labelled: std::collections::HashSet<String> = kept.iter().map(|l| fen_of(l)).collect();
    let mut body = format!("{header}\n");
    for line in kept
        .iter()
        .map(String::as_str)
        .chain(rows.lines().filter(|l| !labelled.contains(&fen_of(l))))
    {
        body.push_str(line);
        body.push('\n');
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).into_diagnostic()?;
    }
    crate::files::write_atomic(out, body.as_bytes())
        .into_diagnostic()
        .wrap_err_with(|| format!("writing {}", out.display()))?;
    Ok(kept.len())
}

#[cfg(test)]
mod tests {
    /// Every row's columns start where the header's do, whatever the numbers' widths.
    #[test]
    fn the_review_table_keeps_its_columns_aligned() {
        let review = serde_json::json!({
            "terminal_nodes": 3,
            "by_confidence": [["exact", 1], ["unknown", 2]],
            "unknown": [
                {"game_count": 12345, "structure": "Nimzo–Queen's Indian", "nearest": "French",
                 "distance": 2, "moves": "1. d4 Nf6"},
                {"game_count": 7, "structure": null, "nearest": "Sicilian", "distance": null,
                 "moves": "1. e4 c5"},
            ],
        });
        let table = super::table(&review, 10);
        let lines: Vec<&str> = table.lines().skip_while(|l| !l.contains("games")).collect();
        assert_eq!(lines.len(), 3, "{table}");
        let moves_at =
            |line: &str| line.chars().count() - line.split("  ").last().unwrap().chars().count();
        let header = moves_at(lines[0]);
        for line in &lines[1..] {
            assert_eq!(moves_at(line), header, "{table}");
            let games: String = line.chars().take(7).collect();
            assert!(games.trim_start().chars().all(|c| c.is_ascii_digit()), "{table}");
        }
    }
}
