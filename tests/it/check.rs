//! `okb check`: snapshot files of the answers `[check]` names, compared after a build.

use crate::common;
use common::{Project, fixture};

fn project() -> Project {
    let p = Project::with_pipeline(
        r#"[sources.lichess]
kind = "lichess-tsv"
path = "src/mini.tsv"

[check]
lines = ["1. e4 c5 2. Nf3 d6"]
fens = ["rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"]
openings = ["Queen's Gambit Declined"]
"#,
    );
    std::fs::create_dir_all(p.path("src")).unwrap();
    std::fs::copy(fixture("mini.tsv"), p.path("src/mini.tsv")).unwrap();
    p
}

#[test]
fn snapshots_are_written_on_accept_and_a_changed_answer_fails_with_the_changed_lines() {
    let p = project();
    let first = p.okb(&["check"]);
    assert_eq!(first.status, 1, "no snapshots yet: {}", first.stderr);
    assert!(first.stderr.contains("New checks/line-1-e4-c5-2-nf3-d6.snap"), "{}", first.stderr);
    assert!(!p.path("checks").exists(), "nothing written without --accept");

    let accept = p.okb(&["check", "--accept"]);
    assert_eq!(accept.status, 0, "{}", accept.stderr);
    let snap = String::from_utf8(p.read("checks/line-1-e4-c5-2-nf3-d6.snap")).unwrap();
    assert!(
        snap.contains("line: 1. e4 c5 2. Nf3 d6\n")
            && snap.contains("name: Sicilian Defense: Modern Variations\n"),
        "{snap}"
    );
    assert!(snap.contains("eco: B50\n"), "{snap}");
    let opening = String::from_utf8(p.read("checks/opening-queen-s-gambit-declined.snap")).unwrap();
    assert!(opening.contains("moves: 1. d4 d5 2. c4 e6\n"), "{opening}");
    let fen = String::from_utf8(
        p.read("checks/fen-rnbqkbnr-pppp1ppp-8-4p3-4p3-8-pppp1ppp-rnbqkbnr-w-kqkq-0-2.snap"),
    )
    .unwrap();
    assert!(fen.contains("name: King's Pawn Game\n"), "{fen}");

    let again = p.okb(&["check"]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert!(again.stderr.contains("3 snapshots match"), "{}", again.stderr);

    // A renamed line in the taxonomy: the check fails and shows the line that changed.
    let tsv = std::fs::read_to_string(p.path("src/mini.tsv")).unwrap();
    std::fs::write(p.path("src/mini.tsv"), tsv.replace("Modern Variations", "Modern Lines"))
        .unwrap();
    let changed = p.okb(&["check"]);
    assert_eq!(changed.status, 1, "{}", changed.stderr);
    assert!(
        changed.stderr.contains("-name: Sicilian Defense: Modern Variations")
            && changed.stderr.contains("+name: Sicilian Defense: Modern Lines"),
        "{}",
        changed.stderr
    );
    // A snapshot no question asks for is an orphan; --accept removes it.
    std::fs::write(p.path("checks/line-old.snap"), "old\n").unwrap();
    let orphan = p.okb(&["check", "--no-build"]);
    assert!(orphan.stderr.contains("Orphan checks/line-old.snap"), "{}", orphan.stderr);
    assert_eq!(p.okb(&["check", "--accept"]).status, 0);
    assert!(!p.path("checks/line-old.snap").exists());
    assert_eq!(p.okb(&["check"]).status, 0);
}

#[test]
fn a_pipeline_without_checks_says_how_to_add_them() {
    let p = Project::with_pipeline(&format!(
        "[sources.lichess]\nkind = \"lichess-tsv\"\npath = \"{}\"\n",
        fixture("mini.tsv")
    ));
    let run = p.okb(&["check"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr.contains("names nothing to check") && run.stderr.contains("[check]"),
        "{}",
        run.stderr
    );
}
