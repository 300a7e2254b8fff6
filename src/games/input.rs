//! Game files: path expansion, compression detection and splitting a decompressed
//! stream into chunks of whole games.
//!
//! Files are always streamed: a decompressed dump is never held in memory at once, only
//! a few chunks of a few MiB each. Chunks let one big file be parsed by several threads;
//! because chunk boundaries depend only on the bytes (never on thread count or timing),
//! every run sees the same chunks and produces the same results.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::GamesError;
pub use super::tagfix::count_newlines;

/// Expands a source's `paths` (plain paths or glob patterns) into a sorted,
/// de-duplicated file list.
///
/// Sorting makes the file order (and so error messages and report order) independent of
/// directory iteration order. A pattern or path that matches nothing is an error, so a
/// typo never silently yields an empty tree.
pub fn expand_paths<S: AsRef<str>>(patterns: &[S]) -> Result<Vec<PathBuf>, GamesError> {
    let mut out = Vec::new();
    for pattern in patterns {
        let pattern = pattern.as_ref();
        let before = out.len();
        if Path::new(pattern).is_file() {
            out.push(PathBuf::from(pattern));
        } else {
            let paths = glob::glob(pattern).map_err(|e| GamesError::Glob {
                pattern: pattern.to_string(),
                message: e.to_string(),
            })?;
            for entry in paths {
                match entry {
                    Ok(p) if p.is_file() => out.push(p),
                    Ok(_) => {}
                    Err(e) => {
                        return Err(GamesError::Open {
                            path: e.path().to_path_buf(),
                            source: io::Error::other(e.to_string()),
                        });
                    }
                }
            }
        }
        if out.len() == before {
            return Err(GamesError::NoMatch { pattern: pattern.to_string() });
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Compression of a file, detected from its first bytes (never from its name, so a
/// mislabelled file still reads).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Zstandard (`28 b5 2f fd`).
    Zstd,
    /// bzip2 (`BZh`).
    Bzip2,
    /// gzip (`1f 8b`).
    Gzip,
    /// Anything else is read as is.
    Plain,
}

/// A reader that counts the bytes passing through it.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Compression {
    /// Detects the compression from a file's first bytes.
    pub fn detect(magic: &[u8]) -> Compression {
        if magic.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if magic.starts_with(b"BZh") {
            Compression::Bzip2
        } else if magic.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else {
            Compression::Plain
        }
    }
}

/// Opens `path` and returns a reader of its decompressed bytes.
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>, GamesError> {
    open_counting(path, Arc::default())
}

/// [`open`], adding to `read` the bytes read from the file itself (compressed, when it
/// is): against the file's size, how far the reading is.
pub fn open_counting(
    path: &Path,
    read: Arc<AtomicU64>,
) -> Result<Box<dyn Read + Send>, GamesError> {
    let open_err = |source| GamesError::Open { path: path.to_path_buf(), source };
    let mut file = Counting { inner: File::open(path).map_err(open_err)?, read };
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < magic.len() {
        match file.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(open_err(e)),
        }
    }
    // Re-prepend the sniffed bytes instead of seeking, so non-seekable inputs work too.
    let head = io::Cursor::new(magic[..got].to_vec());
    let stream = head.chain(file);
    Ok(match Compression::detect(&magic[..got]) {
        Compression::Zstd => {
            let mut decoder = zstd::stream::read::Decoder::new(stream).map_err(open_err)?;
            // Frames written with `zstd --long` (windows up to 2 GiB) need the limit raised.
            decoder.window_log_max(31).map_err(open_err)?;
            Box::new(decoder)
        }
        // Multi-stream decoders: pbzip2 and concatenated gzip files are common for dumps.
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(BufReader::new(stream))),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(stream))),
        Compression::Plain => Box::new(stream),
    })
}

/// A run of whole games cut from a decompressed stream.
#[derive(Debug)]
pub struct Chunk {
    /// Position of the chunk in its file (0-based), used to order reports.
    pub index: u64,
    /// 1-based line number of the chunk's first byte in the file.
    pub first_line: u64,
    /// The bytes.
    pub data: Vec<u8>,
    /// Whether this is the file's last chunk (where a truncated game can occur).
    pub last: bool,
    /// Lines (1-based, in the file) of PGN tag lines whose inner quotes were escaped
    /// ([`super::tagfix`]); the readers report them as `repaired-tag`.
    pub repaired_tags: Vec<u64>,
    /// Whether the tag lines are still to repair ([`Chunker::leave_tag_repair`]).
    repair_pending: bool,
}

