//! The knowledge base in a real PostgreSQL server: a throwaway cluster started by the test
//! (initdb into a temporary folder, pg_ctl on a free port on 127.0.0.1, as the `postgres`
//! user when the tests run as root, since PostgreSQL refuses root), loaded by `okb make`,
//! read back by `okb query` and `okb serve`, and broken on purpose.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Project, Server, flat, mini_sources};

const PASSWORD: &str = "s3cret-pw";

/// A running throwaway cluster, stopped and removed when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    port: u16,
    bin: PathBuf,
}

fn pg_bin() -> PathBuf {
    let out =
        Command::new("pg_config").arg("--bindir").output().ok().filter(|o| o.status.success());
    let from_config = out.map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    from_config.filter(|p| p.join("initdb").exists()).unwrap_or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed")
            .flatten()
            .map(|e| e.path())
            .collect();
        versions.sort();
        versions.pop().expect("a PostgreSQL version").join("bin")
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let bin = pg_bin();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        std::fs::write(dir.path().join("pw"), PASSWORD).unwrap();
        if is_root() {
            assert!(
                Command::new("chown")
                    .args(["-R", "postgres"])
                    .arg(dir.path())
                    .status()
                    .unwrap()
                    .success()
            );
        }
        let cluster = Cluster { dir, port, bin };
        let data = cluster.dir.path().join("data");
        let pwfile = format!("--pwfile={}", cluster.dir.path().join("pw").display());
        cluster.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "okb",
                "--auth=scram-sha-256",
                &pwfile,
                "--no-sync",
            ],
        );
        cluster.pg_ctl_start();
        cluster.psql("postgres", "CREATE DATABASE kb");
        cluster
    }

    fn run(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd.args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn pg_ctl_start(&self) {
        let data = self.dir.path().join("data");
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &options,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
    }

    fn stop(&self) {
        let data = self.dir.path().join("data");
        self.run("pg_ctl", &["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"]);
    }

    fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "okb",
                "-d",
                db,
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .unwrap();
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn url(&self, db: &str) -> String {
        format!("postgres://okb@127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let exe = self.bin.join("pg_ctl");
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let _ = cmd.args(["-D", data.to_str().unwrap(), "-m", "immediate", "stop"]).output();
    }
}

fn pipeline(url: &str, min_games: u32) -> String {
    format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"{}\"]\n[tree]\nmin_games = {min_games}\n[store]\npath = \"build/okb.sqlite\"\nurl = \"{url}\"\nschema = \"kb_test\"\n[explorer]\n",
        mini_sources(),
        common::classify_games()
    )
}

fn okb(p: &Project, args: &[&str], password: Option<&str>) -> common::Run {
    let mut cmd = p.command(args);
    cmd.env_remove("PGPASSWORD").env("PGPASSFILE", p.path("no-pgpass"));
    if let Some(pw) = password {
        cmd.env("PGPASSWORD", pw);
    }
    cmd.output().unwrap().into()
}

fn sqlite_count(path: &Path, sql: &str) -> String {
    let db = rusqlite::Connection::open(path).unwrap();
    db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap().to_string()
}

