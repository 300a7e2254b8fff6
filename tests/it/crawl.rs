//! Explorer crawls against real servers on 127.0.0.1: `okb serve` over the masters
//! corpus (built once per test binary), and a misbehaving proxy in front of it
//! (`common::proxy`) that answers 429s, 5xx, truncated, slow and invalid bodies, drops
//! connections and refuses the token after a number of requests.

use crate::common;
use std::sync::OnceLock;
use std::time::Duration;

use common::proxy::{Fault, Misbehaving};
use common::{Project, Server};

/// The pinned taxonomy sources of the repository's pipeline.toml (found in the mirror).
fn taxonomies() -> String {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pipeline.toml")).unwrap();
    let start = text.find("[sources.lichess-a]").unwrap();
    let end = text.find("# ---- Phase 2").unwrap();
    text[start..end].to_string()
}

/// The masters corpus built to ply 15 and served; shared by every test of this file.
fn served() -> &'static (Project, Server) {
    static SERVED: OnceLock<(Project, Server)> = OnceLock::new();
    SERVED.get_or_init(|| {
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/masters/*.pgn.zst");
        let pipeline = format!("{}[sources.masters]\nkind = \"pgn\"\npaths = [\"{corpus}\"]\n[store]\npath = \"build/okb.sqlite\"\n", taxonomies());
        let p = Project::with_pipeline(&pipeline);
        p.make(&[]);
        let server = Server::start_shared(&p, &[], &[]);
        (p, server)
    })
}

/// A project crawling `url` (`database = "masters"`), with `extra` lines in the source
/// and the tree cut at `max_ply`.
fn crawler(url: &str, max_ply: u16, min_games: u64, extra: &str) -> Project {
    let pipeline = format!(
        "{}[sources.explorer]\nkind = \"lichess-explorer\"\ndatabase = \"masters\"\nurl = \"{url}\"\nmax_ply = {max_ply}\nmin_games = {min_games}\n{extra}\n\
         [tree]\nmax_ply = {max_ply}\nmin_games = {min_games}\n[store]\npath = \"build/okb.sqlite\"\n\
         [exports.csv]\nformat = \"csv\"\noutput = \"build/nodes.csv\"\n[exports.book]\nformat = \"polyglot\"\noutput = \"build/book.bin\"\n",
        taxonomies()
    );
    Project::with_pipeline(&pipeline)
}

trait Retarget {
    /// The project with its crawl's `database` changed from `from` to `to`.
    fn retarget(self, from: &str, to: &str) -> Self;
}

impl Retarget for Project {
    fn retarget(self, from: &str, to: &str) -> Project {
        let text = String::from_utf8(self.read("pipeline.toml")).unwrap();
        std::fs::write(
            self.path("pipeline.toml"),
            text.replace(&format!("database = \"{from}\""), &format!("database = \"{to}\"")),
        )
        .unwrap();
        self
    }
}

/// The politeness of a test: no rate limit, short waits, four attempts per request.
const FAST: &str = "[sources.explorer.politeness]\nrate = 0\nwait_after_429 = 0.3\nbackoff = 0.05\nbackoff_cap = 1\nmax_attempts = 4\ntimeout = 0.5\n";

/// The manifest of the project's crawl, read with okb's own reader.
fn manifest(p: &Project) -> okb::crawl::manifest::Manifest {
    let dir = p.path("sources/explorer/manifests");
    let mut found: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    found.sort_by_key(|f| std::fs::metadata(f).unwrap().modified().unwrap());
    okb::crawl::manifest::Manifest::parse(&std::fs::read(found.last().unwrap()).unwrap()).unwrap()
}

fn node_id(fen: &str) -> String {
    okb::position::node_id(&okb::position::epd(&okb::position::parse_fen(fen).unwrap()))
}

#[test]
fn a_crawl_of_served_masters_equals_the_served_tree_and_replays_offline_byte_for_byte() {
    let (served_project, server) = served();
    let p = crawler(&server.base, 8, 50, "[sources.explorer.politeness]\nrate = 0\n");
    let first = p.make(&[]);
    assert!(first.stderr.contains("Crawled"), "{}", first.stderr);
    let m = manifest(&p);
    assert!(m.positions.len() > 1000, "{} positions", m.positions.len());
    // Every position asked about has the served counts, and every expanded one the served
    // moves with their counts.
    let conn = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    conn.execute(
        "ATTACH DATABASE ?1 AS s",
        [served_project.path("build/okb.sqlite").display().to_string()],
    )
    .unwrap();
    let node = "SELECT (SELECT white_wins || '/' || draws || '/' || black_wins FROM main.opening_nodes WHERE node_id = ?1), \
                       (SELECT white_wins || '/' || draws || '/' || black_wins FROM s.opening_nodes WHERE node_id = ?1)";
    let edges = "SELECT group_concat(move_uci || ':' || game_count || ':' || white_wins || ':' || black_wins, ' ') FROM \
                 (SELECT * FROM DB.node_children WHERE parent_id = ?1 AND game_count > 0 ORDER BY move_uci)";
    for entry in &m.positions {
        let id = node_id(&entry.fen);
        let (ours, theirs): (Option<String>, Option<String>) =
            conn.query_row(node, [&id], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(ours, theirs, "counts of {}", entry.fen);
        assert!(ours.is_some(), "{} is in the crawled tree", entry.fen);
        if entry.ply < 8 {
            let ours: Option<String> =
                conn.query_row(&edges.replace("DB", "main"), [&id], |r| r.get(0)).unwrap();
            let theirs: Option<String> =
                conn.query_row(&edges.replace("DB", "s"), [&id], |r| r.get(0)).unwrap();
            assert_eq!(ours, theirs, "moves of {}", entry.fen);
        }
    }
    let second = p.make(&[]);
    assert!(second.stderr.contains("nothing to do"), "{}", second.stderr);
    assert!(!second.stderr.contains("Crawled"), "a second make asks nothing: {}", second.stderr);

    // Pinned, then replayed offline on a clean checkout whose only copy of the answers
    // is a mirror: the same bytes.
    assert_eq!(p.okb(&["pin", "explorer"]).status, 0);
    let clean = Project::with_pipeline(&String::from_utf8(p.read("pipeline.toml")).unwrap());
    let mirror = format!("{}:{}", common::shared_sources().display(), p.path("sources").display());
    let replay = clean.command(&["make", "--offline"]).env("OKB_MIRROR", mirror).output().unwrap();
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    for file in ["build/nodes.csv", "build/book.bin", "build/okb.sqlite"] {
        assert!(clean.read(file) == p.read(file), "{file} differs after an offline replay");
    }
}

/// What the misbehaving server does with one request.
/// The manifest hash of a clean crawl of the same settings straight from `okb serve`.
fn clean_crawl_hash(max_ply: u16, min_games: u64) -> String {
    let (_, server) = served();
    let p = crawler(&server.base, max_ply, min_games, FAST);
    let run = p.okb(&["crawl", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    run.stdout.split("\"blake3\":\"").nth(1).unwrap()[..64].to_string()
}

fn crawl_json_hash(run: &common::Run) -> String {
    run.stdout.split("\"blake3\":\"").nth(1).unwrap_or_else(|| panic!("no hash: {}", run.stderr))
        [..64]
        .to_string()
}

#[test]
fn faults_are_waited_out_politely_and_lose_nothing() {
    let (_, server) = served();
    let script = vec![
        Fault::Pass,
        Fault::Status(429, Some(1)),
        Fault::Status(429, None),
        Fault::Status(500, None),
        Fault::Status(502, None),
        Fault::Truncated,
        Fault::Slow(Duration::from_millis(1500)),
        Fault::Invalid,
        Fault::Drop,
    ];
    let bad = Misbehaving::start(&server.base, script, None);
    let p = crawler(&bad.base, 4, 2000, &FAST.replace("max_attempts = 4", "max_attempts = 10"));
    let run = p.okb(&["crawl", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        crawl_json_hash(&run),
        clean_crawl_hash(4, 2000),
        "the same crawl as from a server that behaves"
    );
    assert!(
        run.stdout.contains("\"retried\":8") && run.stdout.contains("\"rate_limited\":2"),
        "{}",
        run.stdout
    );
    let log = bad.log.lock().unwrap().clone();
    let gap = |i: usize| log[i + 1].0 - log[i].0;
    assert!(gap(1) >= Duration::from_secs(1), "Retry-After: 1 honoured ({:?})", gap(1));
    assert!(gap(2) >= Duration::from_millis(300), "a 429 waits wait_after_429 ({:?})", gap(2));
    assert!(
        gap(3) >= Duration::from_millis(50) && gap(4) >= Duration::from_millis(100),
        "backoff doubles ({:?}, {:?})",
        gap(3),
        gap(4)
    );
    // Every retry asked for the request that failed, and no request was repeated after
    // it was answered.
    let paths = bad.paths();
    let answered: std::collections::HashSet<&String> = paths.iter().collect();
    assert_eq!(paths.len(), answered.len() + 8, "{paths:#?}");
}

#[test]
fn a_refused_token_stops_the_crawl_keeps_what_was_fetched_and_the_next_run_continues() {
    let (_, server) = served();
    let bad = Misbehaving::start(&server.base, vec![], Some(5));
    let p = crawler(&bad.base, 4, 2000, &format!("token_env = \"OKB_TEST_TOKEN\"\n{FAST}"));
    let run = p.command(&["make"]).env("OKB_TEST_TOKEN", "lip_expired").output().unwrap();
    let stderr = common::flat(&String::from_utf8_lossy(&run.stderr));
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("HTTP 401") && stderr.contains("$OKB_TEST_TOKEN was refused"),
        "{stderr}"
    );
    let first: Vec<String> = bad.paths()[..5].to_vec();
    *bad.allow.lock().unwrap() = None;
    let before = bad.paths().len();
    let run = p.command(&["crawl", "--json"]).env("OKB_TEST_TOKEN", "lip_fresh").output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let again: Vec<String> = bad.paths()[before..].to_vec();
    assert!(
        first.iter().all(|f| !again.contains(f)),
        "nothing fetched before the 401 is asked again"
    );
    assert!(String::from_utf8_lossy(&run.stdout).contains(&clean_crawl_hash(4, 2000)));
}

#[test]
fn an_answer_that_is_never_explorer_json_is_an_error_naming_the_request() {
    let (_, server) = served();
    let bad = Misbehaving::start(
        &server.base,
        vec![Fault::Pass, Fault::Invalid, Fault::Invalid, Fault::Invalid, Fault::Invalid],
        None,
    );
    let p = crawler(&bad.base, 4, 2000, FAST);
    let run = p.okb(&["crawl"]);
    let stderr = common::flat(&run.stderr);
    assert_eq!(run.status, 1, "{stderr}");
    assert!(
        stderr.contains("/masters?fen=")
            && stderr.contains("not explorer JSON")
            && stderr.contains("gave up after 4 attempts"),
        "{stderr}"
    );
    let paths = bad.paths();
    assert_eq!(paths.len(), 5);
    assert!(paths[1..].iter().all(|p| *p == paths[1]), "the same request was tried 4 times");
    assert!(
        p.path("sources/explorer/journals").read_dir().unwrap().count() == 1,
        "the first answer is kept"
    );
}

#[test]
fn a_crawl_killed_at_any_point_resumes_without_asking_again() {
    let (_, server) = served();
    let proxy = Misbehaving::start(&server.base, vec![], None);
    let p = crawler(&proxy.base, 5, 1000, "[sources.explorer.politeness]\nrate = 40\n");
    for delay in [300, 700] {
        let mut child = p.command(&["crawl"]).stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let run = p.okb(&["crawl", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let paths = proxy.paths();
    let unique: std::collections::HashSet<&String> = paths.iter().collect();
    // At most the request in flight at each kill is asked twice.
    assert!(
        paths.len() <= unique.len() + 2,
        "{} requests for {} positions",
        paths.len(),
        unique.len()
    );
    assert_eq!(unique.len(), manifest(&p).positions.len());
    assert_eq!(crawl_json_hash(&run), clean_crawl_hash(5, 1000));
}

#[test]
fn a_refresh_shows_what_changed_and_pin_force_records_it() {
    let (_, server) = served();
    let p = crawler(&server.base, 3, 3000, FAST);
    assert_eq!(p.okb(&["pin", "explorer"]).status, 0);
    let pinned = String::from_utf8(p.read("pipeline.toml")).unwrap();
    // The same settings against a server with more games: another knowledge base.
    let text = pinned.replace("min_games = 3000\n[sources", "min_games = 2000\n[sources").replacen(
        "min_games = 3000",
        "min_games = 2000",
        1,
    );
    std::fs::write(p.path("pipeline.toml"), &text).unwrap();
    let refresh = p.okb(&["crawl", "--refresh", "explorer"]);
    assert_eq!(refresh.status, 0, "{}", refresh.stderr);
    assert!(refresh.stderr.contains("positions added, 0 removed"), "{}", refresh.stderr);
    let repin = p.okb(&["pin", "--force", "explorer"]);
    assert!(repin.stderr.contains("Repinned explorer"), "{}", repin.stderr);
    assert_eq!(p.okb(&["make", "--locked"]).status, 0);
}

/// The root's games in a project's store.
fn root_games(p: &Project) -> i64 {
    let conn = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    conn.query_row("SELECT game_count FROM opening_nodes WHERE ply = 0", [], |r| r.get(0)).unwrap()
}

#[test]
fn a_crawl_and_game_files_add_up_in_one_tree() {
    let (_, server) = served();
    let twic = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/twic/twic0920.pgn");
    let games = format!("[sources.twic]\nkind = \"pgn\"\npaths = [\"{twic}\"]\n");
    let crawl_only = crawler(&server.base, 2, 5000, FAST);
    crawl_only.make(&[]);
    let both = crawler(&server.base, 2, 5000, FAST);
    let text = String::from_utf8(both.read("pipeline.toml"))
        .unwrap()
        .replace("[tree]", &format!("{games}[tree]"));
    std::fs::write(both.path("pipeline.toml"), text).unwrap();
    both.make(&[]);
    let twic_only = Project::with_pipeline(&format!(
        "{}{games}[tree]\nmax_ply = 2\nmin_games = 5000\n[store]\npath = \"build/okb.sqlite\"\n",
        taxonomies()
    ));
    twic_only.make(&[]);
    assert!(root_games(&twic_only) > 2000 && root_games(&crawl_only) > 350_000);
    assert_eq!(root_games(&both), root_games(&crawl_only) + root_games(&twic_only));
}

#[test]
fn a_filtered_lichess_crawl_asks_okb_serve_with_the_explorers_parameters_and_keeps_its_answers() {
    let games = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn"
    );
    let served = Project::with_pipeline(&format!(
        "{}[sources.lichess]\nkind = \"pgn\"\npaths = [\"{games}\"]\n[tree]\nmax_ply = 6\nmin_games = 5\n[explorer]\n[store]\npath = \"build/okb.sqlite\"\n",
        taxonomies()
    ));
    served.make(&[]);
    let server = Server::start(&served, &[], &[]);
    let filters = "speeds = [\"blitz\", \"classical\"]\nratings = [1600, 1800]\nsince = \"2013-01\"\nuntil = \"2013-01\"\n";
    let p = crawler(&server.base, 4, 5, &format!("{filters}{FAST}")).retarget("masters", "lichess");
    p.make(&[]);
    let m = manifest(&p);
    assert!(m.positions.len() > 10, "{} positions", m.positions.len());
    let client = reqwest::blocking::Client::new();
    let conn = rusqlite::Connection::open(p.path("build/okb.sqlite")).unwrap();
    for entry in &m.positions {
        assert!(
            entry.request.starts_with("/lichess?")
                && entry.request.contains(
                    "&speeds=blitz%2Cclassical&ratings=1600%2C1800&since=2013-01&until=2013-01"
                ),
            "{}",
            entry.request
        );
        let served: serde_json::Value = serde_json::from_slice(
            &client.get(server.url(&entry.request)).send().unwrap().bytes().unwrap(),
        )
        .unwrap();
        let ours: (i64, i64, i64) = conn
            .query_row(
                "SELECT white_wins, draws, black_wins FROM opening_nodes WHERE node_id = ?1",
                [node_id(&entry.fen)],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            (ours.0, ours.1, ours.2),
            (
                served["white"].as_i64().unwrap(),
                served["draws"].as_i64().unwrap(),
                served["black"].as_i64().unwrap()
            ),
            "{}",
            entry.fen
        );
    }
    let unfiltered: serde_json::Value = serde_json::from_slice(
        &client.get(server.url("/lichess")).send().unwrap().bytes().unwrap(),
    )
    .unwrap();
    let root: i64 = conn
        .query_row("SELECT game_count FROM opening_nodes WHERE ply = 0", [], |r| r.get(0))
        .unwrap();
    let all: i64 =
        ["white", "draws", "black"].iter().map(|k| unfiltered[k].as_i64().unwrap()).sum();
    assert!(root > 0 && root < all, "the filters select some of the games ({root} of {all})");
}

#[test]
fn progress_counts_the_requests_left_not_the_answers_replayed() {
    let (_, server) = served();
    // A 401 after 5 answers leaves a journal of 5; the next run asks for the rest.
    let proxy = Misbehaving::start(&server.base, vec![], Some(5));
    let p = crawler(&proxy.base, 4, 2000, "[sources.explorer.politeness]\nrate = 12\n");
    assert_eq!(p.okb(&["crawl"]).status, 1);
    *proxy.allow.lock().unwrap() = None;
    let run: common::Run =
        p.command(&["crawl"]).env("OKB_PROGRESS_SECS", "0.25").output().unwrap().into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    let positions = manifest(&p).positions.len();
    let left = positions - 5;
    assert!(left >= 10, "enough requests for several progress lines ({positions} positions)");
    // `Running explorer requests (explorer) (9 positions, 21 queued): 4/25, 11.8/s, ETA 2 s`
    let lines: Vec<&str> =
        run.stderr.lines().filter(|l| l.contains("explorer requests (explorer)")).collect();
    assert!(!lines.is_empty(), "{}", run.stderr);
    for line in lines {
        let counts = line.split("): ").nth(1).unwrap_or_else(|| panic!("{line}"));
        let (done, total) = counts.split(',').next().unwrap().split_once('/').unwrap();
        let (done, total): (usize, usize) = (done.parse().unwrap(), total.parse().unwrap());
        assert!(done <= total && total <= left, "{line}: only requests count, {left} were left");
        let rate: f64 = counts.split(", ").nth(1).unwrap().trim_end_matches("/s").parse().unwrap();
        // Limited to 12/s, the first request at once: counting the 5 replayed answers
        // would more than double it over the first lines' quarter of a second.
        assert!(rate < 24.0, "{line}: the rate is that of requests");
    }
}

#[test]
fn a_token_is_never_sent_over_plain_http_except_to_loopback() {
    // 192.0.2.1 is TEST-NET-1: the refusal comes before any connection is tried.
    let p =
        crawler("http://192.0.2.1:9", 4, 2000, &format!("token_env = \"OKB_TEST_TOKEN\"\n{FAST}"));
    let run = p.command(&["crawl"]).env("OKB_TEST_TOKEN", "lip_secret").output().unwrap();
    let stderr = common::flat(&String::from_utf8_lossy(&run.stderr));
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .contains("refusing to send the token in $OKB_TEST_TOKEN over plain http to 192.0.2.1"),
        "{stderr}"
    );
    assert!(!stderr.contains("lip_secret"), "{stderr}");
    // To a loopback address over plain http the token is sent (tests' own servers).
    let (_, server) = served();
    let p = crawler(&server.base, 2, 2000, &format!("token_env = \"OKB_TEST_TOKEN\"\n{FAST}"));
    let run = p.command(&["crawl"]).env("OKB_TEST_TOKEN", "lip_fresh").output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
}
