//! okb's Polyglot books against `polyglot make-book` and python-chess.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use okb::export::book::{BookOptions, build_book};
use okb::export::polyglot::{WeightMode, from_bytes, to_bytes, write_book};
use okb::games::input::open;

const POLYGLOT: &str = "/usr/games/polyglot";

/// The first `n` games of the masters corpus (files in name order) as one plain PGN.
fn masters_slice(dir: &Path, n: usize) -> PathBuf {
    let masters = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters");
    let mut files: Vec<_> =
        std::fs::read_dir(&masters).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let out_path = dir.join(format!("masters-first{n}.pgn"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&out_path).unwrap());
    let mut games = 0;
    'files: for f in files {
        let mut reader = BufReader::new(open(&f).unwrap());
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                break;
            }
            if line.starts_with(b"[Event ") {
                games += 1;
                if games > n {
                    break 'files;
                }
            }
            out.write_all(&line).unwrap();
        }
        // Files may end without a newline (or with NUL padding): keep games apart.
        out.write_all(b"\r\n\r\n").unwrap();
    }
    out.flush().unwrap();
    out_path
}

fn polyglot_book(pgn: &Path, out: &Path, max_ply: usize, min_game: u64) -> Vec<u8> {
    assert!(
        Path::new(POLYGLOT).exists(),
        "{POLYGLOT} is missing: this test compares against it; install it with `apt-get install polyglot`"
    );
    let status = Command::new(POLYGLOT)
        .args(["make-book", "-pgn"])
        .arg(pgn)
        .arg("-bin")
        .arg(out)
        .args(["-max-ply", &max_ply.to_string(), "-min-game", &min_game.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "polyglot make-book failed");
    std::fs::read(out).unwrap()
}

#[test]
fn book_equals_polyglot_make_book_on_20000_master_games() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = masters_slice(dir.path(), 20_000);
    for (max_ply, min_game) in [(15, 3), (40, 1)] {
        let theirs = polyglot_book(&pgn, &dir.path().join("pg.bin"), max_ply, min_game);
        let opts =
            BookOptions { max_ply, min_game, weights: WeightMode::Polyglot, ..Default::default() };
        let ours = build_book(std::slice::from_ref(&pgn), &opts).unwrap();
        assert_eq!(ours.counters.games_read, 20_000);
        let theirs_entries = from_bytes(&theirs);
        assert_eq!(ours.entries.len(), theirs_entries.len(), "max_ply {max_ply}");
        let first_diff = ours.entries.iter().zip(&theirs_entries).position(|(a, b)| a != b);
        assert_eq!(first_diff, None, "max_ply {max_ply}: first differing entry");
        assert_eq!(to_bytes(&ours.entries), theirs, "byte-identical book");
    }
}

#[test]
fn python_chess_reads_the_same_entries() {
    if Command::new("python3")
        .args(["-c", "import chess.polyglot"])
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
    {
        panic!("python-chess is required: pip install chess");
    }
    let dir = tempfile::tempdir().unwrap();
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/twic/twic0920.pgn");
    let opts = BookOptions { max_ply: 20, min_game: 2, ..Default::default() };
    let book = build_book(&[pgn], &opts).unwrap();
    let path = dir.path().join("twic.bin");
    write_book(&path, &book.entries).unwrap();
    let script = r#"
import sys, chess, chess.polyglot
with chess.polyglot.open_reader(sys.argv[1]) as r:
    for i in range(len(r)):
        e = r[i]
        print(e.key, e.raw_move, e.weight, e.learn)
    # Independent key and move decoding: the start position and 1. e4.
    b = chess.Board()
    for line in ([], ["e2e4"]):
        b = chess.Board()
        for m in line: b.push_uci(m)
        print("pos", chess.polyglot.zobrist_hash(b), " ".join(sorted(f"{e.move.uci()}:{e.weight}" for e in r.find_all(b))))
"#;
    let out = Command::new("python3").args(["-c", script]).arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    for e in &book.entries {
        let line = lines.next().unwrap();
        assert_eq!(line, format!("{} {} {} {}", e.key, e.mv, e.weight, e.learn));
    }
    let start = lines.next().unwrap();
    let e4 = lines.next().unwrap();
    assert!(start.starts_with(&format!("pos {} ", 0x463b96181691fc9c_u64)), "{start}");
    assert!(e4.starts_with(&format!("pos {} ", 0x823c9b50fd114196_u64)), "{e4}");
    // The start position's moves decoded by python-chess carry okb's weights.
    let ours: Vec<String> = {
        let pos = shakmaty::Chess::default();
        let mut v: Vec<String> = book
            .entries
            .iter()
            .filter(|e| e.key == 0x463b96181691fc9c)
            .map(|e| {
                let m = shakmaty::Position::legal_moves(&pos)
                    .into_iter()
                    .find(|m| okb::export::polyglot::encode_move(m) == e.mv)
                    .unwrap();
                format!("{}:{}", okb::position::uci(&m), e.weight)
            })
            .collect();
        v.sort();
        v
    };
    assert!(!ours.is_empty());
    assert_eq!(start.split(' ').skip(2).map(String::from).collect::<Vec<_>>(), ours);
}

#[test]
fn polyglot_key_test_vectors() {
    use okb::position::{parse_fen, polyglot_key};
    assert_eq!(polyglot_key(&shakmaty::Chess::default()), 0x463b96181691fc9c);
    let e4 = parse_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1").unwrap();
    assert_eq!(polyglot_key(&e4), 0x823c9b50fd114196);
    let ep = parse_fen("8/8/8/KPp4r/8/8/8/7k w - c6 0 1").unwrap();
    assert_eq!(polyglot_key(&ep), 0xf008b0d4b67d65ee);
}
