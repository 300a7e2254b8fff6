//! A minimal, fault-tolerant UCI client for one engine process.
//!
//! The engine's stdout is read on a dedicated thread and forwarded line by line over a
//! channel, so every wait here is a `recv_timeout`: an engine that hangs is noticed after
//! the configured timeout instead of blocking okb forever. Nothing the engine prints can
//! make this module panic; unparsable output is either ignored (unknown `info` fields)
//! or turned into an [`EngineError::Protocol`].

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::EngineError;

/// A score as the engine reports it, from the point of view of the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves: positive when the side to move mates, negative (or zero,
    /// in an already checkmated position) when it gets mated.
    Mate(i32),
}

/// Whether a reported score is exact or only a bound from an aspiration-window fail.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bound {
    /// An exact score.
    Exact,
    /// `lowerbound`: the true score is at least this.
    Lower,
    /// `upperbound`: the true score is at most this.
    Upper,
}

/// One parsed `info` line. Fields the line does not carry are `None` (or empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// `depth`.
    pub depth: Option<u32>,
    /// `seldepth`.
    pub seldepth: Option<u32>,
    /// `multipv` (1-based); absent means line 1.
    pub multipv: Option<u32>,
    /// `score cp` / `score mate`.
    pub score: Option<Score>,
    /// `lowerbound` / `upperbound` after the score; exact when neither is given.
    pub bound: Option<Bound>,
    /// `nodes`.
    pub nodes: Option<u64>,
    /// `nps`.
    pub nps: Option<u64>,
    /// `time` in milliseconds.
    pub time_ms: Option<u64>,
    /// `pv`: the principal variation in UCI notation.
    pub pv: Vec<String>,
}

/// Keywords that may follow a `pv`; a PV ends at the first of them (Stockfish always puts
/// `pv` last, other engines may not).
const INFO_KEYWORDS: &[&str] = &[
    "depth",
    "seldepth",
    "multipv",
    "score",
    "nodes",
    "nps",
    "time",
    "pv",
    "hashfull",
    "tbhits",
    "cpuload",
    "currmove",
    "currmovenumber",
    "currline",
    "refutation",
    "string",
    "wdl",
    "sbhits",
];

/// Parses an `info` line. Returns `None` for anything that is not a well-formed `info`
/// line, and for `info string` lines, which carry no search data.
pub fn parse_info(line: &str) -> Option<Info> {
    let mut tokens = line.split_whitespace().peekable();
    if tokens.next()? != "info" {
        return None;
    }
    let mut info = Info::default();
    while let Some(token) = tokens.next() {
        match token {
            "depth" => info.depth = Some(tokens.next()?.parse().ok()?),
            "seldepth" => info.seldepth = Some(tokens.next()?.parse().ok()?),
            "multipv" => info.multipv = Some(tokens.next()?.parse().ok()?),
            "nodes" => info.nodes = Some(tokens.next()?.parse().ok()?),
            "nps" => info.nps = Some(tokens.next()?.parse().ok()?),
            "time" => info.time_ms = Some(tokens.next()?.parse().ok()?),
            "score" => {
                let kind = tokens.next()?;
                let value: i32 = tokens.next()?.parse().ok()?;
                info.score = Some(match kind {
                    "cp" => Score::Cp(value),
                    "mate" => Score::Mate(value),
                    _ => return None,
                });
                info.bound = Some(match tokens.peek() {
                    Some(&"lowerbound") => {
                        tokens.next();
                        Bound::Lower
                    }
                    Some(&"upperbound") => {
                        tokens.next();
                        Bound::Upper
                    }
                    _ => Bound::Exact,
                });
            }
            "pv" => {
                while let Some(&next) = tokens.peek() {
                    if INFO_KEYWORDS.contains(&next) {
                        break;
                    }
                    info.pv.push(next.to_string());
                    tokens.next();
                }
            }
            // Free text up to the end of the line.
            "string" => return None,
            "currline" | "refutation" => {
                while tokens.peek().is_some_and(|t| !INFO_KEYWORDS.contains(t)) {
                    tokens.next();
                }
            }
            "wdl" => {
                for _ in 0..3 {
                    tokens.next()?;
                }
            }
            "hashfull" | "tbhits" | "sbhits" | "cpuload" | "currmove" | "currmovenumber" => {
                tokens.next()?;
            }
            // Unknown keyword: skip it alone, the next token is tried as a keyword.
            _ => {}
        }
    }
    Some(info)
}

