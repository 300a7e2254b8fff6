//! `structure-labels` sources: a pipeline's own names for pawn skeletons, which override
//! okb's classifier for that exact skeleton everywhere in the tree.
//!
//! The file is tab-separated with a header row. It needs a `label` column and a `fen` or
//! a `moves` column (SAN from the start position); other columns are ignored, so the
//! form `okb review structures` writes can be filled in and declared as it is. Rows with
//! an empty label are skipped (not yet reviewed). A label is a structure of okb's
//! catalogue (`okb structure --list`), matched without regard to case, or `Unknown` to
//! keep a skeleton unnamed. Bad rows are warnings naming the file and line; the rest of
//! the file still counts.

use serde::{Deserialize, Serialize};

use super::skeleton::{Entry, Skeleton, SkeletonTable};
use crate::diagnostics::Warning;

/// One usable row of a labels file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelRow {
    /// 1-based line in the file.
    pub line: u32,
    /// White's pawns (bitboard).
    pub white: u64,
    /// Black's pawns (bitboard).
    pub black: u64,
    /// The catalogue's name of the structure (or `Unknown`).
    pub structure: String,
}

/// A parsed labels file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Labels {
    /// The source's name, for origins and messages.
    pub source: String,
    /// Usable rows, in file order.
    pub rows: Vec<LabelRow>,
    /// Rows skipped, and why.
    pub warnings: Vec<Warning>,
}

/// The catalogue's structure for a label, if it names one (case-insensitive).
fn catalogued(label: &str) -> Option<&'static super::Structure> {
    super::STRUCTURES.iter().chain([&super::UNKNOWN]).find(|s| s.name.eq_ignore_ascii_case(label))
}

/// The catalogue's names closest to a label that names none, for the warning.
fn closest(label: &str) -> Vec<&'static str> {
    let mut scored: Vec<(f64, &str)> = super::STRUCTURES
        .iter()
        .map(|s| (strsim::jaro_winkler(&label.to_lowercase(), &s.name.to_lowercase()), s.name))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(3).map(|(_, name)| name).collect()
}

/// Parses the labels file `bytes` of the source `source`.
pub fn parse(source: &str, bytes: &[u8]) -> Labels {
    let mut labels = Labels { source: source.to_string(), ..Default::default() };
    let mut reader =
        csv::ReaderBuilder::new().delimiter(b'\t').flexible(true).quoting(false).from_reader(bytes);
    let header = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => {
            labels.warnings.push(Warning::at(
                "bad-labels",
                source,
                1,
                format!("unreadable header: {e}"),
                "",
            ));
            return labels;
        }
    };
    let column = |name: &str| header.iter().position(|h| h.trim().eq_ignore_ascii_case(name));
    let (Some(label_at), fen_at, moves_at) = (column("label"), column("fen"), column("moves"))
    else {
        labels.warnings.push(Warning::at(
            "bad-labels",
            source,
            1,
            "the header has no `label` column",
            &header.iter().collect::<Vec<_>>().join("\t"),
        ));
        return labels;
    };
    if fen_at.is_none() && moves_at.is_none() {
        labels.warnings.push(Warning::at(
            "bad-labels",
            source,
            1,
            "the header has neither a `fen` nor a `moves` column",
            &header.iter().collect::<Vec<_>>().join("\t"),
        ));
        return labels;
    }
    for record in reader.records() {
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as u32);
                labels.warnings.push(Warning::at(
                    "bad-labels",
                    source,
                    line,
                    format!("unreadable row: {e}"),
                    "",
                ));
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line() as u32);
        let field = |at: Option<usize>| {
            at.and_then(|i| record.get(i)).map(str::trim).filter(|t| !t.is_empty())
        };
        let Some(label) = field(Some(label_at)) else { continue };
        match row(label, field(fen_at), field(moves_at), line) {
            Ok(r) => labels.rows.push(r),
            Err(message) => labels.warnings.push(Warning::at(
                "bad-label",
                source,
                line,
                message,
                &record.iter().collect::<Vec<_>>().join("\t"),
            )),
        }
    }
    labels
}

