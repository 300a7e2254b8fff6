//! Messages that say what happened: the limit a skipped game broke, the export that
//! could not be written.

mod common;

use common::{Project, mini_sources};

#[test]
fn a_game_skipped_for_a_huge_tag_says_the_limit() {
    let p = Project::with_pipeline(&format!("{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n", mini_sources()));
    std::fs::create_dir_all(p.path("games")).unwrap();
    let huge = "x".repeat(1 << 20);
    let text = format!("[Event \"{huge}\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n[Event \"ok\"]\n[Result \"1-0\"]\n\n1. d4 d5 1-0\n");
    std::fs::write(p.path("games/huge.pgn"), text).unwrap();
    let run = p.make(&[]);
    let stderr = common::flat(&run.stderr);
    assert!(
        stderr.contains("games/huge.pgn:1: game skipped: bad-tag (a tag line that is unterminated or longer than 4096 bytes)"),
        "{stderr}"
    );
}

#[test]
fn an_export_that_cannot_be_written_is_named() {
    let p = Project::with_pipeline(&format!("{}[exports.nodes]\nformat = \"csv\"\noutput = \"./table\"\n", mini_sources()));
    std::fs::create_dir_all(p.path("table/inside")).unwrap();
    let run = p.okb(&["make"]);
    let stderr = common::flat(&run.stderr);
    assert_eq!(run.status, 1, "{stderr}");
    assert!(stderr.contains("export:nodes: writing ") && stderr.contains("/table: Is a directory"), "{stderr}");
}

#[test]
fn a_loop_of_links_is_called_a_loop() {
    let p = Project::with_pipeline(&format!("{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*\"]\n", mini_sources()));
    std::fs::create_dir_all(p.path("games")).unwrap();
    std::os::unix::fs::symlink("b.pgn", p.path("games/a.pgn")).unwrap();
    std::os::unix::fs::symlink("a.pgn", p.path("games/b.pgn")).unwrap();
    let run = p.okb(&["make"]);
    let stderr = common::flat(&run.stderr);
    assert_eq!(run.status, 1, "{stderr}");
    assert!(stderr.contains("which leads back to itself (a loop of symbolic links)"), "{stderr}");
    assert!(!stderr.contains("does not exist"), "{stderr}");
}

/// The warning count of `make`'s `Finished` line (0 when it names none).
fn finished_warnings(stderr: &str) -> usize {
    let line = stderr.lines().find(|l| l.contains("Finished")).unwrap_or_else(|| panic!("no Finished line:\n{stderr}"));
    line.split(", ")
        .find_map(|part| match part.split_whitespace().collect::<Vec<_>>()[..] {
            [n, word, ..] if word.starts_with("warning") => Some(n.parse().unwrap()),
            _ => None,
        })
        .unwrap_or(0)
}

#[test]
fn the_finished_line_counts_the_warnings_printed_and_the_next_make_agrees() {
    let p = Project::with_pipeline(&format!("{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n", mini_sources()));
    std::fs::create_dir_all(p.path("games")).unwrap();
    // A game file's own warning (a game skipped for an illegal move): the step that
    // counts the file lists it without counting it itself.
    let text = "[Event \"bad move\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n\n[Event \"cut\n\n1. d4 d5 1-0\n\n[Event \"ok\"]\n[Result \"1-0\"]\n\n1. c4 e5 1-0\n";
    std::fs::write(p.path("games/some.pgn"), text).unwrap();
    let first = p.make(&[]);
    let stderr = common::flat(&first.stderr);
    let printed = stderr.lines().filter(|l| l.starts_with("warning [")).count();
    assert!(printed >= 1, "{stderr}");
    assert!(!stderr.contains("… and "), "every warning is on a line of its own here:\n{stderr}");
    assert_eq!(finished_warnings(&stderr), printed, "{stderr}");
    let again = p.make(&[]);
    assert_eq!(finished_warnings(&common::flat(&again.stderr)), printed, "{}", again.stderr);
}
