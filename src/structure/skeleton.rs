//! Pawn skeletons and the lookup table of labelled ones (the technical design's "pawn
//! position hashing against a lookup table of known pawn skeletons").
//!
//! A skeleton is both sides' pawns and nothing else. The table maps skeletons of labelled
//! positions to structures: okb's own table ([`builtin`], from `skeletons.tsv`, one or
//! more positions from theory per structure) and a pipeline's `structure-labels` sources.
//! A position matches a labelled skeleton exactly, or nearly: the same pawns except one
//! wing pawn (a-, b-, g- or h-file) that has advanced further up its file, the
//! `h3`/`a4`/`...h6` moves that never change what a structure is called. Moving a
//! centre pawn, or a wing pawn the other way (a Najdorf's `...a6` not yet played), is
//! not near: a wrong name is worse than none.

use std::collections::HashMap;
use std::sync::LazyLock;

use shakmaty::{Bitboard, Board, Chess, Color, File, Position};

use super::Structure;

/// Both sides' pawns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Skeleton {
    /// White's pawns.
    pub white: Bitboard,
    /// Black's pawns.
    pub black: Bitboard,
}

impl Skeleton {
    /// The skeleton of `board`.
    pub fn of(board: &Board) -> Skeleton {
        Skeleton { white: board.pawns() & board.white(), black: board.pawns() & board.black() }
    }

    /// Pawns out of place between two skeletons: per side, the larger of "pawns only in
    /// `self`" and "pawns only in `other`" (a moved pawn counts once, so does a missing
    /// one), summed over both sides.
    pub fn distance(&self, other: &Skeleton) -> u32 {
        let side = |a: Bitboard, b: Bitboard| ((a & !b).count()).max((b & !a).count()) as u32;
        side(self.white, other.white) + side(self.black, other.black)
    }

    /// Whether `self` is `labelled` with one wing pawn advanced further up its file.
    pub fn is_near(&self, labelled: &Skeleton) -> bool {
        match (self.white == labelled.white, self.black == labelled.black) {
            (true, false) => wing_pawn_advanced(self.black, labelled.black, Color::Black),
            (false, true) => wing_pawn_advanced(self.white, labelled.white, Color::White),
            _ => false,
        }
    }
}

/// `now` is `was` with one pawn of `color` moved forward on the a-, b-, g- or h-file.
fn wing_pawn_advanced(now: Bitboard, was: Bitboard, color: Color) -> bool {
    let (Some(to), Some(from)) = ((now & !was).single_square(), (was & !now).single_square())
    else {
        return false;
    };
    let wing = matches!(to.file(), File::A | File::B | File::G | File::H);
    let forward = match color {
        Color::White => to.rank() > from.rank(),
        Color::Black => to.rank() < from.rank(),
    };
    wing && to.file() == from.file() && forward
}

/// One labelled skeleton.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The skeleton.
    pub skeleton: Skeleton,
    /// Its structure.
    pub structure: &'static Structure,
    /// Where the label comes from (`skeletons.tsv:12`, `my-labels:3`).
    pub origin: String,
}

/// Labelled skeletons, looked up exactly or nearly.
#[derive(Clone, Debug, Default)]
pub struct SkeletonTable {
    entries: Vec<Entry>,
    exact: HashMap<Skeleton, usize>,
}

impl SkeletonTable {
    /// Adds a label; a skeleton already labelled keeps its first label, which is returned
    /// as the error.
    pub fn insert(&mut self, entry: Entry) -> Result<(), &Entry> {
        if let Some(&at) = self.exact.get(&entry.skeleton) {
            return Err(&self.entries[at]);
        }
        self.exact.insert(entry.skeleton, self.entries.len());
        self.entries.push(entry);
        Ok(())
    }

    /// The entry labelling exactly `skeleton`.
    pub fn exact(&self, skeleton: &Skeleton) -> Option<&Entry> {
        self.exact.get(skeleton).map(|&at| &self.entries[at])
    }

    /// The entry `skeleton` is near, when every entry it is near names the same structure.
    pub fn near(&self, skeleton: &Skeleton) -> Option<&Entry> {
        let mut near = self.entries.iter().filter(|e| skeleton.is_near(&e.skeleton));
        let first = near.next()?;
        near.all(|e| e.structure.name == first.structure.name).then_some(first)
    }

    /// The closest entry and its [`Skeleton::distance`] (ties: the first listed).
    pub fn nearest(&self, skeleton: &Skeleton) -> Option<(&Entry, u32)> {
        self.entries.iter().map(|e| (e, skeleton.distance(&e.skeleton))).min_by_key(|(_, d)| *d)
    }

