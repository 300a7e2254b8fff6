//! Fuzzy search over opening names and aliases: `GET /opening/search` and
//! `okb query name` rank with it, so both list the same openings in the same order.
//!
//! Names are cut into words (accents folded, lowercase). Each query word scores against
//! each distinct name word: equal 1.0, a prefix 0.9 (`ruy` → `ruy`, `naj` → `najdorf`),
//! inside the word 0.7, one or two typos 0.6 − 0.1 × distance (`sicillian` → `sicilian`;
//! two only for words of eight letters or more), or, failing those, inside the name's
//! words run together (`carokann` → `Caro-Kann`). A name matches when every query word
//! does; its score is the sum, plus small bonuses (see [`SearchIndex::search`]). Ties go
//! to the name with fewer words, then the shorter line, so a short query lists the main
//! line before its sub-variations, deterministically; a name held by several positions
//! is listed once, at its best match.

use serde::Serialize;

use crate::export::named::slug;
use crate::graph::Graph;

/// Longest query accepted, in characters.
pub const MAX_QUERY: usize = 200;

/// One searchable text of a node: its own name or an alias.
struct Doc {
    node: u32,
    text: String,
    /// Which field the text comes from: `name` or the alias's source.
    field: String,
    words: Vec<u32>,
    /// The words run together (`carokann`), so a query that drops a hyphen still matches.
    joined: String,
}

/// The search index, built once per server start.
pub struct SearchIndex {
    vocabulary: Vec<String>,
    docs: Vec<Doc>,
}

/// The answer: the query and its matches, best first.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SearchAnswer {
    /// The query as given.
    pub query: String,
    /// The matches.
    pub results: Vec<Hit>,
}

/// One search result.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Hit {
    /// Node id of the named position.
    pub node_id: String,
    /// ECO code of the node's entry.
    pub eco_code: String,
    /// The entry's full name.
    pub name: String,
    /// Canonical line.
    pub moves: String,
    /// Source of the name (`eco_tsv`, `scid`, `pgn_extract`, or `stub` for a validation
    /// stub).
    pub src: String,
    /// The text that matched (the name or an alias).
    pub matched: String,
    /// `name`, or the source of the alias that matched.
    pub matched_field: String,
    /// Relevance; higher is better.
    pub score: f64,
}

/// Lowercase ASCII words joined by `-`; apostrophes vanish, so `King's` and `kings` are
/// one word.
fn normalize(text: &str) -> String {
    slug(&text.replace(['\'', '\u{2019}'], ""))
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split('-').filter(|w| !w.is_empty())
}

/// The name a search hit shows: the node's own entry's, or a stub's.
fn hit_name(node: &crate::graph::Node) -> Option<std::borrow::Cow<'_, str>> {
    match &node.entry {
        Some(entry) => Some(std::borrow::Cow::Borrowed(entry.name.as_str())),
        None if node.is_stub => node.full_name().map(std::borrow::Cow::Owned),
        None => None,
    }
}

impl SearchIndex {
    /// Indexes every non-interpolated entry's name and aliases, and the names of
    /// validation stubs.
    pub fn new(graph: &Graph) -> SearchIndex {
        let mut vocabulary: Vec<String> = Vec::new();
        let mut ids = std::collections::HashMap::new();
        let mut docs = Vec::new();
        for (index, node) in graph.nodes.iter().enumerate() {
            let texts: Vec<(String, String)> =
                match node.entry.as_ref().filter(|e| e.src != "interpolated") {
                    Some(entry) => std::iter::once(("name".to_string(), entry.name.clone()))
                        .chain(entry.aliases.iter().map(|(src, name)| (src.clone(), name.clone())))
                        .collect(),
                    None if node.is_stub => node
                        .full_name()
                        .map(|name| ("name".to_string(), name))
                        .into_iter()
                        .collect(),
                    None => continue,
                };
            for (field, text) in texts {
                let folded = normalize(&text);
                let joined = folded.replace('-', "");
                let words = words(&folded)
                    .map(|w| {
                        *ids.entry(w.to_string()).or_insert_with(|| {
                            vocabulary.push(w.to_string());
                            vocabulary.len() as u32 - 1
                        })
                    })
                    .collect();
                docs.push(Doc { node: index as u32, text, field, words, joined });
            }
        }
        SearchIndex { vocabulary, docs }
    }

