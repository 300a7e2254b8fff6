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
            PlayerSpec::Aliased { name, aliases } => std::iter::once(name.as_str()).chain(aliases.iter().map(String::as_str)).collect(),
        }
    }
}

/// A name cut into lowercase words (`"Kasparov, G."` → `["kasparov", "g"]`).
fn words(name: &str) -> Vec<String> {
    name.split(|c: char| c == ',' || c == '.' || c.is_whitespace()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Compiled spellings of the players of one collection.
#[derive(Clone, Debug)]
pub struct Matcher {
    players: Vec<(String, Vec<Vec<String>>)>,
}

impl Matcher {
    /// A matcher for `players`.
    pub fn new(players: &[PlayerSpec]) -> Matcher {
        Matcher { players: players.iter().map(|p| (p.name().to_string(), p.spellings().into_iter().map(words).collect())).collect() }
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
        self.players.iter().find(|(_, spellings)| spellings.iter().any(|s| same_person(s, &tag))).map(|(n, _)| n.as_str())
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
    let initial = |x: &String, y: &String| x == y || (x.chars().count() == 1 && y.starts_with(x.as_str())) || (y.chars().count() == 1 && x.starts_with(y.as_str()));
    initial(&ga[0], &gb[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_game_files_match_and_other_people_do_not() {
        let m = Matcher::new(&[PlayerSpec::Name("Kasparov, Gary".into()), PlayerSpec::Aliased { name: "Carlsen, Magnus".into(), aliases: vec!["DrNykterstein".into()] }]);
        for tag in ["Kasparov, Gary", "Kasparov,G", "Kasparov, G.", "kasparov gary"] {
            assert_eq!(m.find(tag), Some("Kasparov, Gary"), "{tag}");
        }
        for tag in ["Kasparov,Georgy", "Kasparov", "Karpov, Anatoly", "Gary Kasparov"] {
            assert_eq!(m.find(tag), None, "{tag}");
        }
        assert_eq!(m.find("drnykterstein"), Some("Carlsen, Magnus"));
        assert_eq!(m.find("Carlsen,M"), Some("Carlsen, Magnus"));
    }
}
