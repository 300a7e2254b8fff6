//! One line of the Lichess evaluation format: reading it strictly, writing it exactly.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// A score from White's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    /// Centipawns (positive: White is better).
    Cp(i32),
    /// Moves to mate (positive: White mates; 0: the side to move is mated).
    Mate(i32),
}

/// One principal variation of an evaluation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pv {
    /// Its score, from White's point of view.
    pub score: Score,
    /// The moves in UCI, separated by spaces (as the file has them).
    pub line: String,
}

/// One evaluation of a position: a search's depth, size and best lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Eval {
    /// Search depth.
    pub depth: u32,
    /// Thousands of nodes searched.
    pub knodes: u64,
    /// The lines, best first (the MultiPV of the search).
    pub pvs: Vec<Pv>,
}

/// One line of a dump: the FEN as written and its evaluations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The FEN as the file gives it (four fields).
    pub fen: String,
    /// Its evaluations, in file order.
    pub evals: Vec<Eval>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry<'a> {
    #[serde(borrow)]
    fen: Cow<'a, str>,
    evals: Vec<RawEval<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEval<'a> {
    #[serde(borrow)]
    pvs: Vec<RawPv<'a>>,
    knodes: u64,
    depth: u32,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawPv<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cp: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mate: Option<i32>,
    #[serde(borrow)]
    line: Cow<'a, str>,
}

/// The moves of a principal variation kept: the rest of a longer one is not read, so a
/// line of megabytes cannot make a stored answer of megabytes (Lichess's own lines are
/// a few dozen moves; okb's searches stop well before this).
pub const MAX_PV_MOVES: usize = 64;

/// The first [`MAX_PV_MOVES`] moves of a principal variation, as written.
pub fn capped(line: &str) -> String {
    match line.split_ascii_whitespace().nth(MAX_PV_MOVES) {
        None => line.trim_end().to_string(),
        Some(after) => {
            // The offset of the first move left out: everything before it, trimmed.
            let cut = after.as_ptr() as usize - line.as_ptr() as usize;
            line[..cut].trim_end().to_string()
        }
    }
}

/// The prefix every line written by Lichess (and by okb) starts with; [`fen_of`] finds
/// the FEN without parsing the rest.
const FEN_PREFIX: &[u8] = br#"{"fen":""#;

/// The FEN of a line that starts the way Lichess writes them, without parsing the
/// rest; `None` for any other line (which then has to be parsed whole).
pub fn fen_of(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(FEN_PREFIX)?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}

/// Parses one line strictly: unknown fields, a PV with neither or both of `cp` and
/// `mate`, an evaluation without lines, or an empty `evals` are errors. A PV keeps its
/// first [`MAX_PV_MOVES`] moves.
pub fn parse_line(line: &[u8]) -> Result<Entry, String> {
    let raw: RawEntry<'_> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    if raw.evals.is_empty() {
        return Err("`evals` is empty".into());
    }
    let mut evals = Vec::with_capacity(raw.evals.len());
    for (i, eval) in raw.evals.into_iter().enumerate() {
        if eval.pvs.is_empty() {
            return Err(format!("evals[{i}] has no `pvs`"));
        }
        let mut pvs = Vec::with_capacity(eval.pvs.len());
        for (j, pv) in eval.pvs.into_iter().enumerate() {
            let score = match (pv.cp, pv.mate) {
                (Some(cp), None) => Score::Cp(cp),
                (None, Some(mate)) => Score::Mate(mate),
                _ => {
                    return Err(format!(
                        "evals[{i}].pvs[{j}] needs exactly one of `cp` and `mate`"
                    ));
                }
            };
            pvs.push(Pv { score, line: capped(&pv.line) });
        }
        evals.push(Eval { depth: eval.depth, knodes: eval.knodes, pvs });
    }
    Ok(Entry { fen: raw.fen.into_owned(), evals })
}

#[derive(Serialize)]
struct OutEntry<'a> {
    fen: &'a str,
    evals: Vec<OutEval<'a>>,
}

