//! Each distinct game counts once: repeats within a file and across files are skipped,
//! reported, and the counts are those of the distinct games; `[games] deduplicate =
//! false` counts every copy; adding a file recounts no other file.

use crate::common;
use common::{Project, masters_file, mini_sources};

/// A game with its tags (Event and Site apart from the rest: they do not make a game).
fn game(event: &str, white: &str, black: &str, moves: &str, result: &str) -> String {
    format!(
        "[Event \"{event}\"]\n[Site \"{event} town\"]\n[Date \"2001.02.03\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"{result}\"]\n\n{moves} {result}\n\n"
    )
}

fn g1(event: &str) -> String {
    game(event, "Anna", "Bert", "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6", "1-0")
}

fn g2(event: &str) -> String {
    game(event, "Carl", "Anna", "1. d4 d5 2. c4 e6 3. Nc3 Nf6", "1/2-1/2")
}

/// Like g2 up to its last move: another game.
fn g3() -> String {
    game("Cup", "Carl", "Anna", "1. d4 d5 2. c4 e6 3. Nc3 Be7", "0-1")
}

/// The mini taxonomies, `games/*.pgn`, a CSV of the nodes, `extra` appended.
fn project(files: &[(&str, String)], extra: &str) -> Project {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n\n[tree]\nmax_ply = 8\nmin_games = 1\n\n\
         [exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n{extra}",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    for (name, text) in files {
        std::fs::write(p.path(&format!("games/{name}")), text).unwrap();
    }
    p
}

/// The `games` step's line (`5 games counted of 7, …`).
fn games_line(run: &common::Run) -> String {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Building games ("))
        .expect("the games step's line");
    line.to_string()
}

fn coverage(p: &Project) -> serde_json::Value {
    let manifest: serde_json::Value =
        serde_json::from_slice(&p.read("build/manifest.json")).unwrap();
    manifest["coverage"]["games"].clone()
}

/// a.pgn holds g1 twice and g2; b.pgn g2 again (from another event) and g3.
fn repeated() -> Vec<(&'static str, String)> {
    vec![
        ("a.pgn", format!("{}{}{}", g1("Open"), g2("Open"), g1("Open"))),
        ("b.pgn", format!("{}{}", g2("Cup"), g3())),
    ]
}

#[test]
fn repeated_games_count_once_as_the_distinct_games_do() {
    let p = project(&repeated(), "");
    let run = p.make(&[]);
    assert!(
        games_line(&run).starts_with("3 games counted of 5, 2 repeats skipped,"),
        "{}",
        run.stderr
    );
    let cov = coverage(&p);
    assert_eq!(
        (cov["games_counted"].as_u64(), cov["games_repeated"].as_u64()),
        (Some(3), Some(2)),
        "{cov}"
    );
    // The same nodes, counts and ratings as the distinct games counted from scratch.
    let distinct = project(&[("d.pgn", format!("{}{}{}", g1("Open"), g2("Open"), g3()))], "");
    distinct.make(&[]);
    assert_eq!(p.read("out/nodes.csv"), distinct.read("out/nodes.csv"));
}

#[test]
fn deduplicate_false_counts_every_copy() {
    let p = project(&repeated(), "\n[games]\ndeduplicate = false\n");
    let run = p.make(&[]);
    assert!(games_line(&run).starts_with("5 games counted of 5,"), "{}", run.stderr);
    assert!(!run.stderr.contains("repeats skipped"), "{}", run.stderr);
    assert!(!run.steps("Building").contains(&"duplicates".to_string()), "{}", run.stderr);
    assert_eq!(coverage(&p)["games_repeated"].as_u64(), Some(0));
    let root = p.okb(&["query", "moves", "1. e4", "--json"]);
    let node: serde_json::Value = serde_json::from_str(&root.stdout).unwrap();
    assert_eq!(node["game_count"].as_u64(), Some(2), "g1 twice: {}", root.stdout);
}

#[test]
fn adding_a_file_counts_that_file_and_its_repeats_only() {
    let p = project(&repeated(), "");
    p.make(&[]);
    std::fs::write(p.path("games/c.pgn"), format!("{}{}", g3(), g1("Rapid"))).unwrap();
    let run = p.make(&["--explain"]);
    let built = run.steps("Building");
    assert!(built.contains(&"games:games:games/c.pgn".to_string()), "{}", run.stderr);
    assert!(built.contains(&"duplicates".to_string()), "{}", run.stderr);
    assert!(
        !built.iter().any(|s| s == "games:games:games/a.pgn" || s == "games:games:games/b.pgn"),
        "{}",
        run.stderr
    );
    assert!(
        games_line(&run).starts_with("3 games counted of 7, 4 repeats skipped,"),
        "{}",
        run.stderr
    );
}

/// Two master files whose players met 192 times: okb's counts against python-chess's
/// count of the distinct games (by moves, White, Black, Date and Result).
#[test]
fn distinct_master_games_are_the_ones_python_chess_counts() {
    let files = ["Kasparov.pgn.zst", "Karpov.pgn.zst"];
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn.zst\"]\n\n[tree]\nmax_ply = 8\nmin_games = 1\n",
        mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    let paths: Vec<String> = files.iter().map(|f| masters_file(f).display().to_string()).collect();
    for f in files {
        std::fs::copy(masters_file(f), p.path(&format!("games/{f}"))).unwrap();
    }
    let run = p.make(&[]);
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let out = common::python_check("check_distinct_games.py", &args);
    let (counted, distinct) = out.trim().split_once(' ').expect("two numbers");
    let (counted, distinct): (u64, u64) = (counted.parse().unwrap(), distinct.parse().unwrap());
    assert!(counted > distinct, "{out}");
    let line = games_line(&run);
    assert!(
        line.starts_with(&format!("{distinct} games counted of ")),
        "{line} (python-chess: {out})"
    );
    assert!(
        line.contains(&format!(", {} repeats skipped,", counted - distinct)),
        "{line} (python-chess: {out})"
    );
    let root = p.okb(&["query", "moves", "", "--json"]);
    let node: serde_json::Value = serde_json::from_str(&root.stdout).unwrap();
    assert_eq!(node["game_count"].as_u64(), Some(distinct), "the start position");
}
