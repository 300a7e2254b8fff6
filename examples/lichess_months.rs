//! Synthetic Lichess months that keep the long tail, for `bench/run months`.
//!
//! Each game is legal chess written as a Lichess dump writes it (17 tags, one movetext
//! line, a `{ [%clk h:mm:ss] }` after every move), so okb's real reader counts it. Its
//! opening comes from a frequency trie of the first 15 plies of real games (the master
//! games and the Lichess sample in `../shared/corpus`), left at each ply with a chance
//! that falls with the players' rating ("novelty"). After leaving the trie a game plays,
//! in each position, the legal move of rank r in an order fixed by a hash of the position
//! and the quarter, r drawn from Zipf(s): two games that leave the trie at one node then
//! often agree for a while, which gives the counts between 2 and 49 that real months
//! have, and the quarter in the hash lets a month's tail differ from a year before. The
//! root's weights drift from month to month, so keys cross `min_games` over time.
//!
//! Constants (`EXIT_*`, `ZIPF_S`) were fitted with `--measure` against the 5,297 real
//! Lichess games of January 2013: distinct (position, move) pairs of ply < 15 per game and
//! the share of them seen once, at the sample's size (see bench/README.md, months).
//!
//! usage:
//!   lichess_months --out DIR --months N --games G [--seed S] [--from M]
//!                                                  write DIR/YYYY-MM.pgn.zst (months M..N)
//!   lichess_months --measure FILE                               pairs a game, singletons
//!   lichess_months --measure-synthetic G [--month M]            the same for G generated games

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use shakmaty::san::SanPlus;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Move, Position};

/// Plies the trie and the statistics cover (okb's default `max_ply`).
const PLIES: usize = 15;
/// Leaving the trie: a base chance a ply, lower for stronger players.
const EXIT_BASE: f64 = 0.085;
/// How much the chance grows with the ply (openings thin out).
const EXIT_PER_PLY: f64 = 0.012;
/// Zipf exponent of the move ranks after leaving the trie.
const ZIPF_S: f64 = 1.4;
/// Master games read into the trie (besides every Lichess sample game).
const MASTER_GAMES: usize = 60_000;

/// A small, fast, seedable generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// The opening trie: per node, its children (move, node, games).
#[derive(Default)]
struct Trie {
    children: Vec<Vec<(Move, usize, u64)>>,
}

impl Trie {
    fn add(&mut self, moves: &[Move]) {
        if self.children.is_empty() {
            self.children.push(Vec::new());
        }
        let mut node = 0;
        for m in moves.iter().take(PLIES) {
            let found = self.children[node].iter().position(|(c, _, _)| c == m);
            node = match found {
                Some(i) => {
                    self.children[node][i].2 += 1;
                    self.children[node][i].1
                }
                None => {
                    let child = self.children.len();
                    self.children.push(Vec::new());
                    self.children[node].push((*m, child, 1));
                    child
                }
            };
        }
    }
}

/// SAN games of a PGN text (tags, comments, variations, NAGs and numbers skipped), played
/// out as moves; games with an illegal move stop there.
fn games_of(text: &str, limit: usize, out: &mut Vec<Vec<Move>>) {
    for block in text.split("\n\n[") {
        if out.len() >= limit {
            return;
        }
        // Every block but the first lost its tag line's `[` to the split.
        let movetext: String = block
            .lines()
            .filter(|l| !l.trim_start().starts_with('[') && !l.trim_end().ends_with("\"]"))
            .collect::<Vec<_>>()
            .join(" ");
        let (mut pos, mut moves, mut depth) = (Chess::default(), Vec::new(), 0i32);
        let mut cleaned = String::with_capacity(movetext.len());
        for c in movetext.chars() {
            match c {
                '{' | '(' => depth += 1,
                '}' | ')' => depth -= 1,
                _ if depth == 0 => cleaned.push(c),
                _ => {}
            }
        }
        for token in cleaned.split_whitespace() {
            let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if token.is_empty()
                || token.starts_with('$')
                || ["1-0", "0-1", "1/2-1/2", "*"].contains(&token)
            {
                continue;
            }
            let Ok(san) = token.parse::<SanPlus>() else { break };
            let Ok(m) = san.san.to_move(&pos) else { break };
            pos.play_unchecked(m);
            moves.push(m);
            if moves.len() >= PLIES {
                break;
            }
        }
        if !moves.is_empty() {
            out.push(moves);
        }
    }
}