impl Chunk {
    /// Repairs the chunk's tag lines ([`super::tagfix`]) when its chunker left that to
    /// the reader; otherwise does nothing.
    pub fn repair_tags(&mut self) {
        if std::mem::take(&mut self.repair_pending) {
            self.repaired_tags = super::tagfix::repair(&mut self.data, self.first_line);
        }
    }
}

/// Default chunk size: big enough that per-chunk overhead vanishes, small enough that
/// two threads can share a 40 MB file.
pub const DEFAULT_CHUNK_BYTES: usize = 4 << 20;

/// How a game start is recognised when cutting chunks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// PGN: a line starting with `[Event ` after a blank line (the only place where
    /// pgn-reader itself always ends one game and starts another), or failing that a
    /// line starting with `[` after a blank line.
    Pgn,
    /// One record per line (BGN).
    Line,
}

/// Splits a decompressed stream into [`Chunk`]s at game boundaries.
pub struct Chunker {
    reader: Box<dyn Read + Send>,
    path: PathBuf,
    carry: Vec<u8>,
    target: usize,
    boundary: Boundary,
    next_index: u64,
    next_line: u64,
    /// Decompressed bytes handed out in earlier chunks.
    offset: u64,
    eof: bool,
    /// Where the stream broke, once it has; reported after the chunk of whole games
    /// read before the break.
    broken: Option<StreamBreak>,
    /// Buffers of chunks already read, given back ([`Recycler`]) to hold new ones.
    spare: Recycler,
    /// Whether [`Chunk::repair_tags`] is left to the reader of each chunk.
    defer_repair: bool,
}

/// Takes the buffers of chunks that have been read back to their [`Chunker`], which fills
/// them again: a fresh buffer costs the kernel a page fault and a cleared page for every
/// 4 KiB, which at gigabytes a minute costs more than parsing does.
#[derive(Clone, Debug, Default)]
pub struct Recycler(Arc<Mutex<Vec<Vec<u8>>>>);

impl Recycler {
    /// The most buffers kept (a few per thread are in flight at once).
    const KEEP: usize = 16;

    /// Gives `buffer` back for a later chunk.
    pub fn give_back(&self, mut buffer: Vec<u8>) {
        buffer.clear();
        let mut spare = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < Self::KEEP {
            spare.push(buffer);
        }
    }

    fn take(&self, capacity: usize) -> Vec<u8> {
        let spare = self.0.lock().unwrap_or_else(|e| e.into_inner()).pop();
        spare.unwrap_or_else(|| Vec::with_capacity(capacity))
    }
}

/// Where and why a (compressed) stream stopped making sense.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StreamBreak {
    /// The line reached (1-based, in the decompressed text).
    pub line: u64,
    /// The decompressed bytes read before the break.
    pub byte: u64,
    /// What the decoder said (`incomplete frame`, `Data corruption detected`).
    pub reason: String,
}

impl std::fmt::Display for StreamBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the stream broke at line {} (byte {} of the decompressed text): {}",
            self.line, self.byte, self.reason
        )
    }
}

impl std::fmt::Debug for Chunker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunker").field("path", &self.path).field("next", &self.next_index).finish()
    }
}

impl Chunker {
    /// Opens `path` and prepares to cut chunks of about `target` bytes.
    pub fn open(path: &Path, target: usize, boundary: Boundary) -> Result<Chunker, GamesError> {
        Ok(Chunker::new(open(path)?, path, target, boundary))
    }

    /// Wraps an already opened stream; `path` is only used in error messages.
    pub fn new(
        reader: Box<dyn Read + Send>,
        path: &Path,
        target: usize,
        boundary: Boundary,
    ) -> Chunker {
        Chunker {
            reader,
            path: path.to_path_buf(),
            carry: Vec::new(),
            target: target.max(1024),
            boundary,
            next_index: 0,
            next_line: 1,
            offset: 0,
            eof: false,
            broken: None,
            spare: Recycler::default(),
            defer_repair: false,
        }
    }

    /// Leaves the repair of tag lines to the readers of the chunks, which call
    /// [`Chunk::repair_tags`] before reading one: the scan then runs on every core
    /// instead of on the one thread that decompresses.
    pub fn leave_tag_repair(mut self) -> Chunker {
        self.defer_repair = true;
        self
    }

    /// Where the buffers of read chunks go back to be filled again ([`Recycler`]).
    pub fn recycler(&self) -> Recycler {
        self.spare.clone()
    }

