//! Deep evaluations as pinned inputs: the Lichess evaluation database format.
//!
//! Lichess publishes the evaluations of its cloud analysis as Zstandard-compressed JSON
//! lines (`lichess_db_eval.jsonl.zst`, CC0), one position per line:
//!
//! ```json
//! {"fen":"7r/1p3k2/p1bPR3/5p2/2B2P1p/8/PP4P1/3K4 b - -","evals":[{"pvs":[{"cp":69,"line":"f7g7 e6e2"}],"knodes":4189972,"depth":46}]}
//! ```
//!
//! The FEN has four fields (no move counters); a position may have several `evals`
//! (depths, node counts and numbers of lines differ); each PV has `cp` or `mate`, always
//! **from White's point of view** (positive: White is better), as Lichess documents for
//! its evaluation exports, and `line` in UCI. okb reads that format ([`dump`]) as a
//! stream and keeps only the positions a pipeline asks for ([`scan`]), and writes its
//! own evaluations in it (`format = "lichess-evals"` exports).
//!
//! A position is okb's identity ([`crate::position::epd`]): the dump's en-passant field
//! is normalised by the same rule (kept only when an en-passant capture is legal), so a
//! line whose FEN names a pseudo-legal en-passant square still matches.

pub mod cloud;
pub mod dump;
pub mod scan;

pub use dump::{Eval, Pv, Score};
pub use scan::{Selection, scan};