fn read_text(path: &Path) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut bytes = Vec::new();
    if path.extension().is_some_and(|e| e == "zst") {
        zstd::Decoder::new(file).unwrap().read_to_end(&mut bytes).unwrap();
    } else {
        BufReader::new(file).read_to_end(&mut bytes).unwrap();
    }
    String::from_utf8_lossy(&bytes).replace("\r\n", "\n")
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

/// The trie of the Lichess sample and the first master games.
fn build_trie() -> Trie {
    let mut games = Vec::new();
    games_of(
        &read_text(&corpus().join("lichess/lichess_db_standard_rated_2013-01.first5297.pgn")),
        usize::MAX,
        &mut games,
    );
    let mut masters: Vec<PathBuf> =
        std::fs::read_dir(corpus().join("masters")).unwrap().flatten().map(|e| e.path()).collect();
    masters.sort();
    for path in masters {
        if games.len() >= MASTER_GAMES {
            break;
        }
        games_of(&read_text(&path), MASTER_GAMES, &mut games);
    }
    let mut trie = Trie::default();
    for g in &games {
        trie.add(g);
    }
    trie
}

/// One generated game: moves, result (0 White, 1 draw, 2 Black), ratings.
struct Game {
    moves: Vec<Move>,
    result: u8,
    ratings: (u32, u32),
}

struct Generator<'t> {
    trie: &'t Trie,
    rng: Rng,
    month: u32,
}

impl Generator<'_> {
    fn rating(&mut self) -> u32 {
        (1550.0 + 330.0 * self.rng.normal()).clamp(600.0, 3100.0) as u32
    }

    /// Rank r ≥ 0 from a Zipf(s) law over n ranks (inverse transform over the weights).
    fn zipf(&mut self, n: usize) -> usize {
        let total: f64 = (1..=n).map(|k| (k as f64).powf(-ZIPF_S)).sum();
        let mut x = self.rng.unit() * total;
        for k in 1..=n {
            x -= (k as f64).powf(-ZIPF_S);
            if x <= 0.0 {
                return k - 1;
            }
        }
        n - 1
    }

    /// A trie child by games, the root's weights drifting with the month.
    fn pick_child(&mut self, node: usize) -> (Move, usize) {
        let children = &self.trie.children[node];
        let weight = |i: usize, games: u64| {
            let drift = if node == 0 {
                1.0 + 0.6 * ((self.month as f64) / 5.0 + i as f64).sin()
            } else {
                1.0
            };
            games as f64 * drift
        };
        let total: f64 = children.iter().enumerate().map(|(i, c)| weight(i, c.2)).sum();
        let mut x = self.rng.unit() * total;
        for (i, c) in children.iter().enumerate() {
            x -= weight(i, c.2);
            if x <= 0.0 {
                return (c.0, c.1);
            }
        }
        let last = children.last().expect("picked from a node with children");
        (last.0, last.1)
    }

    /// The move of rank `zipf` in the order a hash of the position and quarter gives.
    fn policy_move(&mut self, pos: &Chess) -> Option<Move> {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let key = pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
        let salt = u64::from(self.month / 3).wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ key.0;
        let mut ranked: Vec<(u64, usize)> = (0..legal.len())
            .map(|i| (mix(salt ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)), i))
            .collect();
        ranked.sort_unstable();
        let r = self.zipf(legal.len().min(6));
        Some(legal[ranked[r].1])
    }

    fn game(&mut self) -> Game {
        let ratings = (self.rating(), self.rating());
        let strength = ((ratings.0 + ratings.1) as f64 / 2.0 - 1500.0) / 1000.0;
        let length = (20.0 + 55.0 * self.rng.unit() + 40.0 * self.rng.unit()) as usize;
        let (mut pos, mut moves, mut node) =
            (Chess::default(), Vec::with_capacity(length), Some(0usize));
        while moves.len() < length {
            let ply = moves.len();
            let exit =
                (EXIT_BASE + EXIT_PER_PLY * ply as f64) * (1.0 - 0.5 * strength).clamp(0.3, 1.6);
            let in_book = node.filter(|&n| {
                !self.trie.children[n].is_empty() && ply < PLIES && self.rng.unit() >= exit
            });
            let m = match in_book {
                Some(n) => {
                    let (m, child) = self.pick_child(n);
                    node = Some(child);
                    m
                }
                None => {
                    node = None;
                    let m = if ply < PLIES + 4 {
                        self.policy_move(&pos)
                    } else {
                        random_move(&pos, &mut self.rng)
                    };
                    match m {
                        Some(m) => m,
                        None => break,
                    }
                }
            };
            pos.play_unchecked(m);
            moves.push(m);
            if pos.is_game_over() {
                break;
            }
        }
        let edge = (ratings.0 as f64 - ratings.1 as f64) / 800.0;
        let x = self.rng.unit();
        let result = if x < 0.05 {
            1
        } else if x < 0.525 + edge.clamp(-0.4, 0.4) {
            0
        } else {
            2
        };
        Game { moves, result, ratings }
    }
}

