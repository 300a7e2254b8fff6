//! Which openings get a file of their own in the per-opening exports, and what the file
//! is called. Every per-opening format (OpeningIQ JSON, PGN per opening) goes through
//! [`named_openings`], so their directories list the same openings under the same names.

use std::collections::BTreeMap;

use crate::tree::Tree;

/// One named opening: a tree node that carries an authoritative name of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedOpening {
    /// Index of the named node in [`Tree::nodes`].
    pub node: u32,
    /// ECO code (`B90`).
    pub eco: String,
    /// Full name (`Sicilian Defense: Najdorf Variation`).
    pub name: String,
    /// File name without extension: `<ECO>-<slug of the full name>` (`B90-sicilian-defense-najdorf-variation`).
    pub stem: String,
}

/// A node that may name an opening: its own authoritative name and canonical line.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// Index of the node.
    pub node: u32,
    /// ECO code of the node's own entry.
    pub eco: &'a str,
    /// Full name of the node's own entry.
    pub name: &'a str,
    /// Plies of the canonical line.
    pub ply: usize,
    /// The canonical line as numbered SAN.
    pub movetext: &'a str,
}

/// Every distinct authoritative named entry of `tree`, sorted by file stem.
///
/// Authoritative means the node's own entry comes from the Lichess TSV (`eco_tsv`), so
/// interpolated, inherited and SCID/pgn-extract-only names are left out.
pub fn named_openings(tree: &Tree) -> Vec<NamedOpening> {
    select(tree.nodes.iter().enumerate().filter_map(|(index, node)| {
        let opening = node.opening.as_ref().filter(|o| o.own && o.src == "eco_tsv")?;
        Some(Candidate {
            node: index as u32,
            eco: &opening.eco,
            name: &opening.name,
            ply: node.line.len(),
            movetext: &node.movetext,
        })
    }))
}

/// One opening per distinct (ECO, name) among `candidates`, sorted by file stem.
///
/// The Lichess files name some (ECO, name) pairs on several positions (transposed or
/// longer lines); such a pair is one opening, represented by its shortest line (then the
/// first by movetext), so each file name is unique and the choice does not depend on
/// input order.
pub fn select<'a>(candidates: impl IntoIterator<Item = Candidate<'a>>) -> Vec<NamedOpening> {
    let mut best: BTreeMap<(&str, &str), Candidate<'a>> = BTreeMap::new();
    for c in candidates {
        let slot = best.entry((c.eco, c.name)).or_insert(c);
        if (c.ply, c.movetext, c.node) < (slot.ply, slot.movetext, slot.node) {
            *slot = c;
        }
    }
    let mut out: Vec<NamedOpening> = best
        .into_values()
        .map(|c| NamedOpening {
            node: c.node,
            eco: c.eco.to_string(),
            name: c.name.to_string(),
            stem: format!("{}-{}", c.eco, slug(c.name)),
        })
        .collect();
    out.sort_by(|a, b| a.stem.cmp(&b.stem).then(a.node.cmp(&b.node)));
    // Two names that differ only in punctuation would share a slug; number the later ones.
    for i in 1..out.len() {
        let mut n = 2;
        let base = out[i].stem.clone();
        while out[..i].iter().any(|o| o.stem == out[i].stem) {
            out[i].stem = format!("{base}-{n}");
            n += 1;
        }
    }
    out
}

/// The file-name slug of an opening name: ASCII lowercase, accented Latin letters folded
/// to their base letter (`Kádas` → `kadas`), every run of other characters one `-`, no
/// `-` at either end.
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().map(fold_accent) {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// The base letter of the accented letters that occur in opening names.
fn fold_accent(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ä' | 'ã' | 'å' => 'a',
        'Á' | 'À' | 'Â' | 'Ä' | 'Ã' | 'Å' => 'A',
        'é' | 'è' | 'ê' | 'ë' => 'e',
        'É' | 'È' | 'Ê' | 'Ë' => 'E',
        'í' | 'ì' | 'î' | 'ï' => 'i',
        'ó' | 'ò' | 'ô' | 'ö' | 'õ' | 'ø' => 'o',
        'Ó' | 'Ò' | 'Ô' | 'Ö' | 'Õ' | 'Ø' => 'O',
        'ú' | 'ù' | 'û' | 'ü' => 'u',
        'Ú' | 'Ù' | 'Û' | 'Ü' => 'U',
        'ć' | 'č' | 'ç' => 'c',
        'Ć' | 'Č' | 'Ç' => 'C',
        'ñ' | 'ń' => 'n',
        'š' | 'ś' => 's',
        'ž' | 'ź' | 'ż' => 'z',
        other => other,
    }
}

/// The named openings of a [`Graph`](crate::graph::Graph) (a build read back from the
/// store), chosen as [`named_openings`] chooses them from a tree.
pub fn of_graph(graph: &crate::graph::Graph) -> Vec<NamedOpening> {
    select(graph.nodes.iter().enumerate().filter_map(|(index, node)| {
        let entry = node.entry.as_ref().filter(|e| e.src == "eco_tsv")?;
        Some(Candidate {
            node: index as u32,
            eco: &entry.eco,
            name: &entry.name,
            ply: node.ply as usize,
            movetext: &node.moves,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_ascii_and_single_dashed() {
        assert_eq!(
            slug("Sicilian Defense: Najdorf Variation"),
            "sicilian-defense-najdorf-variation"
        );
        assert_eq!(slug("Kádas Opening: Kádas Gambit"), "kadas-opening-kadas-gambit");
        assert_eq!(slug("Polish Opening, with d5"), "polish-opening-with-d5");
        assert_eq!(slug("Queen's Gambit Declined"), "queen-s-gambit-declined");
        assert_eq!(slug("Bird Opening: Williams Gambit!?"), "bird-opening-williams-gambit");
    }
}