    /// Every entry, in insertion order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
}

/// The position a SAN movetext (`1. e4 c5 2. Nf3`) reaches from the start.
pub fn position_after(movetext: &str) -> Result<Chess, String> {
    let tokens = crate::eco::line::move_tokens(movetext);
    let moves = crate::eco::line::play_san(&tokens)
        .map_err(|e| format!("move {} {:?}: {}", e.ply + 1, e.token, e.reason))?;
    let mut pos = Chess::default();
    for m in &moves {
        pos.play_unchecked(*m);
    }
    Ok(pos)
}

/// okb's own labelled positions: `structure<TAB>moves` rows. Structures told apart by a
/// piece (London, Colle) are left to the rules: a skeleton cannot name them.
const BUILTIN_TSV: &str = include_str!("skeletons.tsv");

/// okb's table, built from [`BUILTIN_TSV`] on first use.
pub fn builtin() -> &'static SkeletonTable {
    static TABLE: LazyLock<SkeletonTable> = LazyLock::new(|| {
        let mut table = SkeletonTable::default();
        for (at, row) in
            BUILTIN_TSV.lines().enumerate().skip(1).filter(|(_, l)| !l.trim().is_empty())
        {
            // The file is code, checked by this module's tests: a bad row is a bug.
            let (name, moves) =
                row.split_once('\t').unwrap_or_else(|| panic!("skeletons.tsv:{}: no tab", at + 1));
            let structure = super::structure(name);
            assert_ne!(
                structure.name,
                super::UNKNOWN.name,
                "skeletons.tsv:{}: unknown structure {name:?}",
                at + 1
            );
            let pos =
                position_after(moves).unwrap_or_else(|e| panic!("skeletons.tsv:{}: {e}", at + 1));
            let origin = format!("skeletons.tsv:{}", at + 1);
            if let Err(first) =
                table.insert(Entry { skeleton: Skeleton::of(pos.board()), structure, origin })
            {
                panic!("skeletons.tsv:{}: skeleton already labelled at {}", at + 1, first.origin);
            }
        }
        table
    });
    &TABLE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton_of(line: &str) -> Skeleton {
        Skeleton::of(position_after(line).unwrap().board())
    }

    #[test]
    fn a_wing_pawn_pushed_further_is_near_and_the_other_way_is_not() {
        let najdorf = skeleton_of("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6");
        let a5 = skeleton_of("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a5");
        let classical = skeleton_of("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 Nc6");
        let h3 = skeleton_of("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. h3");
        let e5 = skeleton_of("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be2 e5");
        assert!(a5.is_near(&najdorf));
        assert!(h3.is_near(&najdorf));
        assert!(!classical.is_near(&najdorf), "...a6 not yet played");
        assert!(!e5.is_near(&najdorf), "a centre pawn moved");
        assert!(!najdorf.is_near(&najdorf), "exact is not near");
        assert_eq!(
            (classical.distance(&najdorf), e5.distance(&najdorf), h3.distance(&najdorf)),
            (1, 1, 1)
        );
    }

    #[test]
    fn a_missing_pawn_counts_once() {
        let start = Skeleton::of(Chess::default().board());
        let takes = skeleton_of("1. e4 d5 2. exd5");
        // White's e-pawn moved (1), Black's d-pawn is gone (1).
        assert_eq!(takes.distance(&start), 2);
    }

    #[test]
    fn okbs_labelled_positions_are_named_so_by_the_rules_too() {
        for (at, row) in BUILTIN_TSV.lines().enumerate().skip(1) {
            let (name, moves) = row.split_once('\t').unwrap();
            let pos = position_after(moves).unwrap();
            assert!(super::super::centre_is_engaged(pos.board()), "skeletons.tsv:{}", at + 1);
            assert_eq!(
                super::super::by_rules(pos.board()).map(|r| r.structure),
                Some(name),
                "skeletons.tsv:{}: {moves}",
                at + 1
            );
        }
    }

    #[test]
    fn okbs_table_loads_and_every_label_is_a_catalogued_structure() {
        let table = builtin();
        assert!(table.entries().len() >= super::super::STRUCTURES.len());
        for s in super::super::STRUCTURES {
            // London and Colle share skeletons and differ by a bishop: rules only.
            let by_pieces = super::super::RULES
                .iter()
                .filter(|r| r.structure == s.name)
                .all(|r| r.white.contains(':') || r.black.contains(':'));
            if by_pieces {
                continue;
            }
            assert!(
                table.entries().iter().any(|e| e.structure.name == s.name),
                "no labelled skeleton for {}",
                s.name
            );
        }
    }
}