fn random_move(pos: &Chess, rng: &mut Rng) -> Option<Move> {
    let legal = pos.legal_moves();
    (!legal.is_empty()).then(|| legal[rng.below(legal.len())])
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const SPEEDS: [(&str, &str, u32); 4] = [
    ("Bullet", "60+0", 60),
    ("Blitz", "180+0", 180),
    ("Blitz", "300+3", 300),
    ("Rapid", "600+5", 600),
];

/// The game as a Lichess dump writes it.
fn write_game(
    out: &mut impl Write,
    g: &Game,
    id: u64,
    month: (u32, u32),
    rng: &mut Rng,
) -> std::io::Result<()> {
    let (speed, control, base) = SPEEDS[rng.below(SPEEDS.len())];
    let result = ["1-0", "1/2-1/2", "0-1"][g.result as usize];
    let day = 1 + rng.below(28);
    writeln!(
        out,
        "[Event \"Rated {speed} game\"]\n[Site \"https://lichess.org/{id:08x}\"]\n[Date \"{}.{:02}.{day:02}\"]\n[Round \"-\"]",
        month.0, month.1
    )?;
    writeln!(
        out,
        "[White \"p{}\"]\n[Black \"p{}\"]\n[Result \"{result}\"]",
        id % 997_331,
        (id / 3) % 997_331
    )?;
    writeln!(
        out,
        "[UTCDate \"{}.{:02}.{day:02}\"]\n[UTCTime \"{:02}:{:02}:{:02}\"]",
        month.0,
        month.1,
        rng.below(24),
        rng.below(60),
        rng.below(60)
    )?;
    writeln!(
        out,
        "[WhiteElo \"{}\"]\n[BlackElo \"{}\"]\n[WhiteRatingDiff \"+5\"]\n[BlackRatingDiff \"-5\"]",
        g.ratings.0, g.ratings.1
    )?;
    writeln!(
        out,
        "[ECO \"A00\"]\n[Opening \"Synthetic\"]\n[TimeControl \"{control}\"]\n[Termination \"Normal\"]\n"
    )?;
    let mut pos = Chess::default();
    let mut clock = [base, base];
    for (ply, m) in g.moves.iter().enumerate() {
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, *m);
        let side = ply % 2;
        clock[side] = clock[side].saturating_sub(rng.below(6) as u32);
        let c = clock[side];
        let number =
            if side == 0 { format!("{}. ", ply / 2 + 1) } else { format!("{}... ", ply / 2 + 1) };
        write!(out, "{number}{san} {{ [%clk {}:{:02}:{:02}] }} ", c / 3600, c / 60 % 60, c % 60)?;
    }
    writeln!(out, "{result}\n")
}

