//! Helpers shared by the integration tests: a project folder with a pipeline, and running
//! the real `okb` binary in it.
#![allow(dead_code)]

pub mod proxy;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// ../shared/sources, the mirror of the pinned taxonomy files.
pub fn shared_sources() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/sources")
}

/// A project over the whole taxonomies (the five Lichess files and SCID's, copied into
/// its `src/`), with `rest` after them in its pipeline; not made yet.
#[allow(dead_code)]
pub fn whole_taxonomy_project(rest: &str) -> Project {
    let mut pipeline = String::new();
    for f in ["a", "b", "c", "d", "e"] {
        pipeline +=
            &format!("[sources.lichess-{f}]\nkind = \"lichess-tsv\"\npath = \"src/{f}.tsv\"\n");
    }
    pipeline += "[sources.scid]\nkind = \"scid-eco\"\npath = \"src/scid.eco\"\n";
    let p = Project::with_pipeline(&(pipeline + rest));
    std::fs::create_dir_all(p.path("src")).unwrap();
    for f in ["a", "b", "c", "d", "e"] {
        let from = shared_sources().join(format!("lichess-chess-openings/{f}.tsv"));
        std::fs::copy(from, p.path(&format!("src/{f}.tsv"))).unwrap();
    }
    std::fs::copy(shared_sources().join("scid/scid.eco"), p.path("src/scid.eco")).unwrap();
    p
}

/// A hand-written ECO fixture file in fixtures/eco.
pub fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/eco").join(name).display().to_string()
}

/// `[sources.*]` tables for the hand-written Lichess and SCID fixtures.
pub fn mini_sources() -> String {
    format!(
        "[sources.lichess]\nkind = \"lichess-tsv\"\npath = \"{}\"\n[sources.scid]\nkind = \"scid-eco\"\npath = \"{}\"\n",
        fixture("mini.tsv"),
        fixture("mini.eco")
    )
}

/// fixtures/games/classify.pgn: games with Opening tags, a transposition, an illegal
/// game, and two games of a line no taxonomy names ("Mystery Gambit").
pub fn classify_games() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/games/classify.pgn")
        .display()
        .to_string()
}

/// The hand-written taxonomies (with pgn-extract's mini eco.pgn) and [`classify_games`]
/// as source `games`, validated against their Opening tags (`stubs` as given). The games
/// also feed the tree, but `min_games = 3` prunes their own moves, so the tree is the
/// taxonomies' skeleton.
pub fn validation_pipeline(stubs: bool) -> String {
    format!(
        "{}[sources.pgn-extract]\nkind = \"eco-pgn\"\npath = \"{}\"\n[sources.games]\nkind = \"pgn\"\npaths = [\"{}\"]\n\
         [tree]\nmin_games = 3\n[validate]\nsources = [\"games\"]\nmin_games = 2\nstubs = {stubs}\n",
        mini_sources(),
        fixture("mini-eco.pgn"),
        classify_games()
    )
}

/// A temporary project.
pub struct Project {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Step ids reported with `word` (Building, Fresh, Restored, Stale).
    pub fn steps(&self, word: &str) -> Vec<String> {
        self.stderr
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                l.strip_prefix(word)
                    .and_then(|rest| rest.strip_prefix(' '))
                    .map(|rest| rest.split([' ', ',']).next().unwrap_or("").to_string())
            })
            .collect()
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            status: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// The Lichess TSVs as local, unpinned files (editable by tests), SCID and pgn-extract
/// pinned and found through the mirror.
pub const FULL_PIPELINE: &str = r#"
[sources.lichess-a]
kind = "lichess-tsv"
path = "src/a.tsv"
[sources.lichess-b]
kind = "lichess-tsv"
path = "src/b.tsv"
[sources.lichess-c]
kind = "lichess-tsv"
path = "src/c.tsv"
[sources.lichess-d]
kind = "lichess-tsv"
path = "src/d.tsv"
[sources.lichess-e]
kind = "lichess-tsv"
path = "src/e.tsv"
[sources.scid]
kind = "scid-eco"
path = "src/scid.eco"
[sources.pgn-extract]
kind = "eco-pgn"
url = "http://127.0.0.1:9/eco.pgn"
blake3 = "7f6d3b4b57481016708e2a26d59be70be150db69b5a18ab697fc6a5b50a933ba"

[exports.eco-json]
format = "eco-json"
output = "out/eco"

[exports.nodes-csv]
format = "csv"
output = "out/nodes.csv"
"#;

/// `[sources.*]` of a [`Project::self_contained`] project: the mini taxonomies in `src/`
/// and the game files in `games/`.
pub const SELF_CONTAINED_SOURCES: &str = r#"[sources.lichess]
kind = "lichess-tsv"
path = "src/mini.tsv"

