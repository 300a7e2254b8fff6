//! The structure review (the technical design's E7): terminal positions no structure
//! names, and those named only by a near skeleton, most played first, with the nearest
//! labelled skeleton. Written as JSON, as a readable table, and as a tab-separated form
//! whose empty `label` column a reviewer fills in; declared as a `structure-labels`
//! source, the filled form names those skeletons in the next make. It never blocks a
//! build.

use serde::{Deserialize, Serialize};

use super::{Classifier, Confidence, StructureTags, UNKNOWN};
use crate::tree::Tree;

/// Parameters of Phase 5 (`[structures]` in pipeline.toml).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StructureParams {
    /// The review lists at most this many positions, the most played first (0: all). A
    /// tree of Lichess's size has hundreds of thousands of them, more than anyone reviews
    /// and tens of megabytes rewritten by every make; the counts above the list cover
    /// every terminal node whatever the limit, and each filled-in form brings the next.
    pub review_limit: usize,
}

impl Default for StructureParams {
    fn default() -> Self {
        StructureParams { review_limit: 10_000 }
    }
}

/// One position to review.
#[derive(Debug, Serialize)]
pub struct ReviewEntry<'a> {
    /// Stable node id.
    pub node_id: String,
    /// The node's FEN.
    pub fen: &'a str,
    /// Its canonical line.
    pub moves: &'a str,
    /// ECO code, own or inherited.
    pub eco: Option<&'a str>,
    /// Opening name, own or inherited.
    pub name: Option<&'a str>,
    /// Games that reached it.
    pub game_count: u64,
    /// Its structure today (Unknown, or the near skeleton's).
    pub structure: &'a str,
    /// How that was found (`near`, or none for Unknown).
    pub confidence: Option<Confidence>,
    /// The closest labelled skeleton's structure.
    pub nearest: Option<&'static str>,
    /// Where that label comes from (`skeletons.tsv:12`, `my-labels:3`).
    pub nearest_origin: Option<String>,
    /// Pawns out of place to it.
    pub distance: Option<u32>,
}

/// The whole review.
#[derive(Debug, Serialize)]
pub struct Review<'a> {
    /// Terminal nodes tagged.
    pub terminal_nodes: usize,
    /// Terminal nodes per structure, most first.
    pub by_structure: Vec<(&'a str, usize)>,
    /// Terminal nodes per confidence (`none` for Unknown).
    pub by_confidence: Vec<(&'static str, usize)>,
    /// How many terminal nodes are Unknown or only near a skeleton.
    pub to_review: usize,
    /// The first of them to review (at most the limit): Unknown, then near, each most
    /// played first.
    pub unknown: Vec<ReviewEntry<'a>>,
}

/// Builds the review of `tags` over `tree`, listing at most `limit` positions (0: all);
/// `classifier` finds each listed position's nearest labelled skeleton.
pub fn review<'a>(
    tree: &'a Tree,
    tags: &'a StructureTags,
    classifier: &Classifier,
    limit: usize,
) -> Review<'a> {
    let mut listed: Vec<_> = tags
        .terminal
        .iter()
        .filter(|t| t.structure == UNKNOWN.name || t.confidence == Some(Confidence::Near))
        .map(|t| (t, &tree.nodes[t.node as usize]))
        .collect();
    let to_review = listed.len();
    // Unknown first, then near; most played first; then by line (and node, so that the
    // order is total and the list's cut does not depend on the sort).
    let order = |(t, n): &(&'a super::NodeTag, &'a crate::tree::Node)| {
        (t.confidence.is_some(), std::cmp::Reverse(n.game_count()), n.movetext.as_str(), t.node)
    };
    let kept = if limit == 0 { to_review } else { limit.min(to_review) };
    if kept < to_review {
        listed.select_nth_unstable_by(kept, |a, b| order(a).cmp(&order(b)));
        listed.truncate(kept);
    }
    listed.sort_unstable_by(|a, b| order(a).cmp(&order(b)));
    let unknown = listed.into_iter().map(|(t, n)| entry(t, n, classifier)).collect();
    Review {
        terminal_nodes: tags.terminal.len(),
        by_structure: tags.counts(),
        by_confidence: by_confidence(tags),
        to_review,
        unknown,
    }
}

