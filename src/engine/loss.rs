//! What a move loses against the best move of its position, as Lichess measures it.
//!
//! The stored flags ([`super::Analysis::is_dubious`], `is_busted`) follow the technical
//! design's absolute rule: the mover stands at −50 / −150 cp or worse after the move. A
//! player reads `?!` as Lichess's "inaccuracy" instead: what the move gives away against
//! the best move of the same position. That loss is computed here, from evaluations okb
//! already has:
//!
//! - the best move's value is the parent's evaluation (its best line's score), seen from
//!   the mover's side;
//! - the move's value is the child's evaluation, from the same side (the child's side to
//!   move is the opponent, so this is the child's own score negated);
//! - both are okb's stored centipawns, where a mate is ±1000 and other scores are capped
//!   at ±999: a mate counts as the ±1000 cp ceiling Lichess also applies before turning
//!   centipawns into winning chances.
//!
//! Winning chances follow Lichess (scalachess `WinPercent`): `50 + 50 · (2 / (1 +
//! exp(−0.00368208 · cp)) − 1)`, in percent, with cp capped at ±1000. Lichess judges a
//! move by the drop of `2 / (1 + exp(−0.00368208 · cp)) − 1` (lila's
//! `Advice.winningChanceJudgements`: 0.1 inaccuracy, 0.2 mistake, 0.3 blunder on that
//! −1…+1 scale), which is 5, 10 and 15 points of the percentage: [`INACCURACY`],
//! [`MISTAKE`], [`BLUNDER`].

use serde::Serialize;
use shakmaty::Color;

use super::analysis::MATE_CAP;

/// Win-chance loss (percentage points) from which a move is an inaccuracy (`?!`).
pub const INACCURACY: f64 = 5.0;
/// Win-chance loss (percentage points) from which a move is a mistake (`?`).
pub const MISTAKE: f64 = 10.0;
/// Win-chance loss (percentage points) from which a move is a blunder (`??`).
pub const BLUNDER: f64 = 15.0;

/// What a move loses against the best move of its position, from the mover's side.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MoveLoss {
    /// Centipawns lost (0 when the move is as good as the best line or better).
    pub cp: i32,
    /// Winning chances lost, in percentage points, two decimals.
    pub win_chance: f64,
}

/// The mover's winning chances in percent for `cp` centipawns from its side.
pub fn win_chance(cp: i32) -> f64 {
    let cp = f64::from(cp.clamp(-MATE_CAP, MATE_CAP));
    50.0 + 50.0 * (2.0 / (1.0 + (-0.003_682_08 * cp).exp()) - 1.0)
}

/// The loss of the move from a position evaluated `parent` (centipawns, White's view) to
/// one evaluated `child` (White's view), played by `mover`.
pub fn move_loss(parent: i32, child: i32, mover: Color) -> MoveLoss {
    let sign = if mover == Color::White { 1 } else { -1 };
    let (best, played) = (sign * parent, sign * child);
    let lost = (win_chance(best) - win_chance(played)).max(0.0);
    MoveLoss { cp: (best - played).max(0), win_chance: (lost * 100.0).round() / 100.0 }
}

/// The side to move in `fen` (White unless its second field says `b`).
pub fn side_to_move(fen: &str) -> Color {
    if fen.split_whitespace().nth(1) == Some("b") { Color::Black } else { Color::White }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_chances_follow_lichess_and_cap_at_a_mate() {
        assert_eq!(win_chance(0), 50.0);
        assert!((win_chance(100) - 59.1).abs() < 0.1, "{}", win_chance(100));
        assert!((win_chance(-300) - 24.9).abs() < 0.1, "{}", win_chance(-300));
        assert_eq!(win_chance(MATE_CAP), win_chance(5000));
        assert!((win_chance(200) + win_chance(-200) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_loss_is_seen_from_the_movers_side_and_never_negative() {
        // White to move at +0.30; the move leaves +0.10: 20 cp lost.
        let l = move_loss(30, 10, Color::White);
        assert_eq!(l.cp, 20);
        assert!(l.win_chance > 1.0 && l.win_chance < INACCURACY, "{l:?}");
        // Black to move at +0.30 (White's view); the move leaves +1.50: Black lost 120 cp.
        let l = move_loss(30, 150, Color::Black);
        assert_eq!(l.cp, 120);
        assert!(l.win_chance >= MISTAKE && l.win_chance < BLUNDER, "{l:?}");
        // A child searched deeper can look better than the parent's best line: no loss.
        assert_eq!(move_loss(30, 60, Color::White), MoveLoss { cp: 0, win_chance: 0.0 });
        // Walking into a mate from equality is a blunder.
        assert!(move_loss(0, -MATE_CAP, Color::White).win_chance >= BLUNDER);
    }

    #[test]
    fn the_side_to_move_is_read_from_the_fen() {
        assert_eq!(side_to_move("8/8/8/8/8/8/8/K6k b - - 0 1"), Color::Black);
        assert_eq!(side_to_move("8/8/8/8/8/8/8/K6k w - - 0 1"), Color::White);
    }
}
