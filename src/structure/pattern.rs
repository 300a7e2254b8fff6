//! The small pattern language the structure rules are written in, so that every rule's
//! definition is data that can be printed (`okb structure --json`) exactly as it is checked.
//!
//! One side's conditions are tokens separated by spaces:
//!
//! | token | meaning |
//! |---|---|
//! | `d4` | a pawn of this side on d4 |
//! | `-c` | no pawn of this side on the c-file |
//! | `-c4` | no pawn of this side on c4 |
//! | `e2\|e3` | a pawn of this side on at least one of these squares |
//! | `B:f4\|g3` | a piece of this side (`N B R Q K`) on at least one of these squares |

use shakmaty::{Bitboard, Board, Color, File, Role, Square};

/// One side's compiled conditions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SidePattern {
    /// Squares that must hold a pawn of the side.
    pub pawns: Bitboard,
    /// Squares that must not hold a pawn of the side.
    pub no_pawns: Bitboard,
    /// Sets that must each hold at least one pawn of the side.
    pub some_pawn: Vec<Bitboard>,
    /// (role, set): at least one piece of that role of the side in the set.
    pub some_piece: Vec<(Role, Bitboard)>,
}

/// A token the pattern language does not know (a mistake in the rule table).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad structure pattern token {0:?}")]
pub struct PatternError(pub String);

fn square(text: &str) -> Result<Square, PatternError> {
    text.parse::<Square>().map_err(|_| PatternError(text.to_string()))
}

fn squares(text: &str) -> Result<Bitboard, PatternError> {
    text.split('|')
        .map(square)
        .try_fold(Bitboard::EMPTY, |set, sq| Ok(set | Bitboard::from_square(sq?)))
}

impl SidePattern {
    /// Compiles one side's tokens.
    pub fn parse(text: &str) -> Result<SidePattern, PatternError> {
        let mut pattern = SidePattern::default();
        for token in text.split_whitespace() {
            if let Some((piece, set)) = token.split_once(':') {
                let role = piece
                    .chars()
                    .next()
                    .filter(|_| piece.len() == 1)
                    .and_then(Role::from_char)
                    .filter(|r| *r != Role::Pawn)
                    .ok_or_else(|| PatternError(token.to_string()))?;
                pattern.some_piece.push((role, squares(set)?));
            } else if let Some(rest) = token.strip_prefix('-') {
                pattern.no_pawns |= match rest.len() {
                    1 => {
                        let file = rest
                            .chars()
                            .next()
                            .and_then(File::from_char)
                            .ok_or_else(|| PatternError(token.to_string()))?;
                        Bitboard::from_file(file)
                    }
                    _ => squares(rest)?,
                };
            } else if token.contains('|') {
                pattern.some_pawn.push(squares(token)?);
            } else {
                pattern.pawns |= Bitboard::from_square(square(token)?);
            }
        }
        Ok(pattern)
    }

    /// Whether `color`'s pawns and pieces on `board` satisfy every condition.
    pub fn matches(&self, board: &Board, color: Color) -> bool {
        let ours = board.by_color(color);
        let pawns = board.pawns() & ours;
        pawns.is_superset(self.pawns)
            && (pawns & self.no_pawns).is_empty()
            && self.some_pawn.iter().all(|set| (pawns & *set).any())
            && self.some_piece.iter().all(|(role, set)| (board.by_role(*role) & ours & *set).any())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compile_to_the_squares_they_name() {
        let p = SidePattern::parse("d4 -c -f4 e2|e3 B:f4|g3").unwrap();
        assert_eq!(p.pawns, Bitboard::from_square(Square::D4));
        assert_eq!(p.no_pawns, Bitboard::from_file(File::C) | Bitboard::from_square(Square::F4));
        assert_eq!(
            p.some_pawn,
            vec![Bitboard::from_square(Square::E2) | Bitboard::from_square(Square::E3)]
        );
        assert_eq!(
            p.some_piece,
            vec![(
                Role::Bishop,
                Bitboard::from_square(Square::F4) | Bitboard::from_square(Square::G3)
            )]
        );
    }

    #[test]
    fn bad_tokens_are_errors() {
        for bad in ["z9", "-cc9", "P:e4", "X:e4", "e4|", "-"] {
            assert!(SidePattern::parse(bad).is_err(), "{bad}");
        }
    }
}
