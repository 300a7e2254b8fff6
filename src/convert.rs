//! `okb convert`: game files between PGN and BGN (see [`crate::export::bgn`] for the
//! format), and games straight to packed move records.
//!
//! PGN → BGN reads each file in chunks of whole games (the same cutting as Phase 2),
//! converts the chunks on all cores and writes them in file order, so the output is
//! byte-identical whatever the thread count. A game that cannot be read (illegal move,
//! broken tag, truncated) is skipped and reported with its `file:line`; the others go
//! on. The `opening` of a game comes from an [`OpeningLookup`]: [`FromTags`] (the game's
//! own ECO/Opening/Variation tags) by default, or [`FromKnowledgeBase`] (the built
//! store's classification, `--store`).

use std::cell::Cell;
use std::io::{BufRead, BufReader, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use miette::{IntoDiagnostic, WrapErr};
use pgn_reader::{KnownOutcome, Nag, Outcome, RawComment, RawTag, Reader, SanPlus, Visitor};
use rayon::prelude::*;
use shakmaty::{Chess, Color, Position};

use crate::classify::Classifier;
use crate::diagnostics::decode_text;
use crate::export::bgn::{self, BgnOpening, PgnGame};
use crate::files::write::AtomicFile;
use crate::games::input::{Boundary, Chunk, Chunker, DEFAULT_CHUNK_BYTES, count_newlines};
use crate::games::pgn::{ChunkOrigin, CountingSlice, MAX_COMMENT_BYTES, MAX_TAG_LINE_BYTES};
use crate::games::report::{BadGames, BadKind, Location};

/// Finds the opening of a game for BGN's `opening` field.
pub trait OpeningLookup: Sync {
    /// The opening of `game`, if known.
    fn lookup(&self, game: &PgnGame) -> Option<BgnOpening>;
}

/// The game's own tags: `ECO`, and `Opening` (+ `: Variation` when the tag is there and
/// the name does not already hold it).
#[derive(Copy, Clone, Debug, Default)]
pub struct FromTags;

impl OpeningLookup for FromTags {
    fn lookup(&self, game: &PgnGame) -> Option<BgnOpening> {
        let known = |name: &str| game.tag(name).filter(|v| !v.is_empty() && *v != "?");
        let eco = known("ECO").map(str::to_string);
        let name = match (known("Opening"), known("Variation")) {
            (Some(o), Some(v)) if !o.contains(v) => format!("{o}: {v}"),
            (Some(o), _) => o.to_string(),
            // An ECO code alone names no opening.
            (None, _) => return None,
        };
        Some(BgnOpening { eco, name, src: "tags".into() })
    }
}

/// The knowledge base's classification ([`Classifier`]: the deepest known position the
/// game reaches, whatever the move order), `src` `okb`; the game's tags ([`FromTags`])
/// when it has none (a game set up from a FEN, or one that leaves the book at once).
pub struct FromKnowledgeBase<'a> {
    classifier: &'a Classifier,
    /// The standard start position's identity, where the taxonomies' lines begin.
    start: crate::position::PositionKey,
    named: AtomicU64,
    from_tags: AtomicU64,
}

impl<'a> FromKnowledgeBase<'a> {
    /// A lookup over `classifier`.
    pub fn new(classifier: &'a Classifier) -> FromKnowledgeBase<'a> {
        let start = crate::position::key(&Chess::default());
        FromKnowledgeBase {
            classifier,
            start,
            named: AtomicU64::new(0),
            from_tags: AtomicU64::new(0),
        }
    }

    /// Games named so far: (by the knowledge base, by their own tags).
    pub fn counts(&self) -> (u64, u64) {
        (self.named.load(Ordering::Relaxed), self.from_tags.load(Ordering::Relaxed))
    }
}

impl OpeningLookup for FromKnowledgeBase<'_> {
    fn lookup(&self, game: &PgnGame) -> Option<BgnOpening> {
        // The taxonomies' lines start from the standard position; a set-up game's moves
        // mean nothing to them.
        if crate::position::key(&game.start) == self.start {
            let moves: Vec<shakmaty::Move> =
                game.moves.iter().take(self.classifier.depth()).map(|(m, _, _)| *m).collect();
            if let Some(found) = self.classifier.classify_moves(&moves) {
                self.named.fetch_add(1, Ordering::Relaxed);
                return Some(BgnOpening {
                    eco: Some(found.eco.to_string()),
                    name: found.name(),
                    src: "okb".into(),
                });
            }
        }
        let tagged = FromTags.lookup(game);
        if tagged.is_some() {
            self.from_tags.fetch_add(1, Ordering::Relaxed);
        }
        tagged
    }
}