    /// The next chunk, or `None` at the end of the stream.
    ///
    /// When reading or decompressing fails part way, the games read before the break come
    /// first, as the last chunk, without the last game started before the break (it may
    /// be cut); the next call returns the error ([`GamesError::Read`], naming the line
    /// and byte). Those games are sound: a decoder reports damage in the block it is in,
    /// so the bytes before the break decoded cleanly.
    ///
    /// [`Chunker::broken`] tells a caller that keeps those games where the break was.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, GamesError> {
        if let Some(b) = &self.broken {
            let source = io::Error::other(b.reason.clone());
            return Err(GamesError::Read {
                path: self.path.clone(),
                line: b.line,
                byte: b.byte,
                source,
            });
        }
        // Room for a chunk and the search for its end without growing.
        let mut data = self.spare.take(self.target + self.target / 4 + (64 << 10));
        data.extend_from_slice(&self.carry);
        self.carry.clear();
        let mut search_from = 0;
        loop {
            if !self.eof && data.len() < self.target {
                let want = self.target - data.len();
                self.fill(&mut data, want)?;
                continue;
            }
            if self.eof {
                break;
            }
            // Search only the fresh tail: earlier bytes were already searched. Cutting
            // near the end keeps the carried-over tail (copied twice) small.
            let start = search_from.max(self.target - self.target / 8).min(data.len());
            if let Some(cut) = find_boundary(&data, start, self.boundary) {
                self.carry.extend_from_slice(&data[cut..]);
                data.truncate(cut);
                break;
            }
            search_from = data.len().saturating_sub(16);
            // No boundary yet (a giant game or no blank lines): read a bit more.
            self.fill(&mut data, (self.target / 8).max(4096))?;
        }
        if self.broken.is_some() {
            data.truncate(last_boundary(&data, self.boundary));
            if data.is_empty() {
                return self.next_chunk();
            }
        } else if data.is_empty() {
            return Ok(None);
        }
        self.offset += data.len() as u64;
        let repair = self.boundary == Boundary::Pgn;
        let repaired_tags = match repair && !self.defer_repair {
            true => super::tagfix::repair(&mut data, self.next_line),
            false => Vec::new(),
        };
        let chunk = Chunk {
            repaired_tags,
            repair_pending: repair && self.defer_repair,
            index: self.next_index,
            first_line: self.next_line,
            last: self.eof && (self.carry.is_empty() || self.broken.is_some()),
            data,
        };
        self.next_index += 1;
        // Only later chunks need this line count; a file's last chunk skips the scan.
        if !chunk.last {
            self.next_line += count_newlines(&chunk.data);
        }
        Ok(Some(chunk))
    }

    /// Where the stream broke, if it did.
    pub fn broken(&self) -> Option<&StreamBreak> {
        self.broken.as_ref()
    }

    fn fill(&mut self, data: &mut Vec<u8>, want: usize) -> Result<(), GamesError> {
        // read_to_end on a `take` fills spare capacity without zeroing it first.
        data.reserve(want);
        match (&mut self.reader).take(want as u64).read_to_end(data) {
            Ok(n) => {
                // `take` reads until its limit or the end: a short read is the end.
                if n < want {
                    self.eof = true;
                }
                Ok(())
            }
            Err(source) => {
                // Bytes read before the error stay in `data` (read_to_end keeps them).
                self.broken = Some(StreamBreak {
                    line: self.next_line + count_newlines(data),
                    byte: self.offset + data.len() as u64,
                    reason: source.to_string(),
                });
                self.eof = true;
                Ok(())
            }
        }
    }
}

/// The chunks of several files, in file order, handed out in batches of at most
/// `window` chunks: a caller parses a batch on all cores and applies it in order, so
/// memory stays flat however large the input.
pub struct ChunkBatches<'a> {
    paths: std::slice::Iter<'a, PathBuf>,
    current: Option<(String, Chunker)>,
    chunk_bytes: usize,
    window: usize,
}