/// Distinct (position, move) pairs of ply < 15 over the games, and how many were seen once.
#[derive(Default)]
struct Tally {
    pairs: HashMap<(u64, u16), u32>,
    games: u64,
}

impl Tally {
    fn add(&mut self, moves: &[Move]) {
        let mut pos = Chess::default();
        let mut seen = std::collections::HashSet::new();
        for m in moves.iter().take(PLIES) {
            let key = pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
            let uci =
                (m.from().map_or(64, |s| u32::from(s) as u16)) << 8 | u32::from(m.to()) as u16;
            if seen.insert((key.0, uci)) {
                *self.pairs.entry((key.0, uci)).or_default() += 1;
            }
            pos.play_unchecked(*m);
        }
        self.games += 1;
    }

    fn report(&self, what: &str) {
        let once = self.pairs.values().filter(|&&c| c == 1).count();
        let fifty = self.pairs.values().filter(|&&c| c >= 50).count();
        println!(
            "{what}: {} games, {} distinct pairs, {:.2} a game, {:.1} % seen once, {} seen ≥ 50 times",
            self.games,
            self.pairs.len(),
            self.pairs.len() as f64 / self.games as f64,
            100.0 * once as f64 / self.pairs.len() as f64,
            fifty
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    if let Some(file) = arg("--measure") {
        let mut games = Vec::new();
        games_of(&read_text(Path::new(&file)), usize::MAX, &mut games);
        let mut tally = Tally::default();
        games.iter().for_each(|g| tally.add(g));
        tally.report(&file);
        return;
    }
    let trie = build_trie();
    let seed: u64 = arg("--seed").map_or(1, |s| s.parse().expect("--seed N"));
    if let Some(n) = arg("--measure-synthetic") {
        let n: u64 = n.parse().expect("--measure-synthetic G");
        let month: u32 = arg("--month").map_or(0, |m| m.parse().expect("--month M"));
        let mut generator =
            Generator { trie: &trie, rng: Rng(seed ^ u64::from(month) << 32), month };
        let mut tally = Tally::default();
        for _ in 0..n {
            tally.add(&generator.game().moves);
        }
        tally.report("synthetic");
        return;
    }
    let out = PathBuf::from(arg("--out").expect("--out DIR"));
    let months: u32 = arg("--months").map_or(40, |m| m.parse().expect("--months N"));
    let games: u64 = arg("--games").map_or(500_000, |g| g.parse().expect("--games G"));
    std::fs::create_dir_all(&out).unwrap();
    // `--from M`: start at month index M (two processes can split the months).
    let from: u32 = arg("--from").map_or(0, |m| m.parse().expect("--from M"));
    for month in from..months {
        let (year, m) = (2020 + month / 12, month % 12 + 1);
        let path = out.join(format!("{year}-{m:02}.pgn.zst"));
        if path.exists() {
            continue;
        }
        let tmp = path.with_extension("zst.part");
        let file = std::fs::File::create(&tmp).unwrap();
        let encoder = zstd::Encoder::new(file, 3).unwrap();
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, encoder);
        let mut generator =
            Generator { trie: &trie, rng: Rng(seed ^ u64::from(month) << 32), month };
        let mut tags = Rng(seed.wrapping_add(u64::from(month)));
        for i in 0..games {
            let game = generator.game();
            write_game(&mut writer, &game, u64::from(month) << 32 | i, (year, m), &mut tags)
                .unwrap();
        }
        writer.into_inner().map_err(|e| e.into_error()).unwrap().finish().unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        eprintln!("wrote {}", path.display());
    }
}