/// The options okb sets on every engine; they are part of the engine identity because
/// each of them changes what a fixed-depth search returns.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOptions {
    /// `Threads`.
    pub threads: u32,
    /// `Hash` in MiB.
    pub hash_mb: u32,
    /// `MultiPV`.
    pub multipv: u32,
}

/// One multipv line of a finished search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvLine {
    /// 1-based line number.
    pub multipv: u32,
    /// Depth of the iteration the line comes from.
    pub depth: u32,
    /// Selective depth, when reported.
    pub seldepth: Option<u32>,
    /// Score from the side to move's point of view.
    pub score: Score,
    /// Whether the score is exact or a bound (only a bound if no exact score came).
    pub bound: Bound,
    /// Principal variation in UCI notation.
    pub pv: Vec<String>,
}

/// The result of one `go depth N`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchOutput {
    /// The last complete line per multipv index, ordered by index.
    pub lines: Vec<PvLine>,
    /// The `bestmove` token (`(none)` or `0000` when the position has no legal move).
    pub best_move: String,
    /// Nodes searched, from the last info line that reported them.
    pub nodes: u64,
    /// Search time in milliseconds as reported by the engine.
    pub time_ms: u64,
}

/// Collects `info` lines of one search into the last complete line per multipv index.
///
/// Rule: a line replaces the kept one when it is at least as deep; exact scores are kept
/// apart from bound-only ones so that an aspiration fail (`lowerbound`/`upperbound`)
/// never hides an exact score; a bound is used only when no exact score exists.
#[derive(Default, Debug)]
pub struct InfoCollector {
    exact: BTreeMap<u32, PvLine>,
    bounded: BTreeMap<u32, PvLine>,
    nodes: u64,
    time_ms: u64,
}

impl InfoCollector {
    /// Takes one parsed info line into account.
    pub fn push(&mut self, info: &Info) {
        if let Some(n) = info.nodes {
            self.nodes = n;
        }
        if let Some(t) = info.time_ms {
            self.time_ms = t;
        }
        let (Some(depth), Some(score)) = (info.depth, info.score) else {
            return;
        };
        // A scored line without a PV is only meaningful at depth 0 (no legal move):
        // elsewhere it is an engine's partial report and carries no move to show.
        if info.pv.is_empty() && depth > 0 {
            return;
        }
        let multipv = info.multipv.unwrap_or(1).max(1);
        let bound = info.bound.unwrap_or(Bound::Exact);
        let line =
            PvLine { multipv, depth, seldepth: info.seldepth, score, bound, pv: info.pv.clone() };
        let slot = if bound == Bound::Exact { &mut self.exact } else { &mut self.bounded };
        if slot.get(&multipv).is_none_or(|old| depth >= old.depth) {
            slot.insert(multipv, line);
        }
    }

    /// The kept lines, ordered by multipv index.
    pub fn lines(&self) -> Vec<PvLine> {
        let mut out: BTreeMap<u32, PvLine> = self.bounded.clone();
        for (k, v) in &self.exact {
            out.insert(*k, v.clone());
        }
        out.into_values().collect()
    }

    /// Nodes and time of the last line that reported them.
    pub fn totals(&self) -> (u64, u64) {
        (self.nodes, self.time_ms)
    }
}

/// Lines longer than this are cut: a runaway engine must not grow okb's memory.
const MAX_LINE: u64 = 64 * 1024;
/// A search that produces this many lines that are neither `info` nor `bestmove` is
/// talking garbage; Stockfish produces none.
const MAX_GARBAGE_LINES: usize = 200;