/// What a conversion did.
#[derive(Debug, Default)]
pub struct ConvertSummary {
    /// Games read (including bad ones).
    pub games: u64,
    /// Games written.
    pub written: u64,
    /// Variations dropped (BGN keeps the main line).
    pub variations: u64,
    /// Skipped games by reason, with first locations.
    pub bad: BadGames,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// Writes BGN lines to one file or to numbered files of about `split` bytes of text.
pub struct SplitWriter {
    base: PathBuf,
    bz2: bool,
    split: Option<u64>,
    /// The file being written, under its temporary name until it is closed; dropped
    /// unclosed (a conversion that stopped on an error), it leaves no partial file.
    current: Option<Sink>,
    written: u64,
    files: Vec<PathBuf>,
}

impl SplitWriter {
    /// A writer to `base` (numbered beside it when `split` is given).
    pub fn new(base: &Path, bz2: bool, split: Option<u64>) -> SplitWriter {
        SplitWriter {
            base: base.to_path_buf(),
            bz2,
            split,
            current: None,
            written: 0,
            files: Vec::new(),
        }
    }

    /// One BGN file at `path`, bzip2-compressed when its name ends in `.bz2`.
    pub fn single(path: &Path) -> SplitWriter {
        SplitWriter::new(path, names_bz2(path), None)
    }

    fn next_path(&self) -> PathBuf {
        let Some(_) = self.split else { return self.base.clone() };
        let name =
            self.base.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // games.bgn.bz2 → games-0001.bgn.bz2: the number goes before the first extension.
        let (stem, ext) = match name.find('.') {
            Some(i) => name.split_at(i),
            None => (name.as_str(), ""),
        };
        self.base.with_file_name(format!("{stem}-{:04}{ext}", self.files.len() + 1))
    }

    fn open(&mut self) -> miette::Result<()> {
        let path = self.next_path();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .into_diagnostic()
                .wrap_err_with(|| format!("creating {}", dir.display()))?;
        }
        // Written beside the target and renamed when complete: an interrupted or failed
        // conversion leaves no torn file and an older output in place.
        let file = AtomicFile::create(&path).into_diagnostic().wrap_err_with(|| {
            format!("creating {}", crate::files::temp::for_file(&path).display())
        })?;
        let sink = if self.bz2 { Sink::Bz2(Bz2Segments::new(file)) } else { Sink::Plain(file) };
        self.current = Some(sink);
        self.files.push(path);
        self.written = 0;
        Ok(())
    }

    fn close(&mut self) -> miette::Result<()> {
        if let Some(w) = self.current.take() {
            let path = self.files.last().expect("a file is open");
            let tmp = w.temp_path().to_path_buf();
            let file = w.finish().wrap_err_with(|| format!("writing {}", tmp.display()))?;
            file.commit()
                .into_diagnostic()
                .wrap_err_with(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }

    /// Writes whole lines, starting a new file when the current one is full.
    pub fn write_lines(&mut self, text: &[u8]) -> miette::Result<()> {
        for line in text.split_inclusive(|&b| b == b'\n') {
            let full = self
                .split
                .is_some_and(|limit| self.written > 0 && self.written + line.len() as u64 > limit);
            if full {
                self.close()?;
            }
            if self.current.is_none() {
                self.open()?;
            }
            let w = self.current.as_mut().expect("opened above");
            w.write_all(line).into_diagnostic()?;
            self.written += line.len() as u64;
        }
        Ok(())
    }

    /// Finishes the last file (an empty output still gets one, empty, file).
    pub fn finish(mut self) -> miette::Result<Vec<PathBuf>> {
        if self.current.is_none() && self.files.is_empty() {
            self.open()?;
        }
        self.close()?;
        Ok(std::mem::take(&mut self.files))
    }
}

/// Whether the name of `path` asks for bzip2 (`.bz2`, any case).
pub fn names_bz2(path: &Path) -> bool {
    path.to_string_lossy().to_ascii_lowercase().ends_with(".bz2")
}

/// One output file, plain or bzip2-compressed.
enum Sink {
    Plain(AtomicFile),
    Bz2(Bz2Segments),
}

impl Sink {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(bytes),
            Sink::Bz2(w) => w.write_all(bytes),
        }
    }