impl<'a> ChunkBatches<'a> {
    /// Batches over `paths` (PGN boundaries) of chunks of about `chunk_bytes`.
    pub fn new(paths: &'a [PathBuf], chunk_bytes: usize, window: usize) -> ChunkBatches<'a> {
        ChunkBatches { paths: paths.iter(), current: None, chunk_bytes, window: window.max(1) }
    }

    /// The next batch of `(file name, chunk)`, or `None` when every file is done.
    pub fn next_batch(&mut self) -> Result<Option<Vec<(String, Chunk)>>, GamesError> {
        let mut batch = Vec::with_capacity(self.window);
        while batch.len() < self.window {
            if self.current.is_none() {
                match self.paths.next() {
                    Some(p) => {
                        self.current = Some((
                            p.display().to_string(),
                            Chunker::open(p, self.chunk_bytes, Boundary::Pgn)?,
                        ))
                    }
                    None => break,
                }
            }
            if let Some((name, chunker)) = self.current.as_mut() {
                match chunker.next_chunk()? {
                    Some(c) => batch.push((name.clone(), c)),
                    None => self.current = None,
                }
            }
        }
        Ok((!batch.is_empty()).then_some(batch))
    }
}

/// The first game boundary at or after `from`, as an offset where the next game starts.
fn find_boundary(data: &[u8], from: usize, boundary: Boundary) -> Option<usize> {
    match boundary {
        Boundary::Line => data[from..].iter().position(|&b| b == b'\n').map(|i| from + i + 1),
        Boundary::Pgn => {
            let mut fallback = None;
            let mut i = from;
            while let Some(off) = memchr::memchr(b'\n', &data[i..]) {
                let nl = i + off;
                let next = nl + 1;
                if next >= data.len() {
                    break;
                }
                if data[next] == b'[' && follows_blank_line(data, nl) {
                    if data[next..].starts_with(b"[Event ") {
                        return Some(next);
                    }
                    fallback.get_or_insert(next);
                }
                // Prefer `[Event` but do not scan unboundedly when a file never uses it.
                if fallback.is_some_and(|f| nl > f + (1 << 20)) {
                    return fallback;
                }
                i = next;
            }
            fallback
        }
    }
}

/// Where the last game of `data` starts (0 when it holds at most one): what remains when
/// a stream breaks and the game it cut must go.
fn last_boundary(data: &[u8], boundary: Boundary) -> usize {
    match boundary {
        Boundary::Line => data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1),
        Boundary::Pgn => {
            let tag_after_blank =
                |nl: usize| data.get(nl + 1) == Some(&b'[') && follows_blank_line(data, nl);
            let newlines =
                || data.iter().enumerate().rev().filter(|(_, b)| **b == b'\n').map(|(i, _)| i);
            newlines()
                .find(|&nl| tag_after_blank(nl) && data[nl + 1..].starts_with(b"[Event "))
                .or_else(|| newlines().find(|&nl| tag_after_blank(nl)))
                .map_or(0, |nl| nl + 1)
        }
    }
}

/// Whether the line ending at `nl` (an index of `\n`) is blank.
fn follows_blank_line(data: &[u8], nl: usize) -> bool {
    let mut j = nl;
    while j > 0 {
        match data[j - 1] {
            b'\r' | b' ' | b'\t' => j -= 1,
            b'\n' => return true,
            _ => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks_of(text: &[u8], target: usize) -> Vec<Chunk> {
        let reader: Box<dyn Read + Send> = Box::new(io::Cursor::new(text.to_vec()));
        let mut c = Chunker::new(reader, Path::new("mem"), target, Boundary::Pgn);
        let mut out = Vec::new();
        while let Some(chunk) = c.next_chunk().unwrap() {
            out.push(chunk);
        }
        out
    }

    #[test]
    fn chunks_cut_at_event_lines_and_keep_every_byte() {
        let game = b"[Event \"a\"]\r\n[Result \"1-0\"]\r\n\r\n1. e4 e5 1-0\r\n\r\n";
        let text: Vec<u8> = game.iter().copied().cycle().take(game.len() * 500).collect();
        let chunks = chunks_of(&text, 1024);
        assert!(chunks.len() > 5);
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.data.clone()).collect();
        assert_eq!(joined, text);
        for c in &chunks {
            assert!(c.data.starts_with(b"[Event "));
            let line = c.first_line - 1;
            assert_eq!(line % 5, 0, "chunks start on a game's first line");
        }
        assert!(chunks.last().unwrap().last);
        assert!(chunks[..chunks.len() - 1].iter().all(|c| !c.last));
    }

    #[test]
    fn compression_is_sniffed_not_guessed_from_names() {
        assert_eq!(Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
        assert_eq!(Compression::detect(b"BZh9"), Compression::Bzip2);
        assert_eq!(Compression::detect(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(Compression::detect(b"[Eve"), Compression::Plain);
        assert_eq!(Compression::detect(b""), Compression::Plain);
    }

    #[test]
    fn newline_count() {
        assert_eq!(count_newlines(b"a\nb\r\n\n"), 3);
        let big = vec![b'\n'; 100_000];
        assert_eq!(count_newlines(&big), 100_000);
        // Mixed bytes, every length around the vector blocks.
        let mixed: Vec<u8> = (0..20_000u32)
            .map(|i| if i.wrapping_mul(2_654_435_761) % 7 == 0 { b'\n' } else { (i % 251) as u8 })
            .collect();
        for len in (0..40).chain([4079, 4080, 4081, 8160, 8161, 19_999, 20_000]) {
            let naive = mixed[..len].iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(count_newlines(&mixed[..len]), naive, "{len} bytes");
        }
    }
}