/// A running UCI engine process.
pub struct UciEngine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    path: PathBuf,
    name: String,
    /// Set once the process is known to be broken, so dropping it kills it at once
    /// instead of politely waiting for `quit`.
    broken: bool,
}

impl UciEngine {
    /// Spawns the engine at `path`, performs the `uci`/`isready` handshake within
    /// `handshake_timeout` and sets the options.
    pub fn start(
        path: &Path,
        options: &EngineOptions,
        handshake_timeout: Duration,
    ) -> Result<UciEngine, EngineError> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| EngineError::Spawn { path: path.to_path_buf(), source })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(EngineError::Handshake {
                path: path.to_path_buf(),
                reason: "the engine's standard streams could not be opened".into(),
            });
        };
        let (tx, rx) = mpsc::channel();
        // Detached on purpose: it ends by itself at EOF, which killing the child causes.
        let spawned = std::thread::Builder::new().name("uci-stdout".into()).spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.by_ref().take(MAX_LINE).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        if let Err(source) = spawned {
            let _ = child.kill();
            let _ = child.wait();
            return Err(EngineError::Io {
                context: "starting the engine reader thread".into(),
                source,
            });
        }
        let mut engine = UciEngine {
            child,
            stdin,
            lines: rx,
            path: path.to_path_buf(),
            name: String::new(),
            broken: false,
        };
        match engine.handshake(options, handshake_timeout) {
            Ok(()) => Ok(engine),
            Err(e) => {
                engine.broken = true;
                Err(e)
            }
        }
    }

    fn handshake(&mut self, options: &EngineOptions, timeout: Duration) -> Result<(), EngineError> {
        let deadline = Instant::now() + timeout;
        let path = self.path.clone();
        let fail = |reason: String| EngineError::Handshake { path: path.clone(), reason };
        self.send("uci").map_err(|e| fail(e.to_string()))?;
        let mut name = None;
        loop {
            let line = self
                .recv_until(deadline, timeout)
                .map_err(|e| fail(format!("waiting for uciok: {e}")))?;
            if let Some(rest) = line.strip_prefix("id name ") {
                name = Some(rest.trim().to_string());
            } else if line.trim() == "uciok" {
                break;
            }
        }
        self.name = name.ok_or_else(|| fail("the engine did not send `id name`".into()))?;
        let setup = format!(
            "setoption name Threads value {}\nsetoption name Hash value {}\nsetoption name MultiPV value {}\nisready",
            options.threads, options.hash_mb, options.multipv
        );
        self.send(&setup).map_err(|e| fail(e.to_string()))?;
        self.wait_ready(deadline, timeout).map_err(|e| fail(format!("waiting for readyok: {e}")))
    }

    /// The engine's `id name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends `ucinewgame` so the next search starts from cleared hash and history tables:
    /// this is what makes results independent of which positions the engine saw before.
    pub fn new_game(&mut self) -> Result<(), EngineError> {
        // No isready round trip: commands are processed in order, so the clearing is
        // simply accounted to the next search (and covered by its timeout).
        self.send("ucinewgame")
    }

    /// Searches `fen` to `depth` and returns the final lines, failing with
    /// [`EngineError::Timeout`] if `bestmove` does not arrive within `timeout`.
    pub fn search(
        &mut self,
        fen: &str,
        depth: u32,
        timeout: Duration,
    ) -> Result<SearchOutput, EngineError> {
        let result = self.search_inner(fen, depth, timeout);
        if result.is_err() {
            self.broken = true;
        }
        result
    }

    fn search_inner(
        &mut self,
        fen: &str,
        depth: u32,
        timeout: Duration,
    ) -> Result<SearchOutput, EngineError> {
        let deadline = Instant::now() + timeout;
        self.send(&format!("position fen {fen}\ngo depth {depth}"))?;
        let mut collector = InfoCollector::default();
        let mut garbage = 0usize;
        loop {
            let line = self.recv_until(deadline, timeout)?;
            let trimmed = line.trim();
            if let Some(rest) = trimmed.strip_prefix("bestmove") {
                let best = rest.split_whitespace().next().unwrap_or("").to_string();
                if best.is_empty() {
                    return Err(EngineError::Protocol {
                        reason: format!("`bestmove` without a move: {trimmed:?}"),
                    });
                }
                let (nodes, time_ms) = collector.totals();
                return Ok(SearchOutput {
                    lines: collector.lines(),
                    best_move: best,
                    nodes,
                    time_ms,
                });
            }
            if trimmed.is_empty() {
                continue;
            }
            match parse_info(trimmed) {
                Some(info) => collector.push(&info),
                None if trimmed.starts_with("info") => {}
                None => {
                    garbage += 1;
                    if garbage >= MAX_GARBAGE_LINES {
                        return Err(EngineError::Protocol {
                            reason: format!(
                                "{garbage} lines that are not UCI during a search, last: {:?}",
                                cut(trimmed)
                            ),
                        });
                    }
                }
            }
        }
    }

    fn wait_ready(&mut self, deadline: Instant, budget: Duration) -> Result<(), EngineError> {
        loop {
            if self.recv_until(deadline, budget)?.trim() == "readyok" {
                return Ok(());
            }
        }
    }

    fn send(&mut self, text: &str) -> Result<(), EngineError> {
        let written = self.stdin.write_all(text.as_bytes()).and_then(|()| {
            self.stdin.write_all(b"\n")?;
            self.stdin.flush()
        });
        written.map_err(|source| {
            // A closed pipe means the process is gone: report it as the crash it is.
            if source.kind() == std::io::ErrorKind::BrokenPipe {
                EngineError::Crashed { status: self.exit_status() }
            } else {
                EngineError::Io { context: format!("writing to {}", self.path.display()), source }
            }
        })
    }

    /// Next line before `deadline`; `budget` is the whole timeout, quoted in the error
    /// because it is the number the user can change.
    fn recv_until(&mut self, deadline: Instant, budget: Duration) -> Result<String, EngineError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                Err(EngineError::Timeout { seconds: budget.as_secs_f64() })
            }
            Err(RecvTimeoutError::Disconnected) => {
                Err(EngineError::Crashed { status: self.exit_status() })
            }
        }
    }

    /// The exit status once the process has ended, waiting briefly because stdout closes
    /// a moment before the process is reaped.
    fn exit_status(&mut self) -> String {
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return describe_status(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "closed its output but is still running".into()
    }

    /// Kills the process at once.
    pub fn kill(mut self) {
        self.broken = true;
        drop(self.child.kill());
    }
}