    /// The temporary file being written (for messages).
    fn temp_path(&self) -> &Path {
        match self {
            Sink::Plain(w) => w.temp_path(),
            Sink::Bz2(w) => w.file.temp_path(),
        }
    }

    /// Writes what is pending (for bzip2, the last segments are compressed and written),
    /// giving back the file to commit.
    fn finish(self) -> miette::Result<AtomicFile> {
        match self {
            Sink::Plain(w) => Ok(w),
            Sink::Bz2(w) => w.finish().into_diagnostic(),
        }
    }
}

/// Bytes of text per bzip2 stream: about nine of bzip2's 900 kB blocks, so the ratio is
/// that of one long stream.
const BZ2_SEGMENT_BYTES: usize = 8 << 20;

/// A bzip2 file written as consecutive streams, one per [`BZ2_SEGMENT_BYTES`] of text,
/// compressed on all cores. bzip2 compresses on one core otherwise, and was nine tenths
/// of a compressed conversion. The segments are cut by byte count alone, so the file is
/// the same for any thread count; every bzip2 reader (`bzip2 -d`, Python's `bz2`,
/// okb's own) reads concatenated streams as one.
struct Bz2Segments {
    file: AtomicFile,
    pending: Vec<u8>,
    full: Vec<Vec<u8>>,
    streams: usize,
}

impl Bz2Segments {
    fn new(file: AtomicFile) -> Bz2Segments {
        Bz2Segments {
            file,
            pending: Vec::with_capacity(BZ2_SEGMENT_BYTES),
            full: Vec::new(),
            streams: 0,
        }
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let take = (BZ2_SEGMENT_BYTES - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() == BZ2_SEGMENT_BYTES {
                self.full.push(std::mem::replace(
                    &mut self.pending,
                    Vec::with_capacity(BZ2_SEGMENT_BYTES),
                ));
                // Enough segments to keep every core busy: compress them together.
                if self.full.len() >= rayon::current_num_threads().max(1) {
                    self.compress_full()?;
                }
            }
        }
        Ok(())
    }