#[test]
fn postgres_holds_the_same_knowledge_base_and_answers_the_same_bytes() {
    let pg = Cluster::start();
    let p = Project::with_pipeline(&pipeline(&pg.url("kb"), 3));
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.steps("Building").contains(&"store:postgres".to_string()), "{}", run.stderr);
    // Every table, every row (the explorer index's blobs as bytea).
    let sqlite = p.path("build/okb.sqlite");
    let tables = [
        "opening_nodes",
        "node_children",
        "node_transpositions",
        "opening_entries",
        "pawn_structures",
        "node_changelog",
        "meta",
    ];
    for table in tables.iter().chain(&["explorer_nodes", "explorer_games", "explorer_pgn"]) {
        assert_eq!(
            pg.psql("kb", &format!("SELECT count(*) FROM kb_test.{table}")),
            sqlite_count(&sqlite, &format!("SELECT count(*) FROM {table}")),
            "{table}"
        );
    }
    // PostgreSQL types where they help: json engine lines and plans, keys and indexes.
    assert_eq!(pg.psql("kb", "SELECT data_type FROM information_schema.columns WHERE table_schema = 'kb_test' AND column_name = 'white_plans'"), "json");
    let indexes = pg.psql("kb", "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'kb_test'");
    for index in [
        "opening_nodes_pkey",
        "opening_nodes_position",
        "node_children_child",
        "opening_entries_eco",
    ] {
        assert!(indexes.split(',').any(|i| i == index), "{index} missing: {indexes}");
    }
    // A second make does not touch the database.
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert!(flat(&run.stderr).contains("nothing to do"), "{}", run.stderr);

    // okb query: the same JSON from both stores.
    let store = format!("{}?schema=kb_test", pg.url("kb"));
    for args in [
        &["moves", "1. e4 c5 2. Nf3"][..],
        &["eco", "B20"],
        &["name", "sicilian"],
        &["fen", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"],
    ] {
        let local = okb(&p, &[&["query"][..], args].concat(), None);
        let remote = okb(&p, &[&["query", "--store", &store][..], args].concat(), Some(PASSWORD));
        assert_eq!(remote.status, 0, "{}", remote.stderr);
        assert!(!local.stdout.is_empty());
        assert_eq!(local.stdout, remote.stdout, "query {args:?}");
    }
    // okb serve: the same bodies.
    let local = Server::start(&p, &["--store", "build/okb.sqlite"], &[]);
    let remote = Server::start(&p, &["--store", &store], &[("PGPASSWORD", PASSWORD)]);
    let client = reqwest::blocking::Client::new();
    for path in [
        "/node/fen/rnbqkbnr%2Fpppppppp%2F8%2F8%2F4P3%2F8%2FPPPP1PPP%2FRNBQKBNR%20b%20KQkq%20-",
        "/opening/search?q=sicilian",
        "/opening/eco/B20",
        "/masters?play=e2e4,c7c5",
        "/masters?since=1900&topGames=15",
        "/lichess?recentGames=8",
        "/structure/sicilian/openings",
        "/openapi.json",
    ] {
        let a = client.get(format!("{}{path}", local.base)).send().unwrap();
        let b = client.get(format!("{}{path}", remote.base)).send().unwrap();
        assert_eq!(a.status(), b.status(), "{path}");
        assert_eq!(a.bytes().unwrap(), b.bytes().unwrap(), "GET {path}");
    }

    // A rebuild that changes the tree: the changelog in PostgreSQL is SQLite's.
    std::fs::write(p.path("pipeline.toml"), pipeline(&pg.url("kb"), 2)).unwrap();
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_eq!(run.status, 0, "{}", run.stderr);
    let changes = sqlite_count(&sqlite, "SELECT count(*) FROM node_changelog");
    assert_ne!(changes, "0");
    assert_eq!(pg.psql("kb", "SELECT count(*) FROM kb_test.node_changelog"), changes);
    assert_eq!(
        pg.psql("kb", "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'kb_test%'"),
        "1",
        "staging schemas left behind"
    );
}

/// The PostgreSQL load ran; nothing of the knowledge base itself was rebuilt.
fn assert_only_postgres_rebuilt(run: &common::Run) {
    let built = run.steps("Building");
    assert!(built.contains(&"store:postgres".to_string()), "{}", run.stderr);
    for step in ["tree", "eco", "store", "node-records"] {
        assert!(!built.contains(&step.to_string()), "{step} rebuilt:\n{}", run.stderr);
    }
}