#[derive(Serialize)]
struct OutEval<'a> {
    pvs: Vec<RawPv<'a>>,
    knodes: u64,
    depth: u32,
}

/// Writes `fen` and `evals` as one line of the format (with its `\n`), keys in
/// Lichess's order: `fen`, `evals`; `pvs`, `knodes`, `depth`; `cp`/`mate`, `line`.
pub fn write_line(out: &mut Vec<u8>, fen: &str, evals: &[Eval]) {
    let evals = evals
        .iter()
        .map(|e| OutEval {
            pvs: e
                .pvs
                .iter()
                .map(|pv| {
                    let (cp, mate) = match pv.score {
                        Score::Cp(cp) => (Some(cp), None),
                        Score::Mate(m) => (None, Some(m)),
                    };
                    RawPv { cp, mate, line: Cow::Borrowed(&pv.line) }
                })
                .collect(),
            knodes: e.knodes,
            depth: e.depth,
        })
        .collect();
    serde_json::to_writer(&mut *out, &OutEntry { fen, evals })
        .expect("writing JSON to memory cannot fail");
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"fen":"7r/1p3k2/p1bPR3/5p2/2B2P1p/8/PP4P1/3K4 b - -","evals":[{"pvs":[{"cp":69,"line":"f7g7 e6e2 h8d8 e2d2"},{"cp":163,"line":"h8d8 d1e1 a6a5 a2a3"}],"knodes":4189972,"depth":46}]}"#;

    #[test]
    fn the_published_example_reads_and_writes_back_byte_for_byte() {
        let entry = parse_line(LINE.as_bytes()).unwrap();
        assert_eq!(
            fen_of(LINE.as_bytes()),
            Some(&b"7r/1p3k2/p1bPR3/5p2/2B2P1p/8/PP4P1/3K4 b - -"[..])
        );
        assert_eq!(entry.evals[0].depth, 46);
        assert_eq!(entry.evals[0].pvs[1].score, Score::Cp(163));
        let mut out = Vec::new();
        write_line(&mut out, &entry.fen, &entry.evals);
        assert_eq!(String::from_utf8(out).unwrap(), format!("{LINE}\n"));
    }

    #[test]
    fn mates_and_bad_lines() {
        let mate = r#"{"fen":"k7/8/1K6/8/8/8/8/7Q w - -","evals":[{"pvs":[{"mate":1,"line":"h1a8"}],"knodes":1,"depth":245}]}"#;
        assert_eq!(parse_line(mate.as_bytes()).unwrap().evals[0].pvs[0].score, Score::Mate(1));
        for bad in [
            r#"{"fen":"k7/8/8/8/8/8/8/K7 w - -","evals":[]}"#,
            r#"{"fen":"k7/8/8/8/8/8/8/K7 w - -","evals":[{"pvs":[{"line":"a1a2"}],"knodes":1,"depth":2}]}"#,
            r#"{"fen":"k7/8/8/8/8/8/8/K7 w - -","evals":[{"pvs":[{"cp":1,"mate":2,"line":"a1a2"}],"knodes":1,"depth":2}]}"#,
            r#"{"fen":"k7/8/8/8/8/8/8/K7 w - -","evals":[{"pvs":[],"knodes":1,"depth":2}]}"#,
            r#"{"fen":"k7/8/8/8/8/8/8/K7 w - -","evals":[{"pvs":[{"cp":1,"line":"a1a2"}],"knodes":1}]}"#,
            r#"{"fen":"k7/8/8/8/8/8/8/K7 w - -","evals""#,
        ] {
            assert!(parse_line(bad.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(fen_of(br#"{ "fen": "x" }"#), None);
    }

    #[test]
    fn a_long_principal_variation_keeps_its_first_moves() {
        let long = "g1f3 g8f6 f3g1 f6g8 ".repeat(100);
        let kept = capped(&long);
        assert_eq!(kept.split(' ').count(), MAX_PV_MOVES);
        assert!(long.starts_with(&kept) && !kept.ends_with(' '));
        assert_eq!(capped("e2e4 e7e5"), "e2e4 e7e5");
    }
}
