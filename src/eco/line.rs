//! Move lines as the ECO sources write them, played out on a board.

use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};

/// The tokens of a movetext that are moves: move numbers (`1.`, `1...`, `12.e4`),
/// results and annotation glyphs removed.
pub fn move_tokens(movetext: &str) -> Vec<&str> {
    movetext
        .split_whitespace()
        .map(|t| t.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start_matches('.'))
        .filter(|t| !t.is_empty() && !matches!(*t, "*" | "1-0" | "0-1" | "1/2-1/2"))
        .collect()
}

/// Why a line could not be played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 0-based index of the offending move token.
    pub ply: usize,
    /// The token.
    pub token: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Plays SAN `tokens` from the start position, returning the moves.
pub fn play_san(tokens: &[&str]) -> Result<Vec<Move>, LineError> {
    LinePlayer::default().play(tokens)
}

/// Plays many lines from the start position, replaying only what a line does not share
/// with the previous one: taxonomy files list variations of one line after another, so
/// most moves of a row are its predecessor's.
#[derive(Default)]
pub struct LinePlayer {
    /// Tokens of the last line played (as far as it was legal).
    tokens: Vec<String>,
    /// Their moves.
    moves: Vec<Move>,
    /// The position after each of them (the start position is implicit).
    positions: Vec<Chess>,
}

impl LinePlayer {
    /// Plays SAN `tokens` from the start position, returning the moves.
    pub fn play(&mut self, tokens: &[&str]) -> Result<Vec<Move>, LineError> {
        let shared = self.tokens.iter().zip(tokens).take_while(|(a, b)| a.as_str() == **b).count();
        self.tokens.truncate(shared);
        self.moves.truncate(shared);
        self.positions.truncate(shared);
        for (ply, token) in tokens.iter().enumerate().skip(shared) {
            let err = |reason: String| LineError { ply, token: token.to_string(), reason };
            let mut pos = self.positions.last().cloned().unwrap_or_default();
            let san: San = token
                .trim_end_matches(['+', '#', '!', '?'])
                .parse()
                .map_err(|e| err(format!("not a SAN move ({e})")))?;
            let m = to_move_lenient(san, &pos).map_err(|e| err(format!("{e} in this position")))?;
            pos.play_unchecked(m);
            self.tokens.push(token.to_string());
            self.moves.push(m);
            self.positions.push(pos);
        }
        Ok(self.moves.clone())
    }
}

/// The position after playing `movetext` (numbered SAN, as [`move_tokens`] reads it)
/// from the start position; the error says which move failed and why.
pub fn position_after(movetext: &str) -> Result<Chess, String> {
    let moves = play_san(&move_tokens(movetext))
        .map_err(|e| format!("move {} ({}) of {movetext:?}: {}", e.ply + 1, e.token, e.reason))?;
    let mut pos = Chess::default();
    for m in moves {
        pos.play_unchecked(m);
    }
    Ok(pos)
}

/// Like [`San::to_move`], but a wrong capture marker (`Nbd7` for a capture, as scid.eco
/// writes in a few lines) is forgiven, as python-chess and most GUIs do.
pub fn to_move_lenient(san: San, pos: &Chess) -> Result<Move, shakmaty::san::SanError> {
    match san.to_move(pos) {
        Ok(m) => Ok(m),
        Err(e) => match san {
            San::Normal { role, file, rank, capture, to, promotion } => {
                San::Normal { role, file, rank, capture: !capture, to, promotion }
                    .to_move(pos)
                    .map_err(|_| e)
            }
            _ => Err(e),
        },
    }
}

/// Formats `moves` (from the start position) as numbered PGN movetext: `1. e4 e5 2. Nf3`.
pub fn movetext(moves: &[Move]) -> String {
    let mut pos = Chess::default();
    let mut out = String::new();
    for (ply, m) in moves.iter().enumerate() {
        push_san(&mut out, ply, &crate::position::san(&pos, m));
        pos.play_unchecked(*m);
    }
    out
}

/// [`movetext`] of a line one move longer: `movetext` is the text of the line's first
/// `ply` moves, which reach `pos`, and `m` is played from there.
pub fn extend_movetext(movetext: &str, ply: usize, pos: &Chess, m: &Move) -> String {
    extend_movetext_with(movetext, ply, &crate::position::san(pos, m))
}

/// [`extend_movetext`] with the move's SAN (check suffix included) already known.
pub fn extend_movetext_with(movetext: &str, ply: usize, san: &str) -> String {
    let mut out = String::with_capacity(movetext.len() + san.len() + 8);
    out.push_str(movetext);
    push_san(&mut out, ply, san);
    out
}

/// Appends the SAN of the line's move number `ply` (from 0), with its move number before
/// White's moves.
fn push_san(out: &mut String, ply: usize, san: &str) {
    use std::fmt::Write;
    if ply.is_multiple_of(2) {
        if ply > 0 {
            out.push(' ');
        }
        write!(out, "{}. ", ply / 2 + 1).expect("writing to a String does not fail");
    } else {
        out.push(' ');
    }
    out.push_str(san);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_drop_numbers_and_results() {
        assert_eq!(move_tokens("1.e4 e5 2.Nf3 *"), vec!["e4", "e5", "Nf3"]);
        assert_eq!(move_tokens("1. d4 Nf6 2. c4 1...x"), vec!["d4", "Nf6", "c4", "x"]);
    }

    #[test]
    fn a_reused_player_gives_what_a_fresh_one_gives() {
        let lines = [
            "1. e4 e5 2. Nf3 Nc6 3. Bb5",
            "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5",
            "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bb4",
            "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. Qxf7",
            "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. c3",
            "1. d4",
            "1. e4 c5",
        ];
        let mut player = LinePlayer::default();
        for line in lines {
            let tokens = move_tokens(line);
            assert_eq!(player.play(&tokens), play_san(&tokens), "{line}");
        }
    }

    #[test]
    fn plays_and_formats() {
        let moves = play_san(&move_tokens("1. e4 e5 2. Nf3 Nc6 3. Bb5")).unwrap();
        assert_eq!(movetext(&moves), "1. e4 e5 2. Nf3 Nc6 3. Bb5");
        let capture_without_x = play_san(&move_tokens("1. e4 d5 2. d4 dxe4 3. Nc3 e3")).unwrap();
        assert_eq!(
            play_san(&move_tokens("1. e4 d5 2. d4 dxe4 3. Nc3 e3 4. Be3")).unwrap().len(),
            7
        );
        assert_eq!(capture_without_x.len(), 6);
        let err = play_san(&["e4", "e4"]).unwrap_err();
        assert_eq!((err.ply, err.token.as_str()), (1, "e4"));
    }
}