#[test]
fn server_faults_name_the_server_never_the_password_and_lose_nothing() {
    let pg = Cluster::start();
    let p = Project::with_pipeline(&pipeline(&pg.url("kb"), 3));
    // No password: the build up to the SQLite store completes; the error says what to set.
    let run = okb(&p, &["make"], None);
    assert_ne!(run.status, 0);
    assert!(
        flat(&run.stderr).contains(&format!("okb@127.0.0.1:{}/kb", pg.port))
            && flat(&run.stderr).contains("PGPASSWORD"),
        "{}",
        run.stderr
    );
    assert!(p.path("build/okb.sqlite").exists());
    // A wrong password.
    let run = okb(&p, &["make"], Some("wrong-pw"));
    assert!(flat(&run.stderr).contains("password authentication failed"), "{}", run.stderr);
    assert!(!flat(&run.stderr).contains("wrong-pw"), "{}", run.stderr);
    // A password in the URL is refused before anything runs.
    std::fs::write(
        p.path("pipeline.toml"),
        pipeline(&format!("postgres://okb:{PASSWORD}@127.0.0.1:{}/kb", pg.port), 3),
    )
    .unwrap();
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_ne!(run.status, 0);
    assert!(
        flat(&run.stderr).contains("a password does not belong in the URL")
            && !flat(&run.stderr).contains(PASSWORD),
        "{}",
        run.stderr
    );
    // A missing database.
    std::fs::write(p.path("pipeline.toml"), pipeline(&pg.url("nodb"), 3)).unwrap();
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert!(flat(&run.stderr).contains("database \"nodb\" does not exist"), "{}", run.stderr);
    // Permission denied: a role that may connect but not create schemas.
    pg.psql("kb", "CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; GRANT CONNECT ON DATABASE kb TO reader; REVOKE CREATE ON DATABASE kb FROM PUBLIC");
    std::fs::write(
        p.path("pipeline.toml"),
        pipeline(&format!("postgres://reader@127.0.0.1:{}/kb", pg.port), 3),
    )
    .unwrap();
    let run = okb(&p, &["make"], Some("reader-pw"));
    assert!(
        flat(&run.stderr).contains("permission denied")
            && flat(&run.stderr).contains("reader@127.0.0.1"),
        "{}",
        run.stderr
    );

    // The right settings load it; only the PostgreSQL step runs.
    std::fs::write(p.path("pipeline.toml"), pipeline(&pg.url("kb"), 3)).unwrap();
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_only_postgres_rebuilt(&run);
    let nodes = pg.psql("kb", "SELECT count(*) FROM kb_test.opening_nodes");

    // The server goes away before a rebuild: a clear error; the knowledge base that was
    // there survives, and a load interrupted halfway (its staging schema left behind) is
    // redone by the next make.
    std::fs::write(p.path("pipeline.toml"), pipeline(&pg.url("kb"), 2)).unwrap();
    pg.stop();
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_ne!(run.status, 0);
    assert!(
        flat(&run.stderr).contains(&format!("okb@127.0.0.1:{}/kb", pg.port))
            && flat(&run.stderr).contains("Connection refused"),
        "{}",
        run.stderr
    );
    pg.pg_ctl_start();
    assert_eq!(pg.psql("kb", "SELECT count(*) FROM kb_test.opening_nodes"), nodes);
    // Killed in the middle of a load: an event trigger holds the load at its first index
    // build while the test stops the server hard (-m immediate, as a crash).
    pg.psql(
        "kb",
        "CREATE FUNCTION hold() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); END $$;
         CREATE EVENT TRIGGER hold_index ON ddl_command_end WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION hold()",
    );
    let mut make = p.command(&["make"]);
    make.env("PGPASSWORD", PASSWORD)
        .env("PGPASSFILE", p.path("no-pgpass"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = make.spawn().unwrap();
    let waited = std::time::Instant::now();
    while pg.psql(
        "kb",
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CREATE%INDEX%kb_test__okb_new%'",
    ) == "0"
    {
        assert!(waited.elapsed().as_secs() < 60, "the load never reached its index builds");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    pg.stop();
    let out = child.wait_with_output().unwrap();
    let stderr = flat(&String::from_utf8_lossy(&out.stderr));
    assert!(
        !out.status.success() && stderr.contains(&format!("okb@127.0.0.1:{}/kb", pg.port)),
        "{stderr}"
    );
    pg.pg_ctl_start();
    assert_eq!(
        pg.psql("kb", "SELECT count(*) FROM kb_test.opening_nodes"),
        nodes,
        "the previous knowledge base is intact"
    );
    assert_eq!(
        pg.psql("kb", "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'kb_test%'"),
        "1"
    );
    pg.psql("kb", "DROP EVENT TRIGGER hold_index");
    // A staging schema an older okb could have left behind is dropped first.
    pg.psql(
        "kb",
        "CREATE SCHEMA kb_test__okb_new; CREATE TABLE kb_test__okb_new.opening_nodes (half text)",
    );
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.steps("Building").contains(&"store:postgres".to_string()), "{}", run.stderr);
    let sqlite = p.path("build/okb.sqlite");
    assert_eq!(
        pg.psql("kb", "SELECT count(*) FROM kb_test.opening_nodes"),
        sqlite_count(&sqlite, "SELECT count(*) FROM opening_nodes")
    );
    assert_eq!(
        pg.psql("kb", "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'kb_test%'"),
        "1"
    );
    // Readers name a schema that is not there.
    let run = okb(
        &p,
        &["query", "--store", &format!("{}?schema=other", pg.url("kb")), "moves", "1. e4"],
        Some(PASSWORD),
    );
    assert!(flat(&run.stderr).contains("no okb knowledge base there"), "{}", run.stderr);
}

#[test]
fn a_killed_server_leaves_its_local_copy_to_the_next_okb() {
    let pg = Cluster::start();
    let p = Project::with_pipeline(&pipeline(&pg.url("kb"), 3));
    let run = okb(&p, &["make"], Some(PASSWORD));
    assert_eq!(run.status, 0, "{}", run.stderr);
    let store = format!("{}?schema=kb_test", pg.url("kb"));
    let tmp = tempfile::tempdir().unwrap();
    let tmpdir = tmp.path().to_str().unwrap();
    let listed = || -> Vec<PathBuf> {
        let mut found: Vec<_> =
            std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.path()).collect();
        found.sort();
        found
    };
    // Stopped by SIGKILL (what the test server's drop sends): no destructor runs.
    let server =
        Server::start(&p, &["--store", &store], &[("PGPASSWORD", PASSWORD), ("TMPDIR", tmpdir)]);
    let copies = listed();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(copies[0].join("okb.sqlite").exists());
    drop(server);
    assert_eq!(listed(), copies, "the killed server's copy is left");
    let name = copies[0].file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with(".okb-tmp"), "named so that it is swept: {name}");
    // The next reader of a PostgreSQL store sweeps it, and removes its own copy.
    let mut cmd = p.command(&["query", "--store", &store, "eco", "B20"]);
    cmd.env("PGPASSWORD", PASSWORD).env("TMPDIR", tmpdir);
    let run: common::Run = cmd.output().unwrap().into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(listed(), Vec::<PathBuf>::new());
}