/// One row's label and position, checked.
fn row(label: &str, fen: Option<&str>, moves: Option<&str>, line: u32) -> Result<LabelRow, String> {
    let structure = catalogued(label).ok_or_else(|| {
        format!("{label:?} is not a structure okb knows (closest: {})", closest(label).join(", "))
    })?;
    let pos = match (fen, moves) {
        (Some(fen), _) => {
            crate::position::parse_fen(fen).map_err(|e| format!("bad FEN {fen:?}: {e}"))?
        }
        (None, Some(moves)) => {
            super::skeleton::position_after(moves).map_err(|e| format!("bad moves: {e}"))?
        }
        (None, None) => return Err("the row has a label but no FEN or moves".into()),
    };
    let skeleton = Skeleton::of(shakmaty::Position::board(&pos));
    Ok(LabelRow {
        line,
        white: skeleton.white.0,
        black: skeleton.black.0,
        structure: structure.name.to_string(),
    })
}

/// The classifier with the labels of every source, in the order given (see [`table`]).
pub fn classifier<'a>(
    sources: impl IntoIterator<Item = &'a Labels>,
) -> (super::Classifier, Vec<Warning>) {
    let (labels, warnings) = table(sources);
    (super::Classifier { labels }, warnings)
}

/// The table of every labels source, in the order given; a skeleton labelled twice keeps
/// its first label, and each later one becomes a warning.
pub fn table<'a>(sources: impl IntoIterator<Item = &'a Labels>) -> (SkeletonTable, Vec<Warning>) {
    let mut table = SkeletonTable::default();
    let mut warnings = Vec::new();
    for labels in sources {
        for row in &labels.rows {
            let skeleton = Skeleton {
                white: shakmaty::Bitboard(row.white),
                black: shakmaty::Bitboard(row.black),
            };
            let structure = catalogued(&row.structure).unwrap_or(&super::UNKNOWN);
            let origin = format!("{}:{}", labels.source, row.line);
            if let Err(first) = table.insert(Entry { skeleton, structure, origin })
                && first.structure.name != structure.name
            {
                let message = format!(
                    "this skeleton is already labelled {:?} at {}; keeping that",
                    first.structure.name, first.origin
                );
                warnings.push(Warning::at(
                    "duplicate-label",
                    &labels.source,
                    row.line,
                    message,
                    &row.structure,
                ));
            }
        }
    }
    (table, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_by_fen_or_moves_and_bad_rows_named_by_line() {
        let tsv = "label\tfen\tmoves\tgames\n\
                   najdorf\t\t1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6\t10\n\
                   \t\t1. e4 e5\t3\n\
                   Giuoco Pianissimo\trnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\t\t\n\
                   Najdorff\t\t1. e4 c5\t\n\
                   Dragon\tnot a fen\t\t\n\
                   Dragon\t\t1. e4 e5 2. Kxe8\t\n";
        let labels = parse("mine", tsv.as_bytes());
        assert_eq!(
            labels.rows.iter().map(|r| (r.line, r.structure.as_str())).collect::<Vec<_>>(),
            vec![(2, "Najdorf"), (4, "Giuoco Pianissimo")]
        );
        let lines: Vec<_> = labels.warnings.iter().map(|w| (w.line, w.kind.as_str())).collect();
        assert_eq!(
            lines,
            vec![(Some(5), "bad-label"), (Some(6), "bad-label"), (Some(7), "bad-label")]
        );
        assert!(
            labels.warnings[0].message.contains("closest: Najdorf"),
            "{}",
            labels.warnings[0].message
        );
    }

    #[test]
    fn a_header_without_label_or_position_is_one_warning() {
        assert_eq!(
            parse("x", b"fen\tname\n").warnings[0].message,
            "the header has no `label` column"
        );
        assert_eq!(
            parse("x", b"label\tname\n").warnings[0].message,
            "the header has neither a `fen` nor a `moves` column"
        );
    }

    #[test]
    fn the_first_label_of_a_skeleton_wins() {
        let a = parse(
            "a",
            b"label\tmoves\nDragon\t1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 g6\n",
        );
        let b = parse(
            "b",
            b"label\tmoves\nNajdorf\t1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 g6\n",
        );
        let (table, warnings) = table([&a, &b]);
        assert_eq!(table.entries().len(), 1);
        assert_eq!(warnings[0].file, "b");
        assert!(warnings[0].message.contains("already labelled \"Dragon\" at a:2"));
    }
}