    fn compress_full(&mut self) -> std::io::Result<()> {
        let compressed: Vec<std::io::Result<Vec<u8>>> = self
            .full
            .par_iter()
            .map(|text| {
                let mut encoder = bzip2::write::BzEncoder::new(
                    Vec::with_capacity(text.len() / 4),
                    bzip2::Compression::best(),
                );
                encoder.write_all(text)?;
                encoder.finish()
            })
            .collect();
        self.full.clear();
        for stream in compressed {
            self.file.write_all(&stream?)?;
            self.streams += 1;
        }
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<AtomicFile> {
        if !self.pending.is_empty() || (self.streams == 0 && self.full.is_empty()) {
            // An empty output is still one (empty) bzip2 stream, a valid .bz2 file.
            self.full.push(std::mem::take(&mut self.pending));
        }
        self.compress_full()?;
        Ok(self.file)
    }
}

/// PGN files → BGN lines, in file order.
pub fn pgn_to_bgn(
    inputs: &[PathBuf],
    lookup: &dyn OpeningLookup,
    mut sink: SplitWriter,
) -> miette::Result<ConvertSummary> {
    let mut summary = ConvertSummary::default();
    let batch = rayon::current_num_threads().max(1) * 2;
    for path in inputs {
        let file = path.display().to_string();
        let mut chunker =
            Chunker::open(path, DEFAULT_CHUNK_BYTES, Boundary::Pgn).into_diagnostic()?;
        loop {
            let mut chunks: Vec<Chunk> = Vec::with_capacity(batch);
            while chunks.len() < batch {
                match chunker.next_chunk().into_diagnostic()? {
                    Some(c) => chunks.push(c),
                    None => break,
                }
            }
            if chunks.is_empty() {
                break;
            }
            let done: Vec<ChunkOut> =
                chunks.par_iter().map(|c| convert_chunk(c, &file, lookup)).collect();
            for out in done {
                sink.write_lines(&out.text)?;
                summary.games += out.games;
                summary.written += out.written;
                summary.variations += out.variations;
                summary.bad.merge(&out.bad);
            }
        }
    }
    summary.files = sink.finish()?;
    Ok(summary)
}

struct ChunkOut {
    text: Vec<u8>,
    games: u64,
    written: u64,
    variations: u64,
    bad: BadGames,
}

fn record(bad: &mut BadGames, kind: BadKind, location: Location) {
    if bad.wants_example(kind) {
        bad.record(kind, location);
    } else {
        bad.count_only(kind);
    }
}

fn convert_chunk(chunk: &Chunk, file: &str, lookup: &dyn OpeningLookup) -> ChunkOut {
    let mut out = ChunkOut {
        text: Vec::with_capacity(chunk.data.len()),
        games: 0,
        written: 0,
        variations: 0,
        bad: BadGames::default(),
    };
    let taken = Cell::new(0);
    let mut reader = Reader::build(CountingSlice::new(&chunk.data, &taken))
        .set_supported_tag_line_length(MAX_TAG_LINE_BYTES)
        .set_supported_comment_length(MAX_COMMENT_BYTES)
        .finish();
    let mut visitor = FullGame::default();
    let locate = |offset: usize| Location {
        file: file.to_string(),
        line: chunk.first_line + count_newlines(&chunk.data[..offset.min(chunk.data.len())]),
    };
    ChunkOrigin::of(file, chunk).record_repairs(&mut out.bad);
    while let Ok(true) = reader.has_more() {
        let offset = taken.get() - reader.buffer().len();
        match reader.read_game(&mut visitor) {
            Ok(None) => break,
            Ok(Some(Ok(game))) => {
                out.games += 1;
                if visitor.lenient_san {
                    record(&mut out.bad, BadKind::LenientSan, locate(offset));
                }
                out.variations += visitor.variations;
                bgn::write_line(&game, lookup.lookup(&game).as_ref(), &mut out.text);
                out.written += 1;
            }
            Ok(Some(Err(kind))) => {
                if kind != BadKind::Garbage {
                    out.games += 1;
                }
                record(&mut out.bad, kind, locate(offset));
            }
            Err(_) => {
                out.games += 1;
                record(&mut out.bad, BadKind::BadTag, locate(offset));
                if reader.skip_game().is_err() {
                    break;
                }
            }
        }
    }
    out
}

/// A pgn-reader visitor keeping everything BGN stores: tags, the main line with NAGs and
/// comments, the result.
#[derive(Default)]
struct FullGame {
    game: PgnGame,
    pos: Chess,
    failed: Option<BadKind>,
    outcome: Option<String>,
    variations: u64,
    saw_anything: bool,
    /// Whether a move was read leniently ([`crate::games::pgn::san_move`]).
    lenient_san: bool,
}

impl Visitor for FullGame {
    type Tags = ();
    type Movetext = ();
    type Output = Result<PgnGame, BadKind>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, ()> {
        self.game = PgnGame::default();
        self.failed = None;
        self.outcome = None;
        self.variations = 0;
        self.saw_anything = false;
        self.lenient_san = false;
        ControlFlow::Continue(())
    }

