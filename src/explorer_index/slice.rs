//! Slicing rules: which slice of games a game falls in (year, month, speed and rating
//! group, packed in a [`Slice`]), and Lichess's names of speeds, rating groups and modes,
//! so that a filter of `/lichess` is a set of slices.

use serde::{Deserialize, Serialize};

use crate::games::filter::GameTags;

/// Lichess's rating groups (lower bounds), in order.
pub const RATING_GROUPS: [u32; 9] = [0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500];

/// Lichess's speed names, in [`Speed`](crate::games::filter::Speed) order.
pub const SPEEDS: [&str; 6] =
    ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence"];

/// A slice of games, packed: `year << 12 | month << 8 | speed << 4 | rating`, where 0
/// means unknown for each part, `speed` is 1 + the [`Speed`](crate::games::filter::Speed) index and `rating` is 1 +
/// the index in [`RATING_GROUPS`].
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Slice(pub u32);

impl Slice {
    /// The slice of a game.
    pub fn new(year: u16, month: u8, speed: u8, rating: u8) -> Slice {
        Slice(
            u32::from(year) << 12
                | u32::from(month & 15) << 8
                | u32::from(speed & 15) << 4
                | u32::from(rating & 15),
        )
    }
    /// Year (0: unknown).
    pub fn year(self) -> u16 {
        (self.0 >> 12) as u16
    }
    /// Month 1–12 (0: unknown or not kept).
    pub fn month(self) -> u8 {
        (self.0 >> 8 & 15) as u8
    }
    /// 1 + the [`Speed`](crate::games::filter::Speed) index (0: unknown).
    pub fn speed(self) -> u8 {
        (self.0 >> 4 & 15) as u8
    }
    /// 1 + the [`RATING_GROUPS`] index (0: unknown).
    pub fn rating(self) -> u8 {
        (self.0 & 15) as u8
    }
}

/// The rating group index of an average rating.
pub fn rating_group(average: u32) -> u8 {
    RATING_GROUPS.iter().rposition(|&g| average >= g).unwrap_or(0) as u8
}

/// The slice of a game with these tags (see the module docs).
pub fn slice_of(tags: &GameTags) -> Slice {
    let (year, month) = match tags.date {
        Some(d) if d.earliest / 10000 == d.latest / 10000 => {
            let (m0, m1) = (d.earliest / 100 % 100, d.latest / 100 % 100);
            ((d.earliest / 10000) as u16, if m0 == m1 { m0 as u8 } else { 0 })
        }
        _ => (0, 0),
    };
    match tags.speed {
        None => Slice::new(year, 0, 0, 0),
        Some(speed) => {
            let rating = match (tags.white_elo, tags.black_elo) {
                (Some(w), Some(b)) => rating_group((w + b) / 2) + 1,
                _ => 0,
            };
            Slice::new(year, month, speed as u8 + 1, rating)
        }
    }
}

/// [`GameRef::mode`] of a rated game.
pub const MODE_RATED: u8 = 1;
/// [`GameRef::mode`] of a casual game.
pub const MODE_CASUAL: u8 = 2;

/// The mode an `Event` tag names, as Lichess writes it: "Rated …" or "Casual …".
pub(super) fn mode_of(event: &str) -> u8 {
    match event.split_whitespace().next() {
        Some(word) if word.eq_ignore_ascii_case("rated") => MODE_RATED,
        Some(word) if word.eq_ignore_ascii_case("casual") => MODE_CASUAL,
        _ => 0,
    }
}

/// Lichess's name of [`GameRef::mode`] (`None` when unknown).
pub fn mode_name(mode: u8) -> Option<&'static str> {
    match mode {
        MODE_RATED => Some("rated"),
        MODE_CASUAL => Some("casual"),
        _ => None,
    }
}

/// Lichess's speed name of a packed speed (1 + [`Speed`](crate::games::filter::Speed) index).
pub fn speed_name(speed: u8) -> Option<&'static str> {
    SPEEDS.get(usize::from(speed).checked_sub(1)?).copied()
}

/// The packed speed (1 + [`Speed`](crate::games::filter::Speed) index) of a Lichess speed name.
pub fn speed_code(name: &str) -> Option<u8> {
    SPEEDS.iter().position(|s| *s == name).map(|i| i as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::filter::Speed;

    #[test]
    fn slices_pack_and_unpack() {
        let s = Slice::new(2013, 1, 3, 7);
        assert_eq!((s.year(), s.month(), s.speed(), s.rating()), (2013, 1, 3, 7));
        assert_eq!(rating_group(999), 0);
        assert_eq!(rating_group(1000), 1);
        assert_eq!(rating_group(2499), 7);
        assert_eq!(rating_group(3000), 8);
        assert_eq!(speed_code("blitz"), Some(Speed::Blitz as u8 + 1));
        assert_eq!(speed_name(Speed::Correspondence as u8 + 1), Some("correspondence"));
    }
}
