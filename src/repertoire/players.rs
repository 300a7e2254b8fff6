//! Player collections: which games of a game source are a named player's.
//!
//! A game source may name players (`players = ["Kasparov, Garry", { name = "Carlsen,
//! Magnus", aliases = ["DrNykterstein"] }]`). A White or Black tag is that player's when
//! it names them the way game files do: case, dots and the space after the comma do not
//! matter, and a first name may be cut to its initial (`Kasparov,G` and `Kasparov, G.`
//! are `Kasparov, Garry`; `Kasparov, Georgy` is not).

use serde::{Deserialize, Serialize};

/// One player of a collection: a name, or a name with aliases (other spellings, handles).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PlayerSpec {
    /// Just the name.
    Name(String),
    /// A name and its other spellings.
    Aliased {
        /// The name shown in reports.
        name: String,
        /// Other names the player's games carry.
        #[serde(default)]
        aliases: Vec<String>,
    },
}

impl PlayerSpec {
    /// The name shown in reports.
    pub fn name(&self) -> &str {
        match self {
            PlayerSpec::Name(n) | PlayerSpec::Aliased { name: n, .. } => n,
        }
    }

    /// Every spelling: the name and the aliases.
    pub fn spellings(&self) -> Vec<&str> {
        match self {
            PlayerSpec::Name(n) => vec![n],
            PlayerSpec::Aliased { name, aliases } => {
                std::iter::once(name.as_str()).chain(aliases.iter().map(String::as_str)).collect()
            }
        }
    }
}