    fn tag(&mut self, _: &mut (), name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        self.saw_anything = true;
        let (value, _) = decode_text(&value.decode());
        self.game.tags.push((String::from_utf8_lossy(name).into_owned(), value));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<Self::Output, ()> {
        self.pos = match self.game.tag("FEN") {
            Some(fen) => match crate::position::parse_fen(fen) {
                Ok(pos) => pos,
                Err(_) => return ControlFlow::Break(Err(BadKind::BadTag)),
            },
            None => Chess::default(),
        };
        self.game.start = self.pos.clone();
        ControlFlow::Continue(())
    }

    fn san(&mut self, _: &mut (), san_plus: SanPlus) -> ControlFlow<Self::Output> {
        self.saw_anything = true;
        match crate::games::pgn::san_move(san_plus.san, &self.pos) {
            Ok((m, lenient)) => {
                self.lenient_san |= lenient;
                self.pos.play_unchecked(m);
                self.game.moves.push((m, Vec::new(), None));
                ControlFlow::Continue(())
            }
            Err(kind) => ControlFlow::Break(Err(kind)),
        }
    }

    fn nag(&mut self, _: &mut (), nag: Nag) -> ControlFlow<Self::Output> {
        if let Some(last) = self.game.moves.last_mut() {
            last.1.push(nag.0);
        }
        ControlFlow::Continue(())
    }

    fn partial_comment(&mut self, _: &mut (), _: RawComment<'_>) -> ControlFlow<Self::Output> {
        ControlFlow::Break(Err(BadKind::OverlongComment))
    }

    fn comment(&mut self, _: &mut (), comment: RawComment<'_>) -> ControlFlow<Self::Output> {
        let (text, _) = decode_text(comment.as_bytes());
        let slot = match self.game.moves.last_mut() {
            Some(last) => &mut last.2,
            None => &mut self.game.comment,
        };
        // Several comments in a row become one, as python-chess reads them.
        match slot {
            Some(existing) => {
                existing.push(' ');
                existing.push_str(text.trim());
            }
            None => *slot = Some(text.trim().to_string()),
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _: &mut ()) -> ControlFlow<Self::Output, pgn_reader::Skip> {
        self.variations += 1;
        ControlFlow::Continue(pgn_reader::Skip(true))
    }

    fn outcome(&mut self, _: &mut (), outcome: Outcome) -> ControlFlow<Self::Output> {
        self.saw_anything = true;
        self.outcome = Some(
            match outcome {
                Outcome::Known(KnownOutcome::Decisive { winner: Color::White }) => "1-0",
                Outcome::Known(KnownOutcome::Decisive { winner: Color::Black }) => "0-1",
                Outcome::Known(KnownOutcome::Draw) => "1/2-1/2",
                Outcome::Unknown => "*",
            }
            .to_string(),
        );
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, _: ()) -> Self::Output {
        if !self.saw_anything {
            return Err(BadKind::Garbage);
        }
        let mut game = std::mem::take(&mut self.game);
        game.result = game
            .tag("Result")
            .filter(|r| ["1-0", "0-1", "1/2-1/2", "*"].contains(r))
            .map(str::to_string)
            .or_else(|| self.outcome.clone())
            .unwrap_or_else(|| "*".into());
        Ok(game)
    }
}

/// BGN files → one PGN file. A line that is not a game, or whose moves are illegal, is
/// skipped and reported with its `file:line`.
pub fn bgn_to_pgn(inputs: &[PathBuf], output: &Path) -> miette::Result<ConvertSummary> {
    let mut summary = ConvertSummary::default();
    // Written beside the output and renamed when complete, as the BGN files are.
    let mut out = AtomicFile::create(output)
        .into_diagnostic()
        .wrap_err_with(|| format!("creating {}", output.display()))?;
    for path in inputs {
        let name = path.display().to_string();
        let reader = BufReader::new(crate::games::input::open(path).into_diagnostic()?);
        for (i, line) in reader.split(b'\n').enumerate() {
            let line =
                line.into_diagnostic().wrap_err_with(|| format!("{name}:{}: read error", i + 1))?;
            if line.trim_ascii().is_empty() {
                continue;
            }
            summary.games += 1;
            match bgn::line_to_pgn(&line) {
                Ok(text) => {
                    out.write_all(text.as_bytes()).into_diagnostic()?;
                    summary.written += 1;
                }
                Err(e) => {
                    let kind = match e {
                        bgn::BgnError::Json(_) => BadKind::BadJson,
                        bgn::BgnError::Fen(_) | bgn::BgnError::Move { .. } => BadKind::IllegalMove,
                    };
                    record(
                        &mut summary.bad,
                        kind,
                        Location { file: name.clone(), line: i as u64 + 1 },
                    );
                }
            }
        }
    }
    out.commit().into_diagnostic().wrap_err_with(|| format!("writing {}", output.display()))?;
    summary.files.push(output.to_path_buf());
    Ok(summary)
}

/// Games → packed move records: Phase 2's counting over the files, a tree of the moves
/// played in at least `min_games` games to `max_ply`, written as [`crate::export::packed`].
pub fn games_to_packed(
    inputs: &[PathBuf],
    output: &Path,
    max_ply: usize,
    min_games: u64,
) -> miette::Result<ConvertSummary> {
    use crate::games::aggregate::{AggregateOptions, aggregate_files, merge, merge_reports};
    let options = AggregateOptions { max_ply, ..Default::default() };
    let aggregates = aggregate_files(inputs, &Default::default(), &options).into_diagnostic()?;
    let refs: Vec<_> = aggregates.iter().collect();
    let stats = merge(&refs);
    let (bad, counters) = merge_reports(&refs);
    let params =
        crate::tree::TreeParams { max_ply: max_ply.min(u16::MAX as usize) as u16, min_games };
    let tree = crate::tree::build(&Default::default(), Some(&stats), &params);
    let (file, _) = crate::export::packed::render(&tree);
    crate::files::write_atomic(output, &file.bytes)
        .into_diagnostic()
        .wrap_err_with(|| format!("writing {}", output.display()))?;
    Ok(ConvertSummary {
        games: counters.games_read,
        written: counters.games_counted,
        variations: 0,
        bad,
        files: vec![output.to_path_buf()],
    })
}