/// The review's line of terminal node `t` on `n`.
fn entry<'a>(
    t: &'a super::NodeTag,
    n: &'a crate::tree::Node,
    classifier: &Classifier,
) -> ReviewEntry<'a> {
    let nearest = crate::position::parse_fen(&n.fen).ok().and_then(|pos| {
        classifier.nearest(&pos).map(|(e, d)| (e.structure.name, e.origin.clone(), d))
    });
    ReviewEntry {
        node_id: crate::position::node_id(&n.epd),
        fen: &n.fen,
        moves: &n.movetext,
        eco: n.opening.as_ref().map(|o| o.eco.as_str()),
        name: n.opening.as_ref().map(|o| o.name.as_str()),
        game_count: n.game_count(),
        structure: &t.structure,
        confidence: t.confidence,
        nearest: nearest.as_ref().map(|x| x.0),
        nearest_origin: nearest.as_ref().map(|x| x.1.clone()),
        distance: nearest.map(|x| x.2),
    }
}

fn by_confidence(tags: &StructureTags) -> Vec<(&'static str, usize)> {
    let mut counts: std::collections::BTreeMap<Option<Confidence>, usize> = Default::default();
    for t in &tags.terminal {
        *counts.entry(t.confidence).or_default() += 1;
    }
    counts.into_iter().map(|(c, n)| (c.map_or("none", Confidence::as_str), n)).collect()
}

impl Review<'_> {
    /// `, the N most played listed` when the limit cut the list, else nothing: what the
    /// step's summary and the table add after the number to review.
    pub fn cut_note(&self) -> String {
        match self.unknown.len() {
            n if n < self.to_review => format!(", the {n} most played listed"),
            _ => String::new(),
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("the review serializes");
        bytes.push(b'\n');
        bytes
    }

    /// A readable table: the structure counts, then the positions to review.
    pub fn to_table(&self) -> Vec<u8> {
        let mut out = format!("Pawn structures of {} terminal nodes\n\n", self.terminal_nodes);
        out.push_str(&format!("{:<32} {:>7}\n", "structure", "nodes"));
        for (name, count) in &self.by_structure {
            out.push_str(&format!("{name:<32} {count:>7}\n"));
        }
        let how: Vec<String> = self.by_confidence.iter().map(|(c, n)| format!("{c} {n}")).collect();
        out.push_str(&format!("\nfound by: {}\n", how.join(", ")));
        out.push_str(&format!(
            "\nPositions to review ({}{}): Unknown, then near skeletons, most played first\n\n",
            self.to_review,
            self.cut_note()
        ));
        out.push_str(&format!(
            "{:>7}  {:<5} {:<24} {:<24} {:>4}  {}\n",
            "games", "eco", "structure", "nearest", "dist", "moves"
        ));
        for e in &self.unknown {
            let cut = |s: &str| s.chars().take(24).collect::<String>();
            let distance = e.distance.map_or("-".to_string(), |d| d.to_string());
            out.push_str(&format!(
                "{:>7}  {:<5} {:<24} {:<24} {:>4}  {}\n",
                e.game_count,
                e.eco.unwrap_or("-"),
                cut(e.structure),
                cut(e.nearest.unwrap_or("-")),
                distance,
                e.moves
            ));
        }
        out.into_bytes()
    }

    /// The form to fill in: tab-separated, an empty `label` column first, the position
    /// (`fen`, `moves`) and what helps decide. `structure-labels` sources read it back.
    pub fn to_form(&self) -> Vec<u8> {
        let mut writer = csv::WriterBuilder::new()
            .delimiter(b'\t')
            .quote_style(csv::QuoteStyle::Never)
            .from_writer(Vec::new());
        let header = [
            "label",
            "games",
            "structure",
            "confidence",
            "nearest",
            "distance",
            "eco",
            "opening",
            "moves",
            "fen",
        ];
        writer.write_record(header).expect("writing to memory");
        for e in &self.unknown {
            let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
            writer
                .write_record([
                    String::new(),
                    e.game_count.to_string(),
                    e.structure.to_string(),
                    e.confidence.map_or("none", Confidence::as_str).to_string(),
                    e.nearest.unwrap_or("").to_string(),
                    e.distance.map(|d| d.to_string()).unwrap_or_default(),
                    e.eco.unwrap_or("").to_string(),
                    clean(e.name.unwrap_or("")),
                    e.moves.to_string(),
                    e.fen.to_string(),
                ])
                .expect("writing to memory");
        }
        writer.into_inner().expect("writing to memory")
    }
}
