//! What a new user meets first: a make that finishes and then does nothing, commands
//! that say what they do (status, JSON, strictness, colour, quiet), and input mistakes
//! named instead of silently giving an empty knowledge base. Every check runs the binary.

use crate::common;
use std::process::{Command, Stdio};

use common::{Project, fixture, mini_sources};

fn engine_fixture(name: &str) -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/engines")
        .join(name)
        .display()
        .to_string()
}

fn games_fixture(name: &str) -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/games")
        .join(name)
        .display()
        .to_string()
}

const CSV: &str = "[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n";

#[test]
fn a_make_with_an_engine_finishes_it_and_the_next_make_does_nothing() {
    let p = Project::with_pipeline(&format!(
        "{}[engine]\npath = \"{}\"\nengines = 2\ndepth_branching = 3\ndepth_leaf = 3\ndepth_popular = 3\n{CSV}",
        mini_sources(),
        engine_fixture("slow.py")
    ));
    let first: common::Run =
        p.command(&["make"]).env("SLOW_ENGINE_SECONDS", "0.01").output().unwrap().into();
    assert_eq!(first.status, 0, "{}", first.stderr);
    assert!(first.steps("Building").contains(&"engine".to_string()), "{}", first.stderr);
    let second = p.make(&[]);
    assert!(second.steps("Building").is_empty(), "{}", second.stderr);
    assert!(second.stderr.contains("nothing to do"), "{}", second.stderr);
    let status = p.okb(&["status"]);
    assert!(status.stderr.contains("everything is up to date"), "{}", status.stderr);
}

#[test]
fn a_budget_says_what_is_left_and_status_estimates_it() {
    let p = Project::with_pipeline(&format!(
        "{}[engine]\npath = \"{}\"\nengines = 1\nmax_positions = 2\n{CSV}",
        mini_sources(),
        engine_fixture("slow.py")
    ));
    let run = p.command(&["make"]).env("SLOW_ENGINE_SECONDS", "0.05").output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("positions left (≈") && stderr.contains("run `okb make` again to continue"),
        "{stderr}"
    );
    let status = p.okb(&["status"]);
    let line =
        status.stderr.lines().find(|l| l.contains("Stale engine")).unwrap_or_default().to_string();
    assert!(line.contains("positions left, ≈"), "{}", status.stderr);
    let json: serde_json::Value =
        serde_json::from_str(&p.okb(&["status", "--json"]).stdout).unwrap();
    assert_eq!(json["up_to_date"], false);
    let engine = json["steps"].as_array().unwrap().iter().find(|s| s["id"] == "engine").unwrap();
    assert_eq!(engine["status"], "stale");
    assert!(engine["summary"].as_str().unwrap().contains("positions left"), "{engine}");
}

#[test]
fn long_work_prints_a_line_periodically_when_stderr_is_not_a_terminal() {
    let p = Project::with_pipeline(&format!(
        "{}[engine]\npath = \"{}\"\nengines = 1\n{CSV}",
        mini_sources(),
        engine_fixture("slow.py")
    ));
    let run = p
        .command(&["make"])
        .env("OKB_PROGRESS_SECS", "0.3")
        .env("SLOW_ENGINE_SECONDS", "0.15")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let progress: Vec<&str> =
        stderr.lines().filter(|l| l.trim_start().starts_with("Running engine")).collect();
    assert!(!progress.is_empty(), "{stderr}");
    assert!(progress.iter().any(|l| l.contains("ETA")), "{progress:?}");
}