/// `okb export postgres` loads a store file built without `[store] url`; read back from
/// the schema, its CSV export is the SQLite store's, byte for byte. A wrong password is
/// refused by the server's name, never echoing the password, and the schema stays as it was.
#[test]
fn okb_export_postgres_loads_a_store_file_that_reads_back_the_same() {
    let pg = Cluster::start();
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"{}\"]\n[tree]\nmin_games = 1\n",
        mini_sources(),
        common::classify_games()
    ));
    p.make(&[]);
    let url = format!("{}?schema=kb_cli", pg.url("kb"));
    // The copy says how far it is, table by table, against the store's row count (a
    // line every 5 ms here, every 10 s by default).
    let mut cmd = p.command(&["export", "postgres", "-o", &url]);
    cmd.env("PGPASSWORD", PASSWORD).env("PGPASSFILE", p.path("no-pgpass"));
    let run: common::Run = cmd.env("OKB_PROGRESS_SECS", "0.005").output().unwrap().into();
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("schema kb_cli"), "{}", run.stderr);
    assert!(run.stderr.contains("Running rows copied ("), "{}", run.stderr);
    let nodes = pg.psql("kb", "SELECT count(*) FROM kb_cli.opening_nodes");
    assert_eq!(
        nodes,
        sqlite_count(&p.path("build/okb.sqlite"), "SELECT count(*) FROM opening_nodes")
    );
    let local = okb(&p, &["export", "csv", "-o", "local.csv"], None);
    assert_eq!(local.status, 0, "{}", local.stderr);
    let remote = okb(&p, &["export", "csv", "-o", "remote.csv", "--store", &url], Some(PASSWORD));
    assert_eq!(remote.status, 0, "{}", remote.stderr);
    assert!(p.read("local.csv") == p.read("remote.csv"), "the same rows from both stores");

    let run = okb(&p, &["export", "postgres", "-o", &url], Some("wrong-pw-123"));
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains(&format!("okb@127.0.0.1:{}/kb", pg.port)), "{}", run.stderr);
    assert!(!run.stderr.contains("wrong-pw-123"), "{}", run.stderr);
    assert_eq!(pg.psql("kb", "SELECT count(*) FROM kb_cli.opening_nodes"), nodes);
}