[sources.scid]
kind = "scid-eco"
path = "src/mini.eco"

[sources.games]
kind = "pgn"
paths = ["games/*.pgn"]
"#;

impl Project {
    /// A project with [`FULL_PIPELINE`] and its local source files.
    pub fn full() -> Project {
        let p = Project::with_pipeline(FULL_PIPELINE);
        std::fs::create_dir_all(p.path("src")).unwrap();
        for f in ["a", "b", "c", "d", "e"] {
            std::fs::copy(
                shared_sources().join(format!("lichess-chess-openings/{f}.tsv")),
                p.path(&format!("src/{f}.tsv")),
            )
            .unwrap();
        }
        std::fs::copy(shared_sources().join("scid/scid.eco"), p.path("src/scid.eco")).unwrap();
        p
    }

    pub fn with_pipeline(text: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pipeline.toml"), text).unwrap();
        Project { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_okb"));
        c.args(args)
            .current_dir(self.dir.path())
            .env("OKB_MIRROR", shared_sources())
            .env_remove("NO_COLOR");
        c
    }

    pub fn okb(&self, args: &[&str]) -> Run {
        self.command(args).output().unwrap().into()
    }

    /// Runs `okb make` and asserts success.
    pub fn make(&self, args: &[&str]) -> Run {
        let mut all = vec!["make"];
        all.extend_from_slice(args);
        let run = self.okb(&all);
        assert_eq!(run.status, 0, "okb make failed:\n{}", run.stderr);
        run
    }

    /// Starts `okb make` and kills it (SIGKILL) after `delay_ms`, wherever it is.
    pub fn kill_make_after(&self, delay_ms: u64) {
        let mut child =
            self.command(&["make"]).stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// A project whose files live inside it (relative paths only, so two copies in
    /// different folders are the same project): `pipeline`, fixtures/eco's mini.tsv and
    /// mini.eco in `src/`, and the named fixtures/games files in `games/`.
    pub fn self_contained(pipeline: &str, games: &[&str]) -> Project {
        let p = Project::with_pipeline(pipeline);
        for dir in ["src", "games"] {
            std::fs::create_dir_all(p.path(dir)).unwrap();
        }
        std::fs::copy(fixture("mini.tsv"), p.path("src/mini.tsv")).unwrap();
        std::fs::copy(fixture("mini.eco"), p.path("src/mini.eco")).unwrap();
        for name in games {
            let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/games").join(name);
            std::fs::copy(from, p.path(&format!("games/{name}"))).unwrap();
        }
        p
    }
}

/// Every file under `dir`, relative path → bytes.
pub fn tree_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// Asserts that each of `paths` (a file, or a folder of files) has the same bytes in
/// both projects.
pub fn assert_same_outputs(a: &Project, b: &Project, paths: &[&str]) {
    for rel in paths {
        let same = if a.path(rel).is_dir() {
            tree_bytes(&a.path(rel)) == tree_bytes(&b.path(rel))
        } else {
            a.read(rel) == b.read(rel)
        };
        assert!(
            same,
            "{rel} differs between {} and {}",
            a.dir.path().display(),
            b.dir.path().display()
        );
    }
}

/// An insta snapshot stored in snapshots/ under `name`.
#[allow(unused_macros)]
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

/// A running `okb serve --addr 127.0.0.1:0 ARGS…` in a project, stopped when dropped or
/// when the test process ends, whichever comes first.
pub struct Server {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`, as the server printed it.
    pub base: String,
}

/// Runs `"$@"` (the server) and stops it when its stdin closes: when the [`Server`] is
/// dropped, or when the test process ends without dropping it (a `static` shared by a
/// file's tests is never dropped), then removes `$OKB_TEST_CLEANUP` if set. The shell's
/// own stderr goes nowhere once the server has its copy: the report of the killed job
/// would meet a closed pipe after the tests end, and SIGPIPE would stop the shell before
/// its cleanup.
const STOPS_WITH_THE_TESTS: &str = r#"
"$@" </dev/null &
pid=$!
exec 2>/dev/null
cat >/dev/null
kill -KILL "$pid" 2>/dev/null
wait "$pid"
if [ -n "${OKB_TEST_CLEANUP:-}" ]; then rm -rf "$OKB_TEST_CLEANUP"; fi
"#;

impl Server {
    /// Starts it with `args` and `env`, and waits for the address it binds.
    pub fn start(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn(p, args, env, None)
    }

    /// [`Server::start`] for a server kept in a `static` for the rest of the test run:
    /// the project's folder goes with the server when the tests end.
    #[allow(dead_code)]
    pub fn start_shared(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn(p, args, env, Some(p.dir.path()))
    }

    fn spawn(p: &Project, args: &[&str], env: &[(&str, &str)], cleanup: Option<&Path>) -> Server {
        use std::io::BufRead;
        let okb = p.command(&[&["serve", "--addr", "127.0.0.1:0"][..], args].concat());
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(STOPS_WITH_THE_TESTS)
            .arg("okb-test-server")
            .arg(okb.get_program())
            .args(okb.get_args());
        cmd.current_dir(p.dir.path());
        for (key, value) in okb.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = cleanup {
            cmd.env("OKB_TEST_CLEANUP", dir);
        }
        cmd.envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let base = stderr.lines().map_while(Result::ok).find_map(|l| served_address(&l));
        Server { child, base: base.expect("okb serve printed its address") }
    }

    /// The URL of `path` on it.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// The `http://HOST:PORT` that `okb serve` prints in its `Listening` line, if `line` is it.
pub fn served_address(line: &str) -> Option<String> {
    line.find("http://").map(|at| line[at..].split_whitespace().next().unwrap().to_string())
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing its stdin stops the server, then the shell around it.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// stderr with miette's wrapped lines joined back.
pub fn flat(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        match t.strip_prefix('│') {
            Some(rest) => {
                out.push(' ');
                out.push_str(rest.trim_start());
            }
            None => {
                out.push('\n');
                out.push_str(t);
            }
        }
    }
    out
}

/// Runs the Python checker `tests/<script>` with `args` and returns its stdout; a failure
/// shows what it printed.
pub fn python_check(script: &str, args: &[&str]) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join(script);
    let out = Command::new("python3").arg(path).args(args).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{script} {}:\n{stdout}{stderr}", args.first().unwrap_or(&""));
    stdout.into_owned()
}

/// The evaluation columns of `out/nodes.csv`, by position (provenance apart).
pub fn eval_columns(p: &Project) -> Vec<Vec<String>> {
    let csv = String::from_utf8(p.read("out/nodes.csv")).unwrap();
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let keep = [
        "position_key",
        "stockfish_eval",
        "stockfish_depth",
        "best_move",
        "best_move_uci",
        "is_dubious",
        "is_busted",
    ];
    let index: Vec<usize> =
        keep.iter().map(|k| header.iter().position(|h| h == k).unwrap()).collect();
    // No field of the mini tree's rows holds a comma inside quotes before these columns.
    rows.map(|r| {
        let cells: Vec<&str> = r.split(',').collect();
        index.iter().map(|&i| cells[i].to_string()).collect()
    })
    .collect()
}

/// Master files of the repertoire projects' knowledge base: Kasparov's (the player
/// collection) and players of his era who met the Najdorf and the King's Indian from
/// both sides.
pub const MASTERS: [&str; 8] = [
    "Kasparov.pgn.zst",
    "Karpov.pgn.zst",
    "Anand.pgn.zst",
    "Shirov.pgn.zst",
    "Topalov.pgn.zst",
    "Ivanchuk.pgn.zst",
    "Gelfand.pgn.zst",
    "Kramnik.pgn.zst",
];

/// A master's file of ../shared/corpus/masters.
pub fn masters_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/masters").join(name)
}

/// The mini taxonomies, the [`MASTERS`] files but Kasparov's as `games`, Kasparov's as
/// player collection `kasparov` (not counted twice: the KB reads `games/`, the
/// collection `players/`), and the fixtures' black and white repertoires.
pub fn repertoire_project() -> Project {
    let pipeline = format!(
        "{}\n[sources.kasparov]\nkind = \"pgn\"\npaths = [\"players/Kasparov.pgn.zst\"]\nplayers = [\"Kasparov, Gary\"]\n\n\
         [tree]\nmax_ply = 14\nmin_games = 5\n\n\
         [repertoires.black]\npath = \"rep/black.pgn\"\ncolor = \"black\"\ngames = [\"kasparov\"]\n\n\
         [repertoires.white]\npath = \"rep/white.pgn\"\ncolor = \"white\"\n",
        SELF_CONTAINED_SOURCES.replace("games/*.pgn", "games/*.pgn.zst")
    );
    let p = Project::with_pipeline(&pipeline);
    for dir in ["src", "games", "players", "rep"] {
        std::fs::create_dir_all(p.path(dir)).unwrap();
    }
    std::fs::copy(fixture("mini.tsv"), p.path("src/mini.tsv")).unwrap();
    std::fs::copy(fixture("mini.eco"), p.path("src/mini.eco")).unwrap();
    for f in &MASTERS[1..] {
        std::fs::copy(masters_file(f), p.path(&format!("games/{f}"))).unwrap();
    }
    std::fs::copy(masters_file(MASTERS[0]), p.path("players/Kasparov.pgn.zst")).unwrap();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/repertoire");
    for side in ["black", "white"] {
        std::fs::copy(fixtures.join(format!("{side}.pgn")), p.path(&format!("rep/{side}.pgn")))
            .unwrap();
    }
    p
}