    /// The best `limit` matches of `query`, best first, one per node.
    pub fn search(&self, graph: &Graph, query: &str, limit: usize) -> Vec<Hit> {
        let folded = normalize(query);
        let terms: Vec<&str> = words(&folded).collect();
        let whole_query = folded.replace('-', "");
        if terms.is_empty() {
            return Vec::new();
        }
        // Each term against each vocabulary word once; documents then only add lookups.
        let table: Vec<Vec<f64>> = terms
            .iter()
            .map(|t| self.vocabulary.iter().map(|w| word_score(t, w)).collect())
            .collect();
        let mut best: std::collections::HashMap<u32, (f64, usize)> =
            std::collections::HashMap::new();
        for (d, doc) in self.docs.iter().enumerate() {
            let mut total = 0.0;
            for (term, scores) in terms.iter().zip(&table) {
                let mut s = doc.words.iter().map(|&w| scores[w as usize]).fold(0.0, f64::max);
                if s == 0.0 && term.len() >= 5 && doc.joined.contains(term) {
                    s = 0.8;
                }
                if s == 0.0 {
                    total = 0.0;
                    break;
                }
                total += s;
            }
            if total == 0.0 {
                continue;
            }
            // Small bonuses order equal matches: the whole name equal to the query, the
            // query's first word opening the name (`sicilian` → "Sicilian Defense" before
            // "Van Geet: Sicilian Variation"), a match in the name rather than an alias,
            // an authoritative (Lichess) name.
            let exact = doc.joined == whole_query;
            let leads = doc.words.first().is_some_and(|&w| table[0][w as usize] > 0.0);
            let authoritative =
                graph.node(doc.node).entry.as_ref().is_some_and(|e| e.src == "eco_tsv");
            // An alias equal to the query ("Sicilian", SCID's name of a deeper line) must not
            // outrank the main name that starts with it, so alias bonuses are a tenth.
            let weight = if doc.field == "name" { 1.0 } else { 0.1 };
            let total = total
                + if exact { 0.3 * weight } else { 0.0 }
                + if leads { 0.1 * weight } else { 0.0 }
                + if doc.field == "name" { 0.05 } else { 0.0 }
                + if authoritative { 0.02 } else { 0.0 };
            let slot = best.entry(doc.node).or_insert((total, d));
            if total > slot.0 {
                *slot = (total, d);
            }
        }
        let mut hits: Vec<(f64, &Doc)> =
            best.into_values().map(|(s, d)| (s, &self.docs[d])).collect();
        hits.sort_by(|a, b| {
            let (na, nb) = (graph.node(a.1.node), graph.node(b.1.node));
            b.0.total_cmp(&a.0)
                .then(a.1.words.len().cmp(&b.1.words.len()))
                .then(na.ply.cmp(&nb.ply))
                .then(na.moves.cmp(&nb.moves))
        });
        // Several positions carry the same name (move orders, longer lines): list it once.
        let mut seen_names = std::collections::HashSet::new();
        hits.into_iter()
            .filter(|(_, doc)| {
                hit_name(graph.node(doc.node)).is_some_and(|name| seen_names.insert(name))
            })
            .take(limit)
            .filter_map(|(score, doc)| {
                let node = graph.node(doc.node);
                let (eco_code, src) = match node.entry.as_ref() {
                    Some(entry) => (entry.eco.clone(), entry.src.clone()),
                    None => (node.eco.clone()?, crate::record::STUB_SRC.to_string()),
                };
                Some(Hit {
                    node_id: node.node_id.clone(),
                    eco_code,
                    name: hit_name(node)?.into_owned(),
                    moves: node.moves.clone(),
                    src,
                    matched: doc.text.clone(),
                    matched_field: doc.field.clone(),
                    score: (score * 1000.0).round() / 1000.0,
                })
            })
            .collect()
    }
}

/// How well query word `term` matches name word `word` (0: not at all).
fn word_score(term: &str, word: &str) -> f64 {
    if term == word {
        return 1.0;
    }
    if word.starts_with(term) {
        return 0.9;
    }
    if term.len() >= 3 && word.contains(term) {
        return 0.7;
    }
    let allowed = match term.len() {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    };
    if allowed == 0 || term.len().abs_diff(word.len()) > allowed {
        return 0.0;
    }
    // Optimal string alignment: Levenshtein plus adjacent transpositions (`scilian`).
    match strsim::osa_distance(term, word) {
        d if d <= allowed => 0.6 - 0.1 * d as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_exactly_by_prefix_and_with_typos() {
        assert_eq!(word_score("ruy", "ruy"), 1.0);
        assert_eq!(word_score("naj", "najdorf"), 0.9);
        assert_eq!(word_score("sicillian", "sicilian"), 0.5);
        assert_eq!(word_score("scilian", "sicilian"), 0.5);
        assert_eq!(word_score("xyz", "french"), 0.0);
        assert_eq!(word_score("king", "kings"), 0.9);
        assert_eq!(word_score("acro", "caro"), 0.5);
    }
}