impl Drop for UciEngine {
    fn drop(&mut self) {
        if !self.broken && self.send("quit").is_ok() {
            for _ in 0..50 {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => format!("ended ({status})"),
    }
}

fn cut(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_stockfish_line() {
        let line = "info depth 20 seldepth 27 multipv 2 score cp -35 nodes 1234567 nps 987654 hashfull 412 tbhits 0 time 1250 pv e7e5 g1f3 b8c6";
        let info = parse_info(line).unwrap();
        assert_eq!(info.depth, Some(20));
        assert_eq!(info.seldepth, Some(27));
        assert_eq!(info.multipv, Some(2));
        assert_eq!(info.score, Some(Score::Cp(-35)));
        assert_eq!(info.bound, Some(Bound::Exact));
        assert_eq!(info.nodes, Some(1_234_567));
        assert_eq!(info.nps, Some(987_654));
        assert_eq!(info.time_ms, Some(1250));
        assert_eq!(info.pv, vec!["e7e5", "g1f3", "b8c6"]);
    }

    #[test]
    fn parses_mate_scores_both_ways() {
        let win = parse_info("info depth 5 score mate 3 pv d1h5").unwrap();
        assert_eq!(win.score, Some(Score::Mate(3)));
        let loss = parse_info("info depth 5 score mate -2 pv e8e7").unwrap();
        assert_eq!(loss.score, Some(Score::Mate(-2)));
        let mated = parse_info("info depth 0 score mate 0").unwrap();
        assert_eq!(mated.score, Some(Score::Mate(0)));
        assert!(mated.pv.is_empty());
    }

    #[test]
    fn parses_bounds() {
        let lower = parse_info("info depth 12 seldepth 15 multipv 1 score cp 41 lowerbound nodes 100 nps 10 time 10 pv e2e4").unwrap();
        assert_eq!(lower.score, Some(Score::Cp(41)));
        assert_eq!(lower.bound, Some(Bound::Lower));
        assert_eq!(lower.nodes, Some(100));
        let upper = parse_info("info depth 12 score cp -3 upperbound pv d2d4").unwrap();
        assert_eq!(upper.bound, Some(Bound::Upper));
        assert_eq!(upper.pv, vec!["d2d4"]);
    }

    #[test]
    fn ignores_non_search_lines_and_rejects_malformed_numbers() {
        assert_eq!(
            parse_info("info string NNUE evaluation using nn-ad9b42354671.nnue enabled"),
            None
        );
        assert_eq!(parse_info("bestmove e2e4 ponder e7e5"), None);
        assert_eq!(parse_info("info depth x"), None);
        assert_eq!(parse_info("info depth 3 score cp"), None);
        assert_eq!(parse_info("info depth 3 score centi 10"), None);
        assert_eq!(parse_info("informative garbage"), None);
        let currmove = parse_info("info depth 9 currmove e2e4 currmovenumber 1").unwrap();
        assert_eq!(currmove.depth, Some(9));
        assert_eq!(currmove.score, None);
    }

    #[test]
    fn a_pv_ends_at_the_next_keyword() {
        let info =
            parse_info("info multipv 1 pv e2e4 e7e5 depth 4 score cp 30 wdl 10 980 10 nodes 5")
                .unwrap();
        assert_eq!(info.pv, vec!["e2e4", "e7e5"]);
        assert_eq!(info.depth, Some(4));
        assert_eq!(info.nodes, Some(5));
    }

    fn info(line: &str) -> Info {
        parse_info(line).unwrap()
    }

    #[test]
    fn collector_keeps_last_exact_line_per_multipv_at_final_depth() {
        let mut c = InfoCollector::default();
        for line in [
            "info depth 9 multipv 1 score cp 20 nodes 100 time 1 pv e2e4",
            "info depth 9 multipv 2 score cp 15 nodes 110 time 1 pv d2d4",
            "info depth 10 multipv 1 score cp 50 lowerbound nodes 200 time 2 pv e2e4",
            "info depth 10 multipv 1 score cp 31 nodes 300 time 3 pv e2e4 e7e5",
            "info depth 10 multipv 1 score cp 60 lowerbound nodes 310 time 3 pv e2e4",
            "info depth 10 multipv 2 score cp 12 nodes 400 time 4 pv d2d4 d7d5",
            "info depth 10 currmove g1f3 currmovenumber 3",
        ] {
            c.push(&info(line));
        }
        let lines = c.lines();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            (lines[0].depth, lines[0].score, lines[0].bound),
            (10, Score::Cp(31), Bound::Exact)
        );
        assert_eq!(lines[0].pv, vec!["e2e4", "e7e5"]);
        assert_eq!((lines[1].multipv, lines[1].score), (2, Score::Cp(12)));
        assert_eq!(c.totals(), (400, 4));
    }

    #[test]
    fn collector_falls_back_to_a_bound_when_nothing_exact_came() {
        let mut c = InfoCollector::default();
        c.push(&info("info depth 3 score cp -90 upperbound pv a2a3"));
        let lines = c.lines();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].bound, Bound::Upper);
    }

    #[test]
    fn collector_keeps_depth_zero_mate_without_pv() {
        let mut c = InfoCollector::default();
        c.push(&info("info depth 0 score mate 0"));
        assert_eq!(c.lines()[0].score, Score::Mate(0));
    }
}