/// A name cut into lowercase words (`"Kasparov, G."` → `["kasparov", "g"]`).
fn words(name: &str) -> Vec<String> {
    name.split(|c: char| c == ',' || c == '.' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Compiled spellings of the players of one collection.
#[derive(Clone, Debug)]
pub struct Matcher {
    players: Vec<(String, Vec<Vec<String>>)>,
}

impl Matcher {
    /// A matcher for `players`.
    pub fn new(players: &[PlayerSpec]) -> Matcher {
        Matcher {
            players: players
                .iter()
                .map(|p| (p.name().to_string(), p.spellings().into_iter().map(words).collect()))
                .collect(),
        }
    }

    /// A matcher of every game, as White's: a whole collection read as one player's
    /// (`bench/run repertoire` judges every game of the masters this way).
    pub fn everyone() -> Matcher {
        Matcher { players: Vec::new() }
    }

    /// The name of the player a tag value names, if any (every name for [`Matcher::everyone`]).
    pub fn find(&self, tag: &str) -> Option<&str> {
        if self.players.is_empty() {
            return Some("");
        }
        let tag = words(tag);
        self.players
            .iter()
            .find(|(_, spellings)| spellings.iter().any(|s| same_person(s, &tag)))
            .map(|(n, _)| n.as_str())
    }
}

/// Whether two names in words are one person's: equal, or the same surname and given
/// names where each is the other's initial or equal.
fn same_person(a: &[String], b: &[String]) -> bool {
    if a == b {
        return true;
    }
    let (Some((sa, ga)), Some((sb, gb))) = (a.split_first(), b.split_first()) else { return false };
    if sa != sb || ga.is_empty() || gb.is_empty() {
        return false;
    }
    let initial = |x: &String, y: &String| {
        x == y
            || (x.chars().count() == 1 && y.starts_with(x.as_str()))
            || (y.chars().count() == 1 && x.starts_with(y.as_str()))
    };
    initial(&ga[0], &gb[0])
}

/// Edits (insertions, deletions, substitutions of characters) from `a` to `b`.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// How far a name is from a player's spellings: edits between the names in words.
fn farness(player: &PlayerSpec, name: &str) -> usize {
    let name = words(name).join(" ");
    player
        .spellings()
        .iter()
        .map(|s| distance(&words(s).join(" "), &name))
        .min()
        .unwrap_or(usize::MAX)
}

/// Names within this many edits of a player's spelling are near spellings.
const NEAR: usize = 2;

/// What looks wrong with the listed `players` of a collection whose files name players
/// `names` (tag value → games): nobody listed, a player no game names (with the closest
/// names), or near spellings the player does not match that name many games (a typo
/// keeping a fraction of the player's games). `matched`: games per listed player.
pub fn doubts(
    players: &[PlayerSpec],
    matched: &std::collections::BTreeMap<String, u64>,
    names: &std::collections::BTreeMap<String, u64>,
) -> Vec<String> {
    if players.is_empty() {
        return vec!["players = [] lists nobody: the collection keeps no game".into()];
    }
    let mut out = Vec::new();
    for player in players {
        let games = matched.get(player.name()).copied().unwrap_or(0);
        let matcher = Matcher::new(std::slice::from_ref(player));
        let unmatched = || names.iter().filter(|(n, _)| matcher.find(n).is_none());
        let mut near: Vec<(&String, u64)> =
            unmatched().filter(|(n, _)| farness(player, n) <= NEAR).map(|(n, &g)| (n, g)).collect();
        near.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let shown = |list: &[(&String, u64)]| {
            list.iter()
                .take(3)
                .map(|(n, g)| format!("{n:?} ({g} games)"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if games == 0 {
            let mut closest: Vec<(usize, &String, u64)> =
                unmatched().map(|(n, &g)| (farness(player, n), n, g)).collect();
            closest.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then_with(|| a.1.cmp(b.1)));
            let list: Vec<(&String, u64)> = closest.into_iter().map(|(_, n, g)| (n, g)).collect();
            let closest = if list.is_empty() {
                "its files name no player".to_string()
            } else {
                format!("the closest names: {}", shown(&list))
            };
            out.push(format!(
                "players: {:?} names no game of the collection; {closest}",
                player.name()
            ));
        } else if near.iter().map(|(_, g)| g).sum::<u64>() * 10 >= games {
            out.push(format!("players: {:?} matches {games} games; near spellings it does not match name more: {} (a typo, or aliases to add?)", player.name(), shown(&near)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_game_files_match_and_other_people_do_not() {
        let m = Matcher::new(&[
            PlayerSpec::Name("Kasparov, Gary".into()),
            PlayerSpec::Aliased {
                name: "Carlsen, Magnus".into(),
                aliases: vec!["DrNykterstein".into()],
            },
        ]);
        for tag in ["Kasparov, Gary", "Kasparov,G", "Kasparov, G.", "kasparov gary"] {
            assert_eq!(m.find(tag), Some("Kasparov, Gary"), "{tag}");
        }
        for tag in ["Kasparov,Georgy", "Kasparov", "Karpov, Anatoly", "Gary Kasparov"] {
            assert_eq!(m.find(tag), None, "{tag}");
        }
        assert_eq!(m.find("drnykterstein"), Some("Carlsen, Magnus"));
        assert_eq!(m.find("Carlsen,M"), Some("Carlsen, Magnus"));
    }

    #[test]
    fn nobody_a_name_no_game_has_and_a_near_spelling_are_doubted() {
        let names: std::collections::BTreeMap<String, u64> = [
            ("Kasparov, Gary", 1563),
            ("Kasparov,G", 554),
            ("Kasparov,Georgy", 8),
            ("Karpov, Anatoly", 900),
        ]
        .into_iter()
        .map(|(n, g)| (n.to_string(), g))
        .collect();
        let matched = |n: &str, g: u64| std::collections::BTreeMap::from([(n.to_string(), g)]);
        assert_eq!(
            doubts(&[], &matched("x", 0), &names),
            ["players = [] lists nobody: the collection keeps no game"]
        );
        let right = [PlayerSpec::Name("Kasparov, Gary".into())];
        assert!(doubts(&right, &matched("Kasparov, Gary", 2117), &names).is_empty());
        let typo = [PlayerSpec::Name("Kasparov, Garry".into())];
        let said = doubts(&typo, &matched("Kasparov, Garry", 554), &names);
        assert_eq!(
            said,
            [
                "players: \"Kasparov, Garry\" matches 554 games; near spellings it does not match name more: \"Kasparov, Gary\" (1563 games) (a typo, or aliases to add?)"
            ]
        );
        let nobody = [PlayerSpec::Name("Kasparow, Gari".into())];
        let said = doubts(&nobody, &std::collections::BTreeMap::new(), &names);
        assert!(said[0].starts_with("players: \"Kasparow, Gari\" names no game of the collection; the closest names: \"Kasparov, Gary\" (1563 games)"), "{said:?}");
    }
}