#[test]
fn make_json_reports_steps_and_warnings() {
    let p = Project::with_pipeline(&format!(
        "{}[sources.bad]\nkind = \"lichess-tsv\"\npath = \"{}\"\n{CSV}",
        mini_sources(),
        fixture("bad.tsv")
    ));
    let run = p.okb(&["make", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["outcome"], "ok");
    assert!(json["built"].as_u64().unwrap() > 5);
    assert!(!json["warnings"].as_array().unwrap().is_empty(), "{json}");
    // A no-op make still lists the warnings, from the steps' records.
    let again: serde_json::Value =
        serde_json::from_str(&p.okb(&["make", "--json"]).stdout).unwrap();
    assert_eq!(again["built"], 0);
    assert_eq!(again["warnings"], json["warnings"]);
}

/// A make with `--strict`: exit status and the names of the warnings that failed it.
fn strict(p: &Project) -> (i32, serde_json::Value) {
    let run = p.okb(&["make", "--strict", "--json"]);
    (run.status, serde_json::from_str(&run.stdout).unwrap_or_else(|_| panic!("{}", run.stderr)))
}

#[test]
fn strict_fails_on_each_class_of_warning_unless_it_is_allowed_by_name() {
    let cases = [
        (
            "bad-row",
            format!("[sources.bad]\nkind = \"lichess-tsv\"\npath = \"{}\"\n", fixture("bad.tsv")),
        ),
        (
            "game",
            format!(
                "[sources.games]\nkind = \"pgn\"\npaths = [\"{}\"]\n",
                games_fixture("bad.pgn")
            ),
        ),
        (
            "engine-failure",
            format!(
                "[engine]\npath = \"{}\"\nengines = 1\nmax_attempts = 1\n",
                engine_fixture("crash.py")
            ),
        ),
    ];
    for (class, table) in cases {
        let text = format!("{}{table}{CSV}", mini_sources());
        let p = Project::with_pipeline(&text);
        let (status, json) = strict(&p);
        assert_eq!(status, 3, "{class}: {json}");
        let failing: Vec<String> = json["strict_failures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert!(!failing.is_empty(), "{class}");
        // Allowing each by name (kind:file:line) passes, and a later make agrees.
        let allow: Vec<String> = failing.iter().map(|n| format!("{n:?}")).collect();
        std::fs::write(
            p.path("pipeline.toml"),
            format!("{text}[strict]\nallow = [{}]\n", allow.join(", ")),
        )
        .unwrap();
        let (status, json) = strict(&p);
        assert_eq!(status, 0, "{class}: {json}");
        // A whole kind can be allowed too.
        let kinds: std::collections::BTreeSet<String> =
            failing.iter().map(|n| n.split(':').next().unwrap().to_string()).collect();
        let kinds: Vec<String> = kinds.iter().map(|k| format!("{k:?}")).collect();
        std::fs::write(
            p.path("pipeline.toml"),
            format!("{text}[strict]\nallow = [{}]\n", kinds.join(", ")),
        )
        .unwrap();
        assert_eq!(strict(&p).0, 0, "{class}");
    }
    // Notes (orphan lines) never fail a strict build.
    let p = Project::with_pipeline(&format!("{}{CSV}", mini_sources()));
    let (status, json) = strict(&p);
    assert_eq!(status, 0, "{json}");
    assert!(json["notes"].as_u64().unwrap() > 0, "the fixtures have orphan lines: {json}");
}

#[test]
fn the_shipped_pipeline_passes_strict_with_its_reviewed_duplicates() {
    let shipped =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pipeline.toml")).unwrap();
    let start = shipped.find("[engine]").unwrap();
    let end = shipped.find("[store]").unwrap();
    // The taxonomies' warnings; the master games (tests/it/collections.rs builds them) add none.
    let (games, params) = (
        shipped.find("[sources.masters]").unwrap(),
        shipped.find("# ---- Phase parameters").unwrap(),
    );
    let without_engine =
        format!("{}{}{}", &shipped[..games], &shipped[params..start], &shipped[end..]);
    let p = Project::with_pipeline(&without_engine);
    let (status, json) = strict(&p);
    assert_eq!(status, 0, "{json}");
    assert_eq!(
        json["warnings"].as_array().unwrap().len(),
        4,
        "the four reviewed duplicates: {json}"
    );
}

#[test]
fn a_profile_does_not_bring_back_a_table_the_file_left_out() {
    let p = Project::with_pipeline(&format!(
        "{}{CSV}[profile.quick.engine]\ndepth_leaf = 8\n[profile.quick.tree]\nmax_ply = 4\n",
        mini_sources()
    ));
    let run = p.make(&["--profile", "quick"]);
    assert!(run.stderr.contains("profile \"quick\" leaves [engine] out"), "{}", run.stderr);
    assert!(!run.stderr.contains("engine ("), "no engine step: {}", run.stderr);
}

#[test]
fn a_closed_stdout_ends_a_command_quietly_with_success() {
    let p = Project::with_pipeline(&format!("{}{CSV}", mini_sources()));
    p.make(&[]);
    let games = games_fixture("classify.pgn");
    let packed = p.okb(&["convert", "--format", "packed", "-o", "moves.okbm", &games]);
    assert_eq!(packed.status, 0, "{}", packed.stderr);
    let store = p.path("build/okb.sqlite").display().to_string();
    let cases: [&[&str]; 6] = [
        &["query", "name", "defense"],
        &["query", "--store", &store, "moves", "1. e4 c5", "--json"],
        &["graph"],
        &["classify", &games],
        &["inspect", "moves.okbm"],
        &["structure", "--json", "8/8/8/8/8/8/8/K6k w - - 0 1"],
    ];
    for args in cases {
        let mut child =
            p.command(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("Broken pipe")
                && !stderr.contains("panicked")
                && !stderr.contains("error"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn pipeline_flags_on_commands_that_read_no_pipeline_are_refused() {
    let p = Project::with_pipeline("");
    let run =
        p.okb(&["book", "--pipeline", "other.toml", "-o", "b.bin", &games_fixture("openings.pgn")]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--pipeline has no effect on `okb book`"), "{}", run.stderr);
    let run = p.okb(&["structure", "--profile", "quick", "8/8/8/8/8/8/8/K6k w - - 0 1"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
}

#[test]
fn colour_follows_color_and_no_color_and_quiet_keeps_only_warnings() {
    let p = Project::with_pipeline(&format!("{}{CSV}", mini_sources()));
    let always = p.okb(&["make", "--color", "always"]);
    assert!(always.stderr.contains("\u{1b}["), "{}", always.stderr);
    let forced = p.command(&["status"]).env("CLICOLOR_FORCE", "1").output().unwrap();
    assert!(String::from_utf8_lossy(&forced.stderr).contains("\u{1b}["));
    let no_color =
        p.command(&["status"]).env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1").output().unwrap();
    assert!(!String::from_utf8_lossy(&no_color.stderr).contains("\u{1b}["));
    let never = p.okb(&["status", "--color", "never"]);
    assert!(!never.stderr.contains("\u{1b}["));
    std::fs::remove_dir_all(p.path("cache")).unwrap();
    let quiet = p.okb(&["make", "-q"]);
    assert_eq!(quiet.status, 0);
    assert!(
        !quiet.stderr.contains("Building") && !quiet.stderr.contains("Finished"),
        "{}",
        quiet.stderr
    );
    let verbose = p.okb(&["make", "-v"]);
    assert!(verbose.stderr.contains("Fresh tree"), "{}", verbose.stderr);
}

#[test]
fn a_games_folder_of_broken_links_is_an_error_naming_the_link() {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*\"]\n{CSV}",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    std::os::unix::fs::symlink(
        "../shared/corpus/masters/Anand.pgn.zst",
        p.path("games/Anand.pgn.zst"),
    )
    .unwrap();
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("Anand.pgn.zst") && run.stderr.contains("which does not exist"),
        "{}",
        run.stderr
    );
    // An empty folder is said, not silent (and an error unless the source allows it).
    std::fs::remove_file(p.path("games/Anand.pgn.zst")).unwrap();
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("games: 0 files matched games/*"), "{}", run.stderr);
}

#[test]
fn an_empty_book_says_why() {
    let p = Project::with_pipeline(&format!(
        "{}[exports.book]\nformat = \"polyglot\"\noutput = \"out/book.bin\"\n",
        mini_sources()
    ));
    let run = p.make(&[]);
    assert!(
        run.stderr.contains("export:book (0 entries: the tree has no game counts"),
        "{}",
        run.stderr
    );
}

#[test]
fn graph_prints_every_step_with_its_state() {
    let p = Project::with_pipeline(&format!("{}{CSV}", mini_sources()));
    let before = Command::new(env!("CARGO_BIN_EXE_okb"))
        .arg("graph")
        .current_dir(p.path(""))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&before.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("stale") && l.contains("tree") && l.contains("← eco")),
        "{text}"
    );
    p.make(&[]);
    let after = p.okb(&["graph"]);
    assert!(after.stdout.lines().all(|l| l.starts_with("fresh")), "{}", after.stdout);
}

#[test]
fn version_completions_and_man_page() {
    let p = Project::with_pipeline("");
    let version = p.okb(&["--version"]);
    let text = version.stdout.trim();
    let (name, rest) = text.split_once(' ').unwrap();
    assert_eq!(name, "okb");
    let (semver, commit) = rest.split_once(" (").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(semver, env!("CARGO_PKG_VERSION"));
    let commit = commit.trim_end_matches(')').trim_end_matches("-dirty");
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{text}"
    );
    let bash = p.okb(&["completions", "bash"]);
    assert_eq!(bash.status, 0);
    for command in ["make", "status", "graph", "query", "completions"] {
        assert!(bash.stdout.contains(command), "{command} missing from the bash completion");
    }
    let fish = p.okb(&["completions", "fish"]);
    assert!(fish.stdout.contains("complete -c okb"), "{}", fish.stdout);
    let man = p.okb(&["man"]);
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.starts_with(".TH"),
        "{}",
        &man.stdout[..80.min(man.stdout.len())]
    );
    assert!(man.stdout.contains(".TH okb 1") && man.stdout.contains("make"), "man page");
}

#[test]
fn book_takes_min_games_and_the_old_spelling_quietly() {
    let p = Project::with_pipeline("");
    let games = games_fixture("openings.pgn");
    for flag in ["--min-games", "--min-game"] {
        let run = p.okb(&["book", "-o", "b.bin", flag, "1", &games]);
        assert_eq!(run.status, 0, "{flag}: {}", run.stderr);
    }
    let help = p.okb(&["book", "--help"]);
    assert!(
        help.stdout.contains("--min-games") && !help.stdout.contains("--min-game "),
        "{}",
        help.stdout
    );
}

#[test]
fn convert_follows_the_output_name_and_refuses_impossible_directions_before_work() {
    let p = Project::with_pipeline("");
    let games = games_fixture("openings.pgn");
    let unknown = p.okb(&["convert", "-o", "x.txt", &games]);
    assert_eq!(unknown.status, 1, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("cannot tell what to write to x.txt")
            && unknown.stderr.contains(".okbm"),
        "{}",
        unknown.stderr
    );
    assert!(!p.path("x.txt").exists());
    let same = p.okb(&["convert", "-o", "back.pgn", &games]);
    assert_eq!(same.status, 1, "{}", same.stderr);
    assert!(same.stderr.contains("openings.pgn is not BGN"), "{}", same.stderr);
    assert!(!p.path("back.pgn").exists());
    assert_eq!(p.okb(&["convert", "-o", "g.bgn", &games]).status, 0);
    let bgn_to_bgn = p.okb(&["convert", "-o", "h.bgn", "g.bgn"]);
    assert_eq!(bgn_to_bgn.status, 1);
    assert!(bgn_to_bgn.stderr.contains("g.bgn is BGN"), "{}", bgn_to_bgn.stderr);
    let packed = p.okb(&["convert", "-o", "m.okbm", &games]);
    assert_eq!(packed.status, 0, "{}", packed.stderr);
    assert!(p.okb(&["inspect", "m.okbm"]).stdout.contains("polyglot key"));
    assert_eq!(p.okb(&["convert", "-o", "back.pgn", "g.bgn"]).status, 0);
}

#[test]
fn query_name_ranks_the_exact_and_leading_main_names_first_as_the_search_endpoint_does() {
    let p = Project::full();
    p.make(&[]);
    let listed = |query: &str| -> Vec<(String, String)> {
        let run = p.okb(&["query", "name", query, "--json"]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        let nodes: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
        nodes.iter().map(|n| (n["node_id"].as_str().unwrap().to_string(), full_name(n))).collect()
    };
    fn full_name(n: &serde_json::Value) -> String {
        match n["variation_name"].as_str() {
            Some(v) => format!("{}: {v}", n["opening_name"].as_str().unwrap()),
            None => n["opening_name"].as_str().unwrap().to_string(),
        }
    }
    let sicilian = listed("sicilian");
    assert_eq!(sicilian[0].1, "Sicilian Defense");
    let van_geet = sicilian
        .iter()
        .position(|(_, name)| name == "Van Geet: Sicilian Variation")
        .expect("listed");
    assert!(
        van_geet
            > sicilian
                .iter()
                .position(|(_, n)| n == "Sicilian Defense: Najdorf Variation")
                .unwrap()
    );
    assert_eq!(listed("kings gambit")[0].1, "King's Gambit");
    assert_eq!(listed("caro kann")[0].1, "Caro-Kann Defense");
    assert_eq!(
        listed("sicillian najdorf")[0].1,
        "Sicilian Defense: Najdorf Variation",
        "a typo is forgiven"
    );

    // The same order as GET /opening/search, which ranks with the same index.
    let store = okb::store::read::Store::open(&p.path("build/okb.sqlite")).unwrap();
    let graph = store.graph().unwrap();
    let index = okb::search::SearchIndex::new(&graph);
    for query in ["sicilian", "french defense", "queen's gambit declined"] {
        let ids: Vec<String> =
            index.search(&graph, query, 25).into_iter().map(|h| h.node_id).collect();
        let cli: Vec<String> = listed(query).into_iter().take(25).map(|(id, _)| id).collect();
        assert_eq!(cli, ids, "{query}");
    }
    let none = p.okb(&["query", "name", "zzzzqqq"]);
    assert_eq!(none.status, 1);
}

#[test]
fn broken_and_gameless_files_are_named_counted_and_survived() {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*\"]\n{CSV}",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    let masters = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/masters/Abdusattorov.pgn.zst");
    let bytes = std::fs::read(masters).unwrap();
    std::fs::write(p.path("games/cut.pgn.zst"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(
        p.path("games/page.pgn"),
        "<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n",
    )
    .unwrap();
    std::fs::write(p.path("games/empty.pgn"), "").unwrap();
    std::fs::copy(games_fixture("bad.pgn"), p.path("games/good.pgn")).unwrap();

    let run = p.okb(&["make"]);
    assert_eq!(run.status, 0, "a broken file does not stop the build: {}", run.stderr);
    let said = |needle: &str| assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    said("[corrupt-file] games/cut.pgn.zst:");
    said("incomplete frame");
    said("games before the break are read");
    said("[no-games] games/page.pgn: no games in this file; it starts with \"<!DOCTYPE html>");
    said("[no-games] games/empty.pgn: no games in this file: it is empty");
    assert!(p.path("out/nodes.csv").exists());

    // Memoized like any step: the next make does nothing, still counts the warnings, and
    // --strict replays them.
    let again = p.okb(&["make"]);
    assert!(
        again.stderr.contains("nothing to do") && again.stderr.contains("warnings"),
        "{}",
        again.stderr
    );
    let (status, json) = strict(&p);
    assert_eq!(status, 3, "{json}");
    let failing = json["strict_failures"].to_string();
    assert!(
        failing.contains("corrupt-file:games/cut.pgn.zst")
            && failing.contains("no-games:games/page.pgn"),
        "{failing}"
    );
}

#[test]
fn an_export_inside_a_game_source_is_refused_naming_both() {
    let cases = [
        (
            "games/*",
            "[exports.csv]\nformat = \"csv\"\noutput = \"./games/nodes.pgn\"\n",
            "\"./games/nodes.pgn\" is matched by \"games/*\"",
        ),
        (
            "games/**/*.pgn",
            "[exports.pgn]\nformat = \"pgn\"\noutput = \"games/by-opening\"\n",
            "\"games/by-opening\" is matched by \"games/**/*.pgn\"",
        ),
    ];
    for (pattern, export, said) in cases {
        let p = Project::with_pipeline(&format!(
            "{}[sources.games]\nkind = \"pgn\"\npaths = [\"{pattern}\"]\nallow_empty = true\n{export}",
            mini_sources()
        ));
        let run = p.okb(&["make"]);
        assert_ne!(run.status, 0, "{}", run.stderr);
        let stderr = common::flat(&run.stderr);
        assert!(stderr.contains(said) && stderr.contains("game source \"games\""), "{stderr}");
        assert!(!p.path("games").exists(), "nothing was written");
    }
    // Beside the games, not inside the pattern, is fine.
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\nallow_empty = true\n[exports.csv]\nformat = \"csv\"\noutput = \"games/nodes.csv\"\n",
        mini_sources()
    ));
    p.make(&[]);
}

#[test]
fn plain_clean_removes_the_manifest_and_the_review_and_validation_files() {
    let p = Project::with_pipeline(&format!("{}{CSV}", common::validation_pipeline(true)));
    p.make(&[]);
    let written = [
        "build/okb.sqlite",
        "build/manifest.json",
        "build/structures-review.json",
        "build/structures-review.txt",
        "build/structures-review.tsv",
        "build/validation.json",
        "build/validation.txt",
        "build/validation-stubs.tsv",
        "out/nodes.csv",
    ];
    for file in written {
        assert!(p.path(file).exists(), "a make writes {file}");
    }
    let run = p.okb(&["clean"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let left: Vec<&str> = written.iter().copied().filter(|f| p.path(f).exists()).collect();
    assert!(left.is_empty(), "okb clean left {left:?}: {}", run.stderr);
    assert!(p.path("cache").exists(), "plain clean keeps the cache");
    // The next make writes them all again.
    p.make(&[]);
    assert!(written.iter().all(|f| p.path(f).exists()));
}

#[test]
fn quiet_prints_no_progress_and_no_notes() {
    // A glob matching nothing and orphan taxonomy lines: each says a note without -q.
    let games = "[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\nallow_empty = true\n";
    let p = Project::with_pipeline(&format!("{}{games}{CSV}", mini_sources()));
    let quiet = p.okb(&["-q", "make"]);
    assert_eq!(quiet.status, 0, "{}", quiet.stderr);
    assert_eq!(quiet.stderr, "", "-q prints only warnings, errors and what was asked for");
    // Without -q, a make that runs the steps again says both.
    std::fs::remove_dir_all(p.path("cache")).unwrap();
    let said = p.okb(&["make"]);
    assert!(
        said.stderr.contains("0 files matched") && said.stderr.contains("[orphan]"),
        "{}",
        said.stderr
    );
}

#[test]
fn explain_names_the_parameter_when_a_step_is_restored_from_the_cache() {
    let p = Project::with_pipeline(&format!("{}{CSV}[tree]\nmax_ply = 4\n", mini_sources()));
    p.make(&[]);
    let edit = |from: &str, to: &str| {
        let text = String::from_utf8(p.read("pipeline.toml")).unwrap();
        std::fs::write(p.path("pipeline.toml"), text.replace(from, to)).unwrap();
    };
    edit("max_ply = 4", "max_ply = 5");
    p.make(&[]);
    edit("max_ply = 5", "max_ply = 4");
    let run = p.make(&["--explain"]);
    assert!(
        !run.steps("Restored").is_empty(),
        "a step of the earlier build is put back: {}",
        run.stderr
    );
    let becauses: Vec<&str> =
        run.stderr.lines().filter(|l| l.trim_start().starts_with("because")).collect();
    assert!(becauses.iter().all(|l| !l.contains("output missing or modified")), "{}", run.stderr);
    assert!(
        becauses
            .iter()
            .any(|l| l.contains("changed, a build the cache holds; its output restored")),
        "{}",
        run.stderr
    );
}

#[test]
fn help_offers_no_flag_a_command_refuses_and_serve_lists_every_endpoint() {
    let p = Project::with_pipeline(&mini_sources());
    let help = p.okb(&["engine", "annotate", "--help"]);
    assert!(
        !help.stdout.contains("--pipeline") && !help.stdout.contains("--profile"),
        "{}",
        help.stdout
    );
    let refused = p.okb(&["engine", "annotate", "--pipeline", "x.toml", "--output", "o", "q"]);
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--pipeline has no effect on `okb engine annotate`"),
        "{}",
        refused.stderr
    );
    assert!(p.okb(&["make", "--help"]).stdout.contains("--pipeline"), "make reads a pipeline");
    // Every endpoint of the docs' table is in `okb serve --help`.
    let serve = common::flat(&p.okb(&["serve", "--help"]).stdout);
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/store-and-api.md"))
            .unwrap();
    let table = docs.split("### Endpoints").nth(1).unwrap().split("\n### ").next().unwrap();
    let endpoints: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split(['`', '?', ' ']).find(|w| w.starts_with('/')))
        .collect();
    assert!(endpoints.contains(&"/api/cloud-eval"), "{endpoints:?}");
    for endpoint in endpoints.iter().filter(|e| **e != "/") {
        assert!(serve.contains(endpoint), "okb serve --help does not list {endpoint}: {serve}");
    }
    assert!(serve.contains("docs/store-and-api.md#endpoints"), "{serve}");
    // The typical session's make finds the master games in the mirror too: README's main
    // command's mirror, not one that starts a download of the corpus.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mirror = readme.split("OKB_MIRROR=").nth(1).unwrap().split_whitespace().next().unwrap();
    let top = p.okb(&["--help"]).stdout;
    assert!(top.contains(&format!("OKB_MIRROR={mirror} okb make")), "{mirror}: {top}");
}

#[test]
fn clean_waits_for_the_project_lock_a_make_holds_and_keeps_the_lock_file() {
    use std::io::BufRead;
    let p = Project::with_pipeline(&format!("{}{CSV}", mini_sources()));
    p.make(&[]);
    // A make under way holds the lock (an advisory lock on cache/lock, as `flock` takes).
    let held = std::fs::File::options().write(true).open(p.path("cache/lock")).unwrap();
    held.lock().unwrap();
    let mut clean = p.command(&["clean", "--cache"]).stderr(Stdio::piped()).spawn().unwrap();
    let mut said = String::new();
    let mut stderr = std::io::BufReader::new(clean.stderr.take().unwrap());
    while !said.contains("waiting for the project lock") {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
    }
    assert!(said.contains("waiting for the project lock"), "clean did not wait: {said}");
    assert!(
        p.path("build/okb.sqlite").exists() && p.path("out/nodes.csv").exists(),
        "nothing is removed under the lock"
    );
    held.unlock().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(clean.wait().unwrap().success(), "{said}{rest}");
    assert!(!p.path("build/okb.sqlite").exists() && !p.path("out/nodes.csv").exists(), "{rest}");
    // The lock file stays, so that a make waiting on it and the next one share one lock.
    let left: Vec<_> =
        std::fs::read_dir(p.path("cache")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("lock")]);
}

#[test]
fn a_make_that_fails_at_an_export_removes_its_temporary_files_and_verify_says_what_it_left() {
    let p = Project::with_pipeline(&format!("{}{CSV}", mini_sources()));
    p.make(&[]);
    // A folder where the export goes: the export's write fails after its bytes are written.
    std::fs::remove_file(p.path("out/nodes.csv")).unwrap();
    std::fs::create_dir_all(p.path("out/nodes.csv/in-the-way")).unwrap();
    let run = p.okb(&["make"]);
    assert_ne!(run.status, 0, "{}", run.stderr);
    let temporaries: Vec<_> = std::fs::read_dir(p.path("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".okb-tmp"))
        .collect();
    assert!(temporaries.is_empty(), "the failed make left {temporaries:?}: {}", run.stderr);
    let verify = p.okb(&["verify", "--no-build"]);
    assert_eq!(verify.status, 1, "{}", verify.stderr);
    let said = common::flat(&verify.stderr);
    assert!(
        said.contains("the last make here did not finish")
            && said.contains("manifest.json, written last, are the previous make's"),
        "{said}"
    );
    assert!(!said.contains("after building"), "--no-build builds nothing: {said}");
}

#[test]
fn an_empty_games_folder_beside_a_counts_source_says_nothing_of_a_skeleton() {
    let p = Project::self_contained(
        &format!(
            "{}\n[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\nallow_empty = true\n",
            common::SELF_CONTAINED_SOURCES.split("[sources.games]").next().unwrap()
        ),
        &[],
    );
    // A counts file of the fixture games supplies the tree's games.
    let counts = p.path("part.okbc").display().to_string();
    let run = p.okb(&["count", "-o", &counts, &games_fixture("openings.pgn")]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut pipeline = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    pipeline.push_str(
        "[sources.counted]\nkind = \"counts\"\npath = \"part.okbc\"\n[tree]\nmin_games = 1\n",
    );
    std::fs::write(p.path("pipeline.toml"), pipeline).unwrap();
    let run = p.make(&[]);
    assert!(run.stderr.contains("games: 0 files matched games/*.pgn"), "{}", run.stderr);
    assert!(
        !run.stderr.to_lowercase().contains("skeleton"),
        "the counts file supplies games: {}",
        run.stderr
    );
    let node: serde_json::Value =
        serde_json::from_str(&p.okb(&["query", "moves", "1. e4", "--json"]).stdout).unwrap();
    assert!(node["game_count"].as_u64().unwrap() > 0, "{node}");
}
